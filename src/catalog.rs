//! A catalog as the commands read it: every directory given loaded into one
//! [`Loaded`](crate::fbc::load::Loaded), and, for the commands that show a catalog rather than
//! check it, the refusal to show a partial one.

use std::path::PathBuf;

use crate::diag::Finding;
use crate::fbc::load::Loaded;

/// Loads the catalog below `dirs`; an error names what could not be read.
pub use crate::fbc::load::load_catalog as load;

/// Why a catalog is not shown.
#[derive(Debug)]
pub enum NotWhole {
    /// It could not be read at all.
    Unreadable(String),
    /// Files or blobs do not load: the findings that say which.
    Partial(Vec<Finding>),
}

impl NotWhole {
    /// The closing message of a [`NotWhole::Partial`] catalog (after its findings).
    pub fn partial_message(count: usize) -> String {
        format!(
            "{count} problem{} in files that do not load; nothing is shown from a partial catalog \
             (fix them, or list stray files in .indexignore)",
            if count == 1 { "" } else { "s" }
        )
    }
}

/// Loads a catalog for a command that shows it rather than checks it (`ls`, `graph`, `path`,
/// `render`): files or blobs that do not load make it [`NotWhole::Partial`] instead of showing
/// what remains.
pub fn load_whole(dirs: &[PathBuf]) -> Result<Loaded, NotWhole> {
    let loaded = load(dirs).map_err(NotWhole::Unreadable)?;
    let errors = crate::checks::fbc::load_errors(&loaded);
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(NotWhole::Partial(errors))
    }
}
