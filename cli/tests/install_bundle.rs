//! `olmctl install --bundle` (issue 40 item 22, operator-sdk run bundle): a bundle directory
//! pushed as a bundle image, its one-bundle catalog built on a base image and pushed to a real
//! registry (Debian's docker-registry on 127.0.0.1), the catalog pulled back, and the
//! CatalogSource and Subscription created in the API double; `--print` touches no cluster and
//! `uninstall` deletes the CatalogSource.

#![cfg(unix)]

mod common;

use std::collections::BTreeMap;

use common::bounded::{Run, run_env};
use common::registry::{TestRegistry, client, rt};
use common::*;
use olmctl::oci::image::{Artifact, Blob, Manifest, Platform, new_config};
use olmctl::oci::layer::LayerBuilder;
use olmctl::oci::media;
use olmctl::oci::registry::parse_ref;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use serde_json::{Value, json};

const OLM: &str = "operators.coreos.com";

/// A one-platform stand-in for the opm base image, pushed by the test.
fn push_base(reg: &TestRegistry) -> String {
    let platform = Platform {
        os: "linux".into(),
        architecture: "amd64".into(),
        variant: None,
    };
    let mut l = LayerBuilder::new(0);
    l.file("bin/opm", b"#!/bin/sh\n".to_vec(), true);
    let l = l.build();
    let cfg = new_config(&platform, &BTreeMap::new(), &[(&l, "ADD opm")], None);
    let m = Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(media::OCI_CONFIG, cfg),
        vec![Blob::bytes(l.media_type, l.blob)],
    );
    let art = Artifact::index(media::OCI_INDEX, vec![(m, platform)]);
    let tag = reg.image("opm:test");
    rt().block_on(client(reg).push(&parse_ref(&tag).unwrap(), &art))
        .unwrap();
    tag
}

fn run(env: &[(String, String)], args: &[&str]) -> Run {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = run_env(args, &env);
    assert!(!r.hung, "{r:?}");
    r
}

fn yaml_docs(s: &str) -> Vec<Value> {
    let mut out = Vec::new();
    olmctl::fbc::yaml::parse_documents(s, |n| {
        out.push(serde_json::from_str(&n.to_json()).unwrap())
    })
    .expect("yaml");
    out
}

fn json_blobs(s: &str) -> Vec<Value> {
    let mut out = Vec::new();
    olmctl::fbc::json::parse_stream(s, |n| out.push(serde_json::from_str(&n.to_json()).unwrap()))
        .expect("json");
    out
}

#[test]
fn a_bundle_directory_is_served_by_a_one_bundle_catalog_installed_and_uninstalled() {
    let reg = TestRegistry::start();
    let base = push_base(&reg);
    let registry = reg.image("team");
    let api = ApiServer::new();
    olmctl_testkit::fixtures::install_olm_crds(&api);
    for ns in ["olm", "operators"] {
        api.insert(
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    let server = api.serve_tls_on_loopback();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&server, ADMIN_TOKEN, "operators")).unwrap();
    let env = vec![
        ("KUBECONFIG".to_string(), kc.display().to_string()),
        ("HOME".to_string(), dir.path().display().to_string()),
    ];
    let bundle = fixture_operators().join("kube-green/0.7.0");
    let newer = fixture_operators().join("kube-green/0.7.1");
    let install_of = |bundle: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "install",
            "--bundle",
            bundle.to_str().unwrap(),
            "--registry",
            &registry,
            "--base-image",
            &base,
        ];
        args.extend_from_slice(extra);
        run(&env, &args)
    };
    let install = |extra: &[&str]| install_of(&bundle, extra);

    // --print: the images are pushed, the manifests printed, the cluster untouched.
    let printed = install(&["--print"]);
    assert_eq!(printed.code, Some(0), "{printed:?}");
    assert!(api.list(OLM, "catalogsources").is_empty());
    assert!(api.list(OLM, "subscriptions").is_empty());
    let docs = yaml_docs(&printed.stdout);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["CatalogSource", "OperatorGroup", "Subscription"]);
    let cs = &docs[0];
    let catalog = cs["spec"]["image"].as_str().unwrap().to_string();
    let catalog_repo = format!("{registry}/kube-green-catalog@sha256:");
    assert!(catalog.starts_with(&catalog_repo), "{catalog}");
    assert_eq!(cs["metadata"]["name"], "kube-green-catalog");
    assert!(
        cs["spec"].get("updateStrategy").is_none(),
        "a digest is not polled"
    );
    let bundle_image = cs["metadata"]["annotations"]["olmctl.dev/bundle"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        bundle_image.starts_with(&format!("{registry}/kube-green-bundle@sha256:")),
        "{bundle_image}"
    );
    assert_eq!(
        docs[2]["spec"],
        json!({"name": "kube-green", "source": "kube-green-catalog", "sourceNamespace": "olm",
               "channel": "alpha", "startingCSV": "kube-green.v0.7.0",
               "installPlanApproval": "Automatic"})
    );

    // The catalog image, pulled back, holds exactly the bundle, in its one channel.
    let rendered = run(&env, &["catalog", "render", &catalog, "-o", "json"]);
    assert_eq!(rendered.code, Some(0), "{rendered:?}");
    let blobs = json_blobs(&rendered.stdout);
    let schemas: Vec<&str> = blobs
        .iter()
        .map(|b| b["schema"].as_str().unwrap())
        .collect();
    assert_eq!(schemas, ["olm.package", "olm.channel", "olm.bundle"]);
    assert_eq!(blobs[0]["defaultChannel"], "alpha");
    assert_eq!(blobs[1]["entries"], json!([{"name": "kube-green.v0.7.0"}]));
    assert_eq!(blobs[2]["name"], "kube-green.v0.7.0");
    assert_eq!(blobs[2]["image"], bundle_image.as_str());
    // ... and the bundle is what the bundle image renders to.
    let from_image = run(&env, &["catalog", "render", &bundle_image, "-o", "json"]);
    assert_eq!(from_image.code, Some(0), "{from_image:?}");
    assert_eq!(json_blobs(&from_image.stdout), [blobs[2].clone()]);
    // The bundle given as an image (operator-sdk run bundle IMAGE): pulled, not pushed again;
    // the same one-bundle catalog (the build is reproducible), the same manifests.
    let by_image = run(
        &env,
        &[
            "install",
            "--bundle",
            &bundle_image,
            "--registry",
            &registry,
            "--base-image",
            &base,
            "--print",
        ],
    );
    assert_eq!(by_image.code, Some(0), "{by_image:?}");
    assert_eq!(yaml_docs(&by_image.stdout), docs);

    // Installed: the CatalogSource names the same catalog by digest (the build is
    // reproducible), the Subscription is the printed one.
    let installed = install(&["--no-wait"]);
    assert_eq!(installed.code, Some(0), "{installed:?}");
    let live = api
        .get(OLM, "catalogsources", "olm", "kube-green-catalog")
        .expect("CatalogSource");
    assert_eq!(live["spec"]["image"], catalog.as_str());
    assert_eq!(live["spec"]["publisher"], "olmctl install");
    let sub = api
        .get(OLM, "subscriptions", "operators", "kube-green")
        .expect("Subscription");
    assert_eq!(sub["spec"], docs[2]["spec"]);

    // Again without --upgrade: the CatalogSource is not changed.
    let again = install_of(&newer, &["--no-wait"]);
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains("pass --upgrade"), "{again:?}");
    assert_eq!(
        api.get(OLM, "catalogsources", "olm", "kube-green-catalog")
            .unwrap()["spec"]["image"],
        catalog.as_str()
    );

    // The user turned the Subscription to Manual approval since: an upgrade keeps it.
    let mut manual = api
        .get(OLM, "subscriptions", "operators", "kube-green")
        .expect("Subscription");
    manual["spec"]["installPlanApproval"] = json!("Manual");
    api.insert("subscriptions", manual);

    // --upgrade to 0.7.1 (run bundle-upgrade): the catalog holds both bundles, the new one
    // replacing the old, and the CatalogSource points at it and records both.
    let upgraded = install_of(&newer, &["--upgrade", "--no-wait"]);
    assert_eq!(upgraded.code, Some(0), "{upgraded:?}");
    let live = api
        .get(OLM, "catalogsources", "olm", "kube-green-catalog")
        .expect("CatalogSource");
    let catalog2 = live["spec"]["image"].as_str().unwrap().to_string();
    assert!(catalog2.starts_with(&catalog_repo), "{catalog2}");
    assert_ne!(catalog2, catalog);
    let recorded: Vec<&str> = live["metadata"]["annotations"]["olmctl.dev/bundle"]
        .as_str()
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(recorded[0], bundle_image.as_str());
    assert!(
        recorded[1].starts_with(&format!("{registry}/kube-green-bundle@sha256:")),
        "{recorded:?}"
    );
    let rendered = run(&env, &["catalog", "render", &catalog2, "-o", "json"]);
    assert_eq!(rendered.code, Some(0), "{rendered:?}");
    let blobs = json_blobs(&rendered.stdout);
    assert_eq!(blobs.len(), 4, "{blobs:?}");
    assert_eq!(blobs[0]["defaultChannel"], "alpha");
    assert_eq!(
        blobs[1]["entries"],
        json!([{"name": "kube-green.v0.7.0"},
               {"name": "kube-green.v0.7.1", "replaces": "kube-green.v0.7.0"}])
    );
    assert_eq!(blobs[2]["image"], recorded[0]);
    assert_eq!(blobs[3]["name"], "kube-green.v0.7.1");
    assert_eq!(blobs[3]["image"], recorded[1]);
    // The Subscription is as the first install made it (with the approval the user chose
    // since): OLM follows the channel from there.
    let sub = api
        .get(OLM, "subscriptions", "operators", "kube-green")
        .expect("Subscription");
    let mut expected = docs[2]["spec"].clone();
    expected["installPlanApproval"] = json!("Manual");
    assert_eq!(sub["spec"], expected);

    // --upgrade to a bundle not newer than the last is refused, naming both, before anything
    // is pushed or changed.
    let older = install_of(&bundle, &["--upgrade", "--no-wait"]);
    assert_eq!(older.code, Some(2), "{older:?}");
    assert!(
        older.stderr.contains(
            "kube-green.v0.7.0 (version 0.7.0) is not newer than kube-green.v0.7.1 (version 0.7.1)"
        ),
        "{older:?}"
    );
    assert_eq!(
        api.get(OLM, "catalogsources", "olm", "kube-green-catalog")
            .unwrap(),
        live
    );

    // uninstall deletes the CatalogSource it made, without --delete-catalog-source.
    let gone = run(&env, &["uninstall", "kube-green", "-n", "operators"]);
    assert_eq!(gone.code, Some(0), "{gone:?}");
    assert!(
        gone.stdout
            .contains("CatalogSource olm/kube-green-catalog deleted"),
        "{gone:?}"
    );
    assert!(
        api.get(OLM, "catalogsources", "olm", "kube-green-catalog")
            .is_none()
    );
    assert!(
        api.get(OLM, "subscriptions", "operators", "kube-green")
            .is_none()
    );
}
