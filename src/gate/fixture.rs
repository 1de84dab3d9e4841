//! Where the example cluster state is (`shared/fixtures/olm/objects`): read by the tests of this
//! module and by [`super::testing`].

use std::path::{Path, PathBuf};

/// The fixture directory of the example objects.
pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/olm/objects")
}
