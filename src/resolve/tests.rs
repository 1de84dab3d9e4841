//! OLM's own cases (`resolver_test.go`, `step_resolver_test.go`), mapped to FBC catalogs and
//! cluster objects, with OLM's expected outcomes. OLM compares the chosen operators as sets
//! (`ElementsMatch`: its order is Go's map order); the order here is the solver input's
//! (identifier order), fixed.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::entry::SourceKey;
use super::resolver::Failure;
use super::state::ClusterState;
use super::steps::{Action, CatalogContent, PulledBy, Request, Resolution, resolve};
use crate::fbc::decl::DeclarativeConfig;

/// A catalog bundle in one channel (`genEntry`).
#[derive(Clone)]
struct B {
    csv: &'static str,
    version: &'static str,
    replaces: &'static str,
    pkg: &'static str,
    ch: &'static str,
    skips: Vec<&'static str>,
    skip_range: &'static str,
    props: Vec<Value>,
}

fn b(
    csv: &'static str,
    version: &'static str,
    replaces: &'static str,
    pkg: &'static str,
    ch: &'static str,
) -> B {
    B {
        csv,
        version,
        replaces,
        pkg,
        ch,
        skips: Vec::new(),
        skip_range: "",
        props: Vec::new(),
    }
}

impl B {
    fn provides(mut self, g: &str, v: &str, k: &str) -> B {
        self.props
            .push(json!({"type": "olm.gvk", "value": {"group": g, "version": v, "kind": k}}));
        self
    }
    fn requires(mut self, g: &str, v: &str, k: &str) -> B {
        self.props.push(
            json!({"type": "olm.gvk.required", "value": {"group": g, "version": v, "kind": k}}),
        );
        self
    }
    fn requires_package(mut self, name: &str, range: &str) -> B {
        self.props.push(json!({"type": "olm.package.required",
                               "value": {"packageName": name, "versionRange": range}}));
        self
    }
    fn prop(mut self, type_: &str, value: Value) -> B {
        self.props.push(json!({"type": type_, "value": value}));
        self
    }
    fn skips(mut self, s: &[&'static str]) -> B {
        self.skips = s.to_vec();
        self
    }
    fn skip_range(mut self, r: &'static str) -> B {
        self.skip_range = r;
        self
    }
}

/// An FBC catalog of `bundles`; each package's default channel is the one given in
/// `defaults`, else its first channel.
fn fbc(bundles: &[B], defaults: &[(&str, &str)]) -> DeclarativeConfig {
    let mut blobs: Vec<Value> = Vec::new();
    let mut packages: Vec<&str> = Vec::new();
    let mut channels: Vec<(&str, &str)> = Vec::new();
    for x in bundles {
        if !packages.contains(&x.pkg) {
            packages.push(x.pkg);
        }
        if !channels.contains(&(x.pkg, x.ch)) {
            channels.push((x.pkg, x.ch));
        }
    }
    for p in &packages {
        let default = defaults
            .iter()
            .find(|(pkg, _)| pkg == p)
            .map(|(_, c)| *c)
            .or_else(|| channels.iter().find(|(pkg, _)| pkg == p).map(|(_, c)| *c));
        blobs.push(json!({"schema": "olm.package", "name": p, "defaultChannel": default}));
    }
    for (p, c) in &channels {
        let entries: Vec<Value> = bundles
            .iter()
            .filter(|x| x.pkg == *p && x.ch == *c)
            .map(|x| {
                let mut e = json!({"name": x.csv});
                if !x.replaces.is_empty() {
                    e["replaces"] = json!(x.replaces);
                }
                if !x.skips.is_empty() {
                    e["skips"] = json!(x.skips);
                }
                if !x.skip_range.is_empty() {
                    e["skipRange"] = json!(x.skip_range);
                }
                e
            })
            .collect();
        blobs.push(json!({"schema": "olm.channel", "package": p, "name": c, "entries": entries}));
    }
    let mut seen = Vec::new();
    for x in bundles {
        if seen.contains(&(x.pkg, x.csv)) {
            continue;
        }
        seen.push((x.pkg, x.csv));
        let mut props = vec![
            json!({"type": "olm.package", "value": {"packageName": x.pkg, "version": x.version}}),
        ];
        props.extend(x.props.iter().cloned());
        blobs.push(
            json!({"schema": "olm.bundle", "package": x.pkg, "name": x.csv,
                          "image": format!("example.com/{}:{}", x.pkg, x.version),
                          "properties": props}),
        );
    }
    let text: Vec<String> = blobs.iter().map(Value::to_string).collect();
    let mut cfg = DeclarativeConfig::default();
    let problems =
        crate::fbc::load::parse_text(&text.join("\n"), &Arc::from(Path::new("c.json")), &mut cfg);
    assert!(problems.is_empty(), "{problems:?}");
    cfg
}

fn og(ns: &str) -> Value {
    json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
           "metadata": {"name": "og", "namespace": ns}})
}

/// `newSub`.
fn sub(ns: &str, pkg: &str, ch: &str, cat: &SourceKey) -> Value {
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
           "metadata": {"name": format!("{pkg}-{ch}"), "namespace": ns},
           "spec": {"name": pkg, "channel": ch, "source": cat.name, "sourceNamespace": cat.namespace}})
}

/// `existingSub`: a Subscription whose installed and current CSV is `csv`.
fn existing_sub(ns: &str, csv: &str, pkg: &str, ch: &str, cat: &SourceKey) -> Value {
    let mut s = sub(ns, pkg, ch, cat);
    s["status"] = json!({"installedCSV": csv, "currentCSV": csv});
    s
}

/// `existingOperator`: an installed CSV owning the CRDs of `owned` (group, version, kind).
fn csv(ns: &str, name: &str, version: &str, owned: &[(&str, &str, &str)]) -> Value {
    let crds: Vec<Value> = owned
        .iter()
        .map(|(g, v, k)| json!({"name": format!("{}s.{g}", k.to_lowercase()), "version": v, "kind": k}))
        .collect();
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"version": version, "customresourcedefinitions": {"owned": crds}}})
}

fn state(objects: &[Value]) -> ClusterState {
    let mut s = ClusterState::default();
    for o in objects {
        s.add(o);
    }
    s
}

fn run(ns: &str, objects: &[Value], catalogs: &[(SourceKey, &DeclarativeConfig)]) -> Resolution {
    let st = state(objects);
    let req = Request {
        namespace: ns.into(),
        global_namespace: "olm".into(),
        state: &st,
        catalogs: catalogs
            .iter()
            .map(|(k, cfg)| CatalogContent {
                key: k.clone(),
                cfg,
            })
            .collect(),
    };
    resolve(&req)
}

/// The chosen bundles as `csv@catalog`.
fn chosen(r: &Resolution) -> Vec<String> {
    match &r.result {
        Ok(p) => p
            .chosen
            .iter()
            .map(|c| format!("{}@{}", c.csv, c.catalog.name))
            .collect(),
        Err(e) => panic!("resolution failed: {e}"),
    }
}

fn failure(r: &Resolution) -> String {
    match &r.result {
        Ok(p) => panic!("resolved: {p:?}"),
        Err(e) => e.to_string(),
    }
}

const G: (&str, &str, &str) = ("g", "v", "k");

fn key(name: &str, ns: &str) -> SourceKey {
    SourceKey::new(name, ns)
}

/// The cluster of many OLM cases: `test-package.v1` installed by its Subscription (channel
/// alpha of `cat`), and a new Subscription to `another-package` in alpha.
fn installed_and_new(ns: &str, cat: &SourceKey) -> Vec<Value> {
    vec![
        og(ns),
        csv(ns, "test-package.v1", "0.0.1", &[G]),
        existing_sub(ns, "test-package.v1", "test-package", "alpha", cat),
        sub(ns, "another-package", "alpha", cat),
    ]
}

/// `TestSolveOperators`: the installed operator stays, the new Subscription installs.
#[test]
fn resolve_olm_solve_operators() {
    let ns = "test-namespace";
    let cat = key("test-catalog", ns);
    let c = fbc(
        &[
            b("test-package.v1", "0.0.1", "", "test-package", "alpha"),
            b(
                "another-package.v1",
                "1.0.1",
                "",
                "another-package",
                "alpha",
            ),
        ],
        &[],
    );
    let r = run(ns, &installed_and_new(ns, &cat), &[(cat.clone(), &c)]);
    assert_eq!(chosen(&r), ["another-package.v1@test-catalog"]);
    let p = r.result.as_ref().unwrap();
    assert_eq!(p.chosen[0].action, Action::Install);
    assert_eq!(
        p.chosen[0].pulled_by,
        Some(PulledBy::Subscription("another-package-alpha".into()))
    );
    assert_eq!(p.chosen[0].new_subscription, None);
    assert_eq!(
        p.updated,
        [(
            "another-package-alpha".to_string(),
            "another-package.v1".to_string()
        )]
    );
    assert_eq!(p.stays.len(), 1);
    assert_eq!(p.stays[0].csv, "test-package.v1");
}

/// `TestSolveOperators_CatsrcPrioritySorting`: a dependency comes from the catalog of higher
/// priority; at equal priority by name; the dependent's own catalog before any priority.
#[test]
fn resolve_olm_catalog_priority_sorting() {
    let ns = "olm";
    let community = fbc(
        &[b("test-package.v1", "0.0.1", "", "test-package", "alpha")
            .requires_package("another-package", "0.0.1")],
        &[],
    );
    let other = fbc(
        &[b(
            "another-package.v1",
            "0.0.1",
            "",
            "another-package",
            "alpha",
        )],
        &[],
    );
    let cs = |name: &str, prio: i64| {
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
               "metadata": {"name": name, "namespace": ns}, "spec": {"priority": prio}})
    };
    let objects = [
        og(ns),
        sub(ns, "test-package", "alpha", &key("community", ns)),
        cs("high-priority-operator", 100),
    ];
    let catalogs = [
        (key("community", ns), &community),
        (key("community-operator", ns), &other),
        (key("high-priority-operator", ns), &other),
    ];
    let r = run(ns, &objects, &catalogs);
    assert_eq!(
        chosen(&r),
        [
            "test-package.v1@community",
            "another-package.v1@high-priority-operator"
        ]
    );
    let p = r.result.as_ref().unwrap();
    assert_eq!(
        p.chosen[1].new_subscription.as_deref(),
        Some("another-package-alpha-high-priority-operator-olm")
    );
    assert_eq!(
        p.chosen[1].pulled_by,
        Some(PulledBy::Requirement {
            bundle: "test-package.v1".into(),
            text: "bundle test-package.v1 requires an operator with package: another-package and with version in range: 0.0.1".into()
        })
    );
    // Same priority: by name.
    let mut objects2 = objects.to_vec();
    objects2.push(cs("community-operator", 100));
    let r = run(ns, &objects2, &catalogs);
    assert_eq!(
        chosen(&r),
        [
            "another-package.v1@community-operator",
            "test-package.v1@community"
        ]
    );
    // The dependent's own catalog first.
    let both = fbc(
        &[
            b("test-package.v1", "0.0.1", "", "test-package", "alpha")
                .requires_package("another-package", "0.0.1"),
            b(
                "another-package.v1",
                "0.0.1",
                "",
                "another-package",
                "alpha",
            ),
        ],
        &[],
    );
    let r = run(
        ns,
        &objects2,
        &[
            (key("community", ns), &both),
            (key("community-operator", ns), &other),
            (key("high-priority-operator", ns), &other),
        ],
    );
    assert_eq!(
        chosen(&r),
        ["another-package.v1@community", "test-package.v1@community"]
    );
}

/// `TestSolveOperators_WithPackageDependencies`: an upgrade, a new install and its
/// dependency, all three.
#[test]
fn resolve_olm_with_package_dependencies() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b(
                "test-package.v1.0.1",
                "1.0.1",
                "test-package.v1",
                "test-package",
                "alpha",
            ),
            b(
                "another-package.v1",
                "1.0.0",
                "",
                "another-package",
                "alpha",
            )
            .requires_package("packageC", "0.1.0"),
            b("packageC.v1", "0.1.0", "", "packageC", "alpha"),
        ],
        &[],
    );
    let r = run(ns, &installed_and_new(ns, &cat), &[(cat.clone(), &c)]);
    assert_eq!(
        chosen(&r),
        [
            "another-package.v1@community",
            "packageC.v1@community",
            "test-package.v1.0.1@community"
        ]
    );
    let p = r.result.as_ref().unwrap();
    assert_eq!(
        p.chosen[2].action,
        Action::Upgrade("test-package.v1".into())
    );
}

/// `TestSolveOperators_WithUnsatisfiableLabelDependencies`.
#[test]
fn resolve_olm_unsatisfiable_label_dependency() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b("test-package", "0.0.1", "", "test-package", "alpha")
                .prop("olm.label.required", json!({"label": "lts"})),
            b(
                "another-package.v1",
                "1.0.0",
                "",
                "another-package",
                "alpha",
            ),
        ],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "test-package", "alpha", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(
        failure(&r),
        "constraints not satisfiable: bundle test-package requires an operator with label: lts, subscription test-package-alpha exists, subscription test-package-alpha requires community/olm/alpha/test-package"
    );
    let e = r.explanation.expect("explained");
    assert_eq!(
        e.items[0].constraint,
        "subscription test-package-alpha exists"
    );
    let dep = e
        .items
        .iter()
        .find(|i| i.constraint.contains("label"))
        .expect("the label requirement");
    assert_eq!(
        dep.chain,
        [
            "subscription:test-package-alpha",
            "community/olm/alpha/test-package"
        ]
    );
    assert!(dep.fix[0].contains("with label: lts"), "{:?}", dep.fix);
}

/// `TestSolveOperators_PreferCatalogInSameNamespace` and
/// `TestSolveOperators_ResolveOnlyInCachedNamespaces`.
#[test]
fn resolve_olm_catalogs_of_other_namespaces_are_not_read() {
    let (ns, alt) = ("olm", "alt-olm");
    let cat = key("community", ns);
    let c = fbc(
        &[b(
            "test-package.v0.0.1",
            "0.0.1",
            "test-package.v1",
            "test-package",
            "alpha",
        )
        .provides("g", "v", "k")],
        &[],
    );
    let r = run(
        ns,
        &[
            og(ns),
            csv(ns, "test-package.v1", "0.0.1", &[G]),
            existing_sub(ns, "test-package.v1", "test-package", "alpha", &cat),
        ],
        &[(cat.clone(), &c), (key("alt-community", alt), &c)],
    );
    assert_eq!(chosen(&r), ["test-package.v0.0.1@community"]);
    assert_eq!(r.catalogs, [SourceKey::existing(ns), cat.clone()]);
    // A Subscription to a catalog of another namespace finds nothing.
    let r = run(
        ns,
        &[
            og(ns),
            sub(ns, "test-package", "alpha", &key("alt-community", alt)),
        ],
        &[(key("alt-community", alt), &c)],
    );
    assert_eq!(
        failure(&r),
        "constraints not satisfiable: no operators found from catalog alt-community in namespace alt-olm referenced by subscription test-package-alpha, subscription test-package-alpha exists"
    );
}

/// `TestSolveOperators_SubscriptionlessOperatorsSatisfyDependencies` and
/// `..._SubscriptionlessOperatorsCanConflict`.
#[test]
fn resolve_olm_subscriptionless_operators() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b(
                "another-package.v1.0.0",
                "1.0.0",
                "",
                "another-package",
                "alpha",
            )
            .requires("g", "v", "k"),
            b(
                "another-package.v1.0.1",
                "1.0.1",
                "another-package.v1.0.0",
                "another-package",
                "alpha",
            )
            .requires("g", "v", "k"),
        ],
        &[],
    );
    let objects = [
        og(ns),
        csv(ns, "test-package.v1", "0.0.1", &[G]),
        sub(ns, "another-package", "alpha", &cat),
    ];
    let r = run(ns, &objects, &[(cat.clone(), &c)]);
    assert_eq!(chosen(&r), ["another-package.v1.0.1@community"]);
    // Providing the API the orphaned CSV provides: not satisfiable.
    let c = fbc(
        &[
            b(
                "another-package.v1.0.0",
                "1.0.0",
                "",
                "another-package",
                "alpha",
            )
            .provides("g", "v", "k"),
            b(
                "another-package.v1.0.1",
                "1.0.1",
                "another-package.v1.0.0",
                "another-package",
                "alpha",
            )
            .provides("g", "v", "k"),
        ],
        &[],
    );
    let r = run(ns, &objects, &[(cat.clone(), &c)]);
    let msg = failure(&r);
    assert!(
        msg.contains(
            "clusterserviceversion test-package.v1 exists and is not referenced by a subscription"
        ),
        "{msg}"
    );
    let e = r.explanation.expect("explained");
    let orphan = e
        .items
        .iter()
        .find(|i| i.constraint.contains("not referenced by a subscription"))
        .expect("the orphan");
    assert!(
        orphan.fix[0]
            .starts_with("delete the orphaned CSV (kubectl delete csv test-package.v1 -n olm)")
    );
    let sub_item = e
        .items
        .iter()
        .find(|i| {
            i.constraint
                .starts_with("subscription another-package-alpha requires")
        })
        .expect("the subscription's candidates");
    assert_eq!(sub_item.candidates.len(), 2);
    assert!(
        sub_item
            .candidates
            .iter()
            .all(|c| c.why_out.contains("provide k (g/v)")),
        "{:?}",
        sub_item.candidates
    );
}

/// `TestSolveOperators_PackageCannotSelfSatisfy`: a package's other channel cannot provide
/// what its bundle requires; a second catalog can.
#[test]
fn resolve_olm_package_cannot_self_satisfy() {
    let ns = "olm";
    let cat = key("community", ns);
    let community = fbc(
        &[
            b("opA.v1.0.0", "1.0.0", "", "test-package", "stable")
                .requires("g", "v", "k")
                .requires("g2", "v", "k"),
            b("opABC.v1.0.0", "1.0.0", "", "test-package", "alpha")
                .provides("g", "v", "k")
                .provides("g2", "v", "k"),
            b("opB.v1.0.0", "1.0.0", "", "another-package", "stable").provides("g", "v", "k"),
            b("opD.v1.0.0", "1.0.0", "", "another-package", "alpha").provides("g", "v", "k"),
        ],
        &[("test-package", "stable"), ("another-package", "stable")],
    );
    let secondary = fbc(
        &[
            b("opC.v1.0.0", "1.0.0", "", "another-package", "stable").provides("g2", "v", "k"),
            b("opE.v1.0.0", "1.0.0", "", "packageC", "stable").provides("g2", "v", "k"),
        ],
        &[("another-package", "stable"), ("packageC", "stable")],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "test-package", "stable", &cat)],
        &[
            (cat.clone(), &community),
            (key("secondary", ns), &secondary),
        ],
    );
    assert_eq!(
        chosen(&r),
        [
            "opA.v1.0.0@community",
            "opB.v1.0.0@community",
            "opE.v1.0.0@secondary"
        ]
    );
}

/// `TestSolveOperators_WithoutDeprecated`: a deprecated bundle is never installed.
#[test]
fn resolve_olm_without_deprecated() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[b("packageA.v1", "0.0.1", "", "packageA", "alpha").prop("olm.deprecated", json!({}))],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "packageA", "alpha", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(
        failure(&r),
        "constraints not satisfiable: bundle community/olm/alpha/packageA.v1 is deprecated, subscription packageA-alpha exists, subscription packageA-alpha requires community/olm/alpha/packageA.v1"
    );
}

/// `TestSolveOperators_WithSkipsAndStartingCSV`: startingCSV picks the bundle when nothing is
/// installed.
#[test]
fn resolve_olm_starting_csv() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b("packageB.v1", "1.0.0", "", "packageB", "alpha"),
            b("packageB.v2", "2.0.0", "packageB.v1", "packageB", "alpha"),
            b("packageB.v3", "3.0.0", "packageB.v2", "packageB", "alpha").skips(&["packageB.v2"]),
        ],
        &[],
    );
    let mut s = sub(ns, "packageB", "alpha", &cat);
    s["spec"]["startingCSV"] = json!("packageB.v1");
    let r = run(ns, &[og(ns), s.clone()], &[(cat.clone(), &c)]);
    assert_eq!(chosen(&r), ["packageB.v1@community"]);
    s["spec"]["startingCSV"] = json!("packageB.v9");
    let r = run(ns, &[og(ns), s], &[(cat.clone(), &c)]);
    assert_eq!(
        failure(&r),
        "constraints not satisfiable: no operators found with name packageB.v9 in channel alpha of package packageB in the catalog referenced by subscription packageB-alpha, subscription packageB-alpha exists"
    );
}

/// An installed CSV upgrades along skipRange to the channel head.
#[test]
fn resolve_upgrade_by_skip_range_prefers_the_head() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b("p.v1.0.0", "1.0.0", "", "p", "stable"),
            b("p.v1.1.0", "1.1.0", "p.v1.0.0", "p", "stable"),
            b("p.v1.2.0", "1.2.0", "p.v1.1.0", "p", "stable").skip_range(">=1.0.0 <1.2.0"),
        ],
        &[],
    );
    let r = run(
        ns,
        &[
            og(ns),
            csv(ns, "p.v1.0.0", "1.0.0", &[]),
            existing_sub(ns, "p.v1.0.0", "p", "stable", &cat),
        ],
        &[(cat.clone(), &c)],
    );
    assert_eq!(chosen(&r), ["p.v1.2.0@community"]);
    assert_eq!(
        r.result.as_ref().unwrap().chosen[0].action,
        Action::Upgrade("p.v1.0.0".into())
    );
}

/// The OperatorGroup rule of `ResolveSteps`, and the global-namespace exclusion.
#[test]
fn resolve_operator_groups_and_the_global_namespace() {
    let ns = "team";
    let global = key("community", "olm");
    let c = fbc(&[b("p.v1", "1.0.0", "", "p", "stable")], &[]);
    let r = run(
        ns,
        &[sub(ns, "p", "stable", &global)],
        &[(global.clone(), &c)],
    );
    assert_eq!(
        r.result.unwrap_err(),
        Failure::Error("expected 1 OperatorGroup in the namespace, found 0".into())
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "p", "stable", &global)],
        &[(global.clone(), &c)],
    );
    assert_eq!(chosen(&r), ["p.v1@community"]);
    let mut excluded = og(ns);
    excluded["metadata"]["annotations"] =
        json!({"olm.operatorframework.io/exclude-global-namespace-resolution": "true"});
    let r = run(
        ns,
        &[excluded, sub(ns, "p", "stable", &global)],
        &[(global.clone(), &c)],
    );
    assert!(failure(&r).contains("no operators found from catalog community in namespace olm"));
}

/// Every `olm.constraint` form (`TestSolveOperators_OLMConstraint_Compound*`, `..._Unknown`,
/// `TestSolveOperators_GenericConstraint`).
#[test]
fn resolve_olm_constraint_forms() {
    let ns = "olm";
    let cat = key("community", ns);
    let deps = |c: Value| {
        fbc(
            &[
                b("bar.v1.0.0", "1.0.0", "", "bar", "stable").prop("olm.constraint", c),
                b("foo.v0.99.0", "0.99.0", "", "foo", "stable").provides("g", "v", "k"),
                b("foo.v1.0.0", "1.0.0", "foo.v0.99.0", "foo", "stable").provides("g", "v", "k"),
                b("foo.v1.0.1", "1.0.1", "foo.v1.0.0", "foo", "stable").provides("g", "v", "k"),
            ],
            &[],
        )
    };
    let objects = [og(ns), sub(ns, "bar", "stable", &cat)];
    let cases = [
        (
            json!({"all": {"constraints": [
                {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
                {"gvk": {"group": "g", "version": "v", "kind": "k"}}]}}),
            "foo.v1.0.1",
        ),
        (
            json!({"any": {"constraints": [
                {"package": {"packageName": "foo", "versionRange": "<1.0.0"}},
                {"gvk": {"group": "g", "version": "v", "kind": "other"}}]}}),
            "foo.v0.99.0",
        ),
        (
            json!({"all": {"constraints": [
                {"package": {"packageName": "foo", "versionRange": ">=0.0.0"}},
                {"not": {"constraints": [{"package": {"packageName": "foo", "versionRange": ">=1.0.1"}}]}}]}}),
            "foo.v1.0.0",
        ),
        (
            json!({"failureMessage": "needs foo 1.0.0",
                   "cel": {"rule": "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'foo' && semver_compare(p.value.version, '1.0.0') == 0)"}}),
            "foo.v1.0.0",
        ),
    ];
    for (c, want) in cases {
        let cfg = deps(c.clone());
        let r = run(ns, &objects, &[(cat.clone(), &cfg)]);
        assert_eq!(
            chosen(&r),
            [
                "bar.v1.0.0@community".to_string(),
                format!("{want}@community")
            ],
            "{c}"
        );
    }
    let cfg = deps(json!({"foo": {}}));
    let r = run(ns, &objects, &[(cat.clone(), &cfg)]);
    assert_eq!(
        failure(&r),
        "parse olm.constraint: json: unknown field \"foo\""
    );
    let cfg = deps(json!({"failureMessage": "no such foo",
                          "cel": {"rule": "properties.exists(p, p.type == 'olm.package' && p.value.version == '9.9.9')"}}));
    let r = run(ns, &objects, &[(cat.clone(), &cfg)]);
    assert_eq!(
        failure(&r),
        "constraints not satisfiable: bundle bar.v1.0.0 requires an operator with constraint: \"properties.exists(p, p.type == 'olm.package' && p.value.version == '9.9.9')\" and message: \"no such foo\", subscription bar-stable exists, subscription bar-stable requires community/olm/stable/bar.v1.0.0"
    );
}

/// `TestSortChannel`'s errors: no head, and two chains.
#[test]
fn resolve_olm_sort_channel_errors() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b("a.v1", "1.0.0", "", "a", "stable"),
            b("a.v2", "2.0.0", "", "a", "stable"),
        ],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "a", "stable", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(
        failure(&r),
        "a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel \"stable\" of package \"a\": a.v1, a.v2"
    );
}

/// A small random catalog for the property test: packages `p0..`, each a linear channel of
/// versions 1.0.0, 2.0.0, ...; each bundle may provide `K0`/`K1`, require one of them, or
/// require another package at or above a version.
/// One generated bundle: (provides `K?`, requires `K?`, requires (package, min major)).
type GenBundle = (Option<u8>, Option<u8>, Option<(usize, u64)>);

#[derive(Debug, Clone)]
struct Gen {
    /// Per package, its bundles in version order.
    packages: Vec<Vec<GenBundle>>,
    /// The subscribed package.
    sub: usize,
}

fn gen_strategy() -> impl proptest::strategy::Strategy<Value = Gen> {
    use proptest::prelude::*;
    let bundle = (
        proptest::option::weighted(0.4, 0u8..2),
        proptest::option::weighted(0.3, 0u8..2),
        proptest::option::weighted(0.4, (0usize..3, 1u64..4)),
    );
    (
        proptest::collection::vec(proptest::collection::vec(bundle, 1..4), 3),
        0usize..3,
    )
        .prop_map(|(packages, sub)| Gen { packages, sub })
}

/// (package, version major) of every bundle.
fn bundles_of(g: &Gen) -> Vec<(usize, u64)> {
    g.packages
        .iter()
        .enumerate()
        .flat_map(|(p, bs)| (0..bs.len()).map(move |i| (p, i as u64 + 1)))
        .collect()
}

/// Whether `set` (indexes into [`bundles_of`]) is an installable answer, judged without the
/// resolver: the Subscription's package present, every requirement met inside the set, one
/// bundle per package and one provider per API.
fn valid(g: &Gen, all: &[(usize, u64)], set: &[usize]) -> bool {
    let info = |i: usize| g.packages[all[i].0][all[i].1 as usize - 1];
    if !set.iter().any(|&i| all[i].0 == g.sub) {
        return false;
    }
    for (a, &i) in set.iter().enumerate() {
        for &j in &set[a + 1..] {
            if all[i].0 == all[j].0 {
                return false;
            }
            if info(i).0.is_some() && info(i).0 == info(j).0 {
                return false;
            }
        }
        let (_, req_gvk, req_pkg) = info(i);
        if let Some(k) = req_gvk
            && !set.iter().any(|&j| info(j).0 == Some(k))
        {
            return false;
        }
        if let Some((p, min)) = req_pkg
            && !set.iter().any(|&j| all[j].0 == p && all[j].1 >= min)
        {
            return false;
        }
    }
    true
}

fn gen_catalog(g: &Gen) -> DeclarativeConfig {
    let mut bs = Vec::new();
    for (p, bundles) in g.packages.iter().enumerate() {
        for (i, &(provides, requires, requires_pkg)) in bundles.iter().enumerate() {
            let name: &'static str = Box::leak(format!("p{p}.v{}", i + 1).into_boxed_str());
            let replaces: &'static str = if i == 0 {
                ""
            } else {
                Box::leak(format!("p{p}.v{i}").into_boxed_str())
            };
            let pkg: &'static str = Box::leak(format!("p{p}").into_boxed_str());
            let version: &'static str = Box::leak(format!("{}.0.0", i + 1).into_boxed_str());
            let mut x = b(name, version, replaces, pkg, "stable");
            if let Some(k) = provides {
                x = x.provides("g", "v1", &format!("K{k}"));
            }
            if let Some(k) = requires {
                x = x.requires("g", "v1", &format!("K{k}"));
            }
            if let Some((q, min)) = requires_pkg {
                x = x.requires_package(&format!("p{q}"), &format!(">={min}.0.0"));
            }
            bs.push(x);
        }
    }
    fbc(&bs, &[])
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Every answer is installable; the Subscription gets the highest version that some
    /// installable answer has (OLM's order: the channel head first); and when there is no
    /// answer, no installable set exists.
    #[test]
    fn resolve_answers_hold_and_take_the_preferred_choice(g in gen_strategy()) {
        let ns = "olm";
        let cat = key("c", ns);
        let cfg = gen_catalog(&g);
        let r = run(ns, &[og(ns), sub(ns, &format!("p{}", g.sub), "stable", &cat)], &[(cat.clone(), &cfg)]);
        let all = bundles_of(&g);
        let n = all.len();
        let valid_sets: Vec<Vec<usize>> = (0u32..(1 << n))
            .map(|m| (0..n).filter(|i| m & (1 << i) != 0).collect::<Vec<_>>())
            .filter(|s| valid(&g, &all, s))
            .collect();
        match &r.result {
            Ok(p) => {
                let chosen: Vec<usize> = p
                    .chosen
                    .iter()
                    .map(|c| {
                        let pkg: usize = c.package[1..].parse().unwrap();
                        let major: u64 = c.version.split('.').next().unwrap().parse().unwrap();
                        all.iter().position(|&b| b == (pkg, major)).unwrap()
                    })
                    .collect();
                let mut sorted = chosen.clone();
                sorted.sort();
                proptest::prop_assert!(valid(&g, &all, &sorted), "not installable: {:?}", p.chosen);
                let best = valid_sets
                    .iter()
                    .filter_map(|s| s.iter().find(|&&i| all[i].0 == g.sub).map(|&i| all[i].1))
                    .max();
                let got = chosen.iter().find(|&&i| all[i].0 == g.sub).map(|&i| all[i].1);
                proptest::prop_assert_eq!(got, best);
            }
            Err(Failure::NotSatisfiable(_)) => {
                proptest::prop_assert!(valid_sets.is_empty(), "OLM would find {:?}", valid_sets[0]);
            }
            Err(e) => proptest::prop_assert!(false, "{e}"),
        }
    }
}

/// `TestSolveOperators_PreferDefaultChannelInResolution`: a Subscription without a channel
/// takes the default channel's bundle, though another channel has a higher one.
#[test]
fn resolve_olm_prefer_default_channel() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b(
                "test-package.v0.0.2",
                "0.0.2",
                "test-package.v1",
                "test-package",
                "alpha",
            )
            .provides("g", "v", "k"),
            b(
                "test-package.v0.0.1",
                "0.0.1",
                "test-package.v1",
                "test-package",
                "stable",
            )
            .provides("g", "v", "k"),
        ],
        &[("test-package", "stable")],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "test-package", "", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(chosen(&r), ["test-package.v0.0.1@community"]);
    assert_eq!(r.result.as_ref().unwrap().chosen[0].channel, "stable");
}

/// `TestSolveOperators_PreferDefaultChannelInResolutionForTransitiveDependencies`: a
/// dependency comes from its package's default channel.
#[test]
fn resolve_olm_prefer_default_channel_for_dependencies() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b(
                "test-package.v0.0.1",
                "0.0.1",
                "test-package.v1",
                "test-package",
                "alpha",
            )
            .requires("g", "v", "k"),
            b(
                "another-package.v0.0.1",
                "0.0.1",
                "another-package.v1",
                "another-package",
                "stable",
            )
            .provides("g", "v", "k"),
            b(
                "another-package.v0.0.2",
                "0.0.2",
                "another-package.v0.0.1",
                "another-package",
                "alpha",
            )
            .provides("g", "v", "k"),
        ],
        &[("test-package", "stable"), ("another-package", "stable")],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "test-package", "alpha", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(
        chosen(&r),
        [
            "test-package.v0.0.1@community",
            "another-package.v0.0.1@community"
        ]
    );
    assert_eq!(r.result.as_ref().unwrap().chosen[1].channel, "stable");
}

/// `ensureSubscriptionCSVState` before resolving: the example cluster state of
/// `shared/fixtures/olm/objects` (installed 1.4.2, currentCSV 1.5.0, its InstallPlan waiting):
/// OLM's plan upgrades to 1.5.0 and installs the dependency under the Subscription the
/// example InstallPlan creates; once the 1.5.0 CSV exists, it is the installed one.
#[test]
fn resolve_records_the_current_csv_first() {
    let ns = "acme-system";
    let cat = key("acme-catalog", "olm");
    let c = fbc(
        &[
            b(
                "acme-db-operator.v1.4.2",
                "1.4.2",
                "",
                "acme-db-operator",
                "stable",
            ),
            b(
                "acme-db-operator.v1.5.0",
                "1.5.0",
                "acme-db-operator.v1.4.2",
                "acme-db-operator",
                "stable",
            )
            .requires_package("acme-metrics-operator", ">=0.3.0 <0.4.0"),
            b(
                "acme-metrics-operator.v0.3.1",
                "0.3.1",
                "",
                "acme-metrics-operator",
                "stable",
            ),
        ],
        &[],
    );
    let mut s = existing_sub(
        ns,
        "acme-db-operator.v1.4.2",
        "acme-db-operator",
        "stable",
        &cat,
    );
    s["status"]["currentCSV"] = json!("acme-db-operator.v1.5.0");
    s["status"]["state"] = json!("UpgradePending");
    s["status"]["installPlanRef"] = json!({"name": "install-7xk2p"});
    let objects = [
        og(ns),
        csv(ns, "acme-db-operator.v1.4.2", "1.4.2", &[]),
        s.clone(),
    ];
    let r = run(ns, &objects, &[(cat.clone(), &c)]);
    assert_eq!(
        chosen(&r),
        [
            "acme-catalog/olm/stable/acme-db-operator.v1.5.0",
            "acme-catalog/olm/stable/acme-metrics-operator.v0.3.1"
        ]
        .map(|id| format!("{}@acme-catalog", id.rsplit('/').next().unwrap()))
    );
    assert!(r.waiting_on_plans);
    let p = r.result.as_ref().unwrap();
    assert_eq!(
        p.chosen[1].new_subscription.as_deref(),
        Some("acme-metrics-operator-stable-acme-catalog-olm")
    );
    // The 1.5.0 CSV exists: OLM records it as installed before it resolves.
    let mut with_new = objects.to_vec();
    with_new.push(csv(ns, "acme-db-operator.v1.5.0", "1.5.0", &[]));
    let st = state(&with_new);
    let req = Request {
        namespace: ns.into(),
        global_namespace: "olm".into(),
        state: &st,
        catalogs: vec![CatalogContent {
            key: cat.clone(),
            cfg: &c,
        }],
    };
    let r = resolve(&req);
    assert!(!r.waiting_on_plans);
    // Nothing to install: 1.5.0 is the Subscription's installed CSV; 1.4.2, now referenced by
    // no Subscription and without a properties annotation, has no olm.package inferred
    // (`inferProperties`), so it stays beside it.
    let p = r.result.as_ref().expect("resolves");
    assert!(p.chosen.is_empty());
    assert_eq!(
        p.stays
            .iter()
            .map(|s| (s.csv.as_str(), s.subscription.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("acme-db-operator.v1.4.2", None),
            ("acme-db-operator.v1.5.0", Some("acme-db-operator-stable"))
        ]
    );
}

/// `TestDisjointChannelGraph`: two replacement chains in one channel stop the resolution.
#[test]
fn resolve_olm_disjoint_channel_graph() {
    let ns = "test-namespace";
    let cat = key("test-catalog", ns);
    let p = "test-package";
    let c = fbc(
        &[
            b("test-package.side1.v1", "0.0.1", "", p, "alpha"),
            b(
                "test-package.side1.v2",
                "0.0.2",
                "test-package.side1.v1",
                p,
                "alpha",
            ),
            b("test-package.side2.v1", "1.0.0", "", p, "alpha"),
            b(
                "test-package.side2.v2",
                "2.0.0",
                "test-package.side2.v1",
                p,
                "alpha",
            ),
        ],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, p, "alpha", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(
        failure(&r),
        "a unique replacement chain within a channel is required to determine the relative order between channel entries, but 2 replacement chains were found in channel \"alpha\" of package \"test-package\": test-package.side1.v2...test-package.side1.v1, test-package.side2.v2...test-package.side2.v1"
    );
}

/// `TestSolveOperators_MultipleChannels`: a bundle in two channels is installed once, from the
/// Subscription's channel.
#[test]
fn resolve_olm_multiple_channels() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(
        &[
            b("test-package.v1", "0.0.1", "", "test-package", "alpha"),
            b(
                "another-package.v1",
                "1.0.0",
                "",
                "another-package",
                "alpha",
            ),
            b("another-package.v1", "1.0.0", "", "another-package", "beta"),
        ],
        &[],
    );
    let r = run(ns, &installed_and_new(ns, &cat), &[(cat.clone(), &c)]);
    assert_eq!(chosen(&r), ["another-package.v1@community"]);
    assert_eq!(r.result.as_ref().unwrap().chosen[0].channel, "alpha");
}

/// The catalog of OLM's FindLatestVersion cases: test-package.v1.0.1 replacing the installed
/// v1, and another-package 0.9.0 -> 1.0.0 -> 1.0.1 (all in alpha).
fn latest_versions() -> Vec<B> {
    let a = "another-package";
    vec![
        b(
            "test-package.v1.0.1",
            "1.0.1",
            "test-package.v1",
            "test-package",
            "alpha",
        ),
        b("another-package.v0.9.0", "0.9.0", "", a, "alpha"),
        b(
            "another-package.v1.0.0",
            "1.0.0",
            "another-package.v0.9.0",
            a,
            "alpha",
        ),
        b(
            "another-package.v1.0.1",
            "1.0.1",
            "another-package.v1.0.0",
            a,
            "alpha",
        ),
    ]
}

/// `TestSolveOperators_FindLatestVersion`: the installed operator upgrades to the head and the
/// new Subscription takes its channel's head, both 1.0.1.
#[test]
fn resolve_olm_find_latest_version() {
    let ns = "olm";
    let cat = key("community", ns);
    let c = fbc(&latest_versions(), &[]);
    let r = run(ns, &installed_and_new(ns, &cat), &[(cat.clone(), &c)]);
    assert_eq!(
        chosen(&r),
        [
            "another-package.v1.0.1@community",
            "test-package.v1.0.1@community"
        ]
    );
    let p = r.result.as_ref().unwrap();
    assert_eq!(
        p.chosen
            .iter()
            .map(|c| c.version.as_str())
            .collect::<Vec<_>>(),
        ["1.0.1", "1.0.1"]
    );
    assert_eq!(
        p.chosen[1].action,
        Action::Upgrade("test-package.v1".into())
    );
}

/// `TestSolveOperators_WithSkips`: a head that skips the other entry is chosen.
#[test]
fn resolve_olm_with_skips() {
    let ns = "test-namespace";
    let cat = key("test-catalog", ns);
    let p = "another-package";
    let c = fbc(
        &[
            b("another-package.v1", "1.0.0", "", p, "alpha"),
            b("another-package.v2", "2.0.0", "", p, "alpha").skips(&["another-package.v1"]),
        ],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, p, "alpha", &cat)],
        &[(cat.clone(), &c)],
    );
    assert_eq!(chosen(&r), ["another-package.v2@test-catalog"]);
}

/// `TestSolveOperatorsWithSkipsPreventingSelection`: a-1 needs an API only b-1 provides, and
/// b-1 is skipped by b-3, so it is no candidate: not satisfiable.
#[test]
fn resolve_olm_with_skips_preventing_selection() {
    let ns = "test-namespace";
    let cat = key("test-catalog", ns);
    let c = fbc(
        &[
            b("a-1", "1.0.0", "", "a", "channel").requires(G.0, G.1, G.2),
            b("b-1", "1.0.0", "", "b", "channel").provides(G.0, G.1, G.2),
            b("b-2", "2.0.0", "b-1", "b", "channel"),
            b("b-3", "3.0.0", "b-2", "b", "channel").skips(&["b-1"]),
        ],
        &[],
    );
    let r = run(
        ns,
        &[og(ns), sub(ns, "a", "channel", &cat)],
        &[(cat.clone(), &c)],
    );
    assert!(
        matches!(r.result, Err(Failure::NotSatisfiable(_))),
        "{}",
        failure(&r)
    );
}

/// `TestSolveOperatorsWithClusterServiceVersionHavingDependency`: an installed CSV without a
/// Subscription requires package b at exactly 1.0.0; b-1 (installed, subscribed) is not
/// upgraded to b-2, and nothing is installed.
#[test]
fn resolve_olm_with_cluster_service_version_having_dependency() {
    let ns = "test-namespace";
    let cat = key("test-catalog", ns);
    let c = fbc(&[b("b-2", "0.0.0", "b-1", "b", "default")], &[]);
    let props = |p: &str| json!({"operatorframework.io/properties": p});
    let a1 = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "a-1", "namespace": ns, "annotations": props(
            r#"{"properties":[{"type":"olm.package.required","value":{"packageName":"b","versionRange":"1.0.0"}}]}"#)},
        "spec": {"version": "0.0.0"}});
    let b1 = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "b-1", "namespace": ns, "annotations": props(
            r#"{"properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}"#)},
        "spec": {"version": "0.0.0"}});
    let r = run(
        ns,
        &[
            og(ns),
            a1,
            b1,
            existing_sub(ns, "b-1", "b", "default", &cat),
        ],
        &[(cat.clone(), &c)],
    );
    assert_eq!(chosen(&r), Vec::<String>::new(), "nothing to install");
}

/// `TestSolveOperators_FindLatestVersionWithNestedDependencies`: the dependencies'
/// dependencies are installed too, each at the version the requirement names.
#[test]
fn resolve_olm_find_latest_version_with_nested_dependencies() {
    let ns = "olm";
    let cat = key("community", ns);
    let (pc, pe) = ("packageC", "packageE");
    let mut bundles = latest_versions();
    bundles[3] = bundles[3]
        .clone()
        .requires_package(pc, "1.0.1")
        .requires_package("packageD", "1.0.1");
    bundles.extend([
        b("packageC.v1.0.0", "1.0.0", "", pc, "alpha").requires_package(pe, "1.0.1"),
        b("packageC.v1.0.1", "1.0.1", "packageC.v1.0.0", pc, "alpha").requires_package(pe, "1.0.1"),
        b("packageD.v1.0.1", "1.0.1", "", "packageD", "alpha"),
        b("packageE.v1.0.1", "1.0.1", "packageE.v1.0.0", pe, "alpha"),
        b("packageE.v1.0.0", "1.0.0", "", pe, "alpha"),
    ]);
    let c = fbc(&bundles, &[]);
    let r = run(ns, &installed_and_new(ns, &cat), &[(cat.clone(), &c)]);
    assert_eq!(
        chosen(&r),
        [
            "another-package.v1.0.1@community",
            "packageC.v1.0.1@community",
            "packageD.v1.0.1@community",
            "packageE.v1.0.1@community",
            "test-package.v1.0.1@community"
        ]
    );
}

/// `TestSolveOperators_IgnoreUnsatisfiableDependencies`: packageC of community needs a
/// package nobody has; packageC of certified does not, so it is taken from there.
#[test]
fn resolve_olm_ignore_unsatisfiable_dependencies() {
    let ns = "olm";
    let community = key("community", ns);
    let certified = key("certified", ns);
    let a = "another-package";
    let com = fbc(
        &[
            b("test-package.v1", "0.0.1", "", "test-package", "alpha"),
            b("another-package.v1", "1.0.0", "", a, "alpha").requires_package("packageC", "0.1.0"),
            b("packageC.v1", "0.1.0", "", "packageC", "alpha")
                .requires_package("packageD", "0.1.0"),
        ],
        &[],
    );
    let cert = fbc(
        &[
            b("test-package.v1", "0.0.1", "", "test-package", "alpha"),
            b("another-package.v1", "1.0.0", "", a, "alpha").requires_package("packageC", "0.1.0"),
            b("packageC.v1", "0.1.0", "", "packageC", "alpha"),
        ],
        &[],
    );
    let r = run(
        ns,
        &installed_and_new(ns, &community),
        &[(community.clone(), &com), (certified.clone(), &cert)],
    );
    assert_eq!(
        chosen(&r),
        // Identifier order: OLM compares these as a set.
        ["packageC.v1@certified", "another-package.v1@community"]
    );
}

/// `TestSolveOperatorsWithDeprecatedInnerChannelEntry`: a deprecated entry inside the
/// channel does not stop its head from being chosen.
#[test]
fn resolve_olm_with_deprecated_inner_channel_entry() {
    let ns = "namespace";
    let cat = key("catalog", ns);
    let c = fbc(
        &[
            b("a-1", "1.0.0", "", "a", "c"),
            b("a-2", "2.0.0", "a-1", "a", "c").prop("olm.deprecated", json!({})),
            b("a-3", "3.0.0", "a-2", "a", "c"),
        ],
        &[],
    );
    let r = run(ns, &[og(ns), sub(ns, "a", "c", &cat)], &[(cat.clone(), &c)]);
    assert_eq!(chosen(&r), ["a-3@catalog"]);
}

// `step_resolver_test.go::TestResolver`: the cases of OLM's `ResolveSteps`, in the namespace
// `catsrc-namespace` with the catalog `catsrc` there. Upstream's `bundle(...)` is a bundle at
// version 0.0.0 (`withVersion` changes it); its `existingOperator` a CSV without a properties
// annotation (the package inferred from the Subscription that installed it) whose
// `spec.version` is the zero `OperatorVersion`, which marshals as "0.0.0". OLM's expected steps
// and updated Subscriptions are compared as what our model exposes: the bundles chosen (with
// the Subscription OLM creates for one no Subscription matches, `subSteps`) and the
// Subscriptions whose `currentCSV` moves.

/// `TestResolver`'s namespace.
const SR_NS: &str = "catsrc-namespace";

/// `catalog` of `TestResolver`: `catsrc` in `catsrc-namespace`.
fn catsrc() -> SourceKey {
    key("catsrc", SR_NS)
}

/// `APISet1` .. `APISet4` (`testGVKKey` is g/v/k, plural ks).
const API1: (&str, &str, &str) = ("g", "v", "k");
const API2: (&str, &str, &str) = ("g2", "v2", "k2");
const API3: (&str, &str, &str) = ("g3", "v3", "k3");
const API4: (&str, &str, &str) = ("g4", "v4", "k4");

/// `bundle(name, pkg, channel, replaces, providedCRDs, requiredCRDs, ...)`: version 0.0.0;
/// provided APIs (CRDs or APIServices alike) are `olm.gvk`, required ones `olm.gvk.required`.
fn bundle(
    csv: &'static str,
    pkg: &'static str,
    ch: &'static str,
    replaces: &'static str,
    provides: &[(&str, &str, &str)],
    requires: &[(&str, &str, &str)],
) -> B {
    let mut x = b(csv, "0.0.0", replaces, pkg, ch);
    for (g, v, k) in provides {
        x = x.provides(g, v, k);
    }
    for (g, v, k) in requires {
        x = x.requires(g, v, k);
    }
    x
}

impl B {
    /// `withVersion`.
    fn version(mut self, v: &'static str) -> B {
        self.version = v;
        self
    }
}

/// `newOperatorGroup(name, namespace)`.
fn new_operator_group(name: &str, ns: &str) -> Value {
    let mut o = og(ns);
    o["metadata"]["name"] = json!(name);
    o
}

/// `existingOperator(namespace, name, pkg, channel, replaces, providedCRDs, requiredCRDs,
/// providedAPIServices, requiredAPIServices)`: the CSV of `bundle(...)`, spec.version the zero
/// version, no properties annotation.
fn existing_operator(
    ns: &str,
    name: &str,
    provided_crds: &[(&str, &str, &str)],
    required_crds: &[(&str, &str, &str)],
    provided_apis: &[(&str, &str, &str)],
    required_apis: &[(&str, &str, &str)],
) -> Value {
    let crds = |set: &[(&str, &str, &str)]| -> Vec<Value> {
        set.iter()
            .map(|(g, v, k)| json!({"name": format!("{k}s.{g}"), "version": v, "kind": k}))
            .collect()
    };
    let apis = |set: &[(&str, &str, &str)]| -> Vec<Value> {
        set.iter()
            .map(|(g, v, k)| json!({"name": format!("{k}s"), "group": g, "version": v, "kind": k}))
            .collect()
    };
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"version": "0.0.0",
                    "customresourcedefinitions": {"owned": crds(provided_crds), "required": crds(required_crds)},
                    "apiservicedefinitions": {"owned": apis(provided_apis), "required": apis(required_apis)}}})
}

/// What `ResolveSteps` does for one chosen bundle: its CSV, package and catalog, whether it
/// installs or upgrades, whether it is skipped as up to date, and the Subscription it creates
/// (`subSteps`: `<package>-<channel>-<catalog>-<catalog namespace>`).
#[derive(Debug, PartialEq, Eq)]
struct Step {
    csv: String,
    package: String,
    catalog: SourceKey,
    action: Action,
    up_to_date: bool,
    new_subscription: Option<String>,
}

/// `bundleSteps` of a bundle of `catsrc` that nothing installed replaces.
fn install(csv: &str, package: &str) -> Step {
    Step {
        csv: csv.into(),
        package: package.into(),
        catalog: catsrc(),
        action: Action::Install,
        up_to_date: false,
        new_subscription: None,
    }
}

/// `bundleSteps` of a bundle of `catsrc` that replaces the installed CSV `from`.
fn upgrade(csv: &str, package: &str, from: &str) -> Step {
    Step {
        action: Action::Upgrade(from.into()),
        ..install(csv, package)
    }
}

impl Step {
    /// With `subSteps`: the Subscription OLM creates for it.
    fn creating(mut self, sub: &str) -> Step {
        self.new_subscription = Some(sub.into());
        self
    }
}

/// Asserts OLM's answer: the steps (in identifier order) and the updated Subscriptions
/// (`updatedSub`: name, new currentCSV).
fn assert_steps(r: &Resolution, steps: &[Step], updated: &[(&str, &str)]) {
    let p = match &r.result {
        Ok(p) => p,
        Err(e) => panic!("resolution failed: {e}"),
    };
    let got: Vec<Step> = p
        .chosen
        .iter()
        .map(|c| Step {
            csv: c.csv.clone(),
            package: c.package.clone(),
            catalog: c.catalog.clone(),
            action: c.action.clone(),
            up_to_date: c.up_to_date,
            new_subscription: c.new_subscription.clone(),
        })
        .collect();
    assert_eq!(got, steps);
    let want: Vec<(String, String)> = updated
        .iter()
        .map(|(s, c)| (s.to_string(), c.to_string()))
        .collect();
    assert_eq!(p.updated, want);
}

/// Asserts OLM's `solverError`: the constraints, sorted by their text (upstream compares them
/// as a set), and the error as it reads.
fn assert_not_satisfiable(r: &Resolution, constraints: &[&str]) {
    match &r.result {
        Err(Failure::NotSatisfiable(n)) => {
            let got: Vec<String> = n.0.iter().map(ToString::to_string).collect();
            assert_eq!(got, constraints);
        }
        other => panic!("not a NotSatisfiable: {other:?}"),
    }
    assert_eq!(
        failure(r),
        format!("constraints not satisfiable: {}", constraints.join(", "))
    );
}

/// Resolves `TestResolver`'s namespace over `catsrc` holding `bundles` (no catalog at all when
/// there are none, as upstream's `bundlesByCatalog` then has none).
fn run_sr(objects: &[Value], bundles: &[B]) -> Resolution {
    let cfg = fbc(bundles, &[]);
    if bundles.is_empty() {
        run(SR_NS, objects, &[])
    } else {
        run(SR_NS, objects, &[(catsrc(), &cfg)])
    }
}

/// `TestResolver/SubscriptionOmitsChannel`.
#[test]
fn step_resolver_subscription_omits_channel() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "package", "", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("bundle", "package", "channel", "", &[], &[])],
    );
    assert_steps(
        &r,
        &[install("bundle", "package")],
        &[("package-", "bundle")],
    );
}

/// `TestResolver/SubscriptionWithNoCandidates/Error`.
#[test]
fn step_resolver_subscription_with_no_candidates_error() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[],
    );
    assert_not_satisfiable(
        &r,
        &[
            "no operators found from catalog catsrc in namespace catsrc-namespace referenced by subscription a-alpha",
            "subscription a-alpha exists",
        ],
    );
}

/// `TestResolver/SubscriptionWithNoCandidatesInPackage/Error`.
#[test]
fn step_resolver_subscription_with_no_candidates_in_package_error() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("bundle", "package", "channel", "", &[], &[])],
    );
    assert_not_satisfiable(
        &r,
        &[
            "no operators found in package a in the catalog referenced by subscription a-alpha",
            "subscription a-alpha exists",
        ],
    );
}

/// `TestResolver/SubscriptionWithNoCandidatesInChannel/Error`.
#[test]
fn step_resolver_subscription_with_no_candidates_in_channel_error() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("bundle", "a", "channel", "", &[], &[])],
    );
    assert_not_satisfiable(
        &r,
        &[
            "no operators found in channel alpha of package a in the catalog referenced by subscription a-alpha",
            "subscription a-alpha exists",
        ],
    );
}

/// `TestResolver/SubscriptionWithNoCandidatesWithStartingCSVName/Error`.
#[test]
fn step_resolver_subscription_with_no_candidates_with_starting_csv_name_error() {
    let ns = SR_NS;
    let mut s = sub(ns, "a", "alpha", &catsrc());
    s["spec"]["startingCSV"] = json!("notfound");
    let r = run_sr(
        &[s, new_operator_group("foo", ns)],
        &[bundle("bundle", "a", "alpha", "", &[], &[])],
    );
    assert_not_satisfiable(
        &r,
        &[
            "no operators found with name notfound in channel alpha of package a in the catalog referenced by subscription a-alpha",
            "subscription a-alpha exists",
        ],
    );
}

/// `TestResolver/SingleNewSubscription/NoDeps`.
#[test]
fn step_resolver_single_new_subscription_no_deps() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v1", "a", "alpha", "", &[], &[])],
    );
    assert_steps(&r, &[install("a.v1", "a")], &[("a-alpha", "a.v1")]);
}

/// `TestResolver/SingleNewSubscription/ResolveOne`.
#[test]
fn step_resolver_single_new_subscription_resolve_one() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("b.v1", "b", "beta", "", &[API1], &[]),
            bundle("a.v1", "a", "alpha", "", &[], &[API1]),
        ],
    );
    assert_steps(
        &r,
        &[
            install("a.v1", "a"),
            install("b.v1", "b").creating("b-beta-catsrc-catsrc-namespace"),
        ],
        &[("a-alpha", "a.v1")],
    );
}

/// `TestResolver/SingleNewSubscription/DependencyMissing`.
#[test]
fn step_resolver_single_new_subscription_dependency_missing() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v1", "a", "alpha", "", &[], &[API1])],
    );
    assert_not_satisfiable(
        &r,
        &[
            "bundle a.v1 requires an operator providing an API with group: g, version: v, kind: k",
            "subscription a-alpha exists",
            "subscription a-alpha requires catsrc/catsrc-namespace/alpha/a.v1",
        ],
    );
}

/// `TestResolver/InstalledSub/NoUpdates`.
#[test]
fn step_resolver_installed_sub_no_updates() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v1", "a", "alpha", "", &[API1], &[])],
    );
    assert_steps(&r, &[], &[]);
}

/// `TestResolver/TwoExistingOperatorsWithSameName/NoError`: CSVs of other namespaces, no
/// Subscription: nothing.
#[test]
fn step_resolver_two_existing_operators_with_same_name_no_error() {
    let r = run_sr(
        &[
            existing_operator("ns1", "a.v1", &[], &[], &[], &[]),
            existing_operator("ns2", "a.v1", &[], &[], &[], &[]),
            new_operator_group("foo", SR_NS),
        ],
        &[],
    );
    assert!(r.nothing_to_do);
    assert_steps(&r, &[], &[]);
}

/// `TestResolver/SecondSubscriptionConflictsWithExistingResolvedSubscription`.
#[test]
fn step_resolver_second_subscription_conflicts_with_existing_resolved_subscription() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_sub(ns, "b.v1", "b", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
            bundle("b.v1", "b", "alpha", "", &[API1], &[]),
        ],
    );
    assert!(
        matches!(r.result, Err(Failure::NotSatisfiable(_))),
        "{}",
        failure(&r)
    );
}

/// `TestResolver/ConflictingSubscriptionsToSamePackage`.
#[test]
fn step_resolver_conflicting_subscriptions_to_same_package() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            sub(ns, "a", "beta", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
            bundle("a.v2", "a", "beta", "", &[API1], &[]),
        ],
    );
    assert!(
        matches!(r.result, Err(Failure::NotSatisfiable(_))),
        "{}",
        failure(&r)
    );
}

/// `TestResolver/SatisfiableSubscriptionsToSamePackage`: two Subscriptions, one bundle both
/// accept.
#[test]
fn step_resolver_satisfiable_subscriptions_to_same_package() {
    let ns = SR_NS;
    let mut second = sub(ns, "a", "alpha", &catsrc());
    second["metadata"]["name"] = json!("a-alpha-2");
    let r = run_sr(
        &[
            sub(ns, "a", "alpha", &catsrc()),
            second,
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v1", "a", "alpha", "", &[API1], &[])],
    );
    assert_steps(
        &r,
        &[install("a.v1", "a")],
        &[("a-alpha", "a.v1"), ("a-alpha-2", "a.v1")],
    );
}

/// `TestResolver/InstalledSub/UpdateAvailable`.
#[test]
fn step_resolver_installed_sub_update_available() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v2", "a", "alpha", "a.v1", &[API1], &[]),
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
        ],
    );
    assert_steps(&r, &[upgrade("a.v2", "a", "a.v1")], &[("a-alpha", "a.v2")]);
}

/// `TestResolver/InstalledSub/UpdateAvailable/FromDifferentPackage`: b.v2 replaces a.v1,
/// installed by the Subscription to package b.
#[test]
fn step_resolver_installed_sub_update_available_from_different_package() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "b", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
            bundle("b.v2", "b", "alpha", "a.v1", &[API1], &[]),
        ],
    );
    assert_steps(&r, &[upgrade("b.v2", "b", "a.v1")], &[("b-alpha", "b.v2")]);
}

/// `TestResolver/InstalledSub/NoRunningOperator`: the installed CSV is gone; it is installed
/// again, and the Subscription, whose currentCSV names it already, is not updated.
#[test]
fn step_resolver_installed_sub_no_running_operator() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v1", "a", "alpha", "", &[API1], &[])],
    );
    assert_steps(&r, &[install("a.v1", "a")], &[]);
}

/// `TestResolver/InstalledSub/UpdateFound/UpdateRequires/ResolveOne`.
#[test]
fn step_resolver_installed_sub_update_found_update_requires_resolve_one() {
    let ns = SR_NS;
    // The installed CSV owns the API as a CRD, then (`.../ResolveOne/APIServer`) as an
    // APIService.
    type Apis<'a> = &'a [(&'a str, &'a str, &'a str)];
    let owned: [(Apis, Apis); 2] = [(&[API1], &[]), (&[], &[API1])];
    for (crds, apis) in owned {
        let r = run_sr(
            &[
                existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
                existing_operator(ns, "a.v1", crds, &[], apis, &[]),
                new_operator_group("foo", ns),
            ],
            &[
                bundle("a.v1", "a", "alpha", "", &[], &[]),
                bundle("a.v2", "a", "alpha", "a.v1", &[], &[API1]),
                bundle("b.v1", "b", "beta", "", &[API1], &[]),
            ],
        );
        assert_steps(
            &r,
            &[
                upgrade("a.v2", "a", "a.v1"),
                install("b.v1", "b").creating("b-beta-catsrc-catsrc-namespace"),
            ],
            &[("a-alpha", "a.v2")],
        );
    }
}

/// `TestResolver/InstalledSub/SingleNewSubscription/UpdateAvailable/ResolveOne`.
#[test]
fn step_resolver_installed_sub_single_new_subscription_update_available_resolve_one() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            sub(ns, "b", "beta", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[], &[]),
            bundle("a.v2", "a", "alpha", "a.v1", &[], &[]),
            bundle("b.v1", "b", "beta", "", &[], &[]),
        ],
    );
    assert_steps(
        &r,
        &[upgrade("a.v2", "a", "a.v1"), install("b.v1", "b")],
        &[("a-alpha", "a.v2"), ("b-beta", "b.v1")],
    );
}

/// `TestResolver/InstalledSub/SingleNewSubscription/NoRunningOperator/ResolveOne`.
#[test]
fn step_resolver_installed_sub_single_new_subscription_no_running_operator_resolve_one() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            sub(ns, "b", "beta", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
            bundle("b.v1", "b", "beta", "", &[], &[]),
        ],
    );
    assert_steps(
        &r,
        &[install("a.v1", "a"), install("b.v1", "b")],
        &[("b-beta", "b.v1")],
    );
}

/// `TestResolver/NoMoreVersionDeadlock`: a.v1 and b.v1 need each other's API, a.v2 and b.v2
/// each other's new one: both upgrade together.
#[test]
fn step_resolver_no_more_version_deadlock() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[API2], &[], &[]),
            existing_sub(ns, "b.v1", "b", "alpha", &catsrc()),
            existing_operator(ns, "b.v1", &[API2], &[API1], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v2", "a", "alpha", "a.v1", &[API3], &[API4]),
            bundle("b.v2", "b", "alpha", "b.v1", &[API4], &[API3]),
        ],
    );
    assert_steps(
        &r,
        &[upgrade("a.v2", "a", "a.v1"), upgrade("b.v2", "b", "b.v1")],
        &[("a-alpha", "a.v2"), ("b-alpha", "b.v2")],
    );
}

/// `TestResolver/OwnedAPITransfer`: the API b.v1 requires moves from a to b.v2.
#[test]
fn step_resolver_owned_api_transfer() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            existing_sub(ns, "b.v1", "b", "alpha", &catsrc()),
            existing_operator(ns, "b.v1", &[], &[API1], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v2", "a", "alpha", "a.v1", &[], &[]),
            bundle("b.v2", "b", "alpha", "b.v1", &[API1], &[]),
        ],
    );
    assert_steps(
        &r,
        &[upgrade("a.v2", "a", "a.v1"), upgrade("b.v2", "b", "b.v1")],
        &[("a-alpha", "a.v2"), ("b-alpha", "b.v2")],
    );
}

/// `TestResolver/PicksOlderProvider`: only a.v1, not the head a.v2, provides the API b.v1
/// requires.
#[test]
fn step_resolver_picks_older_provider() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            sub(ns, "b", "alpha", &catsrc()),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[API1], &[]),
            bundle("a.v2", "a", "alpha", "a.v1", &[], &[]),
            bundle("b.v1", "b", "alpha", "", &[], &[API1]),
        ],
    );
    assert_steps(
        &r,
        &[
            install("a.v1", "a").creating("a-alpha-catsrc-catsrc-namespace"),
            install("b.v1", "b"),
        ],
        &[("b-alpha", "b.v1")],
    );
}

/// `TestResolver/InstalledSub/UpdateInHead/SkipRange`: a.v3 replaces a.v2 (not in the
/// catalog) and skips the installed a.v1 (0.0.0) by its range.
#[test]
fn step_resolver_installed_sub_update_in_head_skip_range() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[bundle("a.v3", "a", "alpha", "a.v2", &[], &[])
            .version("1.0.0")
            .skip_range("< 1.0.0")],
    );
    assert_steps(&r, &[upgrade("a.v3", "a", "a.v1")], &[("a-alpha", "a.v3")]);
}

/// The same upgrade when the installed CSV's `spec.version` is absent or tolerant semver
/// (`v0.0.0`, `0.0`): OLM reads it with `ParseTolerant`, absent as the zero version
/// (`OperatorVersion.UnmarshalJSON`, `source_csvs.go::newEntryFromV1Alpha1CSV`), so the skip
/// range still admits the head.
#[test]
fn step_resolver_skip_range_from_a_tolerant_or_absent_installed_version() {
    let ns = SR_NS;
    for version in [None, Some("v0.0.0"), Some("0.0")] {
        let mut installed = existing_operator(ns, "a.v1", &[API1], &[], &[], &[]);
        match version {
            Some(v) => installed["spec"]["version"] = json!(v),
            None => {
                installed["spec"]
                    .as_object_mut()
                    .expect("spec")
                    .remove("version");
            }
        }
        let r = run_sr(
            &[
                existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
                installed,
                new_operator_group("foo", ns),
            ],
            &[bundle("a.v3", "a", "alpha", "a.v2", &[], &[])
                .version("1.0.0")
                .skip_range("< 1.0.0")],
        );
        assert_steps(&r, &[upgrade("a.v3", "a", "a.v1")], &[("a-alpha", "a.v3")]);
    }
}

/// `TestResolver/InstalledSubs/ExistingOperators/OldCSVsReplaced`.
#[test]
fn step_resolver_installed_subs_existing_operators_old_csvs_replaced() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_sub(ns, "b.v1", "b", "beta", &catsrc()),
            existing_operator(ns, "a.v1", &[], &[API1], &[], &[]),
            existing_operator(ns, "b.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v1", "a", "alpha", "", &[], &[API1]),
            bundle("a.v2", "a", "alpha", "a.v1", &[], &[API1]),
            bundle("b.v1", "b", "beta", "", &[API1], &[]),
            bundle("b.v2", "b", "beta", "b.v1", &[API1], &[]),
        ],
    );
    assert_steps(
        &r,
        &[upgrade("a.v2", "a", "a.v1"), upgrade("b.v2", "b", "b.v1")],
        &[("a-alpha", "a.v2"), ("b-beta", "b.v2")],
    );
}

/// `TestResolver/InstalledSub/UpdatesAvailable/SkipRangeNotInHead`: the head a.v4's range
/// excludes 0.0.0, so the next entry that skips the installed a.v1, a.v3, is taken.
#[test]
fn step_resolver_installed_sub_updates_available_skip_range_not_in_head() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v2", "a", "alpha", "", &[], &[])
                .version("1.0.0")
                .skip_range("< 1.0.0"),
            bundle("a.v3", "a", "alpha", "a.v2", &[], &[])
                .version("1.0.0")
                .skip_range("< 1.0.0"),
            bundle("a.v4", "a", "alpha", "a.v3", &[], &[])
                .version("1.0.0")
                .skip_range("< 1.0.0 !0.0.0"),
        ],
    );
    assert_steps(&r, &[upgrade("a.v3", "a", "a.v1")], &[("a-alpha", "a.v3")]);
}

/// `TestResolver/NewSub/StartingCSV`: the startingCSV a.v2, not the head, is installed. OLM
/// writes a.v2's own `replaces` (a.v1) into the CSV of its step; nothing is installed, so it
/// is an install.
#[test]
fn step_resolver_new_sub_starting_csv() {
    let ns = SR_NS;
    let mut s = sub(ns, "a", "alpha", &catsrc());
    s["spec"]["startingCSV"] = json!("a.v2");
    let r = run_sr(
        &[s, new_operator_group("foo", ns)],
        &[
            bundle("a.v1", "a", "alpha", "", &[], &[]),
            bundle("a.v2", "a", "alpha", "a.v1", &[], &[]),
            bundle("a.v3", "a", "alpha", "a.v2", &[], &[])
                .version("1.0.0")
                .skip_range("< 1.0.0"),
        ],
    );
    assert_steps(&r, &[install("a.v2", "a")], &[("a-alpha", "a.v2")]);
}

/// `TestResolver/InstalledSub/UpdatesAvailable/SpecifiedSkips`: a.v2 and a.v3 both skip the
/// installed a.v1; the head a.v3 is taken.
#[test]
fn step_resolver_installed_sub_updates_available_specified_skips() {
    let ns = SR_NS;
    let r = run_sr(
        &[
            existing_sub(ns, "a.v1", "a", "alpha", &catsrc()),
            existing_operator(ns, "a.v1", &[API1], &[], &[], &[]),
            new_operator_group("foo", ns),
        ],
        &[
            bundle("a.v2", "a", "alpha", "", &[], &[])
                .version("1.0.0")
                .skips(&["a.v1"]),
            bundle("a.v3", "a", "alpha", "a.v2", &[], &[])
                .version("1.0.0")
                .skips(&["a.v1"]),
        ],
    );
    assert_steps(&r, &[upgrade("a.v3", "a", "a.v1")], &[("a-alpha", "a.v3")]);
}
