//! `olmctl install` and `olmctl uninstall` against the in-memory API, with an OLM double moving
//! the objects through OLM's states: each progress step, Manual approval, OLM's failures.

mod cluster;
mod common;

use cluster::*;
use olmctl::install::uninstall::Uninstall;
use olmctl_cli::cluster::UninstallRequest;
use olmctl_cli::cluster::ui::{Recorder, Ui};
use olmctl_cli::cluster::{install, uninstall};
use serde_json::json;

fn run_install(
    fake: &olmctl_testkit::api::ApiServer,
    req: &olmctl_cli::cluster::InstallRequest,
    ui: &mut dyn Ui,
) -> u8 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async { install::run(&client(fake), req, ui).await })
        .expect("no API error")
}

const CREATED: [&str; 3] = [
    "CatalogSource olm/p-catalog created",
    "OperatorGroup operators/operators created",
    "Subscription operators/p created",
];

fn csv_lines() -> Vec<String> {
    [
        "InstallPlan install-7xk2p is Complete",
        "ClusterServiceVersion p.v1.0.0 is Pending (RequirementsUnknown: requirements not yet checked)",
        "ClusterServiceVersion p.v1.0.0 is InstallReady (AllRequirementsMet: all requirements found, attempting install)",
        "ClusterServiceVersion p.v1.0.0 is Installing (InstallSucceeded: waiting for install components to report healthy)",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn automatic_install_reports_each_step_in_order() {
    let (fake, olm) = cluster(Scenario::default());
    let mut ui = Recorder::default();
    let code = run_install(&fake, &request("Automatic", false), &mut ui);
    let mut want: Vec<String> = CREATED.map(String::from).to_vec();
    want.extend(
        [
            "CatalogSource olm/p-catalog is READY",
            "Subscription p resolved to p.v1.0.0 (InstallPlan install-7xk2p)",
            "InstallPlan install-7xk2p is Installing",
        ]
        .map(String::from),
    );
    want.extend(csv_lines());
    want.extend(
        [
            "ClusterServiceVersion p.v1.0.0 is Succeeded (InstallSucceeded: install strategy completed with no errors)",
            "installed p.v1.0.0 in namespace operators",
        ]
        .map(String::from),
    );
    assert_eq!(ui.lines, want);
    assert_eq!(code, 0);
    assert!(ui.errors.is_empty() && ui.asked.is_empty());
    // What was created is what `install --print` writes.
    let sub = fake
        .get(OLM, "subscriptions", NS, "p")
        .expect("subscription");
    assert_eq!(
        sub["spec"],
        json!({"name": "p", "source": "p-catalog", "sourceNamespace": "olm",
               "installPlanApproval": "Automatic", "channel": "stable"})
    );
    assert_eq!(
        olm.lock().unwrap().steps,
        [
            "catalog CONNECTING",
            "catalog READY",
            "plan created",
            "plan status",
            "plan Complete",
            "Pending",
            "InstallReady",
            "Installing",
            "Succeeded"
        ]
    );

    // Again: everything exists and is unchanged; it is installed already.
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &request("Automatic", false), &mut ui), 0);
    assert_eq!(
        ui.lines[..3],
        [
            "CatalogSource olm/p-catalog unchanged",
            "OperatorGroup operators/operators unchanged",
            "Subscription operators/p unchanged"
        ]
    );
    assert_eq!(
        ui.lines.last().unwrap(),
        "installed p.v1.0.0 in namespace operators"
    );
}

#[test]
fn manual_approval_with_yes_approves_the_plan_once() {
    let (fake, _olm) = cluster(Scenario::default());
    let mut ui = Recorder::default();
    let code = run_install(&fake, &request("Manual", true), &mut ui);
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    let at = ui
        .lines
        .iter()
        .position(|l| l == "InstallPlan install-7xk2p requires approval (installs p.v1.0.0)")
        .expect("approval line");
    assert_eq!(
        ui.lines[at + 1..at + 3],
        [
            "InstallPlan install-7xk2p approved",
            "InstallPlan install-7xk2p is Installing"
        ]
    );
    assert!(ui.asked.is_empty(), "--yes asks nothing");
    let patches: Vec<_> = fake
        .log()
        .into_iter()
        .filter(|l| l.method == http::Method::PATCH && l.uri.contains("/installplans/"))
        .collect();
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0].body["spec"], json!({"approved": true}));
    assert!(
        patches[0].body["metadata"]["resourceVersion"].is_string(),
        "the approval has the plan's resourceVersion as precondition"
    );
}

#[test]
fn manual_approval_asks_and_a_no_leaves_the_plan() {
    let (fake, _olm) = cluster(Scenario::default());
    let mut ui = Recorder::default();
    ui.answers.push_back(Some(false));
    let code = run_install(&fake, &request("Manual", false), &mut ui);
    assert_eq!(code, 1);
    assert_eq!(
        ui.asked,
        ["Approve InstallPlan operators/install-7xk2p, which installs p.v1.0.0?"]
    );
    assert_eq!(
        ui.lines.last().unwrap(),
        "InstallPlan operators/install-7xk2p not approved: it stays RequiresApproval"
    );
    let plan = fake.get(OLM, "installplans", NS, PLAN).expect("plan");
    assert_eq!(plan["spec"]["approved"], false);

    // A yes approves and the install goes on.
    let mut ui = Recorder::default();
    ui.answers.push_back(Some(true));
    assert_eq!(run_install(&fake, &request("Manual", false), &mut ui), 0);
    assert!(
        ui.lines
            .contains(&"InstallPlan install-7xk2p approved".to_string())
    );
}

/// A person who takes `delay` to answer.
struct Slow {
    rec: Recorder,
    delay: std::time::Duration,
}

impl Ui for Slow {
    fn line(&mut self, s: &str) {
        self.rec.line(s);
    }

    fn error(&mut self, s: &str) {
        self.rec.error(s);
    }

    fn confirm(&mut self, question: &str) -> Option<bool> {
        std::thread::sleep(self.delay);
        self.rec.confirm(question)
    }
}

#[test]
fn the_time_a_confirmation_waits_for_its_answer_is_not_counted_in_the_timeout() {
    // Every API call's deadline is within --timeout; an answer that took longer than all of
    // it still gets its approval sent, and the install goes on.
    let (fake, _olm) = cluster(Scenario::default());
    let mut req = request("Manual", false);
    req.waiting.timeout = std::time::Duration::from_secs(2);
    let mut ui = Slow {
        rec: Recorder::default(),
        delay: std::time::Duration::from_secs(3),
    };
    ui.rec.answers.push_back(Some(true));
    assert_eq!(run_install(&fake, &req, &mut ui), 0, "{:?}", ui.rec.errors);
    assert!(
        ui.rec
            .lines
            .contains(&"InstallPlan install-7xk2p approved".to_string())
    );
    assert_eq!(
        ui.rec.lines.last().unwrap(),
        "installed p.v1.0.0 in namespace operators"
    );
}

#[test]
fn manual_approval_without_a_terminal_says_what_to_do() {
    let (fake, _olm) = cluster(Scenario::default());
    let mut ui = Recorder::default();
    ui.answers.push_back(None);
    assert_eq!(run_install(&fake, &request("Manual", false), &mut ui), 2);
    assert_eq!(ui.errors.len(), 1);
    assert!(ui.errors[0].contains("pass --yes"), "{:?}", ui.errors);
    assert!(ui.errors[0].contains("kubectl patch installplan install-7xk2p -n operators"));
}

#[test]
fn resolution_failed_stops_with_olms_message() {
    let msg = "no operators found in channel stable of package p in the catalog referenced by subscription p";
    let (fake, _olm) = cluster(Scenario {
        resolution_fails: Some(msg.into()),
        ..Scenario::default()
    });
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &request("Automatic", false), &mut ui), 1);
    assert_eq!(
        ui.errors,
        [format!(
            "ResolutionFailed: ConstraintsNotSatisfiable: {msg}"
        )]
    );
    assert_eq!(
        ui.lines.last().unwrap(),
        "CatalogSource olm/p-catalog is READY"
    );
}

#[test]
fn a_failed_csv_stops_with_its_reason() {
    let (fake, _olm) = cluster(Scenario {
        csv_fails: Some(("InstallCheckFailed".into(), "install timeout".into())),
        ..Scenario::default()
    });
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &request("Automatic", false), &mut ui), 1);
    assert_eq!(
        ui.errors,
        ["CSVFailed: InstallCheckFailed: install timeout"]
    );
    assert_eq!(
        ui.lines.last().unwrap(),
        "ClusterServiceVersion p.v1.0.0 is Failed (InstallCheckFailed: install timeout)"
    );
}

#[test]
fn a_catalog_that_never_connects_times_out_naming_its_state() {
    let (fake, _olm) = cluster(Scenario {
        catalog_stuck: true,
        ..Scenario::default()
    });
    let mut req = request("Automatic", false);
    req.waiting.timeout = std::time::Duration::from_millis(50);
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &req, &mut ui), 1);
    assert_eq!(
        ui.errors,
        [
            "timed out after 50ms waiting for CatalogSource olm/p-catalog to be READY (it is CONNECTING)"
        ]
    );
}

#[test]
fn an_existing_operator_group_is_used_and_a_missing_namespace_is_refused() {
    let (fake, _olm) = cluster(Scenario::default());
    fake.insert(
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
               "metadata": {"name": "global-operators", "namespace": NS}, "spec": {}}),
    );
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &request("Automatic", false), &mut ui), 0);
    assert_eq!(
        ui.lines[..3],
        [
            "OperatorGroup operators/global-operators manages namespace operators: none created",
            "CatalogSource olm/p-catalog created",
            "Subscription operators/p created"
        ]
    );
    assert_eq!(fake.list(OLM, "operatorgroups").len(), 1);

    let mut req = request("Automatic", false);
    req.install.namespace = "elsewhere".into();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(async { install::run(&client(&fake), &req, &mut Recorder::default()).await })
        .unwrap_err();
    assert_eq!(
        err,
        "namespace elsewhere not found: create it, or pass --create-namespace"
    );
}

#[test]
fn with_a_gate_the_plan_is_left_to_olmctl_operator() {
    let (fake, olm) = cluster(Scenario {
        gate_approves: true,
        ..Scenario::default()
    });
    let mut req = request("Automatic", false);
    req.install.gate = Some(
        json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
        "metadata": {"name": "default"}, "spec": {"maxVersionJump": "minor"}}),
    );
    let mut ui = Recorder::default();
    assert_eq!(run_install(&fake, &req, &mut ui), 0, "{:?}", ui.errors);
    assert!(
        ui.lines
            .contains(&"UpgradePolicy operators/default created".to_string())
    );
    assert!(
        ui.lines.contains(
            &"InstallPlan install-7xk2p is left to olmctl-operator's UpgradePolicy in operators"
                .to_string()
        )
    );
    assert!(ui.asked.is_empty());
    assert!(olm.lock().unwrap().steps.contains(&"gate approved"));
    let sub = fake.get(OLM, "subscriptions", NS, "p").unwrap();
    assert_eq!(sub["spec"]["installPlanApproval"], "Manual");
}

#[test]
fn uninstall_deletes_subscription_csv_and_when_asked_crds_and_our_catalog() {
    let (fake, _olm) = installed();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let req = |crds: bool, yes: bool| UninstallRequest {
        uninstall: Uninstall {
            package: "p".into(),
            subscription: None,
            namespace: NS.into(),
            delete_crds: crds,
            delete_catalog_source: true,
        },
        connection: Default::default(),
        waiting: waiting(yes),
    };
    // --delete-crds without a terminal and without --yes deletes nothing.
    let mut ui = Recorder::default();
    let code = rt
        .block_on(async { uninstall::run(&client(&fake), &req(true, false), &mut ui).await })
        .unwrap();
    assert_eq!(code, 2);
    assert!(ui.errors[0].contains("pass --yes"));
    assert!(fake.get(OLM, "subscriptions", NS, "p").is_some());

    let mut ui = Recorder::default();
    let code = rt
        .block_on(async { uninstall::run(&client(&fake), &req(true, true), &mut ui).await })
        .unwrap();
    assert_eq!(code, 0, "{:?}", ui.errors);
    assert_eq!(
        ui.lines,
        [
            "Subscription operators/p deleted",
            "ClusterServiceVersion operators/p.v1.0.0 deleted",
            "CustomResourceDefinition widgets.example.com deleted",
            "CatalogSource olm/p-catalog deleted",
            "uninstalled p from namespace operators"
        ]
    );
    assert!(fake.get(OLM, "subscriptions", NS, "p").is_none());
    assert!(
        fake.get(OLM, "clusterserviceversions", NS, "p.v1.0.0")
            .is_none()
    );
    assert!(
        fake.get("apiextensions.k8s.io", "customresourcedefinitions", "", CRD)
            .is_none()
    );
    assert!(
        fake.get(OLM, "catalogsources", "olm", "p-catalog")
            .is_none()
    );

    // Nothing left: the Subscription is not found.
    let err = rt
        .block_on(async {
            uninstall::run(&client(&fake), &req(false, true), &mut Recorder::default()).await
        })
        .unwrap_err();
    assert!(
        err.starts_with("Subscription operators/p not found"),
        "{err}"
    );
}

#[test]
fn conditions_olm_retries_are_waited_out_and_the_last_one_is_told_at_the_timeout() {
    // Defect G: ErrorPreventedResolution and BundleUnpackFailed are retried by OLM; the
    // install stopped at the first one.
    for (ty, reason, message) in [
        (
            "ResolutionFailed",
            "ErrorPreventedResolution",
            "expected 1 OperatorGroup in the namespace, found 0",
        ),
        (
            "BundleUnpackFailed",
            "BundleUnpackFailed",
            "Bundle unpacking failed - DeadlineExceeded: Job was active longer than specified deadline. Auto-retry in ~5 min after job cleanup (TTL)",
        ),
    ] {
        let sc = Scenario {
            transient: Some((ty.into(), reason.into(), message.into(), 3)),
            ..Scenario::default()
        };
        let (fake, olm) = cluster(sc);
        let mut ui = Recorder::default();
        let code = run_install(&fake, &request("Automatic", false), &mut ui);
        assert_eq!(code, 0, "{ty}: {:?} {:?}", ui.lines, ui.errors);
        let told = format!("Subscription p: {ty} ({reason}: {message}); OLM retries");
        assert!(ui.lines.contains(&told), "{ty}: {:#?}", ui.lines);
        assert_eq!(
            ui.lines.last().unwrap(),
            "installed p.v1.0.0 in namespace operators"
        );
        assert!(
            olm.lock()
                .unwrap()
                .steps
                .contains(&"transient condition cleared")
        );
        // It never clears: the timeout names the last reason.
        let sc = Scenario {
            transient: Some((ty.into(), reason.into(), message.into(), u32::MAX)),
            ..Scenario::default()
        };
        let (fake, _olm) = cluster(sc);
        let mut req = request("Automatic", false);
        req.waiting.timeout = std::time::Duration::from_millis(300);
        let mut ui = Recorder::default();
        assert_eq!(run_install(&fake, &req, &mut ui), 1);
        assert_eq!(
            ui.errors,
            [format!(
                "timed out after 300ms waiting for Subscription p to be resolved (last: {ty}: {reason}: {message})"
            )]
        );
    }
}

#[test]
fn uninstall_deletes_custom_resources_while_the_operator_runs_then_every_csv_of_the_package() {
    // Defect D: uninstall deleted only status.installedCSV (a failed upgrade leaves two) and
    // the CRDs with custom resources whose finalizer then had no controller.
    let (fake, _olm) = installed();
    // A failed upgrade left the next CSV too; a Widget carries the operator's finalizer.
    let mut next = fake
        .get(OLM, "clusterserviceversions", NS, "p.v1.0.0")
        .unwrap();
    next["metadata"] = json!({"name": "p.v1.1.0", "namespace": NS,
        "labels": {"operators.coreos.com/p.operators": ""}});
    next["status"] = json!({"phase": "Failed", "reason": "InstallCheckFailed"});
    fake.insert("clusterserviceversions", next);
    fake.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}),
    );
    fake.insert(
        "widgets",
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "apps", "finalizers": ["example.com/cleanup"]}}),
    );
    let (code, ui) = uninstall_p(&fake, true);
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    assert_eq!(
        ui.lines,
        [
            "Subscription operators/p deleted",
            "Widget apps/w deleted",
            "ClusterServiceVersion operators/p.v1.0.0 deleted",
            "ClusterServiceVersion operators/p.v1.1.0 deleted",
            "CustomResourceDefinition widgets.example.com deleted",
            "uninstalled p from namespace operators"
        ]
    );
    assert!(fake.list("example.com", "widgets").is_empty());
    assert!(fake.list(OLM, "clusterserviceversions").is_empty());
    assert!(
        fake.get("apiextensions.k8s.io", "customresourcedefinitions", "", CRD)
            .is_none()
    );
}

#[test]
fn uninstall_keeping_crds_warns_of_custom_resources_with_finalizers() {
    let (fake, _olm) = installed();
    fake.insert(
        "widgets",
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": NS, "finalizers": ["example.com/cleanup"]}}),
    );
    let (code, ui) = uninstall_p(&fake, false);
    assert_eq!(code, 0);
    assert_eq!(
        ui.lines[0],
        "warning: Widget operators/w keeps finalizer(s) example.com/cleanup: nothing removes them once the operator is gone, and they block the deletion of its namespace and CRD; delete it before uninstalling, or pass --delete-crds"
    );
    assert!(fake.get("example.com", "widgets", NS, "w").is_some());
}

/// The double's cluster with p installed (Automatic approval).
fn installed() -> (
    olmctl_testkit::api::ApiServer,
    std::sync::Arc<std::sync::Mutex<Olm>>,
) {
    let (fake, olm) = cluster(Scenario::default());
    assert_eq!(
        run_install(
            &fake,
            &request("Automatic", false),
            &mut Recorder::default()
        ),
        0
    );
    (fake, olm)
}

/// `olmctl uninstall p --yes` (with `--delete-crds` when `crds`): its exit status and lines.
fn uninstall_p(fake: &olmctl_testkit::api::ApiServer, crds: bool) -> (u8, Recorder) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let req = UninstallRequest {
        uninstall: Uninstall {
            package: "p".into(),
            subscription: None,
            namespace: NS.into(),
            delete_crds: crds,
            delete_catalog_source: false,
        },
        connection: Default::default(),
        waiting: waiting(true),
    };
    let mut ui = Recorder::default();
    let code = rt
        .block_on(async { uninstall::run(&client(fake), &req, &mut ui).await })
        .expect("no API error");
    (code, ui)
}

#[test]
fn uninstall_deletes_only_the_crds_its_bundle_shipped_and_nobody_else_uses() {
    // A CSV's owned list is the bundle author's claim: it named cert-manager's CRD, a path out
    // of the CRDs' collection and a name with a query. Before, olmctl deleted every
    // Certificate of the cluster, then cert-manager's CRD, and sent the path as it was.
    let (fake, _olm) = installed();
    for ns in ["cert-manager", "kube-system"] {
        fake.insert(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    let mut cm_crd = widget_crd();
    cm_crd["metadata"]["name"] = json!("certificates.cert-manager.io");
    cm_crd["spec"]["group"] = json!("cert-manager.io");
    cm_crd["spec"]["names"] = json!({"plural": "certificates", "singular": "certificate",
        "kind": "Certificate", "listKind": "CertificateList"});
    fake.insert("customresourcedefinitions", cm_crd);
    fake.insert(
        "certificates",
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "api-tls", "namespace": "kube-system"}}),
    );
    fake.insert(
        "secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "kube-system"}}),
    );
    fake.insert(
        "clusterserviceversions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": "cert-manager.v1.15.0", "namespace": "cert-manager"},
            "spec": {"customresourcedefinitions": {"owned": [
                {"name": "certificates.cert-manager.io", "version": "v1", "kind": "Certificate"}]}}}),
    );
    let mut csv = fake
        .get(OLM, "clusterserviceversions", NS, "p.v1.0.0")
        .unwrap();
    csv["spec"]["customresourcedefinitions"]["owned"] = json!([
        {"name": CRD, "version": "v1", "kind": "Widget"},
        {"name": "certificates.cert-manager.io", "version": "v1", "kind": "Certificate"},
        {"name": "../../../../api/v1/namespaces/kube-system/secrets/x", "version": "v1", "kind": "X"},
        {"name": "a?b=c#d", "version": "v1", "kind": "Y"}]);
    fake.insert("clusterserviceversions", csv);
    let (code, ui) = uninstall_p(&fake, true);
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    assert_eq!(
        ui.lines[..3],
        [
            "Subscription operators/p deleted",
            "ClusterServiceVersion operators/p.v1.0.0 deleted",
            "CustomResourceDefinition widgets.example.com deleted",
        ]
    );
    let kept: Vec<&String> = ui.lines.iter().filter(|l| l.contains(" kept: ")).collect();
    assert_eq!(kept.len(), 3, "{:?}", ui.lines);
    assert!(kept.iter().any(|l| l.starts_with(
        "CRD certificates.cert-manager.io kept: the package's bundle does not ship it"
    )));
    assert!(
        kept.iter()
            .any(|l| l.starts_with("CRD a?b=c#d kept: not a CRD name"))
    );
    assert!(
        fake.get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "certificates.cert-manager.io"
        )
        .is_some()
    );
    assert!(
        fake.get("cert-manager.io", "certificates", "kube-system", "api-tls")
            .is_some()
    );
    assert!(fake.get("", "secrets", "kube-system", "x").is_some());
    assert!(
        fake.get("apiextensions.k8s.io", "customresourcedefinitions", "", CRD)
            .is_none()
    );
}

#[test]
fn uninstall_and_status_refuse_names_that_leave_their_path_segment() {
    let (fake, _olm) = cluster(Scenario::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (package, subscription, ns, flag) in [
        ("p", None, "../kube-system", "--namespace"),
        (
            "../../api/v1/namespaces/kube-system/secrets/x",
            None,
            NS,
            "the package name",
        ),
        ("p", Some("a?b=c"), NS, "--subscription"),
    ] {
        let u = Uninstall {
            package: package.into(),
            subscription: subscription.map(str::to_string),
            namespace: ns.into(),
            delete_crds: false,
            delete_catalog_source: false,
        };
        let e = u.check().unwrap_err();
        assert!(e.starts_with(flag), "{e}");
    }
    // The real binaries refuse them before any cluster is reached (no kubeconfig here).
    for args in [
        &["status", "-n", "../kube-system"][..],
        &["uninstall", "p", "-n", "../kube-system"],
        &["uninstall", "../x", "--olmv1"],
    ] {
        let o = common::cli::olmctl(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: --namespace \"../kube-system\": a lowercase RFC 1123 label")
                || err.starts_with("error: the package name \"../x\""),
            "{args:?}: {err}"
        );
    }
    // Below the flags, every name is a path segment as client-go takes it.
    let err = rt
        .block_on(async {
            let c = olmctl_cli::cluster::api::Calls::new(
                &client(&fake),
                std::time::Duration::from_secs(5),
            );
            olmctl_cli::cluster::api::get(
                &c,
                olmctl_cli::cluster::api::CRD,
                None,
                "../../api/v1/namespaces/kube-system/secrets/x",
            )
            .await
        })
        .unwrap_err();
    assert_eq!(
        err,
        "CustomResourceDefinition ../../api/v1/namespaces/kube-system/secrets/x: invalid resource name \"../../api/v1/namespaces/kube-system/secrets/x\": may not contain '/'"
    );
}

/// The bundle of p.v1.0.0 (its CSV owns widgets.example.com; `crd` adds its manifest) and a
/// catalog serving it, pushed to `reg` by the real binary: the catalog's reference.
fn push_catalog(reg: &common::registry::TestRegistry, crd: bool) -> String {
    let bundle_ref = reg.image(&format!("p-bundle-{crd}:v1.0.0"));
    let catalog_ref = reg.image(&format!("p-catalog-{crd}:v1"));
    let csv = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "p.v1.0.0"},
        "spec": {"version": "1.0.0", "customresourcedefinitions": {"owned": [{"name": CRD, "version": "v1", "kind": "Widget"}]},
            "installModes": [{"type": "AllNamespaces", "supported": true}],
            "install": {"strategy": "deployment", "spec": {"deployments": []}}}});
    let mut files = vec![
        ("manifests/p.clusterserviceversion.yaml".to_string(), csv.to_string()),
        ("metadata/annotations.yaml".to_string(), "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: stable\n".to_string()),
    ];
    if crd {
        files.push((
            "manifests/widgets.crd.yaml".to_string(),
            widget_crd().to_string(),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let b = common::write_tree(&refs);
    let pushed = |args: &[&str]| {
        let o = common::cli::olmctl(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    };
    pushed(&[
        "bundle",
        "build",
        common::cli::p(b.path()),
        "--tag",
        &bundle_ref,
        "--push",
        // A CSV cut to what uninstall reads: the build's findings are not this test's.
        "--force",
    ]);
    let fbc = [
        json!({"schema": "olm.package", "name": "p", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "package": "p", "name": "stable", "entries": [{"name": "p.v1.0.0"}]}),
        json!({"schema": "olm.bundle", "package": "p", "name": "p.v1.0.0", "image": bundle_ref,
            "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}]}),
    ]
    .iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let c = common::write_tree(&[("p/catalog.json", &fbc)]);
    pushed(&[
        "catalog",
        "push",
        common::cli::p(c.path()),
        "--tag",
        &catalog_ref,
    ]);
    catalog_ref
}

#[test]
fn uninstall_reads_the_bundle_from_the_catalog_when_no_install_plan_is_left() {
    // OLM keeps a namespace's newest InstallPlans only: with none left, the installed bundle
    // is read from the CatalogSource's image, and only the CRDs it ships are deleted.
    let reg = common::registry::TestRegistry::start();
    for (ships, image) in [
        (true, push_catalog(&reg, true)),
        (false, push_catalog(&reg, false)),
        (false, "/etc".to_string()),
    ] {
        let (fake, _olm) = installed();
        for p in fake.list(OLM, "installplans") {
            let name = p["metadata"]["name"].as_str().unwrap().to_string();
            fake.delete(OLM, "installplans", NS, &name);
        }
        let mut cs = fake.list(OLM, "catalogsources").remove(0);
        cs["spec"]["image"] = json!(image);
        fake.insert("catalogsources", cs);
        let (code, ui) = uninstall_p(&fake, true);
        assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
        let crd_left = fake
            .get("apiextensions.k8s.io", "customresourcedefinitions", "", CRD)
            .is_some();
        assert_eq!(crd_left, !ships, "{image}: {:?}", ui.lines);
        let kept: Vec<&String> = ui.lines.iter().filter(|l| l.contains(" kept: ")).collect();
        if ships {
            assert!(kept.is_empty(), "{:?}", ui.lines);
            assert!(
                ui.lines
                    .contains(&format!("CustomResourceDefinition {CRD} deleted"))
            );
        } else if image.starts_with('/') {
            assert!(
                ui.lines.iter().any(
                    |l| l.starts_with("note: no InstallPlan of operators is left")
                        && l.ends_with(
                            "CatalogSource olm/p-catalog /etc is not a registry image reference"
                        )
                ),
                "{:?}",
                ui.lines
            );
            assert!(
                kept[0].contains("the bundle could not be read from the catalog"),
                "{kept:?}"
            );
        } else {
            assert_eq!(
                *kept[0],
                format!(
                    "CRD {CRD} kept: the package's bundle does not ship it: bundle {} (catalog {image}) has no CRD manifest of that name",
                    reg.image("p-bundle-false:v1.0.0")
                )
            );
        }
    }
}
