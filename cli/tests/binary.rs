//! The `olmctl` binary against the in-memory API served over HTTP on 127.0.0.1, reached through
//! a kubeconfig file as kubectl would: install (Manual, approved with --yes) and uninstall.

mod cluster;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use cluster::*;

/// Serves the fake on a loopback port from a thread of its own; returns the port.
fn serve(fake: olmctl_testkit::api::ApiServer) -> u16 {
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

const TOKEN: &str = olmctl_testkit::api::ADMIN_TOKEN;

fn kubeconfig(dir: &Path, port: u16) -> std::path::PathBuf {
    let p = dir.join("kubeconfig");
    std::fs::write(
        &p,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:{port}\nusers:\n- name: admin\n  user:\n    token: {TOKEN}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: admin\ncurrent-context: fake\n"
        ),
    )
    .expect("write kubeconfig");
    p
}

fn olmctl(args: &[&str]) -> Output {
    olmctl_env(args, &[])
}

/// Runs the binary with `env` (KUBECONFIG unset unless given) under a 3 GiB address-space
/// limit (an endless read aborts it instead of filling the machine) and kills it after a
/// minute: a child still running then is a hang (a kubeconfig that is a FIFO), which fails
/// the test.
fn olmctl_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_olmctl"));
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 3 << 30,
                rlim_max: 3 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("run olmctl");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "{args:?} {env:?} hung (killed after 60 s): {}",
                text(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn install_and_uninstall_through_a_kubeconfig() {
    let (fake, _olm) = cluster(Scenario::default());
    let port = serve(fake.clone());
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig(dir.path(), port);
    let kc = kc.to_str().expect("utf-8");

    let o = olmctl(&[
        "install",
        "p",
        "--catalog",
        "quay.io/example/p-catalog:v1",
        "--channel",
        "stable",
        "--approval",
        "Manual",
        "--yes",
        "--kubeconfig",
        kc,
        "--interval",
        "1ms",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "CatalogSource olm/p-catalog created",
            "OperatorGroup operators/operators created",
            "Subscription operators/p created",
            "CatalogSource olm/p-catalog is READY",
            "Subscription p resolved to p.v1.0.0 (InstallPlan install-7xk2p)",
            "InstallPlan install-7xk2p requires approval (installs p.v1.0.0)",
        ]
    );
    assert_eq!(lines[6], "InstallPlan install-7xk2p approved");
    assert_eq!(
        *lines.last().unwrap(),
        "installed p.v1.0.0 in namespace operators"
    );
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));

    // --delete-crds with nobody to ask and no --yes: refused, nothing deleted.
    let o = olmctl(&[
        "uninstall",
        "p",
        "--delete-crds",
        "--kubeconfig",
        kc,
        "--interval",
        "1ms",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("pass --yes"),
        "{}",
        text(&o.stderr)
    );
    assert!(fake.get(OLM, "subscriptions", NS, "p").is_some());

    let o = olmctl(&[
        "uninstall",
        "p",
        "--delete-crds",
        "--yes",
        "--kubeconfig",
        kc,
        "--interval",
        "1ms",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "Subscription operators/p deleted\nClusterServiceVersion operators/p.v1.0.0 deleted\nCustomResourceDefinition widgets.example.com deleted\nuninstalled p from namespace operators\n"
    );
    assert!(
        fake.get(OLM, "clusterserviceversions", NS, "p.v1.0.0")
            .is_none()
    );
}

#[test]
fn connection_errors_name_the_file_or_context_and_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("nope");
    let missing = missing.to_str().expect("utf-8");
    // Nothing listens on port 9.
    let kc = kubeconfig(dir.path(), 9);
    let kc = kc.to_str().expect("utf-8");
    for (args, needle) in [
        // A missing kubeconfig: its path.
        (
            vec![
                "install",
                "p",
                "--catalog-source",
                "c",
                "--kubeconfig",
                missing,
            ],
            missing,
        ),
        // An unknown context: its name.
        (
            vec!["uninstall", "p", "--kubeconfig", kc, "--context", "staging"],
            "staging",
        ),
        // An unreachable API server: the object read, and why.
        (
            vec!["install", "p", "--catalog-source", "c", "--kubeconfig", kc],
            "Namespace operators: cannot reach the API server",
        ),
    ] {
        let o = olmctl(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    // Kubeconfig files are read as olmctl's inputs are: a FIFO (given or in $KUBECONFIG), a
    // link to a device or a file over --max-file-size is an error naming it, not a hang or an
    // endless read by kube.
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
    let fifo = fifo.to_str().expect("utf-8");
    let zero = dir.path().join("zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("link");
    let zero = zero.to_str().expect("utf-8");
    let install = ["install", "p", "--catalog-source", "c"];
    for (flags, env, needle) in [
        (vec!["--kubeconfig", fifo], vec![], "FIFO"),
        (
            vec![],
            vec![("KUBECONFIG", format!("{missing}:{fifo}"))],
            "FIFO",
        ),
        (vec!["--kubeconfig", zero], vec![], "character device"),
        (
            vec!["--kubeconfig", kc, "--max-file-size", "100"],
            vec![],
            "--max-file-size",
        ),
    ] {
        let args: Vec<&str> = install.iter().copied().chain(flags).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let o = olmctl_env(&args, &env);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?} {env:?}: {err}");
        assert!(
            err.starts_with("error: ")
                && err.contains(needle)
                && err.contains(dir.path().to_str().expect("utf-8")),
            "{args:?} {env:?}: {err}"
        );
    }
    // No configuration anywhere: where it looked and what to pass.
    let o = Command::new(env!("CARGO_BIN_EXE_olmctl"))
        .args(["install", "p", "--catalog-source", "c"])
        .env("HOME", dir.path())
        .env("KUBECONFIG", dir.path().join("missing"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .output()
        .expect("run");
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: no cluster configuration") && err.contains("pass --kubeconfig"),
        "{err}"
    );
}

#[test]
fn install_version_pins_it_with_manual_approval_and_leaves_the_next_plan() {
    // Defect F: --version set only startingCSV; with Automatic approval OLM's follow-up plan
    // then installed the channel's next version.
    let sc = Scenario {
        follow_up: true,
        ..Scenario::default()
    };
    let (fake, _olm) = cluster(sc);
    let port = serve(fake.clone());
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig(dir.path(), port);
    // The catalog to look 1.0.0 up in (the image is not pulled).
    let fbc = dir.path().join("catalog");
    std::fs::create_dir(&fbc).expect("mkdir");
    std::fs::write(
        fbc.join("catalog.json"),
        concat!(
            r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}"#,
            "\n",
            r#"{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}]}"#,
            "\n",
            r#"{"schema":"olm.bundle","package":"p","name":"p.v1.0.0","image":"quay.io/example/p:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}"#,
            "\n",
            r#"{"schema":"olm.bundle","package":"p","name":"p.v1.1.0","image":"quay.io/example/p:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}}]}"#,
            "\n"
        ),
    )
    .expect("write catalog");
    let o = olmctl(&[
        "install",
        "p",
        "--catalog",
        "quay.io/example/p-catalog:v1",
        "--catalog-dir",
        fbc.to_str().expect("utf-8"),
        "--channel",
        "stable",
        "--version",
        "1.0.0",
        "--yes",
        "--kubeconfig",
        kc.to_str().expect("utf-8"),
        "--interval",
        "1ms",
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let sub = fake.get(OLM, "subscriptions", NS, "p").expect("sub");
    assert_eq!(sub["spec"]["installPlanApproval"], "Manual");
    assert_eq!(sub["spec"]["startingCSV"], "p.v1.0.0");
    assert_eq!(
        fake.get(OLM, "installplans", NS, PLAN).expect("plan")["spec"]["approved"],
        true
    );
    assert_eq!(
        fake.get(OLM, "installplans", NS, "install-next")
            .expect("next")["spec"]["approved"],
        false,
        "the follow-up plan is not approved"
    );
    assert!(
        fake.get(OLM, "clusterserviceversions", NS, "p.v1.1.0")
            .is_none()
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "installed p.v1.0.0 in namespace operators",
            "pinned to p.v1.0.0: the Subscription's approval is Manual, so OLM installs no newer version until its InstallPlan is approved"
        ],
        "{out}"
    );
}

/// An API server that accepts TCP connections and never writes a byte (the sockets stay
/// open); returns its port.
fn silent_server() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for s in l.incoming().flatten() {
            open.push(s);
        }
    });
    port
}

/// What a bounded run of `olmctl` did.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
    took: std::time::Duration,
}

/// `olmctl ARGS --kubeconfig K` with K a kubeconfig for `server` (with the testkit's CA for
/// https://), run as a child that is killed after 60 s: a hang fails the test (with what the
/// child printed), not the suite. With `--timeout 5s` it must end within 20 s (slack for a
/// loaded machine).
fn run_against(server: &str, args: &[&str]) -> Run {
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, olmctl_testkit::api::kubeconfig(server, TOKEN, NS)).expect("kubeconfig");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let start = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_olmctl"))
        .args(args)
        .arg("--kubeconfig")
        .arg(&kc)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("out"))
        .stderr(std::fs::File::create(&err).expect("err"))
        .spawn()
        .expect("run olmctl");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code();
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "olmctl {args:?} against {server} still running after 60s (killed)\nstdout:\n{}\nstderr:\n{}",
                read(&out),
                read(&err)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let run = Run {
        code,
        out: read(&out),
        err: read(&err),
        took: start.elapsed(),
    };
    assert!(
        run.took < std::time::Duration::from_secs(20),
        "{args:?} against {server}: took {:?}\n{}",
        run.took,
        run.err
    );
    run
}

const INSTALL: [&str; 6] = [
    "install",
    "p",
    "--catalog",
    "quay.io/example/p-catalog:v1",
    "--timeout",
    "5s",
];
const UNINSTALL: [&str; 4] = ["uninstall", "p", "--timeout", "5s"];

#[test]
fn install_and_uninstall_end_within_timeout_when_the_api_server_never_answers() {
    // Issue 28 item 10: against an API server that accepts TCP and never answers, install hung
    // until killed (the first calls had no deadline). Over http:// nothing answers the
    // request; over https:// nothing answers the TLS handshake. Exit 2: the API server did
    // not answer, as when it refuses the connection.
    let port = silent_server();
    let runs: Vec<(String, Vec<&str>, &str, Run)> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for scheme in ["http", "https"] {
            for (args, step) in [
                (INSTALL.to_vec(), "while reading Namespace operators"),
                (UNINSTALL.to_vec(), "while reading Subscription operators/p"),
            ] {
                let server = format!("{scheme}://127.0.0.1:{port}");
                handles.push(s.spawn(move || {
                    let run = run_against(&server, &args);
                    (server, args, step, run)
                }));
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("run"))
            .collect()
    });
    for (server, args, step, run) in runs {
        let err = &run.err;
        assert_eq!(run.code, Some(2), "{args:?} against {server}: {err}");
        assert!(
            run.took >= std::time::Duration::from_secs(4),
            "{:?}",
            run.took
        );
        assert!(
            err.starts_with("error: ")
                && err.contains(&format!("no answer from the API server {server} "))
                && err.contains(step)
                && err.contains("raise --timeout"),
            "{args:?} against {server}: {err}"
        );
        assert!(run.out.is_empty(), "{}", run.out);
        assert!(!err.contains(TOKEN));
    }
}

#[test]
fn a_request_the_api_server_never_answers_ends_at_the_timeout() {
    // The connection and the request go through (the API double reads it) and no response
    // ever comes: a hung API server, as against a partitioned kube-apiserver.
    let (fake, _olm) = cluster(Scenario::default());
    let server = fake.serve_on_loopback();
    fake.partition(TOKEN);
    let run = run_against(&server, &UNINSTALL);
    assert_eq!(run.code, Some(2), "{}", run.err);
    assert!(
        run.err.contains(&format!("no answer from the API server {server} "))
            && run.err.contains(
                "while reading Subscription operators/p (GET /apis/operators.coreos.com/v1alpha1/namespaces/operators/subscriptions/p)"
            ),
        "{}",
        run.err
    );
}

#[test]
fn an_api_server_that_goes_silent_while_install_waits_ends_it_at_the_timeout() {
    // The objects are written, then the API server stops answering: the wait for OLM ends at
    // --timeout (exit 1, as any timeout of the wait), naming the step and the read that got
    // no answer.
    let (fake, _olm) = cluster(Scenario::default());
    let server = fake.serve_on_loopback();
    let f = fake.clone();
    fake.set_hook(std::sync::Arc::new(move |m, path| {
        if m == http::Method::POST && path.ends_with("/subscriptions") {
            f.partition(TOKEN);
        }
    }));
    let run = run_against(&server, &INSTALL);
    assert_eq!(run.code, Some(1), "{}\n{}", run.out, run.err);
    assert!(
        run.out.contains("Subscription operators/p created"),
        "{}",
        run.out
    );
    assert!(
        run.err
            .starts_with("error: timed out after 5s waiting for ")
            && run
                .err
                .contains(&format!("no answer from the API server {server} "))
            && run
                .err
                .contains("while reading CatalogSource olm/p-catalog"),
        "{}",
        run.err
    );
}

/// Issue 40 item 4 on a cluster: the CatalogSource's image (read from the API) is pulled and
/// `--version` is looked up in it, as is the `--catalog` image with `--print`. The image is
/// crunchy-postgres-operator's catalog of the certified index (CSVs `postgresoperator.v*`),
/// pushed to a real registry on loopback.
#[test]
fn install_version_looks_the_csv_up_in_the_catalog_sources_image() {
    let reg = olmctl_testdata::registry::TestRegistry::start();
    let image = reg.image("certified-operators:v4.21");
    let fixture = olmctl_testdata::shared_fixtures().join("first-day/catalogs/v4.21");
    let pushed = olmctl(&[
        "catalog",
        "push",
        fixture.to_str().expect("utf-8"),
        "--tag",
        &image,
    ]);
    assert_eq!(pushed.status.code(), Some(0), "{}", text(&pushed.stderr));

    let (fake, _olm) = cluster(Scenario::default());
    fake.insert(
        "catalogsources",
        serde_json::json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": "certified-operators", "namespace": "olm"},
            "spec": {"sourceType": "grpc", "image": image}}),
    );
    let port = serve(fake.clone());
    let dir = tempfile::tempdir().expect("tmp");
    let kc = kubeconfig(dir.path(), port);
    let o = olmctl(&[
        "install",
        "crunchy-postgres-operator",
        "--catalog-source",
        "certified-operators",
        "--version",
        "5.8.8",
        "--no-wait",
        "--kubeconfig",
        kc.to_str().expect("utf-8"),
    ]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(!err.contains("guess"), "{err}");
    let sub = fake
        .get(OLM, "subscriptions", NS, "crunchy-postgres-operator")
        .expect("sub");
    assert_eq!(sub["spec"]["startingCSV"], "postgresoperator.v5.8.8");

    // --catalog IMAGE --print: the image is pulled for the lookup.
    let o = olmctl(&[
        "install",
        "crunchy-postgres-operator",
        "--catalog",
        &image,
        "--version",
        "5.8.8",
        "--print",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        out.contains("  startingCSV: postgresoperator.v5.8.8\n"),
        "{out}"
    );
}
