//! Writing below an output directory without ever following a symbolic link inside it.
//!
//! The rule every writer follows (`bundle generate -O`, `catalog fmt` in place and `--out`,
//! `catalog build`, `man --out-dir`, `--oci-layout`, extraction by `bundle unpack` and
//! `catalog pull`): the directory the user names may itself be a symlink (the user chose it),
//! but below it nothing is written, created or removed through a symlink, whatever is swapped
//! in while the command runs. Every write goes through a directory descriptor ([`Dir`]): the
//! directories below the output directory are opened one component at a time with
//! `O_NOFOLLOW`, and a file is written as a new file in its directory that is then renamed
//! over its name (a rename replaces a link itself, never its target; a reader sees the old
//! file or the new one). A link already there where a file or directory of the layout goes (a
//! linked subdirectory, or a linked file where a file goes), or a FIFO, socket or device, is
//! refused before anything is changed, with an error naming it; removing a stale file removes
//! a link itself, never its target. (Extraction replaces a link where an image puts a file, as
//! later layers may; its target directory starts empty.)

mod dir;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

pub use dir::{Dir, Entry, Kind};

/// A write below an output directory that cannot be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutError {
    /// The path concerned (the symlink when one is in the way).
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for OutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for OutError {}

fn io_err(path: &Path, e: io::Error) -> OutError {
    OutError {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// The error for a symlink at `link` inside the output directory `root`.
pub fn link_refused(root: &Path, link: &Path) -> OutError {
    OutError {
        path: link.to_path_buf(),
        message: format!(
            "is a symbolic link inside the output directory {}; olmctl does not write through \
             links there: remove the link or choose another directory",
            root.display()
        ),
    }
}

/// Why `kind` at `p` is refused where a file or directory of the output goes, if it is.
fn refusal(root: &Path, p: &Path, kind: Kind) -> Option<OutError> {
    match kind {
        Kind::Link => Some(link_refused(root, p)),
        Kind::Special(what) => Some(OutError {
            path: p.to_path_buf(),
            message: format!(
                "is {what} inside the output directory {}, where olmctl writes a file or a \
                 directory: remove it or choose another directory",
                root.display()
            ),
        }),
        Kind::File | Kind::Dir => None,
    }
}

/// The components of `rel`, which must be relative, without `..`.
fn parts<'a>(root: &Path, rel: &'a Path) -> Result<Vec<&'a OsStr>, OutError> {
    rel.components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(OutError {
                path: root.join(rel),
                message: "is not a path inside the output directory".into(),
            }),
        })
        .collect()
}

/// What went wrong opening `name` of `dir` (at `p`) as a directory: a link or special file
/// there is refused, anything else is the I/O error.
fn explain(root: &Path, p: &Path, dir: &Dir, name: &OsStr, e: io::Error) -> OutError {
    match dir.entry(name) {
        Ok(Some(entry)) => refusal(root, p, entry.kind).unwrap_or_else(|| io_err(p, e)),
        _ => io_err(p, e),
    }
}

/// The directory `root/rel`, walked from `root` one component at a time without following a
/// link below it. With `create`, `root` and every missing directory are made; without, `None`
/// when one is missing. A link, special file or file in the way is an error naming it.
pub fn open_dir(root: &Path, rel: &Path, create: bool) -> Result<Option<Dir>, OutError> {
    let names = parts(root, rel)?;
    if create {
        fs::create_dir_all(root).map_err(|e| io_err(root, e))?;
    }
    let mut dir = match Dir::open(root) {
        Ok(d) => d,
        Err(e) if !create && e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(root, e)),
    };
    let mut p = root.to_path_buf();
    for n in names {
        p.push(n);
        let next = if create {
            dir.sub_or_make(n).map(Some)
        } else {
            dir.sub(n)
        };
        dir = match next {
            Ok(Some(d)) => d,
            Ok(None) => return Ok(None),
            Err(e) => return Err(explain(root, &p, &dir, n, e)),
        };
    }
    Ok(Some(dir))
}

/// The directory holding `root/rel` and the last name of `rel`.
fn parent_of<'a>(
    root: &Path,
    rel: &'a Path,
    create: bool,
) -> Result<Option<(Dir, &'a OsStr)>, OutError> {
    let names = parts(root, rel)?;
    let Some((name, dirs)) = names.split_last() else {
        return Err(OutError {
            path: root.join(rel),
            message: "is not a path inside the output directory".into(),
        });
    };
    let dirs: PathBuf = dirs.iter().collect();
    Ok(open_dir(root, &dirs, create)?.map(|d| (d, *name)))
}

/// Checks that no existing component of `root/rel` below `root` is a symlink, a FIFO, a socket
/// or a device (components that do not exist yet are fine), so that a command can refuse
/// before it changes anything. `rel` must be relative, without `..`. (The writes do not rely
/// on it: they never follow a link, whatever is there by then.)
pub fn check(root: &Path, rel: &Path) -> Result<(), OutError> {
    let names = parts(root, rel)?;
    let Ok(mut dir) = Dir::open(root) else {
        return Ok(());
    };
    let mut p = root.to_path_buf();
    for n in names {
        p.push(n);
        let entry = dir.entry(n).map_err(|e| io_err(&p, e))?;
        match entry.map(|e| e.kind) {
            None | Some(Kind::File) => return Ok(()),
            Some(k @ (Kind::Link | Kind::Special(_))) => {
                return Err(refusal(root, &p, k).expect("refused"));
            }
            Some(Kind::Dir) => match dir.sub(n) {
                Ok(Some(d)) => dir = d,
                Ok(None) => return Ok(()),
                Err(e) => return Err(explain(root, &p, &dir, n, e)),
            },
        }
    }
    Ok(())
}

/// Writes `data` to `root/rel`, creating missing directories: never through a link below
/// `root` (one already there is refused before writing; one swapped in meanwhile is replaced,
/// not followed), the old content or the new visible at any moment.
pub fn write(root: &Path, rel: &Path, data: &[u8]) -> Result<(), OutError> {
    let p = root.join(rel);
    let (dir, name) = parent_of(root, rel, true)?.expect("created");
    match dir.entry(name).map_err(|e| io_err(&p, e))?.map(|e| e.kind) {
        Some(Kind::Dir) => {
            return Err(io_err(&p, io::Error::from_raw_os_error(libc::EISDIR)));
        }
        Some(k) => {
            if let Some(e) = refusal(root, &p, k) {
                return Err(e);
            }
        }
        None => {}
    }
    dir.write(name, data).map_err(|e| io_err(&p, e))
}

/// What is at `root/rel` (a link not followed), `None` when nothing is (or a directory on the
/// way is missing).
pub fn entry(root: &Path, rel: &Path) -> Result<Option<Entry>, OutError> {
    let Some((dir, name)) = parent_of(root, rel, false)? else {
        return Ok(None);
    };
    dir.entry(name).map_err(|e| io_err(&root.join(rel), e))
}

/// The names in the directory `root/rel` and what each is (links not followed), sorted; none
/// when it does not exist.
pub fn entries(root: &Path, rel: &Path) -> Result<Vec<(OsString, Kind)>, OutError> {
    let p = root.join(rel);
    let Some(dir) = open_dir(root, rel, false)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for n in dir.names().map_err(|e| io_err(&p, e))? {
        if let Some(e) = dir.entry(&n).map_err(|e| io_err(&p.join(&n), e))? {
            out.push((n, e.kind));
        }
    }
    Ok(out)
}

/// Removes the file `root/rel` (a symlink itself, never its target); a missing file is fine.
pub fn remove_file(root: &Path, rel: &Path) -> Result<(), OutError> {
    match parent_of(root, rel, false)? {
        Some((dir, name)) => dir
            .remove_file(name)
            .map_err(|e| io_err(&root.join(rel), e)),
        None => Ok(()),
    }
}

/// Removes the directory `root/rel` when it is empty (an error otherwise).
pub fn remove_empty_dir(root: &Path, rel: &Path) -> Result<(), OutError> {
    match parent_of(root, rel, false)? {
        Some((dir, name)) => dir.remove_dir(name).map_err(|e| io_err(&root.join(rel), e)),
        None => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_links_below_the_root_and_follows_the_root() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let root = t.path().join("out");
        fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("sub")).unwrap();
        let e = write(&root, Path::new("sub/f"), b"x").unwrap_err();
        assert_eq!(e.path, root.join("sub"));
        assert!(!victim.join("f").exists());
        std::os::unix::fs::symlink(victim.join("g"), root.join("g")).unwrap();
        assert!(write(&root, Path::new("g"), b"x").is_err());
        assert!(!victim.join("g").exists());
        assert!(write(&root, Path::new("../x"), b"x").is_err());
        // The root itself may be a link.
        let linked_root = t.path().join("linked");
        std::os::unix::fs::symlink(&root, &linked_root).unwrap();
        write(&linked_root, Path::new("a/b"), b"x").unwrap();
        assert_eq!(fs::read(root.join("a/b")).unwrap(), b"x");
    }

    /// A FIFO, socket or device where a file goes is refused, naming it (opening a FIFO to
    /// write it would wait for a reader); removing a link removes the link.
    #[test]
    fn special_files_are_refused_and_links_removed_as_links() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("out");
        fs::create_dir_all(root.join("d")).unwrap();
        let fifo = root.join("d/p");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for r in [
            check(&root, Path::new("d/p")),
            write(&root, Path::new("d/p"), b"x"),
        ] {
            let e = r.unwrap_err();
            assert_eq!(e.path, fifo);
            assert!(e.message.contains("a FIFO"), "{e}");
        }
        let victim = t.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, root.join("d/l")).unwrap();
        remove_file(&root, Path::new("d/l")).unwrap();
        assert!(fs::symlink_metadata(root.join("d/l")).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        // A missing directory on the way: nothing to remove, nothing listed.
        remove_file(&root, Path::new("none/x")).unwrap();
        assert_eq!(entries(&root, Path::new("none")).unwrap(), []);
        assert_eq!(
            entries(&root, Path::new("d")).unwrap(),
            [(
                std::ffi::OsString::from("p"),
                Kind::Special("a FIFO (named pipe)")
            )]
        );
    }

    /// Issue 39 item 8: a thread keeps putting a link to a victim outside where the file being
    /// written goes, then keeps exchanging the directory it is in with a link; however the
    /// writes and the swaps interleave (20,000 writes and 2,000 swaps at least, each), the
    /// victim is never written.
    #[test]
    fn a_link_swapped_in_while_writing_is_never_followed() {
        use olmctl_testdata::race::Swapper;
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("f"), "precious").unwrap();
        let root = t.path().join("out");
        fs::create_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("link")).unwrap();
        for at in ["sub/f", "sub"] {
            let swapper = if at == "sub" {
                Swapper::exchange(&root.join("sub"), &root.join("link"))
            } else {
                Swapper::relink(&root.join(at), &victim.join("f"))
            };
            // 20,000 writes and 2,000 swaps at least (the swapper may get less of the CPU).
            let (mut writes, mut written) = (0, 0);
            while writes < 20_000 || (swapper.swaps() < 2_000 && writes < 2_000_000) {
                written += write(&root, Path::new("sub/f"), b"overwritten").is_ok() as u32;
                writes += 1;
            }
            let swaps = swapper.stop();
            eprintln!("{at}: {swaps} swaps, {written} of {writes} writes done");
            assert!(
                swaps >= 2_000,
                "{at}: only {swaps} swaps in {writes} writes"
            );
            assert_eq!(
                fs::read_to_string(victim.join("f")).unwrap(),
                "precious",
                "written through {at}"
            );
            assert_eq!(
                fs::read_dir(&victim).unwrap().count(),
                1,
                "nothing made there"
            );
        }
    }
}
