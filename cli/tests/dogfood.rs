//! The operator's own packaging (issue 17): `bundle/` and the kept history under
//! `operator/history/` validate with every suite, without errors or warnings; every catalog
//! edge passes `check catalog`; and a broken next release (dropping `v1alpha1` while users
//! still have it stored) is caught with CRV001. `scripts/packaging.sh` checks freshness.

mod common;

use std::path::{Path, PathBuf};

use common::cli::{code, olmctl, p};

fn repo(rel: &str) -> PathBuf {
    common::root().join(rel)
}

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn every_kept_bundle_validates_with_every_suite_cleanly() {
    for b in [
        "bundle",
        "operator/history/v0.1.0",
        "operator/history/v0.2.0",
    ] {
        let o = olmctl(&["bundle", "validate", p(&repo(b)), "--select", "all"]);
        assert_eq!(code(&o), 0, "{b}: {}", out(&o));
        assert!(out(&o).contains("0 errors, 0 warnings"), "{b}: {}", out(&o));
    }
    let o = olmctl(&[
        "check",
        "catalog",
        p(&repo("catalog")),
        "--bundles",
        p(&repo("operator/bundle-names.yaml")),
    ]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(
        out(&o).contains("3 edges checked, 0 not checked"),
        "{}",
        out(&o)
    );
}

/// A copy of `bundle/` as release 0.4.0 whose CRD no longer lists `v1alpha1`.
fn broken_next(dir: &Path) -> PathBuf {
    let next = dir.join("v0.4.0");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(next.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(repo("bundle").join(sub)).expect("read") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), next.join(sub).join(e.file_name())).expect("copy");
        }
    }
    let crd_file = next.join("manifests/olmctl.dev_upgradepolicies.yaml");
    let text = std::fs::read_to_string(&crd_file).expect("crd");
    let node = olmctl::fbc::yaml::first_document(&text)
        .expect("yaml")
        .expect("doc");
    let mut crd: serde_json::Value = serde_json::from_str(&node.to_json()).expect("json");
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .retain(|v| v["name"] != "v1alpha1");
    std::fs::write(&crd_file, crd.to_string()).expect("write");
    let csv_file = next.join("manifests/olmctl-operator.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv_file).expect("csv");
    let node = olmctl::fbc::yaml::first_document(&text)
        .expect("yaml")
        .expect("doc");
    let mut csv: serde_json::Value = serde_json::from_str(&node.to_json()).expect("json");
    csv["metadata"]["name"] = "olmctl-operator.v0.4.0".into();
    csv["spec"]["version"] = "0.4.0".into();
    csv["spec"]["replaces"] = "olmctl-operator.v0.3.0".into();
    csv["spec"]["customresourcedefinitions"]["owned"]
        .as_array_mut()
        .expect("owned")
        .retain(|o| o["version"] != "v1alpha1");
    let examples: Vec<serde_json::Value> = serde_json::from_str(
        csv["metadata"]["annotations"]["alm-examples"]
            .as_str()
            .expect("alm-examples"),
    )
    .expect("examples");
    let kept: Vec<&serde_json::Value> = examples
        .iter()
        .filter(|e| e["apiVersion"] != "olmctl.dev/v1alpha1")
        .collect();
    csv["metadata"]["annotations"]["alm-examples"] =
        serde_json::to_string(&kept).expect("json").into();
    std::fs::write(&csv_file, csv.to_string()).expect("write");
    next
}

#[test]
fn a_next_release_dropping_stored_v1alpha1_is_caught_with_crv001() {
    let d = tempfile::tempdir().expect("tmp");
    let next = broken_next(d.path());
    // On its own the edge 0.3.0 -> 0.4.0 is fine: 0.3.0 stores v1, and v1alpha1 was marked
    // deprecated, so users who installed 0.3.0 directly lose nothing.
    let o = olmctl(&["check", "upgrade", p(&repo("bundle")), p(&next)]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    // Users who came from 0.1.0 have v1alpha1 in status.storedVersions: the catalog check follows
    // every path and catches it.
    let template = std::fs::read_to_string(repo("operator/catalog-template.yaml"))
        .expect("template")
        + "  - image: ghcr.io/olmctl/olmctl-operator-bundle:v0.4.0\n";
    std::fs::write(d.path().join("template.yaml"), template).expect("write");
    let mut images = String::new();
    let mut names = String::new();
    for (v, dir) in [
        ("0.1.0", repo("operator/history/v0.1.0")),
        ("0.2.0", repo("operator/history/v0.2.0")),
        ("0.3.0", repo("bundle")),
        ("0.4.0", next.clone()),
    ] {
        images.push_str(&format!(
            "ghcr.io/olmctl/olmctl-operator-bundle:v{v}: {}\n",
            dir.display()
        ));
        names.push_str(&format!("olmctl-operator.v{v}: {}\n", dir.display()));
    }
    std::fs::write(d.path().join("images.yaml"), images).expect("write");
    std::fs::write(d.path().join("names.yaml"), names).expect("write");
    let o = olmctl(&[
        "catalog",
        "template",
        p(&d.path().join("template.yaml")),
        "--bundles",
        p(&d.path().join("images.yaml")),
    ]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let cat = d.path().join("catalog/olmctl-operator");
    std::fs::create_dir_all(&cat).expect("mkdir");
    std::fs::write(cat.join("catalog.yaml"), &o.stdout).expect("write");
    let o = olmctl(&[
        "check",
        "catalog",
        p(&d.path().join("catalog")),
        "--bundles",
        p(&d.path().join("names.yaml")),
    ]);
    assert_eq!(code(&o), 1, "{}", out(&o));
    let text = out(&o);
    assert!(text.contains("error[CRV001]"), "{text}");
    assert!(
        text.contains("new CRD removes version v1alpha1 that is listed as a stored version"),
        "{text}"
    );
    assert!(text.contains("olmctl-operator.v0.1.0"), "{text}");
}

/// The CRD manifest of the kept bundle `dir` and the CRD as JSON.
fn kept_crd(dir: &Path) -> (PathBuf, serde_json::Value) {
    let file = dir.join("manifests/olmctl.dev_upgradepolicies.yaml");
    let text = std::fs::read_to_string(&file).expect("crd");
    let node = olmctl::fbc::yaml::first_document(&text)
        .expect("yaml")
        .expect("doc");
    (file, serde_json::from_str(&node.to_json()).expect("json"))
}

/// OLM writes `spec.conversion` of a CRD a ConversionWebhook names (cluster.md R4.3), after the
/// catalog operator has applied the bundle's CRD as it is (R4.4): the kept bundles ship the CRD
/// without it and the CSV with the webhook definition (issue 27). A copy of `bundle/` with the
/// stanza put back (as `operator/config/crd.yaml` has it) is OLM014 at the stanza's line.
#[test]
fn kept_bundles_leave_spec_conversion_to_the_csv_and_olm014_catches_it_put_back() {
    for b in [
        "bundle",
        "operator/history/v0.1.0",
        "operator/history/v0.2.0",
    ] {
        let (file, crd) = kept_crd(&repo(b));
        assert!(
            crd["spec"].get("conversion").is_none(),
            "{}: ships spec.conversion {}",
            file.display(),
            crd["spec"]["conversion"]
        );
    }
    for b in ["bundle", "operator/history/v0.2.0"] {
        let csv_file = repo(b).join("manifests/olmctl-operator.clusterserviceversion.yaml");
        let text = std::fs::read_to_string(&csv_file).expect("csv");
        let node = olmctl::fbc::yaml::first_document(&text)
            .expect("yaml")
            .expect("doc");
        let csv: serde_json::Value = serde_json::from_str(&node.to_json()).expect("json");
        assert_eq!(
            csv["spec"]["webhookdefinitions"],
            serde_json::json!([{
                "admissionReviewVersions": ["v1"],
                "containerPort": 443,
                "conversionCRDs": ["upgradepolicies.olmctl.dev"],
                "deploymentName": "olmctl-operator",
                "generateName": "cupgradepolicies.kb.io",
                "sideEffects": "None",
                "targetPort": 9443,
                "type": "ConversionWebhook",
                "webhookPath": "/convert"
            }]),
            "{b}"
        );
    }
    // Put back: the bundle's CRD replaced by operator/config/crd.yaml, the same CRD with the
    // stanza (for a plain kubectl deploy).
    let d = tempfile::tempdir().expect("tmp");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(d.path().join(sub)).expect("mkdir");
        for e in std::fs::read_dir(repo("bundle").join(sub)).expect("read") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), d.path().join(sub).join(e.file_name())).expect("copy");
        }
    }
    let with_stanza = std::fs::read_to_string(repo("operator/config/crd.yaml")).expect("crd");
    let line = with_stanza
        .lines()
        .position(|l| l == "  conversion:")
        .expect("operator/config/crd.yaml has spec.conversion")
        + 1;
    let crd_file = d.path().join("manifests/olmctl.dev_upgradepolicies.yaml");
    std::fs::write(&crd_file, &with_stanza).expect("write");
    let o = olmctl(&["bundle", "validate", p(d.path()), "--select", "all"]);
    let text = out(&o);
    assert_eq!(code(&o), 0, "a warning only: {text}");
    assert!(text.contains("0 errors, 1 warning"), "{text}");
    assert!(text.contains("warning[OLM014]"), "{text}");
    assert!(
        text.contains("\"upgradepolicies.olmctl.dev\"")
            && text.contains("\"cupgradepolicies.kb.io\""),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}:{line}:", crd_file.display())),
        "{text}"
    );
    assert!(text.contains("field: spec.conversion"), "{text}");
}
