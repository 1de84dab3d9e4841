//! Reading input files safely. olmctl runs in CI on files written by strangers: a path that
//! should be a file may be a FIFO (opening it blocks until a writer comes, which may be never),
//! a device (`/dev/zero` never ends), a symlink to either, or a sparse file of gigabytes.
//!
//! [`read`] opens without blocking, checks what was opened (not what the path said a moment
//! before), refuses anything but a regular file, and never reads more than the size limit.
//! Files found inside a directory are read only where they resolve inside it ([`tree`]); the
//! committed file a `--check` compares is looked up as its writer would write it
//! ([`committed`]).

pub mod committed;
pub mod tree;

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest input file read by default (catalog, bundle, policy, map and manifest files):
/// real catalog files stay well below it (the largest fixture file is a few MiB, the largest
/// package file of a full OpenShift index tens of MiB), and it bounds what one file can cost.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 256 << 20;

static MAX_FILE_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_SIZE);

/// Sets the size limit [`read`] applies (the CLI's `--max-file-size`).
pub fn set_max_file_size(bytes: u64) {
    MAX_FILE_SIZE.store(bytes, Ordering::Relaxed);
}

/// The size limit [`read`] applies.
pub fn max_file_size() -> u64 {
    MAX_FILE_SIZE.load(Ordering::Relaxed)
}

/// What kind of file system object `t` is, for messages ("a FIFO", "a character device").
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Whether `path` (links followed) is something other than a regular file or directory: a
/// FIFO, device or socket, which walkers must not open.
pub fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Human-readable size: `256 MiB`, `1.5 KiB`, `12 bytes`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{:.1} {unit}", bytes as f64 / size as f64)
            };
        }
    }
    format!("{bytes} bytes")
}

fn refuse(kind: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {kind}, not a regular file (save the content to a file and name that)"),
    )
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "file is larger than the {} input limit (raise it with --max-file-size)",
            human_size(limit)
        ),
    )
}

/// Opens `path` for reading if it is a regular file (links followed), without ever blocking
/// on a FIFO.
pub fn open_regular(path: &Path) -> io::Result<File> {
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting; on a
    // regular file the flag changes nothing.
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(refuse(kind_of(t)));
    }
    Ok(f)
}

/// Reads the regular file `path` whole, refusing FIFOs, devices, sockets and directories and
/// files larger than [`max_file_size`].
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_limited(path, max_file_size())
}

/// Checks that `path` is a regular file (links followed) within the size limit, without
/// reading it: for a file another library reads itself (kube's kubeconfig loader), so that a
/// FIFO, a device or a giant is refused before that read.
pub fn check(path: &Path) -> io::Result<()> {
    open_limited(path).map(drop)
}

/// A regular file opened for streaming within the size limit ([`open_limited`]).
#[derive(Debug)]
pub struct Limited {
    file: File,
    limit: u64,
    read: u64,
}

impl Read for Limited {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read += n as u64;
        if self.read > self.limit {
            return Err(too_large(self.limit));
        }
        Ok(n)
    }
}

/// Opens `path` as [`read`] does (a regular file no larger than [`max_file_size`]) for a
/// caller that streams it; reading past the limit (a file that grows) is an error.
pub fn open_limited(path: &Path) -> io::Result<Limited> {
    let limit = max_file_size();
    let file = open_regular(path)?;
    if file.metadata()?.len() > limit {
        return Err(too_large(limit));
    }
    Ok(Limited {
        file,
        limit,
        read: 0,
    })
}

/// [`read`] with an explicit limit.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let f = open_regular(path)?;
    let len = f.metadata()?.len();
    if len > limit {
        return Err(too_large(limit));
    }
    let mut buf = Vec::with_capacity(len as usize);
    // The file may grow while it is read (or lie about its length, as /proc files do).
    f.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(buf)
}

/// How much of a large file is read before deciding whether its first document is a list.
pub const PEEK: usize = 1 << 20;

/// A file whose documents must be objects (catalog files, manifests), as [`read_objects`]
/// returns it.
#[derive(Debug)]
pub struct ObjectText {
    /// The file's bytes: all of them, or only a prefix when `truncated`.
    pub bytes: Vec<u8>,
    /// Only a prefix was read: the first document is a root list, which is rejected by its
    /// kind and ends the file, so nothing after it is needed.
    pub truncated: bool,
}

/// [`read`] for files whose documents must be objects: a file larger than [`PEEK`] whose first
/// document is a list (`[` or `- ` at the root) is read only up to `PEEK` bytes (cut at a
/// character boundary), so a huge top-level list costs neither memory nor time before the
/// parser rejects it by its kind (`fbc::yaml::Roots::Objects` ends the file there).
pub fn read_objects(path: &Path) -> io::Result<ObjectText> {
    let limit = max_file_size();
    let f = open_regular(path)?;
    let len = f.metadata()?.len();
    if len > limit {
        return Err(too_large(limit));
    }
    let mut f = f.take(limit.saturating_add(1));
    let mut buf = Vec::with_capacity((len as usize).min(PEEK));
    (&mut f).take(PEEK as u64).read_to_end(&mut buf)?;
    if buf.len() == PEEK && first_document_is_list(&buf) {
        // Cut an incomplete character at the end; invalid bytes before it stay for the caller.
        if let Err(e) = std::str::from_utf8(&buf)
            && e.error_len().is_none()
        {
            buf.truncate(e.valid_up_to());
        }
        return Ok(ObjectText {
            bytes: buf,
            truncated: true,
        });
    }
    buf.reserve((len as usize).saturating_sub(buf.len()));
    f.read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(ObjectText {
        bytes: buf,
        truncated: false,
    })
}

/// Whether the first YAML (or JSON) document of `text` is a list: after a byte order mark,
/// blank and comment lines, directives and a `---` marker, its first character is `[`, or `-`
/// followed by white space or the end. Anything less plain (tags, anchors) answers no, and
/// the file is then read whole.
pub fn first_document_is_list(text: &[u8]) -> bool {
    let text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
    for line in text.split(|b| *b == b'\n') {
        let mut rest = line.trim_ascii_start();
        if rest.starts_with(b"---") && rest.get(3).is_none_or(|b| b.is_ascii_whitespace()) {
            rest = rest[3..].trim_ascii_start();
        } else if line.first() == Some(&b'%') {
            continue;
        }
        match rest.first() {
            None | Some(b'#') => continue,
            Some(b'[') => return true,
            Some(b'-') => return rest.get(1).is_none_or(|b| b.is_ascii_whitespace()),
            Some(_) => return false,
        }
    }
    false
}

/// [`read`] as UTF-8 text; invalid UTF-8 is an error naming the line and column.
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| {
        let (line, col) = utf8_error_pos(e.as_bytes(), e.utf8_error().valid_up_to());
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (line {line}, column {col})"),
        )
    })
}

/// The 1-based line and column of byte offset `valid` (the first invalid byte).
pub fn utf8_error_pos(bytes: &[u8], valid: usize) -> (u32, u32) {
    let valid = &bytes[..valid.min(bytes.len())];
    let line = valid.iter().filter(|b| **b == b'\n').count() as u32 + 1;
    let col = valid.iter().rev().take_while(|b| **b != b'\n').count() as u32 + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_limits_hold() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.yaml");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_limited(&p, 10).unwrap(), b"0123456789");
        let mut streamed = String::new();
        open_limited(&p)
            .unwrap()
            .read_to_string(&mut streamed)
            .unwrap();
        assert_eq!(streamed, "0123456789");
        let e = read_limited(&p, 9).unwrap_err();
        assert!(e.to_string().contains("larger than the 9 bytes"), "{e}");
        assert!(e.to_string().contains("--max-file-size"), "{e}");
    }

    #[test]
    fn fifos_and_devices_are_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo.yaml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        assert!(check(&fifo).is_err() && check(Path::new("/dev/zero")).is_err());
        let link = d.path().join("zero.yaml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read(&link).unwrap_err().to_string().contains("device"));
        assert!(is_special(&link) && is_special(&fifo));
        assert!(read(d.path()).is_err());
    }

    #[test]
    fn sparse_files_are_refused_before_reading() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        let f = File::create(&p).unwrap();
        f.set_len(3 << 30).unwrap();
        let e = read(&p).unwrap_err();
        assert!(e.to_string().contains("256 MiB"), "{e}");
        let e = check(&p).unwrap_err();
        assert!(e.to_string().contains("256 MiB"), "{e}");
    }

    #[test]
    fn first_list_documents_are_recognised() {
        for yes in [
            "[1, 2]",
            "- a\n",
            "-\n",
            "\u{feff}  # c\n\n%YAML 1.2\n---\n- a",
            "--- [a]",
            "---\n  [",
        ] {
            assert!(first_document_is_list(yes.as_bytes()), "{yes:?}");
        }
        for no in [
            "a: 1",
            "{\"a\": [1]}",
            "-a: 1",
            "---x: 1",
            "&a [1]",
            "",
            "# only\n",
        ] {
            assert!(!first_document_is_list(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn large_list_files_are_read_up_to_the_peek_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("list.yaml");
        // A multi-byte character across the cut: it is dropped, not split.
        let mut text = String::from("[");
        text.push_str(&"\u{e9},".repeat(PEEK));
        std::fs::write(&p, &text).unwrap();
        let r = read_objects(&p).unwrap();
        assert!(r.truncated);
        assert!(r.bytes.len() <= PEEK && r.bytes.len() >= PEEK - 3);
        assert!(std::str::from_utf8(&r.bytes).is_ok());
        // An object file of the same size is read whole; so is a small list.
        let obj = format!("a: \"{}\"\n", "x".repeat(2 * PEEK));
        std::fs::write(&p, &obj).unwrap();
        let r = read_objects(&p).unwrap();
        assert!(!r.truncated && r.bytes == obj.as_bytes());
        std::fs::write(&p, "[1]").unwrap();
        let r = read_objects(&p).unwrap();
        assert!(!r.truncated && r.bytes == b"[1]");
        // Limits and special files as in `read`.
        assert!(read_objects(Path::new("/dev/zero")).is_err());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_size(256 << 20), "256 MiB");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(12), "12 bytes");
    }
}
