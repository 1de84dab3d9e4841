//! A directory held by its descriptor, and what is done inside it without ever following a
//! symbolic link: every name is one component, looked up relative to the descriptor with
//! `O_NOFOLLOW` or `AT_SYMLINK_NOFOLLOW` (`openat`, `fstatat`, `mkdirat`, `unlinkat`,
//! `renameat`, `symlinkat`, `linkat`), and a file is written as a new file beside its name and
//! renamed over it (a rename replaces a link itself, never its target). Whatever is swapped in
//! at a name between two calls, no call reaches through it: a subdirectory is opened as the
//! directory it is, a write lands in the directory held.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a name in a directory is (links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
    /// Anything else, named for a message (`a FIFO (named pipe)`, `a socket`, ...).
    Special(&'static str),
}

/// A name in a directory, as `fstatat(AT_SYMLINK_NOFOLLOW)` finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// What it is.
    pub kind: Kind,
    /// Its size in bytes.
    pub len: u64,
    /// Its permission bits.
    pub mode: u32,
}

/// A directory, by descriptor.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

fn cname(name: &OsStr) -> io::Result<CString> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} is not one name in a directory", name),
        ));
    }
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a name"))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Sets errno to 0 (readdir tells its end from an error only by errno).
fn clear_errno() {
    // SAFETY: errno is thread-local, and these functions return its address.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe {
        *libc::__errno_location() = 0
    };
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    unsafe {
        *libc::__error() = 0
    };
}

/// What `st_mode` says a name is.
fn kind_of(mode: libc::mode_t) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Link,
        libc::S_IFIFO => Kind::Special("a FIFO (named pipe)"),
        libc::S_IFSOCK => Kind::Special("a socket"),
        libc::S_IFCHR => Kind::Special("a character device"),
        libc::S_IFBLK => Kind::Special("a block device"),
        _ => Kind::Special("not a regular file"),
    }
}

const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;

/// Numbers the temporary files of one process.
static TEMP: AtomicU64 = AtomicU64::new(0);

impl Dir {
    /// Opens the directory `path`, following links on the way (the caller chose it).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))?;
        // SAFETY: a valid C string; the descriptor returned is owned here.
        let fd = check(unsafe { libc::open(c.as_ptr(), DIR_FLAGS) })?;
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn raw(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }

    /// Another descriptor of the same directory.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
        })
    }

    /// What `name` is, `None` when there is nothing by that name.
    pub fn entry(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        let c = cname(name)?;
        // SAFETY: zeroed `stat` is a valid value for fstatat to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, C string and out-pointer.
        let rc =
            unsafe { libc::fstatat(self.raw(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        match check(rc) {
            Ok(_) => Ok(Some(Entry {
                kind: kind_of(st.st_mode),
                len: st.st_size as u64,
                // `mode_t` is u32 on Linux, u16 on macOS.
                #[allow(clippy::unnecessary_cast)]
                mode: (st.st_mode as u32) & 0o7777,
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The subdirectory `name`, opened without following a link: `None` when there is nothing
    /// by that name; an error when it is not a directory (a link included: `ENOTDIR`).
    pub fn sub(&self, name: &OsStr) -> io::Result<Option<Dir>> {
        let c = cname(name)?;
        // SAFETY: valid descriptor and C string; the descriptor returned is owned here.
        let rc = unsafe { libc::openat(self.raw(), c.as_ptr(), DIR_FLAGS | libc::O_NOFOLLOW) };
        match check(rc) {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            Ok(fd) => Ok(Some(Dir {
                fd: unsafe { OwnedFd::from_raw_fd(fd) },
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Makes the subdirectory `name` (`mode` less the umask); one already there is fine when
    /// it is a directory (a link is not).
    pub fn make_dir(&self, name: &OsStr, mode: u32) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: valid descriptor and C string.
        match check(unsafe { libc::mkdirat(self.raw(), c.as_ptr(), mode as libc::mode_t) }) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                match self.entry(name)?.map(|e| e.kind) {
                    Some(Kind::Dir) => Ok(()),
                    _ => Err(e),
                }
            }
            r => r.map(drop),
        }
    }

    /// The subdirectory `name`, made when missing.
    pub fn sub_or_make(&self, name: &OsStr) -> io::Result<Dir> {
        if let Some(d) = self.sub(name)? {
            return Ok(d);
        }
        self.make_dir(name, 0o777)?;
        self.sub(name)?
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "removed while made"))
    }

    /// Sets this directory's permission bits.
    pub fn set_mode(&self, mode: u32) -> io::Result<()> {
        // SAFETY: a valid descriptor.
        check(unsafe { libc::fchmod(self.raw(), mode as libc::mode_t) }).map(drop)
    }

    /// Writes the file `name`: `fill` writes a new file beside it, which is then renamed over
    /// it, so that whatever is at `name` (a link included) is replaced, never written through,
    /// and a reader sees the old content or the new. The new file gets `mode`, or the mode of
    /// the regular file it replaces, or 0o666 less the umask. A directory at `name` is an error.
    pub fn write_with(
        &self,
        name: &OsStr,
        mode: Option<u32>,
        fill: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let target = cname(name)?;
        let mode = mode.or(match self.entry(name)? {
            Some(Entry {
                kind: Kind::File,
                mode,
                ..
            }) => Some(mode),
            _ => None,
        });
        let tmp = format!(
            ".olmctl-{}-{}.tmp",
            std::process::id(),
            TEMP.fetch_add(1, Ordering::Relaxed)
        );
        let tmp = CString::new(tmp).expect("no NUL");
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid descriptor and C string; the descriptor returned is owned here.
        let fd = check(unsafe { libc::openat(self.raw(), tmp.as_ptr(), flags, 0o666) })?;
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let mut file = unsafe { File::from_raw_fd(fd) };
        let written = (|| {
            fill(&mut file)?;
            file.flush()?;
            if let Some(m) = mode {
                file.set_permissions(std::fs::Permissions::from_mode(m))?;
            }
            // SAFETY: valid descriptors and C strings.
            check(unsafe { libc::renameat(self.raw(), tmp.as_ptr(), self.raw(), target.as_ptr()) })
                .map(drop)
        })();
        if written.is_err() {
            // SAFETY: valid descriptor and C string.
            unsafe { libc::unlinkat(self.raw(), tmp.as_ptr(), 0) };
        }
        written
    }

    /// Writes `data` to the file `name` ([`Dir::write_with`]).
    pub fn write(&self, name: &OsStr, data: &[u8]) -> io::Result<()> {
        self.write_with(name, None, |f| f.write_all(data))
    }

    /// Removes `name` when it is not a directory (a link itself, never its target); nothing
    /// there is fine.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: valid descriptor and C string.
        match check(unsafe { libc::unlinkat(self.raw(), c.as_ptr(), 0) }) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r.map(drop),
        }
    }

    /// Removes the empty directory `name`.
    pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        let c = cname(name)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::unlinkat(self.raw(), c.as_ptr(), libc::AT_REMOVEDIR) }).map(drop)
    }

    /// Removes whatever is at `name`, a directory with everything in it (links inside are
    /// removed, never followed); nothing there is fine.
    pub fn remove_all(&self, name: &OsStr) -> io::Result<()> {
        match self.entry(name)?.map(|e| e.kind) {
            None => Ok(()),
            Some(Kind::Dir) => {
                if let Some(d) = self.sub(name)? {
                    for n in d.names()? {
                        d.remove_all(&n)?;
                    }
                }
                self.remove_dir(name)
            }
            Some(_) => self.remove_file(name),
        }
    }

    /// The names in this directory (without `.` and `..`), sorted.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        // SAFETY: duplicating a valid descriptor; fdopendir takes the copy.
        let fd = check(unsafe { libc::fcntl(self.raw(), libc::F_DUPFD_CLOEXEC, 0) })?;
        // SAFETY: `fd` is an open directory descriptor that the stream now owns.
        let dir = unsafe { libc::fdopendir(fd) };
        if dir.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `fd` is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // fdopendir starts where the descriptor is; a copy shares its offset with the original.
        // SAFETY: a valid stream.
        unsafe { libc::rewinddir(dir) };
        let mut names = Vec::new();
        let result = loop {
            clear_errno();
            // SAFETY: readdir on a valid stream.
            let ent = unsafe { libc::readdir(dir) };
            if ent.is_null() {
                let e = io::Error::last_os_error();
                break if e.raw_os_error() == Some(0) {
                    Ok(())
                } else {
                    Err(e)
                };
            }
            // SAFETY: readdir returned an entry whose name is a C string.
            let n = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
            if n != b"." && n != b".." {
                names.push(OsString::from_vec(n.to_vec()));
            }
        };
        // SAFETY: a valid stream, closed once (with its descriptor).
        unsafe { libc::closedir(dir) };
        result?;
        names.sort();
        Ok(names)
    }

    /// Makes the symbolic link `name` pointing at `target`.
    pub fn symlink(&self, target: &OsStr, name: &OsStr) -> io::Result<()> {
        let c = cname(name)?;
        let t = CString::new(target.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a link target"))?;
        // SAFETY: valid descriptor and C strings.
        check(unsafe { libc::symlinkat(t.as_ptr(), self.raw(), c.as_ptr()) }).map(drop)
    }

    /// Makes `name` a hard link to `from`'s `from_name` (a link there is linked itself, not
    /// followed).
    pub fn hard_link(&self, from: &Dir, from_name: &OsStr, name: &OsStr) -> io::Result<()> {
        let (src, dst) = (cname(from_name)?, cname(name)?);
        // SAFETY: valid descriptors and C strings; flags 0: the source is not followed.
        check(unsafe { libc::linkat(from.raw(), src.as_ptr(), self.raw(), dst.as_ptr(), 0) })
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn os(s: &str) -> &OsStr {
        OsStr::new(s)
    }

    #[test]
    fn links_are_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("f"), "precious").unwrap();
        let out = t.path().join("out");
        fs::create_dir(&out).unwrap();
        symlink(&victim, out.join("linked-dir")).unwrap();
        symlink(victim.join("f"), out.join("linked-file")).unwrap();
        let d = Dir::open(&out).unwrap();
        // A linked intermediate directory is not opened.
        let e = d.sub(os("linked-dir")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR), "{e}");
        assert_eq!(
            d.entry(os("linked-dir")).unwrap().map(|e| e.kind),
            Some(Kind::Link)
        );
        assert!(d.make_dir(os("linked-dir"), 0o777).is_err());
        // A linked final file is replaced, its target kept.
        d.write(os("linked-file"), b"new").unwrap();
        assert_eq!(fs::read_to_string(victim.join("f")).unwrap(), "precious");
        assert_eq!(fs::read_to_string(out.join("linked-file")).unwrap(), "new");
        assert!(
            !fs::symlink_metadata(out.join("linked-file"))
                .unwrap()
                .is_symlink()
        );
        // Removing a link removes the link; remove_all does not descend through one.
        d.remove_all(os("linked-dir")).unwrap();
        assert_eq!(fs::read_to_string(victim.join("f")).unwrap(), "precious");
        assert_eq!(d.names().unwrap(), [os("linked-file")]);
        // Names are one component.
        for bad in ["", ".", "..", "a/b"] {
            assert!(d.write(os(bad), b"x").is_err(), "{bad:?}");
        }
        // The directory given may be a link (the caller chose it).
        symlink(&out, t.path().join("linked-out")).unwrap();
        let via = Dir::open(&t.path().join("linked-out")).unwrap();
        assert_eq!(
            via.entry(os("linked-file")).unwrap().map(|e| e.kind),
            Some(Kind::File)
        );
    }

    #[test]
    fn a_fifo_is_replaced_without_being_opened_and_modes_are_kept() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open(t.path()).unwrap();
        let fifo = CString::new(t.path().join("p").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(
            d.entry(os("p")).unwrap().map(|e| e.kind),
            Some(Kind::Special("a FIFO (named pipe)"))
        );
        // Opening it for writing would wait for a reader; a rename does not open it.
        d.write(os("p"), b"x").unwrap();
        assert_eq!(fs::read(t.path().join("p")).unwrap(), b"x");
        fs::set_permissions(t.path().join("p"), fs::Permissions::from_mode(0o640)).unwrap();
        d.write(os("p"), b"y").unwrap();
        assert_eq!(d.entry(os("p")).unwrap().map(|e| e.mode), Some(0o640));
        d.write_with(os("q"), Some(0o755), |f| f.write_all(b"z"))
            .unwrap();
        assert_eq!(
            d.entry(os("q")).unwrap().map(|e| (e.mode, e.len)),
            Some((0o755, 1))
        );
        // No temporary file is left, and a directory is not replaced.
        fs::create_dir(t.path().join("sub")).unwrap();
        assert!(d.write(os("sub"), b"x").is_err());
        assert_eq!(d.names().unwrap(), [os("p"), os("q"), os("sub")]);
        let sub = d.sub_or_make(os("sub")).unwrap();
        sub.symlink(os("../p"), os("l")).unwrap();
        sub.hard_link(&d, os("q"), os("h")).unwrap();
        assert_eq!(fs::read(t.path().join("sub/h")).unwrap(), b"z");
        d.remove_all(os("sub")).unwrap();
        assert_eq!(d.names().unwrap(), [os("p"), os("q")]);
    }
}
