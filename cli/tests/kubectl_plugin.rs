//! olmctl as kubectl's plugin `olm`, with the real kubectl 1.32 (`$KUBECTL`, else the Cloud
//! SDK's `kubectl.1.32`; these tests fail without it, they never skip): `kubectl plugin list`
//! finds a `kubectl-olm` symlink to the binary on PATH, kubectl runs it with the arguments after
//! `olm`, and `kubectl olm status` reads the API double (served over HTTPS, as kubectl needs)
//! loaded with the example cluster state of `shared/fixtures/olm/objects`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use olmctl_testkit::api::rbac::UserInfo;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use olmctl_testkit::fixtures::{install_olm_crds, shared, yaml_file};
use serde_json::{Value, json};

const CLOUD_SDK_KUBECTL: &str = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
const NS: &str = "acme-system";

fn kubectl_bin() -> PathBuf {
    std::env::var_os("KUBECTL")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(CLOUD_SDK_KUBECTL)).filter(|p| p.is_file()))
        .expect("kubectl 1.32 is needed: set KUBECTL (scripts/test.sh finds or downloads it)")
}

/// A PATH holding only `kubectl-olm` (a symlink to the built binary), a HOME and a kubeconfig
/// of the test's own.
struct Plugin {
    dir: tempfile::TempDir,
}

impl Plugin {
    fn new() -> Plugin {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join("bin")).expect("bin");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_olmctl"),
            dir.path().join("bin/kubectl-olm"),
        )
        .expect("symlink");
        Plugin { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// With a kubeconfig for `server` (context `testkit`, namespace `ns`).
    fn kubeconfig(&self, server: &str, token: &str, ns: &str) -> PathBuf {
        let f = self.path("kubeconfig");
        std::fs::write(&f, kubeconfig(server, token, ns)).expect("kubeconfig");
        f
    }

    fn env(&self, c: &mut Command) {
        c.env_clear()
            .env("PATH", self.path("bin"))
            .env("HOME", self.path("home"))
            .env("KUBECONFIG", self.path("kubeconfig"));
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        let mut c = Command::new(kubectl_bin());
        self.env(&mut c);
        c.args(args).output().expect("kubectl")
    }

    /// `olmctl ARGS` run directly, in the same environment.
    fn olmctl(&self, args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_olmctl"));
        self.env(&mut c);
        c.args(args).output().expect("olmctl")
    }
}

fn text(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ok(o: &Output) -> String {
    let (code, out, err) = text(o);
    assert_eq!(code, 0, "{out}{err}");
    out
}

#[test]
fn kubectl_finds_the_plugin_and_runs_it_with_the_arguments_after_olm() {
    let p = Plugin::new();
    let list = ok(&p.kubectl(&["plugin", "list"]));
    assert!(
        list.lines()
            .any(|l| Path::new(l.trim()) == p.path("bin/kubectl-olm")),
        "{list}"
    );

    let help = ok(&p.kubectl(&["olm", "--help"]));
    assert!(
        help.contains("Usage: kubectl olm [OPTIONS] <COMMAND>"),
        "{help}"
    );
    for sub in ["install", "uninstall", "status"] {
        assert!(help.contains(&format!("\n  {sub} ")), "{sub}: {help}");
    }
    let help = ok(&p.kubectl(&["olm", "status", "--help"]));
    assert!(
        help.contains("Usage: kubectl olm status [OPTIONS]"),
        "{help}"
    );
    for flag in [
        "--kubeconfig <FILE>",
        "--context <NAME>",
        "-n, --namespace <NS>",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    // Usage errors name the plugin's command too.
    let (code, _, err) = text(&p.kubectl(&["olm", "status", "--bogus"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("Usage: kubectl olm status"), "{err}");
    // kubectl takes no flag of its own before a plugin's name (HandlePluginCommand).
    let (code, _, err) = text(&p.kubectl(&["--context", "testkit", "olm", "status"]));
    assert_eq!(code, 1);
    assert!(
        err.contains("flags cannot be placed before plugin name: --context"),
        "{err}"
    );
}

/// The completions `kubectl __complete ARGS` prints (values without their descriptions), and
/// its directive.
fn completions(p: &Plugin, args: &[&str]) -> (Vec<String>, String) {
    let mut a = vec!["__complete"];
    a.extend(args);
    let out = ok(&p.kubectl(&a));
    let mut lines: Vec<String> = out
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect();
    let directive = lines.pop().expect("directive");
    (lines, directive)
}

#[test]
fn kubectl_completes_the_plugin_through_kubectl_complete_olm() {
    let p = Plugin::new();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_olmctl"),
        p.path("bin/kubectl_complete-olm"),
    )
    .expect("symlink");
    // kubectl lists the plugin among its commands.
    let (words, _) = completions(&p, &["ol"]);
    assert_eq!(words, ["olm"]);
    // Then asks kubectl_complete-olm with the words after `olm`.
    assert_eq!(
        completions(&p, &["olm", "st"]),
        (vec!["status".into()], ":4".into())
    );
    let (words, directive) = completions(&p, &["olm", ""]);
    assert_eq!(directive, ":4");
    for sub in ["install", "uninstall", "status", "catalog"] {
        assert!(words.iter().any(|w| w == sub), "{sub}: {words:?}");
    }
    assert_eq!(
        completions(&p, &["olm", "status", "--all"]),
        (vec!["--all-namespaces".into()], ":4".into())
    );
    assert_eq!(
        completions(&p, &["olm", "status", "-o", ""]),
        (vec!["text".into(), "json".into()], ":4".into())
    );
    // A directory is offered without a space after it.
    std::fs::create_dir(p.path("home/catalogs")).expect("dir");
    let dir = format!("{}/cat", p.path("home").display());
    assert_eq!(
        completions(&p, &["olm", "catalog", "validate", &dir]),
        (vec![format!("{dir}alogs/")], ":6".into())
    );
}

/// The plural of a fixture object's kind.
fn plural(kind: &str) -> &'static str {
    match kind {
        "CatalogSource" => "catalogsources",
        "OperatorGroup" => "operatorgroups",
        "Subscription" => "subscriptions",
        "InstallPlan" => "installplans",
        "ClusterServiceVersion" => "clusterserviceversions",
        "ConfigMap" => "configmaps",
        "CustomResourceDefinition" => "customresourcedefinitions",
        k => panic!("fixture kind {k}"),
    }
}

/// The API double with OLM's CRDs and the example cluster state (without 07, the CSV OLM
/// creates only once the plan is approved); the Subscription carries the decision
/// olmctl-operator writes for this state (`install-7xk2p: Held`, fixtures/olm/README.md).
fn example_cluster() -> ApiServer {
    let api = ApiServer::new();
    install_olm_crds(&api);
    let dir = shared().join("fixtures/olm/objects");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|f| f.extension().is_some_and(|x| x == "yaml"))
        .filter(|f| !f.to_string_lossy().contains("07-csv-new"))
        .collect();
    files.sort();
    for f in files {
        for mut o in yaml_file(&f) {
            if o["kind"] == "Subscription" {
                o["metadata"]["annotations"] =
                    json!({olmctl::status::DECISION_ANNOTATION: "install-7xk2p: Held"});
            }
            let kind = o["kind"].as_str().unwrap_or_default().to_string();
            api.insert(plural(&kind), o);
        }
    }
    api
}

/// A second namespace: an Automatic install that is done, and a copied CSV (not an install).
fn add_team_namespace(api: &ApiServer) {
    let csv = |ns: &str, copied: bool| {
        let mut c = json!({"apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "acme-db-operator.v1.4.2", "namespace": ns},
            "spec": {"displayName": "ACME DB", "install": {"strategy": "deployment"}},
            "status": {"phase": "Succeeded"}});
        if copied {
            c["metadata"]["labels"] = json!({"olm.copiedFrom": NS});
            c["status"]["reason"] = json!("Copied");
        }
        c
    };
    api.insert("clusterserviceversions", csv("team-b", false));
    api.insert("clusterserviceversions", csv("team-c", true));
    api.insert(
        "subscriptions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "db", "namespace": "team-b"},
            "spec": {"name": "acme-db-operator", "source": "acme-catalog",
                     "sourceNamespace": "olm", "installPlanApproval": "Automatic"},
            "status": {"state": "AtLatestKnown", "installedCSV": "acme-db-operator.v1.4.2",
                       "currentCSV": "acme-db-operator.v1.4.2",
                       "lastUpdated": "2026-09-14T08:03:28Z"}}),
    );
}

const TABLE: &str = "\
NAME               PACKAGE            CHANNEL   INSTALLED                 CURRENT                   STATE            CSV PHASE   PENDING PLAN    INSTALLS                                               GATE
acme-db-operator   acme-db-operator   stable    acme-db-operator.v1.4.2   acme-db-operator.v1.5.0   UpgradePending   Succeeded   install-7xk2p   acme-db-operator.v1.5.0,acme-metrics-operator.v0.3.1   Held
";

const ALL_NAMESPACES: &str = "\
NAMESPACE     NAME               PACKAGE            CHANNEL   INSTALLED                 CURRENT                   STATE            CSV PHASE   PENDING PLAN    INSTALLS                                               GATE
acme-system   acme-db-operator   acme-db-operator   stable    acme-db-operator.v1.4.2   acme-db-operator.v1.5.0   UpgradePending   Succeeded   install-7xk2p   acme-db-operator.v1.5.0,acme-metrics-operator.v0.3.1   Held
team-b        db                 acme-db-operator   <none>    acme-db-operator.v1.4.2   acme-db-operator.v1.4.2   AtLatestKnown    Succeeded   <none>          <none>                                                 <none>
";

#[test]
fn status_prints_one_table_as_kubectl_get_does() {
    let api = example_cluster();
    let server = api.serve_tls_on_loopback();
    let p = Plugin::new();
    let kc = p.kubeconfig(&server, ADMIN_TOKEN, NS);

    // The context's namespace, as kubectl picks it.
    assert_eq!(ok(&p.kubectl(&["olm", "status"])), TABLE);
    // kubectl's flags, after the plugin's name.
    let kc = kc.to_str().expect("utf-8");
    let flags = ["--kubeconfig", kc, "--context", "testkit", "-n", NS];
    let mut args = vec!["olm", "status"];
    args.extend(flags);
    assert_eq!(ok(&p.kubectl(&args)), TABLE);
    // The same binary under its own name.
    assert_eq!(ok(&p.olmctl(&args[1..])), TABLE);

    // The Subscription columns are laid out as kubectl's own printer lays them out.
    let columns = "custom-columns=NAME:.metadata.name,PACKAGE:.spec.name,CHANNEL:.spec.channel,\
                   INSTALLED:.status.installedCSV,CURRENT:.status.currentCSV,STATE:.status.state";
    let get = ok(&p.kubectl(&["get", "subscriptions.operators.coreos.com", "-o", columns]));
    let cut = TABLE.find("CSV PHASE").expect("column");
    let ours: Vec<&str> = TABLE.lines().map(|l| l[..cut].trim_end()).collect();
    assert_eq!(get.lines().collect::<Vec<_>>(), ours);

    // Another namespace: empty, as kubectl says it.
    let (code, out, err) = text(&p.kubectl(&["olm", "status", "-n", "team-b"]));
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(err, "No resources found in team-b namespace.\n");

    add_team_namespace(&api);
    assert_eq!(ok(&p.kubectl(&["olm", "status", "-A"])), ALL_NAMESPACES);

    let json: Value =
        serde_json::from_str(&ok(&p.kubectl(&["olm", "status", "-o", "json"]))).expect("json");
    assert_eq!(
        json,
        json!([{"namespace": NS, "subscription": "acme-db-operator",
            "package": "acme-db-operator", "channel": "stable",
            "installedCSV": "acme-db-operator.v1.4.2", "currentCSV": "acme-db-operator.v1.5.0",
            "state": "UpgradePending", "csvPhase": "Succeeded", "pendingPlan": "install-7xk2p",
            "pendingCSVs": ["acme-db-operator.v1.5.0", "acme-metrics-operator.v0.3.1"],
            "gate": "Held"}])
    );

    // Values from the cluster are shown escaped, the columns still aligned.
    api.insert(
        "subscriptions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": "evil", "namespace": "team-e"},
            "spec": {"name": "p", "channel": "\u{1b}[2J\r\nFORGED", "source": "s",
                     "sourceNamespace": "olm"}}),
    );
    let out = ok(&p.kubectl(&["olm", "status", "-n", "team-e"]));
    assert_eq!(
        out,
        "NAME   PACKAGE   CHANNEL               INSTALLED   CURRENT   STATE    CSV PHASE   PENDING PLAN   INSTALLS   GATE\n\
         evil   p         \\u{1b}[2J\\r\\nFORGED   <none>      <none>    <none>   <none>      <none>         <none>     <none>\n"
    );

    // Approved, the plan no longer waits and the gate's decision is not shown.
    assert!(api.merge(
        "operators.coreos.com",
        "installplans",
        NS,
        "install-7xk2p",
        &json!({"spec": {"approved": true}}),
        false,
    ));
    let out = ok(&p.kubectl(&["olm", "status"]));
    let row = out.lines().nth(1).expect("row");
    assert!(
        row.ends_with("Succeeded   <none>         <none>     <none>"),
        "{out}"
    );
}

#[test]
fn status_errors_say_what_is_wrong_and_exit_2() {
    let p = Plugin::new();
    let expect = |args: &[&str], want: &[&str]| {
        let (code, out, err) = text(&p.kubectl(args));
        assert_eq!((code, out.as_str()), (2, ""), "{err}");
        assert!(err.starts_with("error: "), "{err}");
        for w in want {
            assert!(err.contains(w), "{w}: {err}");
        }
    };

    // No kubeconfig anywhere, and not in a pod.
    expect(
        &["olm", "status"],
        &["no cluster configuration", "pass --kubeconfig"],
    );

    // A cluster without OLM.
    let bare = ApiServer::new();
    p.kubeconfig(&bare.serve_tls_on_loopback(), ADMIN_TOKEN, "default");
    expect(
        &["olm", "status"],
        &[
            "listing subscriptions in namespace default",
            "does not serve this resource",
            "install OLM",
        ],
    );

    // A user RBAC does not let list Subscriptions.
    let api = example_cluster();
    let token = api.token_for(UserInfo::user("alice", &[]));
    p.kubeconfig(&api.serve_tls_on_loopback(), &token, NS);
    expect(
        &["olm", "status", "-A"],
        &[
            "listing subscriptions in all namespaces",
            "Forbidden (403)",
            "User \"alice\" cannot list resource \"subscriptions\"",
        ],
    );

    // Nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let server = format!("https://127.0.0.1:{port}");
    p.kubeconfig(&server, ADMIN_TOKEN, NS);
    expect(
        &["olm", "status", "--timeout", "20s"],
        &[&format!("cannot reach the API server {server}")],
    );
}
