//! The API double against the real kubectl 1.32 (cluster.md §8): what kubectl sends and reads
//! must be what the double speaks, or these fail. Each test has its own API served over HTTPS
//! on loopback (client-go sends a kubeconfig's token only to an `https://` server), its own
//! kubeconfig and its own `HOME` (kubectl's discovery and OpenAPI caches live there).
//!
//! kubectl is `$KUBECTL`, else the Cloud SDK's `kubectl.1.32`, else `kubectl` on `PATH`; it must
//! be 1.32, and without it these tests fail (they never skip).
//!
//! The API's clock is in 2099: kubectl prints the AGE of an object created in the future as
//! `<invalid>` (apimachinery `duration.HumanDuration`), which keeps the tables exact.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use olmctl_testkit::fixtures::{install_olm_crds, repo, yaml_file};
use serde_json::{Value, json};

const NS: &str = "olmctl-system";
const SA: &str = "system:serviceaccount:olmctl-system:olmctl-operator";
const OLM: &str = "operators.coreos.com";
const NOW: &str = "2099-01-01T00:00:00Z";
/// Where the Cloud SDK puts kubectl 1.32.
const CLOUD_SDK_KUBECTL: &str = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32";
/// The longest any kubectl run may take (a hang fails the test).
const LIMIT: Duration = Duration::from_secs(60);

const INSTALL: &str = "kubectl 1.32 is needed: these tests drive the real binary and do not skip. \
Install it (`curl -fsSLo kubectl https://dl.k8s.io/release/v1.32.5/bin/linux/amd64/kubectl && \
sudo install -m 0755 kubectl /usr/local/bin/kubectl`, or `gcloud components install kubectl`, \
which ships kubectl.1.32) or set KUBECTL to a kubectl 1.32 binary";

/// The kubectl binary: `$KUBECTL`, the Cloud SDK's 1.32, or `kubectl` on `PATH`; checked to be
/// 1.32.
fn kubectl() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = std::env::var_os("KUBECTL")
            .map(PathBuf::from)
            .or_else(|| {
                Path::new(CLOUD_SDK_KUBECTL)
                    .is_file()
                    .then(|| PathBuf::from(CLOUD_SDK_KUBECTL))
            })
            .or_else(|| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .map(|d| d.join("kubectl"))
                    .find(|p| p.is_file())
            })
            .unwrap_or_else(|| panic!("no kubectl found. {INSTALL}"));
        let child = Command::new(&bin)
            .args(["version", "--client", "-o", "json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}. {INSTALL}", bin.display()));
        let out = finish(child, "version");
        let v: Value = serde_json::from_str(&out.stdout).unwrap_or_default();
        let version = &v["clientVersion"];
        assert!(
            version["major"] == "1" && version["minor"] == "32",
            "{} is kubectl {}, not 1.32. {INSTALL}",
            bin.display(),
            version["gitVersion"]
        );
        bin
    })
}

/// What one kubectl run printed.
#[derive(Debug, PartialEq, Eq)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn out(code: i32, stdout: &str, stderr: &str) -> Out {
    Out {
        code,
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

/// Collects a pipe on a thread of its own.
fn drain(r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(r).read_to_string(&mut s);
        s
    })
}

/// Waits for `child` up to [`LIMIT`]; kills it and fails past that.
fn finish(mut child: Child, what: &str) -> Out {
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "kubectl {what} did not finish in {LIMIT:?}; stderr: {}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Out {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A scratch directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "olmctl-kubectl-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An API double served over HTTPS, and kubectl set up against it as the cluster admin.
struct Cluster {
    api: ApiServer,
    dir: TempDir,
}

impl Cluster {
    /// OLM's CRDs stored; the clock in 2099.
    fn new() -> Cluster {
        let api = ApiServer::new();
        api.set_now(NOW);
        install_olm_crds(&api);
        let url = api.serve_tls_on_loopback();
        let dir = TempDir::new();
        std::fs::write(
            dir.0.join("kubeconfig"),
            kubeconfig(&url, ADMIN_TOKEN, "default"),
        )
        .expect("kubeconfig");
        std::fs::create_dir_all(dir.0.join("home")).expect("home");
        Cluster { api, dir }
    }

    /// With the namespace and the bundle's UpgradePolicy CRD stored.
    fn with_policy_crd() -> Cluster {
        let c = Cluster::new();
        c.api.insert(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        );
        c.api.insert(
            "customresourcedefinitions",
            bundle("olmctl.dev_upgradepolicies.yaml"),
        );
        c
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.0.join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(kubectl());
        // Nothing from the test's environment (no `KUBECTL_*`, `KUBECACHEDIR`): only the
        // kubeconfig and a HOME of this test's own.
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("KUBECONFIG", self.path("kubeconfig"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs kubectl to its end (bounded).
    fn run(&self, args: &[&str]) -> Out {
        let child = self.command(args).spawn().expect("kubectl");
        finish(child, &args.join(" "))
    }

    /// Starts kubectl in the background.
    fn start(&self, args: &[&str]) -> Running {
        let mut child = self.command(args).spawn().expect("kubectl");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let stderr = drain(child.stderr.take().expect("stderr"));
        Running {
            child: Some(child),
            lines,
            stderr: Some(stderr),
            what: args.join(" "),
        }
    }

    /// Waits (polling the API's request log, bounded) until a request that satisfies `f` has
    /// been received.
    fn await_request(&self, what: &str, f: impl Fn(&olmctl_testkit::api::Logged) -> bool) {
        let deadline = Instant::now() + LIMIT;
        while !self.api.log().iter().any(&f) {
            assert!(Instant::now() < deadline, "no request {what} in {LIMIT:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The stored object (storage version).
    fn get(&self, group: &str, plural: &str, ns: &str, name: &str) -> Option<Value> {
        self.api.get(group, plural, ns, name)
    }
}

/// A kubectl process in the background: its stdout lines as they come; killed on drop.
struct Running {
    child: Option<Child>,
    lines: mpsc::Receiver<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
    what: String,
}

impl Running {
    /// The next line of stdout (bounded).
    fn line(&self) -> String {
        self.lines
            .recv_timeout(LIMIT)
            .unwrap_or_else(|e| panic!("kubectl {}: no line in {LIMIT:?}: {e}", self.what))
    }

    /// Waits for the end (bounded) and returns what it printed after the lines read.
    fn finish(mut self) -> Out {
        let mut child = self.child.take().expect("child");
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("kubectl {} did not finish in {LIMIT:?}", self.what);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stderr = self
            .stderr
            .take()
            .expect("stderr")
            .join()
            .unwrap_or_default();
        let mut stdout = String::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            stdout.push_str(&l);
            stdout.push('\n');
        }
        Out {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A file of the repository's `bundle/manifests`.
fn bundle(name: &str) -> Value {
    yaml_file(&repo().join("bundle/manifests").join(name)).remove(0)
}

fn rv(v: &Value) -> String {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn policy(name: &str) -> Value {
    json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
           "metadata": {"name": name, "namespace": NS}, "spec": {"paused": false}})
}

/// `kubectl apply --server-side` of the bundle's manifests. As written for OLM, its Role and
/// RoleBinding carry an owner reference to the CSV with `uid: ""` (OLM fills it in, R7.3), which
/// the apiserver refuses; with the CSV's uid filled in, every object is applied, and applying
/// again writes nothing. Validation is kubectl's default, `strict`: kubectl first checks through
/// OpenAPI v3 that the server validates fields itself (R8.4), then sends
/// `fieldValidation=Strict`.
#[test]
fn server_side_apply_of_the_bundle() {
    let c = Cluster::new();
    assert_eq!(
        c.run(&["create", "namespace", NS]),
        out(0, "namespace/olmctl-system created\n", "")
    );
    assert_eq!(
        c.get("", "namespaces", "", NS).expect("namespace")["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": NS})
    );
    let manifests = repo().join("bundle/manifests");
    let dir = manifests.to_str().expect("path");
    assert_eq!(
        c.run(&["apply", "--server-side", "-n", NS, "-f", dir]),
        out(
            1,
            "service/olmctl-operator-webhook serverside-applied\n\
             clusterserviceversion.operators.coreos.com/olmctl-operator.v0.3.0 serverside-applied\n\
             customresourcedefinition.apiextensions.k8s.io/upgradepolicies.olmctl.dev serverside-applied\n",
            "Error from server (Invalid): Role.rbac.authorization.k8s.io \"olmctl-operator-leader-election\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty\n\
             Error from server (Invalid): RoleBinding.rbac.authorization.k8s.io \"olmctl-operator-leader-election\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty\n"
        )
    );
    let csv = c
        .get(OLM, "clusterserviceversions", NS, "olmctl-operator.v0.3.0")
        .expect("the CSV");
    let uid = csv["metadata"]["uid"].as_str().expect("uid");
    // The manifests with the CSV's uid, as OLM creates them.
    let fixed = c.path("manifests");
    std::fs::create_dir_all(&fixed).expect("dir");
    for e in std::fs::read_dir(&manifests).expect("manifests") {
        let p = e.expect("entry").path();
        let mut text = std::fs::read_to_string(&p).expect("read");
        if p.to_string_lossy().contains("_rbac.authorization.k8s.io_") {
            assert_eq!(text.matches("uid: \"\"").count(), 1, "{}", p.display());
            text = text.replace("uid: \"\"", &format!("uid: {uid}"));
        }
        std::fs::write(fixed.join(p.file_name().expect("name")), text).expect("write");
    }
    let applied = out(
        0,
        "role.rbac.authorization.k8s.io/olmctl-operator-leader-election serverside-applied\n\
         rolebinding.rbac.authorization.k8s.io/olmctl-operator-leader-election serverside-applied\n\
         service/olmctl-operator-webhook serverside-applied\n\
         clusterserviceversion.operators.coreos.com/olmctl-operator.v0.3.0 serverside-applied\n\
         customresourcedefinition.apiextensions.k8s.io/upgradepolicies.olmctl.dev serverside-applied\n",
        "",
    );
    let fixed = fixed.to_str().expect("path");
    assert_eq!(
        c.run(&["apply", "--server-side", "-n", NS, "-f", fixed]),
        applied
    );
    let objects = || {
        [
            (
                "rbac.authorization.k8s.io",
                "roles",
                NS,
                "olmctl-operator-leader-election",
            ),
            (
                "rbac.authorization.k8s.io",
                "rolebindings",
                NS,
                "olmctl-operator-leader-election",
            ),
            ("", "services", NS, "olmctl-operator-webhook"),
            (OLM, "clusterserviceversions", NS, "olmctl-operator.v0.3.0"),
            (
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                "",
                "upgradepolicies.olmctl.dev",
            ),
        ]
        .map(|(g, p, ns, n)| c.get(g, p, ns, n).unwrap_or_else(|| panic!("{p}/{n}")))
    };
    let first = objects();
    let role = bundle("olmctl-operator-leader-election_rbac.authorization.k8s.io_v1_role.yaml");
    assert_eq!(first[0]["rules"], role["rules"]);
    assert_eq!(first[0]["metadata"]["ownerReferences"][0]["uid"], uid);
    // Stored as the bundle wrote it: no namespace, so the subject is the ServiceAccount of the
    // binding's own namespace (RBAC's appliesToUser).
    assert_eq!(
        first[1]["subjects"],
        json!([{"kind": "ServiceAccount", "name": "olmctl-operator"}])
    );
    assert_eq!(first[2]["spec"]["ports"][1]["targetPort"], "probes");
    assert_eq!(
        first[3]["spec"]["install"]["spec"]["clusterPermissions"],
        bundle("olmctl-operator.clusterserviceversion.yaml")["spec"]["install"]["spec"]["clusterPermissions"]
    );
    assert!(
        first[4]["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    // Again: the same answer, and nothing is written.
    assert_eq!(
        c.run(&["apply", "--server-side", "-n", NS, "-f", fixed]),
        applied
    );
    assert_eq!(objects().map(|o| rv(&o)), first.map(|o| rv(&o)));
    // Every apply: the full object, kubectl's field manager, strict validation, no force.
    let log = c.api.log();
    let patches: Vec<_> = log.iter().filter(|l| l.method == "PATCH").collect();
    assert_eq!(patches.len(), 15);
    for p in &patches {
        assert!(
            p.uri
                .ends_with("?fieldManager=kubectl&fieldValidation=Strict&force=false"),
            "{}",
            p.uri
        );
    }
    // kubectl asked OpenAPI v3 whether the server validates fields, never v2.
    assert!(log.iter().any(|l| {
        l.uri
            .starts_with("/openapi/v3/apis/operators.coreos.com/v1alpha1?hash=")
    }));
    assert!(!log.iter().any(|l| l.uri.starts_with("/openapi/v2")));
    // The CRD is served: discovery (cached in HOME before it existed) is refreshed.
    assert_eq!(
        c.run(&["get", "upgradepolicies", "-A"]),
        out(0, "", "No resources found\n")
    );
    assert_eq!(
        c.run(&["get", "upgpol", "-n", NS]),
        out(0, "", "No resources found in olmctl-system namespace.\n")
    );
}

/// `--validate=strict` (the default) when the object has a field its CRD does not declare: the
/// apiserver's 400 (R2.13) for a create, the server-side apply's 500 from the typed conversion
/// (`structuredmerge.go`), and with `--validate=warn` the `Warning` header as kubectl shows it,
/// the field pruned.
#[test]
fn unknown_fields_under_validate_strict_and_warn() {
    let c = Cluster::with_policy_crd();
    let file = c.path("policy.yaml");
    std::fs::write(
        &file,
        "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata:\n  name: default\nspec:\n  paused: false\n  foo: 1\n",
    )
    .expect("write");
    let f = file.to_str().expect("path");
    assert_eq!(
        c.run(&["create", "-n", NS, "-f", f]),
        out(
            1,
            "",
            &format!(
                "Error from server (BadRequest): error when creating \"{f}\": UpgradePolicy in version \"v1\" cannot be handled as a UpgradePolicy: strict decoding error: unknown field \"spec.foo\"\n"
            )
        )
    );
    assert_eq!(
        c.run(&["apply", "--server-side", "-n", NS, "-f", f]),
        out(
            1,
            "",
            "Error from server: failed to create typed patch object (olmctl-system/default; olmctl.dev/v1, Kind=UpgradePolicy): .spec.foo: field not declared in schema\n"
        )
    );
    assert_eq!(
        c.run(&[
            "apply",
            "--server-side",
            "--validate=false",
            "-n",
            NS,
            "-f",
            f
        ]),
        out(
            1,
            "",
            "Error from server: failed to create typed patch object (olmctl-system/default; olmctl.dev/v1, Kind=UpgradePolicy): .spec.foo: field not declared in schema\n"
        )
    );
    assert!(
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .is_none()
    );
    let strict: Vec<String> = c
        .api
        .log()
        .iter()
        .filter(|l| l.method == "POST" || l.method == "PATCH")
        .map(|l| l.uri.clone())
        .collect();
    assert_eq!(
        strict,
        [
            "/apis/olmctl.dev/v1/namespaces/olmctl-system/upgradepolicies?fieldManager=kubectl-create&fieldValidation=Strict",
            "/apis/olmctl.dev/v1/namespaces/olmctl-system/upgradepolicies/default?fieldManager=kubectl&fieldValidation=Strict&force=false",
            "/apis/olmctl.dev/v1/namespaces/olmctl-system/upgradepolicies/default?fieldManager=kubectl&fieldValidation=Ignore&force=false",
        ]
    );
    assert_eq!(
        c.run(&["create", "--validate=warn", "-n", NS, "-f", f]),
        out(
            0,
            "upgradepolicy.olmctl.dev/default created\n",
            "Warning: unknown field \"spec.foo\"\n"
        )
    );
    assert_eq!(
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .expect("policy")["spec"],
        json!({"paused": false})
    );
}

/// Two field managers applying the same field: kubectl shows the apiserver's 409 with its
/// hints, and `--force-conflicts` takes the field over (R2.12, R8.3).
#[test]
fn server_side_apply_conflicts() {
    let c = Cluster::with_policy_crd();
    let write = |name: &str, paused: bool| {
        let f = c.path(name);
        std::fs::write(
            &f,
            format!(
                "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata:\n  name: default\nspec:\n  paused: {paused}\n"
            ),
        )
        .expect("write");
        f.to_str().expect("path").to_string()
    };
    let ops = write("ops.yaml", false);
    let mine = write("mine.yaml", true);
    assert_eq!(
        c.run(&[
            "apply",
            "--server-side",
            "--field-manager=ops",
            "-n",
            NS,
            "-f",
            &ops
        ]),
        out(
            0,
            "upgradepolicy.olmctl.dev/default serverside-applied\n",
            ""
        )
    );
    assert_eq!(
        c.run(&["apply", "--server-side", "-n", NS, "-f", &mine]),
        out(1, "", CONFLICT)
    );
    let policy = || {
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .expect("policy")["spec"]
            .clone()
    };
    assert_eq!(policy(), json!({"paused": false}));
    assert_eq!(
        c.run(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-n",
            NS,
            "-f",
            &mine
        ]),
        out(
            0,
            "upgradepolicy.olmctl.dev/default serverside-applied\n",
            ""
        )
    );
    assert_eq!(policy(), json!({"paused": true}));
    assert!(c.api.log().iter().any(|l| l.uri.ends_with(
        "/upgradepolicies/default?fieldManager=kubectl&fieldValidation=Strict&force=true"
    )));
}

/// What kubectl prints for an apply conflict (`apply.go :: applyOneObject`).
const CONFLICT: &str = "error: Apply failed with 1 conflict: conflict with \"ops\": .spec.paused
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts
";

/// `kubectl get` with short names, a category, the machine outputs, and a 404.
#[test]
fn get_by_short_name_category_and_output() {
    let c = Cluster::new();
    for ns in ["acme-system", "beta-system"] {
        c.api.insert(
            "subscriptions",
            json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                   "metadata": {"name": "etcd", "namespace": ns},
                   "spec": {"channel": "stable", "name": "etcd", "source": "operatorhubio-catalog",
                            "sourceNamespace": "olm", "installPlanApproval": "Manual"}}),
        );
    }
    c.api.insert(
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
               "metadata": {"name": "acme", "namespace": "acme-system"}, "spec": {}}),
    );
    assert_eq!(
        c.run(&["get", "sub", "-A"]),
        out(
            0,
            "NAMESPACE     NAME   AGE\n\
             acme-system   etcd   <invalid>\n\
             beta-system   etcd   <invalid>\n",
            ""
        )
    );
    // Category `olm`: every OLM kind, one table per kind that has objects.
    assert_eq!(
        c.run(&["get", "olm", "-A"]),
        out(
            0,
            "NAMESPACE     NAME                                      AGE\n\
             acme-system   operatorgroup.operators.coreos.com/acme   <invalid>\n\
             \n\
             NAMESPACE     NAME                                     AGE\n\
             acme-system   subscription.operators.coreos.com/etcd   <invalid>\n\
             beta-system   subscription.operators.coreos.com/etcd   <invalid>\n",
            ""
        )
    );
    let o = c.run(&["get", "sub", "etcd", "-n", "acme-system", "-o", "json"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let got: Value = serde_json::from_str(&o.stdout).expect("JSON");
    assert_eq!(
        got,
        c.get(OLM, "subscriptions", "acme-system", "etcd")
            .expect("stored")
    );
    assert_eq!(
        c.run(&[
            "get",
            "subscriptions.operators.coreos.com",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}/{.spec.channel}{\"\\n\"}{end}"
        ]),
        out(0, "acme-system/stable\nbeta-system/stable\n", "")
    );
    assert_eq!(
        c.run(&["get", "subs", "-n", "beta-system", "-o", "name"]),
        out(0, "subscription.operators.coreos.com/etcd\n", "")
    );
    assert_eq!(
        c.run(&["get", "sub", "nope", "-n", "acme-system"]),
        out(
            1,
            "",
            "Error from server (NotFound): subscriptions.operators.coreos.com \"nope\" not found\n"
        )
    );
    assert_eq!(
        c.run(&["get", "upgpol"]),
        out(
            1,
            "",
            "error: the server doesn't have a resource type \"upgpol\"\n"
        )
    );
    // Human output asked for a Table first (R8.2); the API answered plain JSON.
    let log = c.api.log();
    assert!(
        log.iter()
            .any(|l| l.uri == "/apis/operators.coreos.com/v1alpha1/subscriptions?limit=500")
    );
}

/// `kubectl get -w --output-watch-events`: the list, then a watch from the list's
/// resourceVersion; changes made through the API appear as lines.
#[test]
fn watch_shows_changes() {
    let c = Cluster::with_policy_crd();
    let created = c.api.insert("upgradepolicies", policy("default"));
    let events = c.start(&[
        "get",
        "upgradepolicies",
        "-n",
        NS,
        "-w",
        "--output-watch-events",
    ]);
    let plain = c.start(&["get", "upgpol", "-n", NS, "--watch"]);
    assert_eq!(events.line(), "EVENT      NAME      AGE");
    assert_eq!(events.line(), "ADDED      default   <invalid>");
    assert_eq!(plain.line(), "NAME      AGE");
    assert_eq!(plain.line(), "default   <invalid>");
    // Each watch starts where its list ended: the list's resourceVersion, the policy's.
    let watch = format!(
        "/apis/olmctl.dev/v1/namespaces/{NS}/upgradepolicies?resourceVersion={}&watch=true",
        rv(&created)
    );
    let watches = || c.api.log().iter().filter(|l| l.uri == watch).count();
    let deadline = Instant::now() + LIMIT;
    while watches() < 2 {
        assert!(
            Instant::now() < deadline,
            "two watches from the list's resourceVersion: {:#?}",
            c.api.log().iter().map(|l| &l.uri).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    c.api.merge(
        "olmctl.dev",
        "upgradepolicies",
        NS,
        "default",
        &json!({"spec": {"paused": true}}),
        false,
    );
    assert_eq!(events.line(), "MODIFIED   default   <invalid>");
    assert_eq!(plain.line(), "default   <invalid>");
    c.api.insert("upgradepolicies", policy("second"));
    assert_eq!(events.line(), "ADDED      second    <invalid>");
    assert_eq!(plain.line(), "second    <invalid>");
    c.api.delete("olmctl.dev", "upgradepolicies", NS, "default");
    assert_eq!(events.line(), "DELETED    default   <invalid>");
    assert_eq!(plain.line(), "default   <invalid>");
    // A policy in another namespace is not these watches' business.
    c.api.insert(
        "upgradepolicies",
        json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
               "metadata": {"name": "other", "namespace": "default"}, "spec": {}}),
    );
    c.api.merge(
        "olmctl.dev",
        "upgradepolicies",
        NS,
        "second",
        &json!({"spec": {"paused": true}}),
        false,
    );
    assert_eq!(events.line(), "MODIFIED   second    <invalid>");
    assert_eq!(plain.line(), "second    <invalid>");
    // Killed on drop.
}

/// `kubectl wait --for=condition=Ready`: a list and a watch by `metadata.name` with bookmarks
/// (R8.5); it ends when the test sets the condition through the status subresource. A
/// condition of an older generation does not count: that wait times out.
#[test]
fn wait_for_a_condition() {
    let c = Cluster::with_policy_crd();
    c.api.set_bookmark_interval(Duration::from_millis(50));
    c.api.insert("upgradepolicies", policy("default"));
    let w = c.start(&[
        "wait",
        "--for=condition=Ready",
        "upgradepolicy/default",
        "-n",
        NS,
        "--timeout=20s",
    ]);
    let selector = "fieldSelector=metadata.name%3Ddefault";
    c.await_request("the watch", |l| {
        l.uri.contains("watch=true") && l.uri.contains(selector)
    });
    // Bookmarks go by before the condition (every 50 ms, and one now); then the condition
    // comes through the status subresource.
    c.api.bookmark();
    let condition = json!({"status": {"conditions": [{"type": "Ready", "status": "True",
        "reason": "Reconciled", "message": "ok", "lastTransitionTime": NOW,
        "observedGeneration": 1}]}});
    assert_eq!(
        c.run(&[
            "patch",
            "upgradepolicy",
            "default",
            "-n",
            NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            &condition.to_string()
        ]),
        out(0, "upgradepolicy.olmctl.dev/default patched\n", "")
    );
    assert_eq!(
        w.finish(),
        out(0, "upgradepolicy.olmctl.dev/default condition met\n", "")
    );
    let log = c.api.log();
    let base = format!("/apis/olmctl.dev/v1/namespaces/{NS}/upgradepolicies?");
    assert!(
        log.iter().any(|l| l.uri.starts_with(&base)
            && l.uri.contains(selector)
            && !l.uri.contains("watch=true")),
        "a list by name"
    );
    assert!(
        log.iter().any(|l| l.uri.starts_with(&base)
            && l.uri.contains(selector)
            && l.uri.contains("allowWatchBookmarks=true")
            && l.uri.contains("watch=true")),
        "a watch by name with bookmarks"
    );
    assert!(log.iter().any(|l| l.method == "PATCH"
        && l.uri
            == format!(
                "/apis/olmctl.dev/v1/namespaces/{NS}/upgradepolicies/default/status?fieldManager=kubectl-patch"
            )
        && l.code == 200));
    // Ready, but for generation 1 while the spec is at 2: not met.
    c.api.merge(
        "olmctl.dev",
        "upgradepolicies",
        NS,
        "default",
        &json!({"spec": {"paused": true}}),
        false,
    );
    assert_eq!(
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .expect("policy")["metadata"]["generation"],
        2
    );
    assert_eq!(
        c.run(&[
            "wait",
            "--for=condition=Ready",
            "upgradepolicy/default",
            "-n",
            NS,
            "--timeout=2s"
        ]),
        out(
            1,
            "",
            "error: timed out waiting for the condition on upgradepolicies/default\n"
        )
    );
}

/// The RBAC OLM creates for the bundle's CSV in `olmctl-system`, as operator/tests/common's
/// `bundle_rbac` builds it: the CSV's permissions as ClusterRoles and Roles with their
/// bindings, and the bundle's own Role and RoleBinding with the CSV's uid.
fn bundle_rbac(c: &Cluster) {
    let mut csv = bundle("olmctl-operator.clusterserviceversion.yaml");
    csv["metadata"]["namespace"] = json!(NS);
    let csv = c.api.insert("clusterserviceversions", csv);
    let generated = olmctl_testkit::olm::rbac::for_csv(&csv, NS);
    let lifted = olmctl_testkit::olm::rbac::lift(
        csv["metadata"]["name"].as_str().unwrap_or_default(),
        NS,
        &generated,
        false,
    );
    assert!(lifted.is_empty(), "nothing to lift: {lifted:#?}");
    let mut objects = generated;
    for f in [
        "olmctl-operator-leader-election_rbac.authorization.k8s.io_v1_role.yaml",
        "olmctl-operator-leader-election_rbac.authorization.k8s.io_v1_rolebinding.yaml",
    ] {
        let mut o = bundle(f);
        o["metadata"]["namespace"] = json!(NS);
        o["metadata"]["ownerReferences"][0]["uid"] = csv["metadata"]["uid"].clone();
        objects.push(o);
    }
    for o in objects {
        let plural = match o["kind"].as_str().unwrap_or_default() {
            "ServiceAccount" => "serviceaccounts",
            "Role" => "roles",
            "RoleBinding" => "rolebindings",
            "ClusterRole" => "clusterroles",
            _ => "clusterrolebindings",
        };
        c.api.insert(plural, o);
    }
}

/// `kubectl auth can-i --list -n olmctl-system --as` the operator's ServiceAccount.
const SA_RULES: &str = "Resources                                        Non-Resource URLs                      Resource Names      Verbs
selfsubjectreviews.authentication.k8s.io         []                                     []                  [create]
selfsubjectaccessreviews.authorization.k8s.io    []                                     []                  [create]
selfsubjectrulesreviews.authorization.k8s.io     []                                     []                  [create]
events.events.k8s.io                             []                                     []                  [create]
leases.coordination.k8s.io                       []                                     []                  [get create update]
clusterextensions.olm.operatorframework.io       []                                     []                  [get list watch patch]
installplans.operators.coreos.com                []                                     []                  [get list watch patch]
clustercatalogs.olm.operatorframework.io         []                                     []                  [get list watch]
                                                 [/.well-known/openid-configuration/]   []                  [get]
                                                 [/.well-known/openid-configuration]    []                  [get]
                                                 [/api/*]                               []                  [get]
                                                 [/api]                                 []                  [get]
                                                 [/apis/*]                              []                  [get]
                                                 [/apis]                                []                  [get]
                                                 [/healthz]                             []                  [get]
                                                 [/healthz]                             []                  [get]
                                                 [/livez]                               []                  [get]
                                                 [/livez]                               []                  [get]
                                                 [/openapi/*]                           []                  [get]
                                                 [/openapi]                             []                  [get]
                                                 [/openid/v1/jwks/]                     []                  [get]
                                                 [/openid/v1/jwks]                      []                  [get]
                                                 [/readyz]                              []                  [get]
                                                 [/readyz]                              []                  [get]
                                                 [/version/]                            []                  [get]
                                                 [/version/]                            []                  [get]
                                                 [/version]                             []                  [get]
                                                 [/version]                             []                  [get]
configmaps                                       []                                     []                  [get]
customresourcedefinitions.apiextensions.k8s.io   []                                     []                  [get]
deployments.apps                                 []                                     [olmctl-operator]   [get]
upgradepolicies.olmctl.dev                       []                                     []                  [list watch patch]
subscriptions.operators.coreos.com               []                                     []                  [list watch patch]
clusterserviceversions.operators.coreos.com      []                                     []                  [list watch]
upgradepolicies.olmctl.dev/status                []                                     []                  [patch]
";

/// `kubectl auth can-i --as` the operator's ServiceAccount against the RBAC OLM creates for the
/// bundle: `SelfSubjectAccessReview` and `SelfSubjectRulesReview` (protobuf bodies, as kubectl's
/// typed client sends them) under impersonation (R8.6).
#[test]
fn auth_can_i_as_the_operator() {
    let c = Cluster::new();
    c.api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    );
    bundle_rbac(&c);
    let can_i = |args: &[&str]| {
        let mut a = vec!["auth", "can-i"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--as", SA]);
        c.run(&a)
    };
    assert_eq!(
        can_i(&["patch", "installplans.operators.coreos.com", "-A"]),
        out(0, "yes\n", "")
    );
    assert_eq!(
        can_i(&["delete", "installplans.operators.coreos.com", "-A"]),
        out(1, "no\n", "")
    );
    assert_eq!(can_i(&["update", "leases", "-n", NS]), out(0, "yes\n", ""));
    assert_eq!(
        can_i(&["update", "leases", "-n", "default"]),
        out(1, "no\n", "")
    );
    assert_eq!(
        can_i(&["get", "deployments/olmctl-operator", "-n", NS]),
        out(0, "yes\n", "")
    );
    assert_eq!(
        can_i(&["get", "deployments/other", "-n", NS]),
        out(1, "no\n", "")
    );
    // The reviews reached the API as the ServiceAccount.
    let reviews: Vec<_> = c
        .api
        .log()
        .into_iter()
        .filter(|l| l.uri == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .collect();
    assert_eq!(reviews.len(), 6);
    assert!(reviews.iter().all(|l| l.user == SA && l.code == 201));
    assert_eq!(
        reviews[0].body["spec"],
        json!({"resourceAttributes": {"verb": "patch", "group": "operators.coreos.com",
                                      "resource": "installplans"}})
    );
    // `--list`: kubectl breaks the rules down, compacts and sorts them
    // (`cani.go :: printStatus`); the duplicate URLs come from two bootstrap roles.
    assert_eq!(can_i(&["--list", "-n", NS]), out(0, SA_RULES, ""));
}

/// `kubectl patch` of a custom resource (merge: patched; strategic, kubectl's default: the 415
/// as kubectl shows it), `kubectl delete` of one, and of its CRD, which goes once its custom
/// resources are gone (R2.20).
#[test]
fn patch_and_delete_custom_resources() {
    let c = Cluster::with_policy_crd();
    c.api.insert("upgradepolicies", policy("default"));
    c.api.insert("upgradepolicies", policy("second"));
    assert_eq!(
        c.run(&[
            "patch",
            "upgradepolicy",
            "default",
            "-n",
            NS,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"paused":true}}"#
        ]),
        out(0, "upgradepolicy.olmctl.dev/default patched\n", "")
    );
    let stored = c
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("policy");
    assert_eq!(
        (&stored["spec"], &stored["metadata"]["generation"]),
        (&json!({"paused": true}), &json!(2))
    );
    assert_eq!(
        c.run(&[
            "patch",
            "upgradepolicy",
            "default",
            "-n",
            NS,
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"paused":true}}"#
        ]),
        out(
            0,
            "upgradepolicy.olmctl.dev/default patched (no change)\n",
            ""
        )
    );
    assert_eq!(
        c.run(&[
            "patch",
            "upgradepolicy",
            "default",
            "-n",
            NS,
            "-p",
            r#"{"spec":{"paused":false}}"#
        ]),
        out(
            1,
            "",
            "error: application/strategic-merge-patch+json is not supported by olmctl.dev/v1, Kind=UpgradePolicy: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n"
        )
    );
    assert_eq!(
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .expect("policy"),
        stored
    );
    assert_eq!(
        c.run(&["delete", "upgradepolicy", "second", "-n", NS]),
        out(0, "upgradepolicy.olmctl.dev \"second\" deleted\n", "")
    );
    assert!(
        c.get("olmctl.dev", "upgradepolicies", NS, "second")
            .is_none()
    );
    // A finalizer on the last policy holds the CRD: kubectl waits for the CRD to go.
    c.api.merge(
        "olmctl.dev",
        "upgradepolicies",
        NS,
        "default",
        &json!({"metadata": {"finalizers": ["example.com/hold"]}}),
        false,
    );
    let crd = "upgradepolicies.olmctl.dev";
    let d = c.start(&["delete", "crd", crd]);
    c.await_request("the CRD's delete", |l| {
        l.method == "DELETE" && l.uri.ends_with(crd) && l.code != 0
    });
    let terminating = c
        .get("apiextensions.k8s.io", "customresourcedefinitions", "", crd)
        .expect("the CRD stays while a policy is left");
    assert_eq!(
        terminating["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let held = c
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("held by its finalizer");
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    c.api.merge(
        "olmctl.dev",
        "upgradepolicies",
        NS,
        "default",
        &json!({"metadata": {"finalizers": null}}),
        false,
    );
    assert_eq!(
        d.finish(),
        out(
            0,
            "customresourcedefinition.apiextensions.k8s.io \"upgradepolicies.olmctl.dev\" deleted\n",
            ""
        )
    );
    assert!(
        c.get("olmctl.dev", "upgradepolicies", NS, "default")
            .is_none()
    );
    assert!(
        c.get("apiextensions.k8s.io", "customresourcedefinitions", "", crd)
            .is_none()
    );
}

/// OLM v1's CRDs with their CEL rules, through kubectl: `create --dry-run=server` of a
/// ClusterExtension the rules refuse shows the API server's 422 and stores nothing; a valid one
/// is "created (server dry run)" and not stored; a plain create then stores it, and changing its
/// namespace (a transition rule) is refused.
#[test]
fn olm_v1_cel_rules_and_server_dry_run() {
    let c = Cluster::new();
    for crd in yaml_file(&repo().join("tests/data/olmv1-crds/clusterextensions-v1.11.yaml")) {
        c.api.insert("customresourcedefinitions", crd);
    }
    let ce = |ns: &str, version: &str| {
        format!(
            "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: argocd\nspec:\n  namespace: {ns}\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: argocd-operator\n      version: \"{version}\"\n"
        )
    };
    let file = c.path("ce.yaml");
    let f = file.to_str().expect("path");
    std::fs::write(&file, ce("argocd", "not a range")).expect("write");
    let got = c.run(&["create", "--dry-run=server", "-f", f]);
    assert_eq!(
        got,
        out(
            1,
            "",
            "The ClusterExtension \"argocd\" is invalid: spec.source.catalog.version: Invalid value: \"not a range\": invalid version expression\n"
        )
    );
    std::fs::write(&file, ce("argocd", ">=0.6.0")).expect("write");
    assert_eq!(
        c.run(&["create", "--dry-run=server", "-f", f]),
        out(
            0,
            "clusterextension.olm.operatorframework.io/argocd created (server dry run)\n",
            ""
        )
    );
    assert!(
        c.get(
            "olm.operatorframework.io",
            "clusterextensions",
            "",
            "argocd"
        )
        .is_none()
    );
    assert_eq!(
        c.run(&["create", "-f", f]),
        out(
            0,
            "clusterextension.olm.operatorframework.io/argocd created\n",
            ""
        )
    );
    std::fs::write(&file, ce("elsewhere", ">=0.6.0")).expect("write");
    assert_eq!(
        c.run(&["replace", "-f", f]),
        out(
            1,
            "",
            "The ClusterExtension \"argocd\" is invalid: spec.namespace: Invalid value: \"elsewhere\": namespace is immutable\n"
        )
    );
}

/// The package-server double (`packages.operators.coreos.com`, an aggregated API) read by the
/// real kubectl: discovery finds `packagemanifests`, a list and a get by name answer as
/// package-server's `registry.go` (`List`, `Get`) builds them, an unknown name is NotFound.
#[test]
fn package_manifests_through_the_aggregated_api() {
    use olmctl_testkit::olm::catalog::{Bundle, Catalog};
    use olmctl_testkit::olm::package_server::PackageServer;
    let c = Cluster::new();
    let ps = PackageServer::install(&c.api, "olm");
    let image = "quay.io/acme/catalog:v1";
    let csv = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "widgets.v1.0.0"},
        "spec": {"version": "1.0.0", "displayName": "Widgets", "provider": {"name": "Acme"}}});
    let bundle = Bundle::new(
        vec![("csv.yaml".into(), csv)],
        vec![
            (
                "operators.operatorframework.io.bundle.package.v1".into(),
                "widgets".into(),
            ),
            (
                "operators.operatorframework.io.bundle.channel.default.v1".into(),
                "stable".into(),
            ),
        ],
        "quay.io/acme/widgets-bundle:1.0.0",
    )
    .expect("bundle");
    let catalog = Catalog::new();
    catalog.release("stable", bundle);
    ps.serve(image, catalog);
    c.api.insert(
        "catalogsources",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": "acme", "namespace": "olm"},
            "spec": {"sourceType": "grpc", "image": image, "displayName": "Acme", "publisher": "Acme"},
            "status": {"registryService": {"protocol": "grpc", "serviceName": "acme",
                "serviceNamespace": "olm", "port": "50051"},
                "connectionState": {"lastObservedState": "READY"}}}),
    );
    let o = c.run(&[
        "api-resources",
        "--api-group=packages.operators.coreos.com",
        "-o",
        "name",
    ]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "packagemanifests.packages.operators.coreos.com\n"),
        "{o:?}"
    );
    let o = c.run(&[
        "get",
        "packagemanifests",
        "-n",
        "olm",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name}/{.status.catalogSource}/{.status.defaultChannel}/{.status.channels[0].currentCSV}{\"\\n\"}{end}",
    ]);
    assert_eq!(o, out(0, "widgets/acme/stable/widgets.v1.0.0\n", ""));
    let o = c.run(&[
        "get",
        "packagemanifest",
        "widgets",
        "-n",
        "olm",
        "-o",
        "jsonpath={.kind}",
    ]);
    assert_eq!(o, out(0, "PackageManifest", ""));
    let o = c.run(&["get", "packagemanifest", "nope", "-n", "olm"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stderr.contains("(NotFound)"), "{o:?}");
}
