//! The committed file a `--check` compares with what a command would write (`catalog build
//! --check`, `catalog fmt --check`): looked up as the writer would write it, through no
//! symbolic link below the output directory ([`crate::outdir::check`]: the write would be
//! refused, so the comparison would mean nothing), then read as every input is
//! ([`crate::input::read`]: a regular file, within the size limit, never blocking).

use std::io::ErrorKind;
use std::path::Path;

use crate::outdir::OutError;

/// The content of `root/rel`, `None` when there is no such file; any other failure is an
/// error naming the file (or the link in the way) and what to do.
pub fn read_committed(root: &Path, rel: &Path) -> Result<Option<Vec<u8>>, OutError> {
    crate::outdir::check(root, rel).map_err(|e| {
        let link = std::fs::symlink_metadata(&e.path).is_ok_and(|m| m.file_type().is_symlink());
        if !link {
            return e;
        }
        OutError {
            message: format!(
                "is a symbolic link below {} (olmctl writes no file through a link): remove \
                 the link",
                root.display()
            ),
            ..e
        }
    })?;
    let path = root.join(rel);
    let fail = |message: String| OutError {
        path: path.clone(),
        message,
    };
    // What is there, named before reading (the read checks again what it opens).
    if let Ok(m) = std::fs::symlink_metadata(&path)
        && !m.is_file()
    {
        return Err(fail(format!(
            "is {}, not a regular file: remove it",
            crate::input::kind_of(m.file_type())
        )));
    }
    match crate::input::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fail(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_files_are_read_as_inputs_and_as_the_writer_sees_them() {
        let d = tempfile::tempdir().unwrap();
        let rel = Path::new("v1/p/catalog.yaml");
        assert_eq!(read_committed(d.path(), rel).unwrap(), None);
        std::fs::create_dir_all(d.path().join("v1/p")).unwrap();
        std::fs::write(d.path().join(rel), "x").unwrap();
        assert_eq!(read_committed(d.path(), rel).unwrap(), Some(b"x".to_vec()));
        std::fs::remove_file(d.path().join(rel)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.path().join(rel)).unwrap();
        let e = read_committed(d.path(), rel).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        std::fs::remove_file(d.path().join(rel)).unwrap();
        std::fs::create_dir(d.path().join(rel)).unwrap();
        let e = read_committed(d.path(), rel).unwrap_err();
        assert!(
            e.to_string().contains("catalog.yaml: is a directory"),
            "{e}"
        );
    }
}
