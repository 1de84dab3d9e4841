//! Where the example cluster state is (`shared/fixtures/olm/objects`): read by the tests of this
//! module and by [`super::testing`].

use std::path::{Path, PathBuf};

/// The fixture directory of the example objects.
pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/olm/objects")
}

/// A catalog from FBC blobs (one JSON document each), parsed as the loader parses a file; the
/// blobs must be valid.
#[cfg(test)]
pub fn catalog_of(blobs: &[serde_json::Value]) -> crate::fbc::decl::DeclarativeConfig {
    let text: Vec<String> = blobs.iter().map(serde_json::Value::to_string).collect();
    let mut cfg = crate::fbc::decl::DeclarativeConfig::default();
    let problems = crate::fbc::load::parse_text(
        &text.join("\n"),
        &std::sync::Arc::from(Path::new("c.json")),
        &mut cfg,
    );
    assert!(problems.is_empty(), "{problems:?}");
    cfg
}
