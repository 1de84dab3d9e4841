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
    crate::fbc::load::from_blobs(blobs)
}
