//! `bundle installer-rbac`'s two properties on every bundle of the test set (the community
//! fixture bundles operator-controller renders, and the renderer's regression bundles):
//!
//! - sufficient: installing the rendered manifests as the installer ServiceAccount passes the
//!   test cluster's RBAC authorizer (`olmctl_testkit::api::rbac`, kubernetes
//!   `plugin/pkg/auth/authorizer/rbac`) for every request operator-controller v1.10's RBAC
//!   preflight checks, for each object's create and patch at its resource's real scope (a
//!   webhook configuration rendered with a namespace is still cluster-scoped), and the
//!   escalation check the RBAC storages run on every Role,
//!   ClusterRole and binding it writes (`olmctl_testkit::api::rbac::escalation`, kubernetes
//!   `pkg/registry/rbac`); an upgrade from the previous version also deletes what the new
//!   version drops;
//! - minimal: without any one of its rules, some request or write fails; every role has a
//!   binding and every binding a role; a wildcard appears only where the bundle grants it.
//!
//! The requests are listed here from operator-controller v1.10's
//! `authorization/rbac.go :: asAuthorizationAttributesRecordsForUser` and `applier/helm.go ::
//! extManagementPerms`, independently of olmctl's derivation; resources come from the test
//! cluster's discovery table (and the plurals of the bundle kinds it does not serve).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use olmctl::olmv1::render::{CertProvider, Options};
use olmctl::rbac::installer::{Options as InstallerOptions, installer_rbac};
use olmctl_testkit::api::rbac::escalation::check_write;
use olmctl_testkit::api::rbac::{Attributes, Decision, UserInfo, authorize};
use serde_json::Value;

const NS: &str = "op-ns";
const SA: &str = "installer";
const CE: &str = "ext";

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

/// The resource an object is served as: the test cluster's discovery, else the plural the
/// kind's CRD declares upstream.
fn resource(kind: &str) -> String {
    static BUILTINS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    let builtins = BUILTINS.get_or_init(|| {
        olmctl_testkit::api::resources::builtins()
            .into_iter()
            .map(|r| (r.kind, r.plural))
            .collect()
    });
    if let Some((_, plural)) = builtins.iter().find(|(k, _)| k == kind) {
        return plural.clone();
    }
    match kind {
        "ServiceMonitor" => "servicemonitors",
        "PodMonitor" => "podmonitors",
        "PrometheusRule" => "prometheusrules",
        "VerticalPodAutoscaler" => "verticalpodautoscalers",
        "PodDisruptionBudget" => "poddisruptionbudgets",
        "PriorityClass" => "priorityclasses",
        "NetworkPolicy" => "networkpolicies",
        "ConsoleYAMLSample" => "consoleyamlsamples",
        "ConsoleQuickStart" => "consolequickstarts",
        "ConsoleCLIDownload" => "consoleclidownloads",
        "ConsoleLink" => "consolelinks",
        "ConsolePlugin" => "consoleplugins",
        "Issuer" => "issuers",
        "Certificate" => "certificates",
        "Secret" => "secrets",
        "ConfigMap" => "configmaps",
        "Service" => "services",
        "ServiceAccount" => "serviceaccounts",
        "Deployment" => "deployments",
        "Role" => "roles",
        "RoleBinding" => "rolebindings",
        "ClusterRole" => "clusterroles",
        "ClusterRoleBinding" => "clusterrolebindings",
        "CustomResourceDefinition" => "customresourcedefinitions",
        "ValidatingWebhookConfiguration" => "validatingwebhookconfigurations",
        "MutatingWebhookConfiguration" => "mutatingwebhookconfigurations",
        other => panic!("no resource known for kind {other}"),
    }
    .to_string()
}

/// Whether the API server serves `o`'s kind namespaced: the test cluster's discovery table,
/// the CRDs among `objects` (as the test cluster reads a CRD, or its `spec.scope` for one it
/// cannot serve), else the scope upstream gives the kinds bundles ship that it does not serve
/// (admissionregistration, scheduling, policy and networking of Kubernetes; the add-ons'
/// CRDs).
fn served_namespaced(o: &Value, objects: &[Value]) -> bool {
    let (g, kind) = (group(o), s(o, "/kind"));
    if let Some(r) = olmctl_testkit::api::resources::builtins()
        .into_iter()
        .find(|r| r.group == g && r.kind == kind)
    {
        return r.namespaced;
    }
    for crd in objects
        .iter()
        .filter(|c| s(c, "/kind") == "CustomResourceDefinition")
    {
        if s(crd, "/spec/group") == g && s(crd, "/spec/names/kind") == kind {
            return olmctl_testkit::api::resources::from_crd(crd)
                .map_or(s(crd, "/spec/scope") == "Namespaced", |r| r.namespaced);
        }
    }
    !matches!(
        kind,
        "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "PriorityClass"
            | "ConsoleYAMLSample"
            | "ConsoleQuickStart"
            | "ConsoleCLIDownload"
            | "ConsoleLink"
            | "ConsolePlugin"
    )
}

fn group(o: &Value) -> String {
    s(o, "/apiVersion")
        .rsplit_once('/')
        .map_or(String::new(), |(g, _)| g.to_string())
}

fn render(dir: &Path) -> Option<Vec<Value>> {
    let b = olmctl::bundle::load::load_bundle(dir).ok()?;
    let opts = Options {
        install_namespace: NS.into(),
        watch_namespace: None,
        cert_provider: CertProvider::CertManager,
        operator_namespace_annotation: false,
        single_own_namespace: false,
        deployment_config: None,
    };
    olmctl::olmv1::render::manifests(&b, &opts).ok()
}

fn is_rbac(o: &Value) -> bool {
    matches!(
        s(o, "/kind"),
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
    )
}

/// What fails when the installer (`installer`'s RBAC in the cluster) installs `objects`, or
/// upgrades to them from `old` (whose objects exist): one line per refused request or write;
/// with `first`, only the first.
fn failures(installer: &[Value], objects: &[Value], old: &[Value], first: bool) -> Vec<String> {
    let user = UserInfo::service_account(NS, SA);
    let mut state: Vec<Value> = installer.iter().filter(|o| is_rbac(o)).cloned().collect();
    state.extend(old.iter().filter(|o| is_rbac(o)).cloned());
    let mut out = Vec::new();
    let mut ask = |verb: &str, g: &str, r: &str, ns: &str, name: &str, state: &[Value]| {
        let attrs = Attributes::resource(user.clone(), verb, g, r)
            .in_namespace(ns)
            .named(name);
        if (!first || out.is_empty()) && authorize(&attrs, state) != Decision::Allow {
            out.push(format!("{verb} {g}/{r} {ns}/{name}"));
        }
    };
    // asAuthorizationAttributesRecordsForUser: object verbs by name, create per namespace,
    // list and watch cluster-wide (the Helm runtime's clusterCollectionVerbs).
    let mut namespaces: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for o in objects {
        let (g, r) = (group(o), resource(s(o, "/kind")));
        let ns = s(o, "/metadata/namespace");
        for v in ["get", "patch", "update", "delete"] {
            ask(v, &g, &r, ns, s(o, "/metadata/name"), &state);
        }
        namespaces.entry((g, r)).or_default().insert(ns.to_string());
    }
    for ((g, r), nss) in &namespaces {
        for ns in nss {
            ask("create", g, r, ns, "", &state);
        }
        ask("list", g, r, "", "", &state);
        ask("watch", g, r, "", "", &state);
    }
    // The apply itself (Helm as the ServiceAccount): each object created, then patched, at
    // its resource's scope: the API server ignores the namespace of a cluster-scoped object.
    for o in objects {
        let (g, r) = (group(o), resource(s(o, "/kind")));
        let ns = if served_namespaced(o, objects) {
            s(o, "/metadata/namespace")
        } else {
            ""
        };
        ask("create", &g, &r, ns, "", &state);
        ask("patch", &g, &r, ns, s(o, "/metadata/name"), &state);
    }
    // extManagementPerms.
    ask(
        "update",
        "olm.operatorframework.io",
        "clusterextensions/finalizers",
        "",
        CE,
        &state,
    );
    // Helm's upgrade deletes what left the release.
    let new_keys: BTreeSet<(String, String, String)> = objects
        .iter()
        .map(|o| {
            (
                s(o, "/kind").to_string(),
                s(o, "/metadata/namespace").to_string(),
                s(o, "/metadata/name").to_string(),
            )
        })
        .collect();
    for o in old {
        let k = (
            s(o, "/kind").to_string(),
            s(o, "/metadata/namespace").to_string(),
            s(o, "/metadata/name").to_string(),
        );
        if !new_keys.contains(&k) {
            ask("delete", &group(o), &resource(&k.0), &k.1, &k.2, &state);
        }
    }
    // The RBAC writes, roles before bindings as Helm orders kinds, each checked on create and
    // on update, then stored.
    let mut rbac: Vec<&Value> = objects.iter().filter(|o| is_rbac(o)).collect();
    rbac.sort_by_key(|o| s(o, "/kind").ends_with("Binding"));
    for o in rbac {
        if first && !out.is_empty() {
            break;
        }
        for update in [false, true] {
            if let Err(e) = check_write(&user, o, update, &state) {
                out.push(e);
            }
        }
        state.push(o.clone());
    }
    out
}

/// Every installer role with each of its rules removed in turn.
fn without_each_rule(installer: &[Value]) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for (i, o) in installer.iter().enumerate() {
        let n = o.get("rules").and_then(Value::as_array).map_or(0, Vec::len);
        for j in 0..n {
            let mut cut = installer.to_vec();
            if let Some(rules) = cut[i].get_mut("rules").and_then(Value::as_array_mut) {
                rules.remove(j);
            }
            out.push((
                format!("{} {} rule {j}", s(o, "/kind"), s(o, "/metadata/name")),
                cut,
            ));
        }
    }
    out
}

fn check_structure(installer: &[Value], objects: &[Value], what: &str) {
    let roles: BTreeSet<(String, String, String)> = installer
        .iter()
        .filter(|o| matches!(s(o, "/kind"), "Role" | "ClusterRole"))
        .map(|o| {
            (
                s(o, "/kind").to_string(),
                s(o, "/metadata/namespace").to_string(),
                s(o, "/metadata/name").to_string(),
            )
        })
        .collect();
    let bound: BTreeSet<(String, String, String)> = installer
        .iter()
        .filter(|o| s(o, "/kind").ends_with("Binding"))
        .map(|o| {
            let kind = s(o, "/roleRef/kind");
            let ns = if kind == "Role" {
                s(o, "/metadata/namespace")
            } else {
                ""
            };
            (
                kind.to_string(),
                ns.to_string(),
                s(o, "/roleRef/name").to_string(),
            )
        })
        .collect();
    assert_eq!(
        roles, bound,
        "{what}: every role bound, every binding to a role"
    );
    for o in installer.iter().filter(|o| o.get("rules").is_some()) {
        assert!(
            !o["rules"].as_array().is_some_and(Vec::is_empty),
            "{what}: an empty role"
        );
    }
    // A wildcard only where a role of the bundle has the same wildcard in the same field.
    let bundle_rules: Vec<&Value> = objects
        .iter()
        .filter(|o| matches!(s(o, "/kind"), "Role" | "ClusterRole"))
        .flat_map(|o| o["rules"].as_array().into_iter().flatten())
        .collect();
    for o in installer {
        for r in o
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for field in [
                "verbs",
                "apiGroups",
                "resources",
                "resourceNames",
                "nonResourceURLs",
            ] {
                let starred: Vec<&str> = r[field]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|x| x.contains('*'))
                    .collect();
                for w in starred {
                    assert!(
                        bundle_rules.iter().any(|b| b[field]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == w))),
                        "{what}: wildcard {w} in {field} of {} that the bundle does not grant",
                        s(o, "/metadata/name")
                    );
                }
            }
        }
    }
}

fn opts() -> InstallerOptions {
    InstallerOptions {
        namespace: NS.into(),
        service_account: SA.into(),
        extension: CE.into(),
    }
}

/// Checks both properties for installing `objects` (after `old`); returns the rules checked.
fn check(objects: &[Value], old: &[Value], what: &str) -> usize {
    let installer = installer_rbac(objects, old, &opts()).expect("derived");
    let fails = failures(&installer, objects, old, false);
    assert!(
        fails.is_empty(),
        "{what}: the installer is refused:\n{}",
        fails.join("\n")
    );
    check_structure(&installer, objects, what);
    let cuts = without_each_rule(&installer);
    for (which, cut) in &cuts {
        assert!(
            !failures(cut, objects, old, true).is_empty(),
            "{what}: still installs without {which}"
        );
    }
    cuts.len()
}

#[test]
fn installer_rbac_is_sufficient_and_minimal_for_every_bundle() {
    let mut rendered: BTreeMap<String, Vec<(semver::Version, String, Vec<Value>)>> =
        BTreeMap::new();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/olmv1-render/bundles");
    let mut dirs: Vec<(String, std::path::PathBuf)> = olmctl_testdata::fixture_bundle_dirs();
    for d in ["argocd-operator.v0.6.0", "webhook-operator.v0.0.5"] {
        dirs.push((d.to_string(), data.join(d)));
    }
    // Two workers (each bundle is independent): (package, directory, objects, rules checked).
    type Done = (String, String, Vec<Value>, usize);
    let results: Vec<Option<Done>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let dirs = &dirs;
                scope.spawn(move || {
                    dirs.iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == w)
                        .map(|(_, (pkg, dir))| {
                            let objects = render(dir)?;
                            let what = dir.display().to_string();
                            let n = check(&objects, &[], &what);
                            Some((pkg.clone(), what, objects, n))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    let mut bundles = 0;
    let mut rules = 0;
    for (pkg, what, objects, n) in results.into_iter().flatten() {
        rules += n;
        bundles += 1;
        let version = Path::new(&what)
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| semver::Version::parse(n.trim_start_matches('v')).ok());
        if let Some(v) = version {
            rendered.entry(pkg).or_default().push((v, what, objects));
        }
    }
    // Upgrades: each version from the one before it.
    let mut upgrades = 0;
    for versions in rendered.values_mut() {
        versions.sort_by(|a, b| a.0.cmp(&b.0));
        for w in versions.windows(2) {
            let what = format!("{} from {}", w[1].1, w[0].1);
            rules += check(&w[1].2, &w[0].2, &what);
            upgrades += 1;
        }
    }
    eprintln!("{bundles} bundles, {upgrades} upgrades, {rules} rules removed one at a time");
    // The test set is what operator-controller's renderer makes of the fixtures (255 of 307,
    // as recorded in shared/fixtures/olmv1-render; the rest have no AllNamespaces install mode)
    // and the two regression bundles.
    assert_eq!(bundles, 257);
    assert!(upgrades > 100, "{upgrades} upgrades");
    assert!(rules > 2000, "{rules} rules removed one at a time");
}

/// The escalation check is what makes the bundle's own rules necessary: without them the
/// installer cannot create the operator's roles, and the cluster's message names the rules.
#[test]
fn without_the_bundles_rules_the_role_writes_are_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/olmv1-render/bundles/argocd-operator.v0.6.0");
    let objects = render(&dir).expect("renders");
    let installer = installer_rbac(&objects, &[], &opts()).expect("derived");
    let stripped: Vec<Value> = installer
        .iter()
        .filter(|o| !s(o, "/metadata/name").contains("-rbac-"))
        .cloned()
        .collect();
    let fails = failures(&stripped, &objects, &[], false);
    let escalation: Vec<&String> = fails
        .iter()
        .filter(|f| f.contains("is attempting to grant RBAC permissions not currently held"))
        .collect();
    assert!(
        escalation.iter().any(|f| f.starts_with(
            "clusterroles.rbac.authorization.k8s.io \"argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx\" is forbidden: user \"system:serviceaccount:op-ns:installer\""
        )),
        "{fails:#?}"
    );
    assert!(
        escalation
            .iter()
            .any(|f| f
                .contains("{APIGroups:[\"argoproj.io\"], Resources:[\"argocds\"], Verbs:[\"*\"]}")),
        "{escalation:#?}"
    );
}
