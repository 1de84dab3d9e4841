//! `olmctl resolve` without -f and `olmctl status --explain`: the namespace read from the API
//! double over TLS (read-only), the CatalogSource's content given with --catalog; the same
//! answer as from files.

#![cfg(unix)]

mod common;

use common::bounded::{Run, run_env};
use common::fixture_catalog;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use serde_json::{Value, json};

/// The API double over TLS with `objects` (plural, object), and the environment that points a
/// run at it.
fn cluster(objects: &[(&str, Value)]) -> (ApiServer, tempfile::TempDir, Vec<(String, String)>) {
    let api = ApiServer::new();
    olmctl_testkit::fixtures::install_olm_crds(&api);
    for (plural, o) in objects {
        api.insert(plural, o.clone());
    }
    let server = api.serve_tls_on_loopback();
    let dir = tempfile::tempdir().expect("tmp");
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&server, ADMIN_TOKEN, "team")).expect("kubeconfig");
    let env = vec![
        ("KUBECONFIG".to_string(), kc.display().to_string()),
        ("HOME".to_string(), dir.path().display().to_string()),
    ];
    (api, dir, env)
}

fn namespace(ns: &str) -> (&'static str, Value) {
    (
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    )
}

fn operator_group(ns: &str) -> (&'static str, Value) {
    (
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
               "metadata": {"name": ns, "namespace": ns}}),
    )
}

fn community(priority: i64) -> (&'static str, Value) {
    (
        "catalogsources",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
               "metadata": {"name": "community", "namespace": "olm"},
               "spec": {"sourceType": "grpc", "image": "quay.io/example/catalog:v1",
                        "priority": priority}}),
    )
}

fn subscription(ns: &str, name: &str, package: &str, status: Value) -> (&'static str, Value) {
    (
        "subscriptions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"name": package, "source": "community", "sourceNamespace": "olm"},
               "status": status}),
    )
}

fn run(env: &[(String, String)], args: &[&str]) -> Run {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = run_env(args, &env);
    assert!(!r.hung, "{r:?}");
    r
}

fn catalog_arg() -> String {
    format!("community/olm={}", fixture_catalog().display())
}

#[test]
fn the_live_namespace_resolves_as_its_files_do() {
    let (api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        operator_group("team"),
        community(5),
        subscription(
            "team",
            "topology",
            "rabbitmq-messaging-topology-operator",
            json!({}),
        ),
    ]);
    let cat = catalog_arg();
    let r = run(
        &env,
        &["resolve", "-n", "team", "--catalog", &cat, "-o", "json"],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).expect("json");
    let got: Vec<(&str, &str, &str)> = doc["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .map(|b| {
            (
                b["csv"].as_str().unwrap(),
                b["catalog"].as_str().unwrap(),
                b["new_subscription"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "rabbitmq-cluster-operator.v2.22.3",
                "community/olm",
                "rabbitmq-cluster-operator-stable-community-olm"
            ),
            (
                "rabbitmq-messaging-topology-operator.v1.19.3",
                "community/olm",
                ""
            ),
        ]
    );
    // Read-only: nothing was written.
    assert_eq!(api.list("operators.coreos.com", "subscriptions").len(), 1);
}

/// `status --explain`: a Subscription whose ResolutionFailed condition is set gets the
/// namespace resolved again from the live state, with why; a stale condition is called so.
#[test]
fn status_explains_a_resolution_failure_from_the_live_state() {
    let failed = json!({"conditions": [{"type": "ResolutionFailed", "status": "True",
        "reason": "ConstraintsNotSatisfiable",
        "message": "constraints not satisfiable: an old message"}]});
    let (_api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        namespace("calm"),
        operator_group("team"),
        operator_group("calm"),
        community(0),
        subscription("team", "ship", "shipwright-operator", failed.clone()),
        subscription("calm", "kg", "kube-green", failed),
    ]);
    let cat = catalog_arg();
    let r = run(
        &env,
        &["status", "-n", "team", "--explain", "--catalog", &cat],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("\nSubscription team/ship: ResolutionFailed (ConstraintsNotSatisfiable): constraints not satisfiable: an old message\nOLM cannot resolve namespace team"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("with a bundle providing an API with group: operator.tekton.dev"),
        "{}",
        r.stdout
    );
    let r = run(
        &env,
        &["status", "-n", "calm", "--explain", "--catalog", &cat],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout
            .contains("namespace calm resolves now: the condition is stale"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  install  kube-green."), "{}", r.stdout);
}

/// A copy of the fixture catalog's `packages` under a new directory.
fn catalog_of(packages: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    for p in packages {
        let to = dir.path().join(p);
        std::fs::create_dir_all(&to).expect("mkdir");
        std::fs::copy(
            fixture_catalog().join(p).join("catalog.yaml"),
            to.join("catalog.yaml"),
        )
        .expect("copy");
    }
    dir
}

/// `resolve` on a cluster pulls the CatalogSources' images; `install` on a cluster resolves
/// with what the cluster has (issue 41): the namespace's
/// OperatorGroup (the install makes none of its own) and the global namespace's other
/// CatalogSource, pulled from its image in a real registry, which holds the dependency the
/// install's own catalog lacks; a catalog that cannot be read makes a failure a warning; an
/// install nothing can satisfy is refused before anything is written.
#[test]
fn on_a_cluster_resolve_pulls_catalogs_and_install_resolves_with_the_clusters_catalogs_and_objects()
{
    let reg = olmctl_testdata::registry::TestRegistry::start();
    let community_dir = catalog_of(&["rabbitmq-cluster-operator"]);
    let image = reg.image("community:v1");
    let pushed = run(
        &[],
        &[
            "catalog",
            "push",
            community_dir.path().to_str().expect("utf-8"),
            "--tag",
            &image,
        ],
    );
    assert_eq!(pushed.code, Some(0), "{pushed:?}");
    // `resolve` without -f or --catalog pulls the live CatalogSource's image.
    let (api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        operator_group("team"),
        (
            "catalogsources",
            json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
                   "metadata": {"name": "community", "namespace": "olm"},
                   "spec": {"sourceType": "grpc", "image": image}}),
        ),
        subscription("team", "rco", "rabbitmq-cluster-operator", json!({})),
    ]);
    let r = run(&env, &["resolve", "-n", "team", "-o", "json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let doc: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(
        (
            doc["bundles"][0]["csv"].as_str(),
            doc["bundles"][0]["catalog"].as_str()
        ),
        (
            Some("rabbitmq-cluster-operator.v2.22.3"),
            Some("community/olm")
        ),
        "{}",
        r.stdout
    );
    assert_eq!(api.list("operators.coreos.com", "subscriptions").len(), 1);

    let own = catalog_of(&[
        "rabbitmq-messaging-topology-operator",
        "shipwright-operator",
    ]);
    let own = own.path().display().to_string();
    let community_at = |image: &str| {
        (
            "catalogsources",
            json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
                   "metadata": {"name": "community", "namespace": "olm"},
                   "spec": {"sourceType": "grpc", "image": image}}),
        )
    };
    let group = (
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
               "metadata": {"name": "team-og", "namespace": "team"}}),
    );
    let install = |env: &[(String, String)], package: &str| {
        run(
            env,
            &[
                "install",
                package,
                "--catalog",
                "quay.io/example/own:1",
                "--catalog-dir",
                &own,
                "-n",
                "team",
                "--no-wait",
            ],
        )
    };

    // The dependency comes from the cluster's community catalog.
    let (api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        group.clone(),
        community_at(&image),
    ]);
    let r = install(&env, "rabbitmq-messaging-topology-operator");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "reading catalog community/olm ({image}) to resolve the install as OLM will\n"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("note: OLM also installs rabbitmq-cluster-operator.v2.22.3 (rabbitmq-cluster-operator 2.22.3) from community/olm, a dependency of rabbitmq-messaging-topology-operator.v1.19.3, with Subscription rabbitmq-cluster-operator-stable-community-olm\n"),
        "{}",
        r.stderr
    );
    assert_eq!(api.list("operators.coreos.com", "subscriptions").len(), 1);
    assert_eq!(
        api.list("operators.coreos.com", "operatorgroups").len(),
        1,
        "the namespace's own OperatorGroup is kept, none added"
    );

    // Nothing provides Tekton's API: refused, nothing written.
    let (api, _dir, env) = cluster(&[
        namespace("olm"),
        namespace("team"),
        group.clone(),
        community_at(&image),
    ]);
    let r = install(&env, "shipwright-operator");
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr.contains("error: OLM could not resolve the install of shipwright-operator in namespace team: nothing was written (--no-resolve installs anyway)\nOLM's message: constraints not satisfiable: "),
        "{}",
        r.stderr
    );
    assert!(api.list("operators.coreos.com", "subscriptions").is_empty());
    assert!(api.list("operators.coreos.com", "catalogsources").len() == 1);

    // The community catalog cannot be read: the install goes on, with a warning; what OLM
    // would do without it is said (topology's head needs rabbitmq-cluster-operator, so OLM
    // takes the highest bundle without that requirement), and a resolution that fails
    // without it is no refusal.
    let gone = format!("{}/nothing:v1", reg.image("").trim_end_matches('/'));
    for (package, said) in [
        (
            "rabbitmq-messaging-topology-operator",
            "note: OLM installs rabbitmq-messaging-topology-operator.v1.14.2, not rabbitmq-messaging-topology-operator.v1.19.3, the head of channel stable: bundle rabbitmq-messaging-topology-operator.v1.19.3 requires an operator with package: rabbitmq-cluster-operator and with version in range: >2.0.0 (OLM takes the highest bundle it can install; `olmctl resolve` explains, --version or --starting-csv chooses)\n",
        ),
        (
            "shipwright-operator",
            "warning: OLM would not resolve the install of shipwright-operator in namespace team from what could be read; installing anyway, as OLM decides with every catalog\nOLM's message: constraints not satisfiable: ",
        ),
    ] {
        let (api, _dir, env) = cluster(&[
            namespace("olm"),
            namespace("team"),
            group.clone(),
            community_at(&gone),
        ]);
        let r = install(&env, package);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(
            r.stderr.contains(
                "warning: the resolution before the install could not read catalog community/olm ("
            ) && r.stderr.contains(said),
            "{}",
            r.stderr
        );
        assert_eq!(api.list("operators.coreos.com", "subscriptions").len(), 1);
    }
}
