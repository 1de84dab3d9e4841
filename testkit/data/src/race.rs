//! A thread that keeps swapping what is at a path inside an output directory for a symbolic
//! link to a victim outside it, so that what a writer finds there may be the other one the
//! next instant; the path always exists. What the output-directory race tests run beside the
//! writer.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

/// The exchanging thread; stopped when dropped.
pub struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("no NUL in a test path")
}

impl Swapper {
    fn spawn(mut step: impl FnMut() + Send + 'static) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let (flag, n) = (stop.clone(), swaps.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                step();
                n.fetch_add(1, Ordering::Relaxed);
            }
        });
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    /// Keeps exchanging `a` and `b` (Linux `renameat2(RENAME_EXCHANGE)`, atomic; both must
    /// exist, on one filesystem): a directory and a link to a directory, say.
    pub fn exchange(a: &Path, b: &Path) -> Swapper {
        let (a, b) = (c(a), c(b));
        Swapper::spawn(move || {
            // SAFETY: two valid C strings; the call only renames.
            let rc = unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    a.as_ptr(),
                    libc::AT_FDCWD,
                    b.as_ptr(),
                    libc::RENAME_EXCHANGE,
                )
            };
            assert_eq!(rc, 0, "renameat2: {}", std::io::Error::last_os_error());
        })
    }

    /// Keeps putting at the file `path` a link to `target`, then a regular file, each made
    /// beside it and renamed over it, about as long one as the other (so a writer that
    /// replaces the link does not end the race: the next one is new).
    pub fn relink(path: &Path, target: &Path) -> Swapper {
        let (path, target) = (path.to_path_buf(), target.to_path_buf());
        let (link, file) = (
            path.with_extension("swapper-link"),
            path.with_extension("swapper-file"),
        );
        Swapper::spawn(move || {
            std::os::unix::fs::symlink(&target, &link).expect("link");
            std::fs::write(&file, "swapped in").expect("file");
            std::fs::rename(&link, &path).expect("rename");
            for _ in 0..4 {
                let _ = std::fs::symlink_metadata(&path);
            }
            std::fs::rename(&file, &path).expect("rename");
        })
    }

    /// How many swaps it has made so far.
    pub fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    /// Stops the thread: how many swaps it made.
    pub fn stop(mut self) -> u64 {
        self.halt();
        self.swaps()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("the swapper does not panic");
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.halt();
    }
}
