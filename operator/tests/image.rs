//! The operator image runs from its own layers. It is built as scripts/images.sh builds it
//! (`olmctl image build --base-image scratch --layer <runtime root> --binary <static operator>
//! --user 65532`, the root from the script's `--root` step: CA certificates from Debian's
//! package, users, /tmp), twice, to the same digest; unpacked with olmctl's own safe extraction
//! into a fresh directory; and started from there: the binary is static (no ELF interpreter, no
//! shared library), it runs chrooted into the unpacked root as the image's user when uid 0 may
//! chroot, and `run` serves /healthz and reaches an in-memory API named `localhost` in the
//! kubeconfig, so the C library linked into the binary has to resolve names from the image's
//! files.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use olmctl::build::{BinarySpec, binary};
use olmctl::oci::deliver::Dest;
use olmctl::oci::events::Silent;
use olmctl::oci::image::Platform;
use olmctl::oci::registry::Options;
use olmctl_testdata::image::{
    Runner, assert_static, manifest_and_config, runtime_root, static_binary, unpack,
};
use olmctl_testkit::api::ApiServer as FakeApi;

const TAG: &str = "ghcr.io/olmctl/olmctl-operator:0.3.0";
const ENTRYPOINT: &str = "/usr/local/bin/olmctl-operator";
const USER: u32 = 65532;
/// The API double's admin token (any token where the API authenticates none).
const ADMIN_TOKEN: &str = "testkit-admin-token";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `olmctl image build`'s library operation in-process, into the OCI layout `layout`;
/// returns the image's digest.
fn build(root: &Path, operator: &Path, layout: &Path) -> String {
    let spec = BinarySpec {
        base_image: "scratch".into(),
        binary: format!("{}:{ENTRYPOINT}", operator.display()),
        layers: vec![root.to_path_buf()],
        user: Some(USER.to_string()),
        workdir: None,
        env: Vec::new(),
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
    let index = olmctl_testdata::image::json(&layout.join("index.json"));
    let digest = index["manifests"][0]["digest"].as_str().expect("digest");
    assert_eq!(digest, built.delivered.digest);
    digest.to_string()
}

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
    let base = runtime_root();
    let operator = static_binary("olmctl-operator");
    let work = tempfile::tempdir().expect("tmp");
    // Built twice, the same image.
    let (l1, l2) = (work.path().join("layout-1"), work.path().join("layout-2"));
    let digests = std::thread::scope(|s| {
        let a = s.spawn(|| build(&base, &operator, &l1));
        let b = s.spawn(|| build(&base, &operator, &l2));
        (a.join().expect("build 1"), b.join().expect("build 2"))
    });
    assert_eq!(digests.0, digests.1, "same root and binary, same digest");
    let (manifest, config) = manifest_and_config(&l1);
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2, "the runtime root, then the binary");
    let size: u64 = layers.iter().filter_map(|l| l["size"].as_u64()).sum();
    eprintln!("image {} ({size} bytes of layers)", digests.0);
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!([ENTRYPOINT])
    );
    assert_eq!(
        config["config"]["User"],
        USER.to_string(),
        "runs as non-root"
    );

    // Unpacked with olmctl's safe extraction (no absolute symlink, nothing outside the root).
    let root = work.path().join("rootfs");
    unpack(&l1, "0.3.0", &root);
    let entry = root.join(ENTRYPOINT.trim_start_matches('/'));
    assert_static(&entry);
    assert!(root.join("etc/ssl/certs/ca-certificates.crt").is_file());

    // Chrooted into the root as the image's user, as a runtime starts it.
    let runner = Runner::for_root(&root, (USER, USER), ENTRYPOINT, &["--help"]);
    let o = runner
        .command(&root, "/", ENTRYPOINT, &["--help"])
        .output()
        .expect("start the entrypoint");
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        o.status.success() && out.contains("Usage: olmctl-operator <COMMAND>"),
        "{ENTRYPOINT} --help in {} ({runner:?}, {:?}):\n{out}\n{err}",
        root.display(),
        o.status
    );

    // The image serves: the API server is named `localhost`, resolved by the C library linked
    // into the binary from the /etc/hosts a kubelet writes.
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
    let (log_out, log_err) = (work.path().join("stdout"), work.path().join("stderr"));
    let mut cmd = runner.command(
        &root,
        "/",
        ENTRYPOINT,
        &[
            "run",
            // Any free ports: the operator says which it bound (a port picked here first
            // could be taken by another test before the operator binds it).
            "--probe-addr",
            "127.0.0.1:0",
            "--webhook-addr",
            "127.0.0.1:0",
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
    let probe_port = || {
        let out = std::fs::read_to_string(&log_out).unwrap_or_default();
        out.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|l| l["fields"]["message"] == "serving probes and metrics")
            .and_then(|l| {
                l["fields"]["addr"]
                    .as_str()?
                    .parse::<std::net::SocketAddr>()
                    .ok()
            })
            .map(|a| a.port())
    };
    wait_for("the probe address in the log", &|| probe_port().is_some());
    let probe = probe_port().expect("the probe port");
    wait_for("/healthz", &|| get(probe, "/healthz").is_some());
    assert_eq!(
        get(probe, "/healthz"),
        Some((200, "ok\n".to_string())),
        "{}",
        logs()
    );
    // It reached the API through the name (nothing else talks to this one): the binary's C
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
