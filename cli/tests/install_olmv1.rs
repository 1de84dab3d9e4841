//! `olmctl install --olmv1` against the API double with OLM v1's doubles
//! (`olmctl_testkit::olmv1`: catalogd and operator-controller over operator-controller's own
//! CRDs): the catalog unpacked and served, the extension resolved and installed with the
//! installed bundle reported; a CRD change the preflight refuses and, on v1.10, a missing RBAC
//! rule of the installer ServiceAccount, each shown with the extension's condition.

use std::path::PathBuf;
use std::time::Duration;

use olmctl::install::olmv1::{Catalog, InstallV1};
use olmctl_cli::cluster::Waiting;
use olmctl_cli::cluster::install_v1;
use olmctl_cli::cluster::ui::Recorder;
use olmctl_testkit::api::ApiServer;
use olmctl_testkit::olmv1::{CatalogImage, GROUP, Line, OlmV1, Rendered};
use serde_json::{Value, json};

const IMAGE: &str = "quay.io/example/catalog:v1";
const PKG: &str = "argocd-operator";
const NS: &str = "argocd-system";

fn bundle_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/olmv1-render/bundles/argocd-operator.v0.6.0")
}

/// What operator-controller's renderer made of the bundle for install namespace
/// `argocd-system` (its own regression data, `all-namespaces`): what the double applies.
fn recorded() -> Rendered {
    Rendered::expected_manifests(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
            "../tests/data/olmv1-render/expected-manifests/argocd-operator.v0.6.0/all-namespaces",
        ),
        NS,
    )
}

/// A catalog with the package, channel `alpha` and the one bundle.
fn catalog() -> (tempfile::TempDir, CatalogImage) {
    let dir = tempfile::tempdir().expect("tempdir");
    let blobs = [
        json!({"schema": "olm.package", "name": PKG, "defaultChannel": "alpha"}),
        json!({"schema": "olm.channel", "package": PKG, "name": "alpha",
               "entries": [{"name": "argocd-operator.v0.6.0"}]}),
        json!({"schema": "olm.bundle", "package": PKG, "name": "argocd-operator.v0.6.0",
               "image": "quay.io/example/argocd-operator-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111",
               "properties": [{"type": "olm.package", "value": {"packageName": PKG, "version": "0.6.0"}}]}),
    ];
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    std::fs::create_dir_all(dir.path().join(PKG)).expect("mkdir");
    std::fs::write(dir.path().join(PKG).join("catalog.json"), text).expect("write");
    let content = CatalogImage {
        dir: dir.path().to_path_buf(),
        bundles: [("argocd-operator.v0.6.0".to_string(), recorded())].into(),
        digest: None,
    };
    (dir, content)
}

fn client(api: &ApiServer) -> olmctl_cli::cluster::api::Cluster {
    olmctl_cli::cluster::api::Cluster {
        client: kube::Client::new(api.clone(), "default"),
        server: "(in-process)".into(),
    }
}

fn install(api: &ApiServer, i: &InstallV1, timeout: Duration) -> (u8, Recorder) {
    let mut ui = Recorder::default();
    let waiting = Waiting {
        timeout,
        interval: Duration::from_millis(20),
        yes: false,
        no_wait: false,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let code = rt
        .block_on(async { install_v1::run(&client(api), i, &waiting, &mut ui).await })
        .unwrap_or_else(|e| {
            ui.errors.push(e);
            2
        });
    (code, ui)
}

fn request(service_account: Option<&str>) -> InstallV1 {
    InstallV1 {
        package: PKG.into(),
        catalog: Catalog::Image(IMAGE.into()),
        version: None,
        channels: vec!["alpha".into()],
        namespace: NS.into(),
        service_account: service_account.map(str::to_string),
        create_namespace: true,
        poll_interval_minutes: Some(30),
        installer_rbac: Vec::new(),
    }
}

#[test]
fn installs_and_reports_the_installed_bundle() {
    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_11);
    let (_keep, content) = catalog();
    v1.serve(IMAGE, content);
    let (code, ui) = install(&api, &request(None), Duration::from_secs(30));
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    assert_eq!(
        ui.lines,
        [
            "Namespace argocd-system created",
            "ClusterCatalog argocd-operator-catalog created",
            "ClusterExtension argocd-operator created",
            "ClusterCatalog argocd-operator-catalog: Progressing=True (Succeeded: Successfully unpacked and stored content from resolved source)",
            "ClusterCatalog argocd-operator-catalog: Serving=True (Available: Serving desired content from resolved source)",
            "ClusterExtension argocd-operator: Progressing=True (Succeeded: Desired state reached)",
            "ClusterExtension argocd-operator: Installed=True (Succeeded: Installed bundle quay.io/example/argocd-operator-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111 successfully)",
            "installed argocd-operator.v0.6.0 (0.6.0) in namespace argocd-system",
        ]
    );
    // The objects operator-controller applied carry its owner labels; the extension passed the
    // CRD's schema (the API double validates it) and reports the bundle.
    let ce = api
        .get(GROUP, "clusterextensions", "", PKG)
        .expect("extension");
    assert_eq!(
        ce["status"]["install"],
        json!({"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}})
    );
    let d = api
        .get(
            "apps",
            "deployments",
            NS,
            "argocd-operator-controller-manager",
        )
        .expect("deployment");
    assert_eq!(
        d["metadata"]["labels"]["olm.operatorframework.io/owner-name"],
        PKG
    );
    // Again: everything is there and unchanged.
    let (code, ui) = install(&api, &request(None), Duration::from_secs(30));
    assert_eq!(code, 0);
    assert_eq!(
        ui.lines[..3],
        [
            "Namespace argocd-system created".replace("created", "unchanged"),
            "ClusterCatalog argocd-operator-catalog unchanged".into(),
            "ClusterExtension argocd-operator unchanged".into()
        ]
    );
}

#[test]
fn a_version_the_catalog_lacks_is_retried_and_reported() {
    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_11);
    let (_keep, content) = catalog();
    v1.serve(IMAGE, content);
    let mut r = request(None);
    r.version = Some("9.9.9".into());
    let (code, ui) = install(&api, &r, Duration::from_millis(600));
    assert_eq!(code, 1);
    let want = "ClusterExtension argocd-operator: Progressing=True (Retrying: failed to resolve bundle: no bundles found for package \"argocd-operator\" matching version \"9.9.9\" in channels [alpha])";
    assert!(ui.lines.iter().any(|l| l == want), "{:?}", ui.lines);
    assert_eq!(ui.errors.len(), 1);
    assert!(ui.errors[0].starts_with("timed out after 600ms waiting for operator-controller to install ClusterExtension argocd-operator; last seen: "), "{:?}", ui.errors);
}

/// A CRD already on the cluster that the bundle's CRD would break: the preflight stops the
/// install before anything is written, and the extension's condition says why.
#[test]
fn a_crd_change_the_preflight_refuses_is_shown() {
    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_11);
    let (_keep, content) = catalog();
    v1.serve(IMAGE, content);
    let crd_file = bundle_dir().join("manifests/argoproj.io_argocdexports.yaml");
    let mut live: Value = olmctl_testkit::fixtures::yaml_file(&crd_file).remove(0);
    // The live CRD has a field the bundle's lacks: removing it is refused.
    live["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["legacy"] = json!({"type": "string"});
    api.insert("customresourcedefinitions", live);
    let (code, ui) = install(&api, &request(None), Duration::from_millis(600));
    assert_eq!(code, 1);
    let line = ui
        .lines
        .iter()
        .find(|l| l.starts_with("ClusterExtension argocd-operator: Progressing=True (Retrying: "))
        .expect("retrying");
    assert!(
        line.contains("error for resolved bundle \"argocd-operator.v0.6.0\" with version \"0.6.0\": validating upgrade for CRD \"argocdexports.argoproj.io\": existingFieldRemoval: removed field : v1alpha1.^.spec.legacy)"),
        "{line}"
    );
    assert!(
        api.get(
            "apps",
            "deployments",
            NS,
            "argocd-operator-controller-manager"
        )
        .is_none()
    );
}

/// operator-controller v1.10 installs as the ServiceAccount: without the SA the command says
/// what to do; with the installer RBAC `bundle installer-rbac` derives it installs; with one
/// rule less the extension reports the API server's refusal.
#[test]
fn v1_10_installs_as_the_service_account() {
    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_10);
    let (_keep, content) = catalog();
    v1.serve(IMAGE, content);
    let (code, ui) = install(&api, &request(None), Duration::from_secs(5));
    assert_eq!(code, 2);
    assert!(
        ui.errors[0].contains("pass --service-account NAME"),
        "{:?}",
        ui.errors
    );

    // The installer RBAC, less the rule that lets it create the operator's Deployment.
    let objects = olmctl::olmv1::render::manifests(
        &olmctl::bundle::load::load_bundle(&bundle_dir()).expect("bundle"),
        &olmctl::olmv1::render::Options {
            install_namespace: NS.into(),
            watch_namespace: None,
            cert_provider: olmctl::olmv1::render::CertProvider::CertManager,
            operator_namespace_annotation: false,
            single_own_namespace: false,
            deployment_config: None,
        },
    )
    .expect("renders");
    let opts = olmctl::rbac::installer::Options {
        namespace: NS.into(),
        service_account: "installer".into(),
        extension: PKG.into(),
    };
    let full = olmctl::rbac::installer::installer_rbac(&objects, &[], &opts).expect("derived");
    let mut cut = full.clone();
    for o in &mut cut {
        if let Some(rules) = o.get_mut("rules").and_then(Value::as_array_mut) {
            rules.retain(|r| {
                !(r["resources"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == "deployments"))
                    && r["apiGroups"] == json!(["apps"]))
            });
        }
    }
    for o in &cut {
        let plural = olmctl::rbac::rule::guess_resource(o["kind"].as_str().unwrap_or_default());
        api.insert(&plural, o.clone());
    }
    let (code, ui) = install(
        &api,
        &request(Some("installer")),
        Duration::from_millis(800),
    );
    assert_eq!(code, 1, "{:?}", ui.lines);
    let line = ui
        .lines
        .iter()
        .find(|l| l.contains("Retrying: error for resolved bundle"))
        .expect("retrying");
    assert!(line.contains("deployments.apps is forbidden: User \"system:serviceaccount:argocd-system:installer\" cannot create resource \"deployments\" in API group \"apps\" in the namespace \"argocd-system\""), "{line}");

    // The whole installer RBAC: installed.
    for o in &full {
        let plural = olmctl::rbac::rule::guess_resource(o["kind"].as_str().unwrap_or_default());
        api.insert(&plural, o.clone());
    }
    let (code, ui) = install(&api, &request(Some("installer")), Duration::from_secs(30));
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    assert_eq!(
        ui.lines.last().unwrap(),
        "installed argocd-operator.v0.6.0 (0.6.0) in namespace argocd-system"
    );
    assert!(
        v1.steps()
            .iter()
            .any(|s| s == "extension argocd-operator installed argocd-operator.v0.6.0")
    );
}

fn run_olmctl(args: &[&str], env: &[(&str, &std::path::Path)]) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_olmctl"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().expect("olmctl")
}

fn ok(o: &std::process::Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The whole v1.10 story through the binary: the bundle and its catalog pushed to a real
/// registry; `install --olmv1 --service-account` pulls the catalog, resolves the bundle as
/// operator-controller does, pulls and renders it, creates the ServiceAccount with the RBAC
/// `bundle installer-rbac` derives, then the extension, which operator-controller installs as
/// that ServiceAccount; `uninstall --olmv1` removes it, keeping the catalog; installed again
/// with `--cluster-catalog`, the RBAC comes from the image that ClusterCatalog serves; the last
/// `uninstall --olmv1 --delete-cluster-catalog` removes it all.
#[test]
fn v1_10_install_derives_the_installer_rbac_from_the_catalog() {
    let reg = olmctl_testdata::registry::TestRegistry::start();
    let bundle_ref = ok(&run_olmctl(
        &[
            "bundle",
            "build",
            bundle_dir().to_str().expect("utf-8"),
            "--tag",
            &reg.image("argocd-operator-bundle:v0.6.0"),
            "--push",
        ],
        &[],
    ))
    .trim()
    .to_string();
    let (fbc, mut content) = catalog();
    let file = fbc.path().join(PKG).join("catalog.json");
    let text = std::fs::read_to_string(&file)
        .expect("catalog")
        .replace(
            "quay.io/example/argocd-operator-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111",
            &bundle_ref,
        );
    std::fs::write(&file, text).expect("write");
    let catalog_image = reg.image("catalog:v1");
    let pushed = ok(&run_olmctl(
        &[
            "catalog",
            "push",
            fbc.path().to_str().expect("utf-8"),
            "--tag",
            &catalog_image,
        ],
        &[],
    ));
    content.dir = fbc.path().to_path_buf();
    // catalogd resolves the tag to the pushed digest (status.resolvedSource).
    content.digest = pushed.trim().rsplit_once('@').map(|(_, d)| d.to_string());
    assert!(content.digest.is_some(), "{pushed}");

    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_10);
    let digest = content.digest.clone().unwrap_or_default();
    v1.serve(&catalog_image, content);
    let home = tempfile::tempdir().expect("home");
    let kc = home.path().join("kubeconfig");
    std::fs::write(
        &kc,
        olmctl_testkit::api::kubeconfig(
            &api.serve_tls_on_loopback(),
            olmctl_testkit::api::ADMIN_TOKEN,
            "default",
        ),
    )
    .expect("kubeconfig");
    let env = [("KUBECONFIG", kc.as_path()), ("HOME", home.path())];
    let args = [
        "install",
        PKG,
        "--olmv1",
        "--catalog",
        &catalog_image,
        "--channel",
        "alpha",
        "-n",
        NS,
        "--create-namespace",
        "--service-account",
        "installer",
        "--timeout",
        "60s",
    ];
    // --print: the same objects, the installer's included.
    let mut print = args.to_vec();
    print.push("--print");
    let printed = ok(&run_olmctl(&print, &env));
    assert!(printed.contains("kind: ClusterRole\nmetadata:\n  labels:\n    app.kubernetes.io/managed-by: olmctl\n    olmctl.dev/installer-for: argocd-operator\n  name: installer-clusterrole\n"), "{printed}");
    let out = ok(&run_olmctl(&args, &env));
    let lines: Vec<&str> = out.lines().collect();
    // The installer's objects and the extension, in the order they are created.
    let installer = [
        "ServiceAccount argocd-system/installer created",
        "ClusterRole installer-clusterrole created",
        "ClusterRoleBinding installer-binding created",
        "ClusterRole installer-rbac-clusterrole created",
        "ClusterRoleBinding installer-rbac-binding created",
        "ClusterExtension argocd-operator created",
    ];
    assert_eq!(
        lines[..2],
        [
            "Namespace argocd-system created",
            "ClusterCatalog argocd-operator-catalog created",
        ]
    );
    assert_eq!(lines[2..8], installer);
    assert_eq!(
        lines.last().copied(),
        Some("installed argocd-operator.v0.6.0 (0.6.0) in namespace argocd-system")
    );
    let ce = api
        .get(GROUP, "clusterextensions", "", PKG)
        .expect("extension");
    assert_eq!(ce["spec"]["serviceAccount"], json!({"name": "installer"}));
    assert!(
        v1.steps()
            .iter()
            .any(|s| s == "extension argocd-operator installed argocd-operator.v0.6.0")
    );

    // Uninstalled, the catalog kept; installed again from that ClusterCatalog: the RBAC is
    // derived from the image it serves (its resolvedSource, pulled from the registry).
    let uninstall = |extra: &[&str]| {
        let mut args = vec!["uninstall", PKG, "--olmv1", "--timeout", "60s"];
        args.extend_from_slice(extra);
        ok(&run_olmctl(&args, &env))
    };
    let out = uninstall(&[]);
    assert!(
        out.ends_with("ServiceAccount argocd-system/installer deleted\n"),
        "{out}"
    );
    assert!(api.get("", "serviceaccounts", NS, "installer").is_none());
    let catalog = api
        .get(GROUP, "clustercatalogs", "", "argocd-operator-catalog")
        .expect("kept");
    assert_eq!(
        catalog["status"]["resolvedSource"]["image"]["ref"],
        json!(format!(
            "{}@{}",
            catalog_image.trim_end_matches(":v1"),
            digest
        ))
    );
    let out = ok(&run_olmctl(
        &[
            "install",
            PKG,
            "--olmv1",
            "--cluster-catalog",
            "argocd-operator-catalog",
            "--channel",
            "alpha",
            "-n",
            NS,
            "--service-account",
            "installer",
            "--timeout",
            "60s",
        ],
        &env,
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..6], installer, "{out}");
    assert_eq!(
        lines.last().copied(),
        Some("installed argocd-operator.v0.6.0 (0.6.0) in namespace argocd-system")
    );

    let out = uninstall(&["--delete-cluster-catalog"]);
    assert!(out.ends_with("ServiceAccount argocd-system/installer deleted\nClusterCatalog argocd-operator-catalog deleted\n"), "{out}");
    assert!(api.get(GROUP, "clusterextensions", "", PKG).is_none());
    assert!(api.get("", "serviceaccounts", NS, "installer").is_none());
}

/// On v1.10 Helm deletes an upgrade's leftovers as the ServiceAccount (`Client.Update`), and a
/// delete it may not make is logged and the object left in place: here an installer allowed
/// everything but `delete` upgrades argocd-operator from 0.6.0 to a 0.6.1 without the manager
/// ConfigMap; 0.6.1 installs and the ConfigMap stays, with Helm's failure recorded.
#[test]
fn v1_10_leaves_a_leftover_the_installer_may_not_delete() {
    let api = ApiServer::new();
    let v1 = OlmV1::start(&api, Line::V1_10);
    let (_keep, mut content) = catalog();
    // 0.6.1: replacing 0.6.0, rendered as 0.6.0 without its manager ConfigMap (no recording
    // exists of a 0.6.1: these are upstream's 0.6.0 objects less that one).
    let Rendered::Objects { objects, .. } = recorded() else {
        panic!("recorded objects")
    };
    let next = Rendered::Objects {
        namespace: NS.into(),
        objects: objects
            .into_iter()
            .filter(|o| o["kind"] != "ConfigMap")
            .collect(),
    };
    let file = content.dir.join(PKG).join("catalog.json");
    let mut text = std::fs::read_to_string(&file).expect("catalog");
    text = text.replace(
        r#""entries":[{"name":"argocd-operator.v0.6.0"}]"#,
        r#""entries":[{"name":"argocd-operator.v0.6.0"},{"name":"argocd-operator.v0.6.1","replaces":"argocd-operator.v0.6.0"}]"#,
    );
    text.push_str(&format!(
        "{}\n",
        json!({"schema": "olm.bundle", "package": PKG, "name": "argocd-operator.v0.6.1",
               "image": "quay.io/example/argocd-operator-bundle@sha256:2222222222222222222222222222222222222222222222222222222222222222",
               "properties": [{"type": "olm.package", "value": {"packageName": PKG, "version": "0.6.1"}}]})
    ));
    std::fs::write(&file, text).expect("write");
    content
        .bundles
        .insert("argocd-operator.v0.6.1".into(), next);
    v1.serve(IMAGE, content);

    // The installer: a ServiceAccount allowed every verb but delete.
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    );
    api.insert(
        "serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "installer", "namespace": NS}}),
    );
    api.insert("clusterroles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "all-but-delete"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"],
                   "verbs": ["get", "list", "watch", "create", "update", "patch", "escalate", "bind"]}]}));
    api.insert("clusterrolebindings", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "all-but-delete"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "all-but-delete"},
        "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": NS}]}));
    let mut i = request(Some("installer"));
    i.version = Some("0.6.0".into());
    let (code, ui) = install(&api, &i, Duration::from_secs(30));
    assert_eq!(code, 0, "{:?} {:?}", ui.lines, ui.errors);
    let config = "argocd-operator-manager-config";
    assert!(api.get("", "configmaps", NS, config).is_some());

    // The pin moves to 0.6.1.
    assert!(api.merge(
        GROUP,
        "clusterextensions",
        "",
        PKG,
        &json!({"spec": {"source": {"catalog": {"version": "0.6.1"}}}}),
        false,
    ));
    let installed = || {
        api.get(GROUP, "clusterextensions", "", PKG).and_then(|ce| {
            ce["status"]["install"]["bundle"]["name"]
                .as_str()
                .map(str::to_string)
        })
    };
    // The doubles reconcile synchronously: a pass or two installs the pinned step.
    for _ in 0..3 {
        if installed().as_deref() == Some("argocd-operator.v0.6.1") {
            break;
        }
        v1.tick();
    }
    assert_eq!(
        installed().as_deref(),
        Some("argocd-operator.v0.6.1"),
        "{:?}",
        v1.steps()
    );
    assert!(
        api.get("", "configmaps", NS, config).is_some(),
        "left in place"
    );
    let failed = format!(
        "helm: failed to delete \"{config}\": configmaps \"{config}\" is forbidden: User \"system:serviceaccount:{NS}:installer\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"{NS}\""
    );
    assert!(v1.steps().contains(&failed), "{:?}", v1.steps());
}

/// What the API server refuses in OLM v1's objects (their CRDs' CEL rules: a version range
/// operator-controller cannot parse, a catalog image with neither tag nor digest) is found in
/// a dry run before anything is written: exit 2 with the API server's message, no Namespace,
/// no ClusterCatalog.
#[test]
fn what_the_crds_refuse_is_refused_before_anything_is_written() {
    let api = ApiServer::new();
    let _v1 = OlmV1::start(&api, Line::V1_11);
    let mut i = request(None);
    i.version = Some("not a range".into());
    let (code, ui) = install(&api, &i, Duration::from_secs(5));
    assert_eq!(code, 2, "{:?}", ui.lines);
    assert!(
        ui.errors[0].contains(
            "spec.source.catalog.version: Invalid value: \"not a range\": invalid version expression"
        ),
        "{:?}",
        ui.errors
    );
    assert!(ui.lines.is_empty(), "{:?}", ui.lines);
    assert!(api.get("", "namespaces", "", NS).is_none());
    assert!(api.list(GROUP, "clustercatalogs").is_empty());

    let mut i = request(None);
    i.catalog = Catalog::Image("quay.io/example/catalog".into());
    let (code, ui) = install(&api, &i, Duration::from_secs(5));
    assert_eq!(code, 2, "{:?}", ui.lines);
    assert!(
        ui.errors[0].contains(
            "spec.source.image.ref: Invalid value: \"quay.io/example/catalog\": must end with a digest or a tag"
        ),
        "{:?}",
        ui.errors
    );
    assert!(api.get("", "namespaces", "", NS).is_none());
    assert!(api.list(GROUP, "clusterextensions").is_empty());
}

/// `install --olmv1 --print --service-account` without registry access (GitOps): the bundle
/// from `--bundle-dir` (or resolved in `--catalog-dir`) gives the installer RBAC offline; when
/// nothing can be read the manifests are printed without it, a warning says so, and only
/// `--require-rbac` makes that exit 3.
#[test]
fn v1_10_print_derives_the_installer_rbac_offline_or_says_it_cannot() {
    let (fbc, _) = catalog();
    // Nothing listens on port 1: every pull fails at once.
    let file = fbc.path().join(PKG).join("catalog.json");
    let text = std::fs::read_to_string(&file).expect("catalog");
    std::fs::write(
        &file,
        text.replace("quay.io/example", "127.0.0.1:1/example"),
    )
    .expect("write");
    let catalog_dir = fbc.path().display().to_string();
    let bundle = bundle_dir().display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "install",
            PKG,
            "--olmv1",
            "--catalog",
            "127.0.0.1:1/example/catalog:v1",
            "--channel",
            "alpha",
            "-n",
            NS,
            "--service-account",
            "installer",
            "--print",
            "--timeout",
            "20s",
        ];
        args.extend_from_slice(extra);
        run_olmctl(&args, &[])
    };
    let installer_role = "  name: installer-clusterrole\n";
    // From the bundle directory: the RBAC, nothing pulled.
    let printed = ok(&run(&["--bundle-dir", &bundle]));
    assert!(printed.contains(installer_role), "{printed}");
    assert!(printed.contains("kind: ClusterExtension\n"), "{printed}");

    // Nothing readable: the manifests without the installer RBAC, and why, exit 0.
    let o = run(&[]);
    let printed = ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!printed.contains(installer_role), "{printed}");
    assert!(printed.contains("kind: ClusterExtension\n"), "{printed}");
    assert!(printed.contains("kind: ClusterCatalog\n"), "{printed}");
    assert!(
        stderr.starts_with("warning: ")
            && stderr.contains("127.0.0.1:1/example/catalog:v1")
            && stderr.contains("the installer ServiceAccount installer and its RBAC are left out of the manifests (pass --catalog-dir DIR or --bundle-dir DIR to derive them offline)"),
        "{stderr}"
    );
    // --require-rbac: the same manifests, exit 3.
    let o = run(&["--require-rbac"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&o.stdout), printed);

    // The catalog copy resolves the bundle, whose image cannot be pulled: said by its name.
    let o = run(&["--catalog-dir", &catalog_dir]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("127.0.0.1:1/example/argocd-operator-bundle@sha256:"),
        "{stderr}"
    );
    // A bundle directory of another package is an error, not a fallback.
    let other = olmctl_testdata::fixture_operators().join("kube-green/0.7.1");
    let o = run(&["--bundle-dir", other.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("the bundle is of package kube-green, not argocd-operator"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
