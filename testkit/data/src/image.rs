//! Running what an image ships: the static binaries scripts/test.sh builds, the images' runtime
//! root (`scripts/images.sh --root`), an image unpacked from an OCI layout with olmctl's own
//! safe extraction, ELF program headers read as the kernel and a loader read them, and a process
//! started in an unpacked root as a container runtime starts it (chroot, chdir to the image's
//! working directory, then the image's group and user).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The target the static binaries are built for.
pub const STATIC_TARGET: &str = "x86_64-unknown-linux-musl";

/// A static (musl) build of the workspace binary `name` (`olmctl`, `olmctl-operator`): from
/// `$STATIC_BIN_DIR` (scripts/test.sh sets it), else `target/x86_64-unknown-linux-musl/debug`.
pub fn static_binary(name: &str) -> PathBuf {
    let dir = std::env::var_os("STATIC_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            crate::root()
                .join("target")
                .join(STATIC_TARGET)
                .join("debug")
        });
    let p = dir.join(name);
    assert!(
        p.is_file(),
        "{}: no static build of {name}; scripts/test.sh builds it (`bash scripts/static.sh -p \
         olmctl-cli --bin olmctl -p olmctl-operator --bin olmctl-operator`)",
        p.display()
    );
    p
}

/// The images' runtime root from `scripts/images.sh --root` (CA certificates, users, /tmp;
/// downloaded once with apt-get and cached under target/).
pub fn runtime_root() -> PathBuf {
    let script = crate::root().join("scripts/images.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg("--root")
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/images.sh");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        o.status.success(),
        "scripts/images.sh --root failed (it needs apt-get download, or the cache that \
         scripts/test.sh prepares):\n{err}"
    );
    let root = PathBuf::from(out.lines().last().expect("the root's path").trim());
    assert!(
        root.join("etc/ssl/certs/ca-certificates.crt").is_file(),
        "{}: no CA bundle",
        root.display()
    );
    root
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A JSON file.
pub fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).expect("read")).expect("JSON")
}

/// A blob of an OCI layout, as JSON.
pub fn blob(layout: &Path, digest: &str) -> Value {
    json(
        &layout
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:")),
    )
}

/// The manifest and config of the one image in an OCI layout.
pub fn manifest_and_config(layout: &Path) -> (Value, Value) {
    let index = json(&layout.join("index.json"));
    let digest = index["manifests"][0]["digest"].as_str().expect("digest");
    let manifest = blob(layout, digest);
    let config = blob(
        layout,
        manifest["config"]["digest"].as_str().expect("config"),
    );
    (manifest, config)
}

/// Unpacks the image tagged `tag` in `layout` into the new directory `dest` with olmctl's safe
/// extraction (no absolute symlink, nothing outside the root), as a runtime's root (0755).
pub fn unpack(layout: &Path, tag: &str, dest: &Path) {
    std::fs::create_dir(dest).expect("mkdir");
    olmctl::oci::layout_read::extract(layout, None, Some(tag), dest, Default::default())
        .expect("the image unpacks");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What the kernel and a dynamic loader read from an ELF file: PT_INTERP and the DT_NEEDED
/// names.
#[derive(Debug)]
pub struct Elf {
    /// The program interpreter (the dynamic loader), if any.
    pub interp: Option<String>,
    /// The shared libraries named.
    pub needed: Vec<String>,
}

/// Reads a 64-bit little-endian ELF file's program headers (the loader's view, not sections).
pub fn read_elf(data: &[u8], what: &str) -> Elf {
    assert!(
        data.len() > 64 && data[..4] == *b"\x7fELF" && data[4] == 2 && data[5] == 1,
        "{what}: not a 64-bit little-endian ELF file"
    );
    let u16_at = |o: usize| u16::from_le_bytes(data[o..o + 2].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(data[o..o + 8].try_into().unwrap()) as usize;
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    let headers: Vec<(u32, usize, usize, usize)> = (0..phnum)
        .map(|i| {
            let h = phoff + i * phentsize;
            let kind = u32::from_le_bytes(data[h..h + 4].try_into().unwrap());
            (kind, u64_at(h + 8), u64_at(h + 16), u64_at(h + 32))
        })
        .collect();
    let cstr = |o: usize| {
        let end = data[o..].iter().position(|&b| b == 0).expect("NUL") + o;
        String::from_utf8_lossy(&data[o..end]).into_owned()
    };
    // PT_INTERP is 3, PT_DYNAMIC 2, PT_LOAD 1.
    let interp = headers
        .iter()
        .find(|h| h.0 == 3)
        .map(|&(_, off, _, _)| cstr(off));
    let mut needed = Vec::new();
    if let Some(&(_, dyn_off, _, dyn_size)) = headers.iter().find(|h| h.0 == 2) {
        // (d_tag, d_val): DT_NEEDED is 1, DT_STRTAB 5, DT_NULL ends the table.
        let entries: Vec<(usize, usize)> = (0..dyn_size / 16)
            .map(|i| (u64_at(dyn_off + i * 16), u64_at(dyn_off + i * 16 + 8)))
            .take_while(|e| e.0 != 0)
            .collect();
        let names: Vec<usize> = entries.iter().filter(|e| e.0 == 1).map(|e| e.1).collect();
        if !names.is_empty() {
            let strtab_addr = entries.iter().find(|e| e.0 == 5).expect("DT_STRTAB").1;
            let strtab = headers
                .iter()
                .find(|&&(k, _, vaddr, filesz)| {
                    k == 1 && vaddr <= strtab_addr && strtab_addr < vaddr + filesz
                })
                .map(|&(_, off, vaddr, _)| strtab_addr - vaddr + off)
                .expect("DT_STRTAB in a PT_LOAD segment");
            needed = names.iter().map(|n| cstr(strtab + n)).collect();
        }
    }
    Elf { interp, needed }
}

/// Asserts that `path` is a static executable: no interpreter, no shared library.
pub fn assert_static(path: &Path) {
    let elf = read_elf(
        &std::fs::read(path).expect("read"),
        &path.display().to_string(),
    );
    assert_eq!(
        elf.interp,
        None,
        "{}: names an ELF interpreter (not static)",
        path.display()
    );
    assert!(
        elf.needed.is_empty(),
        "{}: needs shared libraries {:?}",
        path.display(),
        elf.needed
    );
}

/// The real user id of this process.
fn uid() -> Option<u32> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// How a test starts an image's entrypoint in an unpacked root.
#[derive(Debug, Clone)]
pub enum Runner {
    /// As a runtime does: chroot into the root, chdir to the working directory, then the
    /// image's group and user (possible as uid 0).
    Chroot {
        /// UID and GID.
        user: (u32, u32),
    },
    /// The entrypoint's file run in place, with paths under the root (when this process may
    /// not chroot; a static binary needs nothing else from the root).
    Direct,
}

impl Runner {
    /// Chroot when this process is uid 0 and the kernel lets it chroot (checked by running
    /// `probe`, an executable path in the image, with `args`), else [`Runner::Direct`].
    pub fn for_root(root: &Path, user: (u32, u32), probe: &str, args: &[&str]) -> Runner {
        if uid() != Some(0) {
            eprintln!("not uid 0: the image's entrypoint runs in place, not chrooted");
            return Runner::Direct;
        }
        let c = Runner::Chroot { user };
        match c.command(root, "/", probe, args).output() {
            Ok(_) => c,
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                eprintln!("chroot(2) refused here ({e}): the entrypoint runs in place");
                Runner::Direct
            }
            Err(e) => panic!("cannot start {probe} in {}: {e}", root.display()),
        }
    }

    /// The command that runs `entry` (absolute in the image) with `args` in `workdir`
    /// (absolute in the image).
    pub fn command(&self, root: &Path, workdir: &str, entry: &str, args: &[&str]) -> Command {
        match self {
            Runner::Chroot { user } => {
                let mut c = Command::new(entry);
                c.args(args);
                let (root, workdir) = (cstring(root.as_os_str()), cstring(workdir.as_ref()));
                let (uid, gid) = *user;
                use std::os::unix::process::CommandExt;
                // SAFETY: only async-signal-safe calls between fork and exec.
                unsafe {
                    c.pre_exec(move || {
                        let check = |rc: libc::c_int| {
                            if rc == 0 {
                                Ok(())
                            } else {
                                Err(std::io::Error::last_os_error())
                            }
                        };
                        check(libc::chroot(root.as_ptr()))?;
                        check(libc::chdir(workdir.as_ptr()))?;
                        check(libc::setgroups(0, std::ptr::null()))?;
                        check(libc::setgid(gid))?;
                        check(libc::setuid(uid))
                    });
                }
                c
            }
            Runner::Direct => {
                let mut c = Command::new(root.join(entry.trim_start_matches('/')));
                c.args(args)
                    .current_dir(root.join(workdir.trim_start_matches('/')));
                c
            }
        }
    }

    /// The path a file at `p` (absolute in the image) has for the running entrypoint.
    pub fn path_of(&self, root: &Path, p: &str) -> String {
        match self {
            Runner::Chroot { .. } => p.to_string(),
            Runner::Direct => root.join(p.trim_start_matches('/')).display().to_string(),
        }
    }
}

fn cstring(s: &std::ffi::OsStr) -> std::ffi::CString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(s.as_bytes()).expect("no NUL in a path")
}
