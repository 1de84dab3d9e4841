//! The real `olmctl-operator run` binary as pods against the API double served over HTTP:
//! each replica with its own address, a kubeconfig with its own ServiceAccount token, and the
//! RBAC OLM would create from the bundle's CSV under an AllNamespaces OperatorGroup.
//!
//! `OLMCTL_OPERATOR_BIN` runs another build of the binary (how the tests were shown to fail
//! on the release before the fixes).

use std::net::SocketAddr;
use std::path::PathBuf;

use super::*;
use olmctl_testkit::api::rbac::UserInfo;
use olmctl_testkit::api::{ApiServer, kubeconfig};
use olmctl_testkit::process::{Launch, Proc, http_get, pod_ip};
use serde_json::{Value, json};

/// client-go's semantics with short timings: lease 3 s, renew deadline 2 s, retry 500 ms
/// (each election call within 1 s).
pub const FAST_ELECTION: [&str; 6] = [
    "--lease-duration",
    "3s",
    "--renew-deadline",
    "2s",
    "--retry-period",
    "500ms",
];

/// The operator's Lease (null when there is none).
pub fn lease(api: &ApiServer) -> Value {
    api.get(
        "coordination.k8s.io",
        "leases",
        OPERATOR_NS,
        "olmctl-operator",
    )
    .unwrap_or(Value::Null)
}

/// Who holds the operator's Lease.
pub fn holder(api: &ApiServer) -> String {
    lease(api)["spec"]["holderIdentity"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The binary: this build's, or `OLMCTL_OPERATOR_BIN`.
pub fn bin() -> PathBuf {
    std::env::var_os("OLMCTL_OPERATOR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_olmctl-operator")))
}

/// The API with OLM's CRDs, the operator's CRD, the operator's namespace, its Deployment
/// (which owns the Lease), and the RBAC OLM creates for the bundle under an AllNamespaces
/// OperatorGroup; wall-clock time.
pub fn operator_cluster() -> ApiServer {
    let api = cluster();
    api.use_system_clock();
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NS}}),
    );
    let csv = api.insert("clusterserviceversions", bundle_csv());
    for (plural, o) in bundle_rbac(&csv) {
        api.insert(&plural, o);
    }
    api.insert(
        "deployments",
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "olmctl-operator", "namespace": OPERATOR_NS},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}),
    );
    api
}

/// One replica: a process with its own address and token.
pub struct Replica {
    pub proc: Proc,
    pub name: String,
    pub token: String,
    pub probe: SocketAddr,
    pub webhook: SocketAddr,
    pub _dir: tempfile::TempDir,
}

impl Replica {
    pub async fn ready(&self) -> bool {
        http_get(self.probe, "/readyz").await.map(|r| r.0) == Some(200)
    }

    /// SIGTERM ends it with exit 0 within 20 s.
    pub async fn terminate_exits_0(&mut self) {
        self.proc.terminate();
        let status = self.proc.wait(std::time::Duration::from_secs(20)).await;
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "SIGTERM ends it with exit 0 ({status:?})\n{}",
            self.proc.output()
        );
    }
}

pub fn start(api: &ApiServer, server: &str, name: &str, extra: &[&str]) -> Replica {
    start_limited(api, server, name, extra, None)
}

/// [`start`] under `ulimit -n nofile` when given (the shell execs the binary, so the process
/// is the operator's).
pub fn start_limited(
    api: &ApiServer,
    server: &str,
    name: &str,
    extra: &[&str],
    nofile: Option<u32>,
) -> Replica {
    let dir = tempfile::tempdir().expect("tmp");
    let certs = dir.path().join("certs");
    std::fs::create_dir_all(&certs).expect("certs");
    let key = rcgen::generate_simple_self_signed(vec![
        "olmctl-operator-service.olmctl-system.svc".to_string(),
    ])
    .expect("cert");
    std::fs::write(certs.join("tls.crt"), key.cert.pem()).expect("crt");
    std::fs::write(certs.join("tls.key"), key.signing_key.serialize_pem()).expect("key");
    let token = api.token_for(UserInfo::service_account(OPERATOR_NS, "olmctl-operator"));
    let ip = pod_ip();
    let probe = SocketAddr::from((ip, 8080));
    let webhook = SocketAddr::from((ip, 9443));
    let mut args: Vec<String> = [
        "run",
        "--lease-owner-deployment=olmctl-operator",
        "--probe-addr",
        &probe.to_string(),
        "--webhook-addr",
        &webhook.to_string(),
        "--cert-dir",
        certs.to_str().expect("utf-8"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let (bin, args) = match nofile {
        None => (bin(), args),
        Some(n) => {
            let mut a = vec![
                "-c".to_string(),
                format!("ulimit -n {n} && exec \"$0\" \"$@\""),
                bin().to_string_lossy().into_owned(),
            ];
            a.extend(args);
            (PathBuf::from("/bin/sh"), a)
        }
    };
    let proc = Proc::start(&Launch {
        bin,
        args,
        env: vec![
            ("POD_NAME".into(), name.into()),
            ("POD_NAMESPACE".into(), OPERATOR_NS.into()),
            ("RUST_LOG".into(), "info,kube=warn".into()),
        ],
        dir: dir.path().join("pod"),
        kubeconfig: kubeconfig(server, &token, OPERATOR_NS),
    })
    .expect("start the operator");
    Replica {
        proc,
        name: name.into(),
        token,
        probe,
        webhook,
        _dir: dir,
    }
}

/// The replicas' logs, for a failure message.
pub fn show(rs: &[&Replica]) -> String {
    rs.iter()
        .map(|r| format!("--- {} ---\n{}", r.name, r.proc.output()))
        .collect()
}
