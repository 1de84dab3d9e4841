//! The gate for OLM v1 ClusterExtensions in the operator (issue 31 §5), end to end with OLM
//! v1's doubles (`olmctl_testkit::olmv1`: catalogd and operator-controller v1.11 on the API
//! double) and the real pelorus-operator bundles of the fixtures (a replaces chain whose
//! 0.0.4 -> 0.0.5 step drops `x-kubernetes-preserve-unknown-fields` from `spec.exporters`,
//! which OLM v1's CRD upgrade-safety preflight refuses). The operator reads the catalog content
//! from catalogd's HTTP API (`<status.urls.base>/api/v1/all`), served in-process by the
//! library's `olmctl::serve::http`; the reconciles run at instants of the operator's clock.
//!
//! The v1 flow: a new version appears in the catalog -> the pin moves only inside the
//! maintenance window, operator-controller installs it; a version whose CRD change fails the
//! preflight stays held with the reason on the policy's status and a Warning Event; the
//! override moves it, operator-controller installs it, and the gate steps again when allowed.

mod common;

use std::sync::{Arc, Mutex};

use common::olmv1::*;
use common::{cluster, leadership};
use olmctl_operator::controller::{Ctx, View, reconcile};
use olmctl_operator::metrics::Metrics;
use olmctl_testkit::api::ApiServer;
use olmctl_testkit::olmv1::{GROUP, Line, OlmV1};
use serde_json::{Value, json};

const NS: &str = "pelorus";

/// Sunday 2026-09-20 03:00 in Berlin: inside the window.
const INSIDE: &str = "2026-09-20T01:00:00Z";
/// Sunday 2026-09-20 12:00 in Berlin: outside it; the next opens on Saturday.
const OUTSIDE: &str = "2026-09-20T10:00:00Z";

struct World {
    api: ApiServer,
    olm: OlmV1,
    ctx: Arc<Ctx>,
    now: Arc<Mutex<jiff::Timestamp>>,
    dir: tempfile::TempDir,
    servers: Vec<tokio::task::JoinHandle<()>>,
}

impl World {
    async fn new() -> World {
        let api = cluster();
        let olm = OlmV1::start(&api, Line::V1_11);
        api.insert(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        );
        api.insert(
            "upgradepolicies",
            json!({
                "apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
                "metadata": {"name": "pelorus", "namespace": NS},
                "spec": {
                    "clusterExtensionSelector": {"matchLabels": {"app": "pelorus"}},
                    "maxVersionJump": "minor",
                    "crdSafety": "Enforce",
                    "maintenanceWindows": [{"days": ["Sat", "Sun"], "start": "02:00",
                        "duration": "4h", "timeZone": "Europe/Berlin"}],
                },
            }),
        );
        let now = Arc::new(Mutex::new(OUTSIDE.parse().expect("time")));
        let clock = {
            let now = now.clone();
            Arc::new(move || *now.lock().expect("clock"))
        };
        let ctx = Arc::new(Ctx::new(
            api.client(),
            Arc::new(Metrics::default()),
            leadership(true),
            clock,
            Some(semver::Version::new(1, 30, 2)),
        ));
        World {
            api,
            olm,
            ctx,
            now,
            dir: tempfile::tempdir().expect("tempdir"),
            servers: Vec::new(),
        }
    }

    fn at(&self, t: &str) {
        *self.now.lock().expect("clock") = t.parse().expect("time");
    }

    /// The catalog now has versions `first..=last` (a new image, a new digest).
    async fn publish(&mut self, tag: &str, first: u32, last: u32) {
        let t = publish(&self.api, &self.olm, self.dir.path(), tag, first, last, NS).await;
        self.servers.push(t);
    }

    /// The catalog with 0.0.3 ..= 0.0.`last`, and the ClusterExtension installed at 0.0.3.
    async fn installed_at_3(&mut self, last: u32) {
        self.publish("1", 3, last).await;
        self.api.insert("clusterextensions", extension("0.0.3"));
        self.olm.tick();
        assert_eq!(
            installed(&self.api),
            bundle_name(3),
            "{:#?}",
            self.olm.steps()
        );
    }

    /// One reconcile of the namespace, from what the API has now (listing the extensions
    /// wakes the doubles, as their informers would be).
    async fn reconcile(&self) -> olmctl_operator::controller::Next {
        let view = View::list(&self.api.client(), NS).await.expect("list");
        reconcile(NS, &view, &self.ctx).await.expect("reconcile")
    }

    fn entry(&self) -> Value {
        let p = self
            .api
            .get("olmctl.dev", "upgradepolicies", NS, "pelorus")
            .expect("policy");
        let entries = p["status"]["clusterExtensions"].clone();
        assert_eq!(
            entries.as_array().map(Vec::len),
            Some(1),
            "one entry: {p:#}"
        );
        entries[0].clone()
    }

    fn codes(&self) -> Vec<String> {
        self.entry()["reasons"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {}",
                    r["effect"].as_str().unwrap_or(""),
                    r["code"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    /// The Events about the ClusterExtension: (type, reason, note).
    fn events(&self) -> Vec<(String, String, String)> {
        self.api
            .list("events.k8s.io", "events")
            .into_iter()
            .filter(|e| e["regarding"]["kind"] == "ClusterExtension")
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                (s("type"), s("reason"), s("note"))
            })
            .collect()
    }

    /// The pin patches the operator sent.
    fn pin_writes(&self) -> Vec<Value> {
        self.api
            .log()
            .into_iter()
            .filter(|l| l.method == http::Method::PATCH && l.uri.contains("/clusterextensions/"))
            .map(|l| l.body)
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pin_moves_inside_the_window_holds_on_preflight_and_the_override_moves_it() {
    let mut w = World::new().await;
    w.installed_at_3(3).await;

    // Nothing newer: current, the pin kept.
    w.reconcile().await;
    assert_eq!(w.entry()["decision"], "Current", "{:#}", w.entry());
    assert!(w.pin_writes().is_empty());

    // 0.0.4 appears, outside the window: waiting, the next check at the window's opening.
    w.publish("2", 3, 4).await;
    let next = w.reconcile().await;
    let e = w.entry();
    assert_eq!(e["decision"], "Waiting", "{e:#}");
    assert_eq!(e["nextBundle"], bundle_name(4));
    assert_eq!(e["pin"], "0.0.3");
    assert!(w.codes().contains(&"wait GATE009".to_string()), "{e:#}");
    assert_eq!(e["nextCheck"], "2026-09-26T00:00:00Z");
    assert_eq!(next.at, Some("2026-09-26T00:00:00Z".parse().expect("time")));
    assert!(
        w.pin_writes().is_empty(),
        "nothing moves outside the window"
    );
    assert_eq!(pin(&w.api), "0.0.3");
    let p = w
        .api
        .get("olmctl.dev", "upgradepolicies", NS, "pelorus")
        .expect("policy");
    let ready = p["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .find(|c| c["type"] == "Ready")
        .expect("Ready")
        .clone();
    assert!(
        ready["message"]
            .as_str()
            .unwrap_or_default()
            .ends_with("1 ClusterExtension(s): 0 moved, 0 current, 1 waiting, 0 held"),
        "{ready:#}"
    );

    // Inside the window: one guarded patch moves the pin to 0.0.4 and stamps pinned-at.
    w.at(INSIDE);
    let rv = get_extension(&w.api)["metadata"]["resourceVersion"].clone();
    w.reconcile().await;
    assert_eq!(
        w.pin_writes(),
        [json!({"metadata": {"resourceVersion": rv,
                             "annotations": {"olmctl.dev/pinned-at": INSIDE}},
                "spec": {"source": {"catalog": {"version": "0.0.4"}}}})]
    );
    assert_eq!(pin(&w.api), "0.0.4");
    assert_eq!(w.entry()["decision"], "Moved");
    assert!(
        w.events()
            .iter()
            .any(|(t, r, n)| t == "Normal" && r == "Moved" && n.contains("pin \"0.0.3\" -> 0.0.4")),
        "{:#?}",
        w.events()
    );
    // operator-controller resolves the pinned direct successor and installs it.
    w.olm.tick();
    assert_eq!(installed(&w.api), bundle_name(4), "{:#?}", w.olm.steps());
    w.reconcile().await;
    assert_eq!(w.entry()["decision"], "Current", "{:#}", w.entry());
    assert_eq!(w.pin_writes().len(), 1);

    // 0.0.5 appears: its CRD change fails v1's preflight: held with the reason, in the window.
    w.publish("3", 3, 5).await;
    w.reconcile().await;
    let e = w.entry();
    assert_eq!(e["decision"], "Held", "{e:#}");
    assert_eq!(e["nextBundle"], bundle_name(5));
    assert!(w.codes().contains(&"hold GATE007".to_string()), "{e:#}");
    let reason = e["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|r| r["code"] == "GATE007")
        .expect("GATE007")["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.contains("pelorus-operator.v0.0.5"), "{reason}");
    assert!(reason.contains("exporters"), "{reason}");
    assert!(
        w.events()
            .iter()
            .any(|(t, r, n)| t == "Warning" && r == "Held" && n.contains("GATE007")),
        "{:#?}",
        w.events()
    );
    assert_eq!(pin(&w.api), "0.0.4");
    assert_eq!(w.pin_writes().len(), 1, "a hold writes nothing");
    // Judged again, nothing new is recorded.
    let before = w.events().len();
    w.reconcile().await;
    assert_eq!(w.events().len(), before);

    // The override (with operator-controller's preflight set aside, which would refuse the
    // same change): the pin moves to 0.0.5, and operator-controller installs it.
    let ce = get_extension(&w.api);
    w.api.merge(
        GROUP,
        "clusterextensions",
        "",
        "pelorus",
        &json!({"metadata": {"annotations": {"olmctl.dev/approve-version": "0.0.5"}},
                "spec": {"install": {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}}}),
        false,
    );
    assert_ne!(
        ce["metadata"]["resourceVersion"],
        get_extension(&w.api)["metadata"]["resourceVersion"]
    );
    w.olm.tick();
    w.reconcile().await;
    assert_eq!(pin(&w.api), "0.0.5", "{:#}", w.entry());
    assert_eq!(w.entry()["decision"], "Moved");
    assert!(
        w.codes().contains(&"info GATE012".to_string()),
        "{:#}",
        w.entry()
    );
    w.olm.tick();
    assert_eq!(installed(&w.api), bundle_name(5), "{:#?}", w.olm.steps());

    // The gate steps again when allowed: 0.0.6 appears, outside the window it waits; inside
    // it moves.
    w.publish("4", 3, 6).await;
    w.at(OUTSIDE);
    w.reconcile().await;
    assert_eq!(w.entry()["decision"], "Waiting", "{:#}", w.entry());
    assert_eq!(pin(&w.api), "0.0.5");
    w.at("2026-09-26T01:00:00Z");
    w.reconcile().await;
    assert_eq!(pin(&w.api), "0.0.6", "{:#}", w.entry());
    w.olm.tick();
    assert_eq!(installed(&w.api), bundle_name(6), "{:#?}", w.olm.steps());
    let ann = get_extension(&w.api)["metadata"]["annotations"]["olmctl.dev/pinned-at"].clone();
    assert_eq!(ann, "2026-09-26T01:00:00Z");
    assert_eq!(w.ctx.metrics.decisions("hold", "GATE007"), 1);
    assert_eq!(
        w.ctx.metrics.decisions("move", "GATE012"),
        1,
        "the override's move"
    );
    assert_eq!(w.ctx.metrics.decisions("wait", "GATE009"), 2);
    for s in &w.servers {
        s.abort();
    }
}

/// Without the Lease, nothing is written to the extension or the policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_does_not_lead_moves_no_pin() {
    let mut w = World::new().await;
    w.installed_at_3(4).await;
    w.at(INSIDE);
    let ctx = Arc::new(Ctx::new(
        w.api.client(),
        Arc::new(Metrics::default()),
        leadership(false),
        Arc::new(|| INSIDE.parse().expect("time")),
        None,
    ));
    let view = View::list(&w.api.client(), NS).await.expect("list");
    reconcile(NS, &view, &ctx).await.expect("reconcile");
    assert!(w.pin_writes().is_empty());
    assert_eq!(pin(&w.api), "0.0.3");
    // The leader moves it.
    w.reconcile().await;
    assert_eq!(pin(&w.api), "0.0.4");
    for s in &w.servers {
        s.abort();
    }
}

/// catalogd serves HTTPS with its own CA in the standard install: with `--catalogd-cas-dir` the
/// operator trusts it (here the testkit's fixed CA and an HTTPS server it signed, which answers
/// 404 on this path: the TLS handshake passed), without it the handshake fails. The directory
/// is read again when its files change (upstream's `CertPoolWatcher`): the shipped Deployment
/// mounts an optional ConfigMap there, empty until the deployer creates it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogd_over_https_is_trusted_through_catalogd_cas_dir() {
    let api = ApiServer::new();
    let base = format!("{}/catalogs/pelorus-catalog", api.serve_tls_on_loopback());
    let cc = json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": "pelorus-catalog"},
        "status": {"conditions": [{"type": "Serving", "status": "True"}],
                   "resolvedSource": {"image": {"ref": "quay.io/x/catalog@sha256:00"}},
                   "urls": {"base": base}},
    });
    let mut objects = olmctl::gate::objects::Objects::default();
    objects
        .add_text(std::path::Path::new("cc.json"), &cc.to_string())
        .expect("reads");
    let cc = &objects.cluster_catalogs[0];
    let passed_tls = |r: Result<_, String>| {
        let e = r.expect_err("404");
        assert!(
            e.contains("error: received unexpected response status code 404"),
            "{e}"
        );
    };

    let untrusted = olmctl_operator::extensions::Catalogs::default()
        .content(cc, "pelorus")
        .await
        .expect_err("not trusted");
    assert!(!untrusted.contains("status code"), "{untrusted}");
    assert!(!untrusted.contains("--catalogd-cas-dir"), "{untrusted}");

    // The optional ConfigMap is not there yet: an empty directory, a hint on the failure.
    let dir = tempfile::tempdir().expect("tempdir");
    let catalogs =
        olmctl_operator::extensions::Catalogs::with_catalogd_cas_dir(dir.path()).expect("empty");
    let err = catalogs
        .content(cc, "pelorus")
        .await
        .expect_err("not trusted yet");
    assert!(!err.contains("status code"), "{err}");
    assert!(
        err.contains(&format!(
            "(--catalogd-cas-dir {} holds no certificate",
            dir.path().display()
        )),
        "{err}"
    );
    // The CA appears (the deployer created the ConfigMap): trusted without a restart, through
    // a symlink as a ConfigMap volume holds its keys, beside a file that is no certificate.
    let data = dir.path().join("..data");
    std::fs::create_dir(&data).expect("mkdir");
    std::fs::write(data.join("ca.crt"), olmctl_testkit::api::tls::CA_CERT).expect("write");
    std::os::unix::fs::symlink("..data/ca.crt", dir.path().join("ca.crt")).expect("link");
    std::fs::write(dir.path().join("README"), "not a certificate").expect("write");
    passed_tls(catalogs.content(cc, "pelorus").await);
    // A restart reads the same directory.
    passed_tls(
        olmctl_operator::extensions::Catalogs::with_catalogd_cas_dir(dir.path())
            .expect("reads the CA")
            .content(cc, "pelorus")
            .await,
    );

    // Files but no certificate: refused at start, and a fetch fails once the CA is gone.
    std::fs::remove_file(dir.path().join("ca.crt")).expect("rm");
    let bad = olmctl_operator::extensions::Catalogs::with_catalogd_cas_dir(dir.path())
        .err()
        .expect("refused");
    assert_eq!(
        bad,
        format!(
            "--catalogd-cas-dir {}: no certificates found in 1 file(s)",
            dir.path().display()
        )
    );
    let err = catalogs.content(cc, "pelorus").await.expect_err("no CA");
    assert_eq!(
        err,
        format!("catalog \"pelorus-catalog\": {bad}"),
        "the same reason at fetch time"
    );
    let missing =
        olmctl_operator::extensions::Catalogs::with_catalogd_cas_dir(&dir.path().join("no"))
            .err()
            .expect("refused");
    assert!(missing.starts_with("--catalogd-cas-dir "), "{missing}");
}

/// catalogd's content cannot be read (its address moved to where nothing answers): the
/// reconcile fails naming the catalog (retried with backoff), the metric counts it, and the
/// extension's entry on the policy stays as it was; once it can be read again, it is judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_catalog_is_retried_and_the_entry_kept() {
    let mut w = World::new().await;
    w.installed_at_3(4).await;
    w.reconcile().await;
    let before = w.entry();
    assert_eq!(before["decision"], "Waiting", "{before:#}");

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    w.olm.set_external_address(&format!("http://{closed}"));
    w.olm.tick();
    let view = View::list(&w.api.client(), NS).await.expect("list");
    let err = reconcile(NS, &view, &w.ctx)
        .await
        .expect_err("the catalog cannot be read");
    assert!(
        err.to_string()
            .contains("ClusterExtension pelorus: catalog \"pelorus-catalog\": GET"),
        "{err}"
    );
    assert_eq!(w.entry(), before);
    assert!(
        w.ctx
            .metrics
            .render()
            .contains("olmctl_gate_errors_total{kind=\"catalog\"} 1"),
        "{}",
        w.ctx.metrics.render()
    );

    w.publish("2", 3, 4).await;
    w.at(INSIDE);
    w.reconcile().await;
    assert_eq!(pin(&w.api), "0.0.4", "{:#}", w.entry());
    for s in &w.servers {
        s.abort();
    }
}

/// Two ClusterCatalogs offer the package (a mirror of the same content): at the same
/// priority, operator-controller would refuse a pin to 0.0.4 ("found bundles ... in multiple
/// catalogs with the same priority"), so the gate holds it with that reason (GATE020), the
/// message the v1 double gives when a person pins it anyway; once the mirror's priority is
/// higher, the pin moves and 0.0.4 installs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_two_catalogs_offer_at_the_same_priority_is_held() {
    let mut w = World::new().await;
    w.installed_at_3(4).await;
    // The mirror: the same versions as another image, both served by one catalogd.
    let mirror_dir = w.dir.path().join("catalog-mirror");
    let content = render_catalog(&mirror_dir, 3, 4, NS);
    w.olm.serve("quay.io/mirror/catalog:1", content);
    w.api.insert(
        "clustercatalogs",
        json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
               "metadata": {"name": "mirror"},
               "spec": {"source": {"type": "Image", "image": {"ref": "quay.io/mirror/catalog:1"}}}}),
    );
    let scratch = w.dir.path().join("scratch-many");
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let (base, task) = serve_http_many(
        &[
            (CATALOG, &w.dir.path().join("catalog-1")),
            ("mirror", &mirror_dir),
        ],
        &scratch,
    )
    .await;
    w.servers.push(task);
    w.olm.set_external_address(&base);
    w.olm.tick();

    w.at(INSIDE);
    w.reconcile().await;
    let e = w.entry();
    assert_eq!(e["decision"], "Held", "{e:#}");
    assert_eq!(pin(&w.api), "0.0.3");
    assert!(w.pin_writes().is_empty());
    let held: Vec<String> = e["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["code"] == "GATE020")
        .map(|r| r["message"].as_str().unwrap_or_default().to_string())
        .collect();
    let refusal = "error upgrading from currently installed version \"0.0.3\": found bundles for package \"pelorus-operator\" matching version \"0.0.4\" in channels [alpha] in multiple catalogs with the same priority [mirror pelorus-catalog]";
    assert_eq!(
        held,
        [format!(
            "ClusterExtension pelorus: a pin to 0.0.4 would not resolve: {refusal}"
        )]
    );

    // What operator-controller (the double) says when a person pins it anyway: the same.
    let set_pin = |version: &str| {
        let rv = get_extension(&w.api)["metadata"]["resourceVersion"].clone();
        w.api.merge(
            GROUP,
            "clusterextensions",
            "",
            "pelorus",
            &json!({"metadata": {"resourceVersion": rv},
                    "spec": {"source": {"catalog": {"version": version}}}}),
            false,
        );
    };
    set_pin("0.0.4");
    w.olm.tick();
    assert_eq!(installed(&w.api), bundle_name(3));
    let progressing = get_extension(&w.api)["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing")
        .cloned()
        .expect("Progressing");
    assert!(
        progressing["message"]
            .as_str()
            .unwrap_or_default()
            .contains(refusal),
        "{progressing:#}"
    );
    // Back to the installed version, and the mirror preferred: the pin moves, 0.0.4 installs.
    set_pin("0.0.3");
    w.api.merge(
        GROUP,
        "clustercatalogs",
        "",
        "mirror",
        &json!({"spec": {"priority": 10}}),
        false,
    );
    w.olm.tick();
    w.reconcile().await;
    assert_eq!(pin(&w.api), "0.0.4", "{:#}", w.entry());
    w.olm.tick();
    assert_eq!(installed(&w.api), bundle_name(4), "{:#?}", w.olm.steps());
    for s in &w.servers {
        s.abort();
    }
}
