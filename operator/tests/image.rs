//! The operator image runs from its own layers. It is built as scripts/operator-image.sh builds
//! it (`olmctl image build --base-image scratch --layer <Debian root> --binary <operator>
//! --user 65532`, the root from the script's `--root` step: `apt-get download` + `dpkg-deb
//! -x`), twice, to the same digest; unpacked with olmctl's own safe extraction into a fresh
//! directory; and started from there: the binary's ELF interpreter and every library it needs
//! (and they need) are in the unpacked root, the image's loader runs `--help` with the root's
//! libraries alone, chroot runs it as the image's user when uid 0 may chroot, and `run` serves
//! /healthz and reaches an in-memory API named `localhost` in the kubeconfig, so the image's
//! resolver has to work.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use olmctl::build::{BinarySpec, binary};
use olmctl::oci::deliver::Dest;
use olmctl::oci::events::Silent;
use olmctl::oci::image::Platform;
use olmctl::oci::registry::Options;
use olmctl_testkit::api::ApiServer as FakeApi;
use serde_json::Value;

const OPERATOR: &str = env!("CARGO_BIN_EXE_olmctl-operator");
const TAG: &str = "ghcr.io/olmctl/olmctl-operator:0.3.0";
const ENTRYPOINT: &str = "/usr/local/bin/olmctl-operator";
const USER: &str = "65532";
/// The API double's admin token (any token where the API authenticates none).
const ADMIN_TOKEN: &str = "testkit-admin-token";

/// The Debian runtime root, from the script's download-and-unpack step (cached under target/).
fn debian_root() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/operator-image.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg("--root")
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/operator-image.sh");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        o.status.success(),
        "scripts/operator-image.sh --root failed (it needs apt-get download, or the cache \
         that scripts/test.sh prepares):\n{err}"
    );
    eprint!("{err}");
    let root = PathBuf::from(out.lines().last().expect("the root's path").trim());
    assert!(root.join("lib64").exists(), "{}: no lib64", root.display());
    root
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `olmctl image build`'s library operation in-process, into the OCI layout `layout`;
/// returns the image's digest.
fn build(root: &Path, layout: &Path) -> String {
    let spec = BinarySpec {
        base_image: "scratch".into(),
        binary: format!("{OPERATOR}:{ENTRYPOINT}"),
        layers: vec![root.to_path_buf()],
        user: Some(USER.into()),
        platform: Platform::host(),
        labels: Default::default(),
    };
    let dest = Dest {
        tag: TAG.into(),
        push: false,
        layout: Some(layout.to_path_buf()),
    };
    let opts = Options {
        retries: 0,
        timeout: Duration::from_secs(60),
        ..Options::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let built = rt
        .block_on(binary(&spec, &dest, &opts, &Silent))
        .unwrap_or_else(|e| panic!("image build failed: {e:?}"));
    let index = json(&layout.join("index.json"));
    let digest = index["manifests"][0]["digest"].as_str().expect("digest");
    assert_eq!(digest, built.delivered.digest);
    digest.to_string()
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).expect("read")).expect("JSON")
}

fn blob(layout: &Path, digest: &str) -> Value {
    json(
        &layout
            .join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:")),
    )
}

/// What the dynamic loader reads from an ELF file: PT_INTERP and the DT_NEEDED names.
struct Elf {
    interp: Option<String>,
    needed: Vec<String>,
}

/// Reads a 64-bit little-endian ELF file's program headers (the loader's view, not sections).
fn read_elf(data: &[u8], what: &str) -> Elf {
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
        let strtab_addr = entries.iter().find(|e| e.0 == 5).expect("DT_STRTAB").1;
        let strtab = headers
            .iter()
            .find(|&&(k, _, vaddr, filesz)| {
                k == 1 && vaddr <= strtab_addr && strtab_addr < vaddr + filesz
            })
            .map(|&(_, off, vaddr, _)| strtab_addr - vaddr + off)
            .expect("DT_STRTAB in a PT_LOAD segment");
        needed = entries
            .iter()
            .filter(|e| e.0 == 1)
            .map(|e| cstr(strtab + e.1))
            .collect();
    }
    Elf { interp, needed }
}

/// `path` resolved inside `root` as a process chrooted there would resolve it: symlinks are
/// followed, an absolute target starts again at `root`, `..` stops at `root`. `None` when it
/// does not exist.
fn in_root(root: &Path, path: &str) -> Option<PathBuf> {
    let mut todo: Vec<String> = path
        .split('/')
        .filter(|c| !c.is_empty())
        .rev()
        .map(str::to_string)
        .collect();
    let mut at: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(c) = todo.pop() {
        match c.as_str() {
            "." => continue,
            ".." => {
                at.pop();
                continue;
            }
            _ => {}
        }
        let p = at
            .iter()
            .fold(root.to_path_buf(), |p, c| p.join(c))
            .join(&c);
        let meta = std::fs::symlink_metadata(&p).ok()?;
        if meta.file_type().is_symlink() {
            hops += 1;
            assert!(hops < 40, "{path}: too many symlinks in {}", root.display());
            let target = std::fs::read_link(&p).ok()?;
            if target.is_absolute() {
                at.clear();
            }
            for part in target.components().rev() {
                match part {
                    Component::Normal(n) => todo.push(n.to_string_lossy().into_owned()),
                    Component::ParentDir => todo.push("..".into()),
                    _ => {}
                }
            }
        } else {
            at.push(c);
        }
    }
    Some(at.iter().fold(root.to_path_buf(), |p, c| p.join(c)))
}

/// The library directories of the root, as the loader searches them without a cache.
fn lib_dirs(root: &Path) -> Vec<String> {
    let triplet = format!("{}-linux-gnu", std::env::consts::ARCH);
    [
        format!("lib/{triplet}"),
        format!("usr/lib/{triplet}"),
        "lib64".into(),
        "usr/lib64".into(),
        "lib".into(),
        "usr/lib".into(),
    ]
    .into_iter()
    .filter(|d| in_root(root, d).is_some_and(|p| p.is_dir()))
    .collect()
}

/// Every DT_NEEDED of `file` (an absolute path in the image), transitively, found under the
/// root's library directories; returns (name, where in the image) pairs.
fn needed_libraries(root: &Path, file: &str, dirs: &[String]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut todo = vec![file.to_string()];
    while let Some(f) = todo.pop() {
        let real = in_root(root, &f).unwrap_or_else(|| panic!("{f}: not in the image"));
        let elf = read_elf(&std::fs::read(&real).expect("read"), &f);
        for lib in elf.needed {
            if found.iter().any(|(n, _)| *n == lib) {
                continue;
            }
            let at = dirs
                .iter()
                .map(|d| format!("/{d}/{lib}"))
                .find(|p| in_root(root, p).is_some_and(|r| r.is_file()))
                .unwrap_or_else(|| {
                    panic!("{f} needs {lib}, which is in none of the image's {dirs:?}")
                });
            found.push((lib, at.clone()));
            todo.push(at);
        }
    }
    found
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

/// The chroot(8) program, when there is one.
fn chroot_program() -> Option<PathBuf> {
    [
        "/usr/sbin/chroot",
        "/usr/bin/chroot",
        "/sbin/chroot",
        "/bin/chroot",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

/// How the test starts the image's entrypoint: chrooted into the unpacked root as the image's
/// user (what a runtime does), or through the image's own loader with the root's libraries.
enum Runner {
    Chroot {
        program: PathBuf,
        userspec: String,
    },
    Loader {
        loader: PathBuf,
        library_path: String,
    },
}

impl Runner {
    fn command(&self, root: &Path, args: &[&str]) -> Command {
        let mut c = match self {
            Runner::Chroot { program, userspec } => {
                let mut c = Command::new(program);
                c.arg(format!("--userspec={userspec}"))
                    .arg(root)
                    .arg(ENTRYPOINT);
                c
            }
            Runner::Loader {
                loader,
                library_path,
            } => {
                let mut c = Command::new(loader);
                c.args(["--inhibit-cache", "--library-path", library_path])
                    .arg(in_root(root, ENTRYPOINT).expect("entrypoint"));
                c
            }
        };
        c.args(args).env_clear().stdin(Stdio::null());
        c
    }

    /// The path a file written at `p` under the root has for the running binary.
    fn path_of(&self, root: &Path, p: &str) -> String {
        match self {
            Runner::Chroot { .. } => p.to_string(),
            Runner::Loader { .. } => root.join(p.trim_start_matches('/')).display().to_string(),
        }
    }
}

/// Serves the fake on a loopback port from a thread of its own; returns the port.
fn serve(fake: FakeApi) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    l.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).expect("listener");
            fake.serve_http(l).await;
        });
    });
    port
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// One plain HTTP GET on 127.0.0.1; (status, body), or `None` when nothing answers.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let status = resp.split_whitespace().nth(1)?.parse().ok()?;
    let body = resp.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

/// Kills the process when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_operator_image_runs_from_its_own_layers() {
    let debian = debian_root();
    let work = tempfile::tempdir().expect("tmp");
    // Built twice, the same image.
    let (l1, l2) = (work.path().join("layout-1"), work.path().join("layout-2"));
    let digests = std::thread::scope(|s| {
        let a = s.spawn(|| build(&debian, &l1));
        let b = s.spawn(|| build(&debian, &l2));
        (a.join().expect("build 1"), b.join().expect("build 2"))
    });
    assert_eq!(digests.0, digests.1, "same root and binary, same digest");
    let manifest = blob(&l1, &digests.0);
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2, "the Debian root, then the binary");
    let size: u64 = layers.iter().filter_map(|l| l["size"].as_u64()).sum();
    eprintln!("image {} ({size} bytes of layers)", digests.0);
    let config = blob(&l1, manifest["config"]["digest"].as_str().expect("config"));
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!([ENTRYPOINT])
    );
    assert_eq!(config["config"]["User"], USER, "runs as non-root");

    // Unpacked with olmctl's safe extraction (no absolute symlink, nothing outside the root).
    let root = work.path().join("rootfs");
    std::fs::create_dir(&root).expect("mkdir");
    olmctl::oci::layout_read::extract(&l1, None, Some("0.3.0"), &root, Default::default())
        .expect("the image unpacks");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    // The loader the binary names, and every library it (and they) need, are in the image.
    let entry = in_root(&root, ENTRYPOINT).expect("the entrypoint is in the image");
    let elf = read_elf(&std::fs::read(&entry).expect("read"), ENTRYPOINT);
    let interp = elf
        .interp
        .expect("a dynamically linked binary names its loader");
    let loader = in_root(&root, &interp)
        .filter(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the binary's interpreter {interp} is not in the unpacked image (it cannot start)"
            )
        });
    let dirs = lib_dirs(&root);
    let libs = needed_libraries(&root, ENTRYPOINT, &dirs);
    eprintln!("interpreter {interp}; libraries {libs:?}");
    assert!(
        libs.iter().any(|(n, _)| n == "libc.so.6"),
        "no C library among {libs:?}"
    );
    let library_path = dirs
        .iter()
        .map(|d| root.join(d).display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let loader_run = Runner::Loader {
        loader,
        library_path,
    };

    // The image's loader, with the image's libraries only: each resolves inside the root.
    let o = loader_run
        .command(&root, &["--help"])
        .output()
        .expect("loader");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        o.status.success() && out.contains("Usage: olmctl-operator <COMMAND>"),
        "the image's loader cannot run the entrypoint ({:?}):\n{out}\n{err}",
        o.status
    );
    let Runner::Loader {
        loader,
        library_path,
    } = &loader_run
    else {
        unreachable!()
    };
    let o = Command::new(loader)
        .args(["--inhibit-cache", "--library-path", library_path, "--list"])
        .arg(&entry)
        .env_clear()
        .output()
        .expect("ld.so --list");
    let list = text(&o.stdout);
    assert!(o.status.success(), "{list}{}", text(&o.stderr));
    for line in list.lines().filter(|l| l.contains("=>")) {
        let at = line.split("=>").nth(1).unwrap_or_default().trim();
        assert!(
            at.starts_with(&*root.to_string_lossy()),
            "a library from outside the image: {line}"
        );
    }

    // chroot into the root as the image's user, as a runtime starts it.
    let mut runner = &loader_run;
    let chroot_run;
    match (uid(), chroot_program()) {
        (Some(0), Some(program)) => {
            let userspec = format!("{USER}:{USER}");
            let c = Runner::Chroot { program, userspec };
            let o = c.command(&root, &["--help"]).output().expect("chroot");
            let (out, err) = (text(&o.stdout), text(&o.stderr));
            if o.status.code() == Some(125) && err.contains("cannot change root directory") {
                eprintln!(
                    "chroot(2) refused here ({}); the image is checked through its loader only",
                    err.trim()
                );
            } else {
                assert!(
                    o.status.success() && out.contains("Usage: olmctl-operator <COMMAND>"),
                    "chroot {} {ENTRYPOINT} --help ({:?}):\n{out}\n{err}",
                    root.display(),
                    o.status
                );
                eprintln!("chroot: the entrypoint runs as {USER} inside the unpacked image");
                chroot_run = c;
                runner = &chroot_run;
            }
        }
        (uid, program) => eprintln!(
            "no chroot (uid {uid:?}, chroot(8) at {program:?}): the image is checked through \
             its loader only, resolving names with this machine's /etc files"
        ),
    }

    // The image serves: the API server is named `localhost`, resolved by the image's C library
    // (its nsswitch.conf, and the /etc/hosts a kubelet writes).
    let nss = std::fs::read_to_string(root.join("etc/nsswitch.conf")).expect("nsswitch.conf");
    assert!(nss.contains("hosts: files dns"), "{nss}");
    std::fs::write(root.join("etc/hosts"), "127.0.0.1\tlocalhost\n").expect("hosts");
    let fake = FakeApi::new();
    fake.insert(
        "namespaces",
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "olmctl-system"}}),
    );
    fake.insert(
        "customresourcedefinitions",
        serde_json::to_value(olmctl_operator::crd::crd()).expect("crd"),
    );
    let api_port = serve(fake.clone());
    std::fs::write(
        root.join("kubeconfig"),
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://localhost:{api_port}\nusers:\n- name: admin\n  user:\n    token: {ADMIN_TOKEN}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: admin\ncurrent-context: fake\n"
        ),
    )
    .expect("kubeconfig");
    let (probe, webhook) = (free_port(), free_port());
    let (log_out, log_err) = (work.path().join("stdout"), work.path().join("stderr"));
    let mut cmd = runner.command(
        &root,
        &[
            "run",
            "--probe-addr",
            &format!("127.0.0.1:{probe}"),
            "--webhook-addr",
            &format!("127.0.0.1:{webhook}"),
        ],
    );
    cmd.env("KUBECONFIG", runner.path_of(&root, "/kubeconfig"))
        .env("POD_NAMESPACE", "olmctl-system")
        .stdout(std::fs::File::create(&log_out).expect("log"))
        .stderr(std::fs::File::create(&log_err).expect("log"));
    let mut op = Running(cmd.spawn().expect("start the operator"));
    let logs = || {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            std::fs::read_to_string(&log_out).unwrap_or_default(),
            std::fs::read_to_string(&log_err).unwrap_or_default()
        )
    };
    // Polls `check` for up to a minute; fails with the operator's output when it stops first.
    let mut wait_for = |what: &str, check: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if check() {
                return;
            }
            if let Ok(Some(status)) = op.0.try_wait() {
                panic!("the operator exited ({status}) before {what}:\n{}", logs());
            }
            assert!(
                Instant::now() < deadline,
                "no {what} within a minute:\n{}",
                logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for("/healthz", &|| get(probe, "/healthz").is_some());
    assert_eq!(
        get(probe, "/healthz"),
        Some((200, "ok\n".to_string())),
        "{}",
        logs()
    );
    // It reached the API through the name (nothing else talks to this one): the image's C
    // library resolved `localhost`. Without the /etc/hosts above, nothing arrives.
    wait_for("request to the API", &|| !fake.log().is_empty());
    eprintln!(
        "the operator from the image asked the API for {:?}",
        fake.log()
            .iter()
            .map(|r| r.uri.clone())
            .take(3)
            .collect::<Vec<_>>()
    );
    drop(op);
}
