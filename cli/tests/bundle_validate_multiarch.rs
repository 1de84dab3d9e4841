//! `bundle validate --select multiarch` (ARC codes) against a real registry (Debian's
//! docker-registry on 127.0.0.1) holding multi-platform and single-platform images the test
//! pushes: each code's failing and passing case, and the command line.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::demo_bundle::{CSV, codes, run_with};
use common::registry::{TestRegistry, client, rt};
use olmctl::checks::bundle::Options;
use olmctl::checks::bundle::multiarch::ImagePlatforms;
use olmctl::diag::Finding;
use olmctl::oci::image::{Artifact, Blob, Manifest, Platform, new_config};
use olmctl::oci::layer::LayerBuilder;
use olmctl::oci::media;
use olmctl::oci::registry::parse_ref;

fn image(os: &str, arch: &str) -> Manifest {
    let platform = Platform {
        os: os.into(),
        architecture: arch.into(),
        variant: None,
    };
    let mut l = LayerBuilder::new(0);
    l.file("bin/op", format!("{os}/{arch}\n").into_bytes(), true);
    let l = l.build();
    let cfg = new_config(&platform, &BTreeMap::new(), &[(&l, "ADD op")], None);
    Manifest::new(
        media::OCI_MANIFEST,
        Blob::bytes(media::OCI_CONFIG, cfg),
        vec![Blob::bytes(l.media_type, l.blob)],
    )
}

/// Pushes `repo` as one image (one platform) or an index (several).
fn push(reg: &TestRegistry, repo: &str, platforms: &[(&str, &str)]) -> String {
    let art = if let [(os, arch)] = platforms {
        Artifact::Image(image(os, arch))
    } else {
        Artifact::index(
            media::OCI_INDEX,
            platforms
                .iter()
                .map(|(os, arch)| {
                    (
                        image(os, arch),
                        Platform {
                            os: os.to_string(),
                            architecture: arch.to_string(),
                            variant: None,
                        },
                    )
                })
                .collect(),
        )
    };
    let tag = reg.image(repo);
    rt().block_on(client(reg).push(&parse_ref(&tag).unwrap(), &art))
        .unwrap();
    tag
}

struct World {
    reg: TestRegistry,
    multi: String,
    amd64: String,
    win: String,
    missing: String,
}

fn world() -> World {
    // Logged, so that a test can tell whether the registry was asked.
    let reg = TestRegistry::start_logged();
    let multi = push(&reg, "op:multi", &[("linux", "amd64"), ("linux", "arm64")]);
    let amd64 = push(&reg, "op:amd64", &[("linux", "amd64")]);
    let win = push(&reg, "op:win", &[("linux", "amd64"), ("windows", "amd64")]);
    let missing = reg.image("op:nope");
    World {
        reg,
        multi,
        amd64,
        win,
        missing,
    }
}

/// The demo CSV with `manager` and `related` images, arch `labels`, and a node affinity on
/// arch and os (`None`: none).
fn csv(manager: &str, related: &str, labels: &[&str], affinity: Option<(&str, &str)>) -> String {
    let mut s = CSV
        .replace(
            "image: 'quay.io/demo/op:1.2.0', resources",
            &format!("image: '{manager}', resources"),
        )
        .replace(
            "  - {name: manager, image: 'quay.io/demo/op:1.2.0'}",
            &format!("  - {{name: manager, image: '{related}'}}"),
        );
    if !labels.is_empty() {
        let l: String = labels
            .iter()
            .map(|l| format!("    operatorframework.io/{l}: supported\n"))
            .collect();
        s = s.replace(
            "  annotations:\n",
            &format!("  labels:\n{l}  annotations:\n"),
        );
    }
    if let Some((archs, oss)) = affinity {
        s = s.replace(
            "              serviceAccountName: demo-operator\n",
            &format!(
                "              serviceAccountName: demo-operator\n              affinity:\n                nodeAffinity:\n                  requiredDuringSchedulingIgnoredDuringExecution:\n                    nodeSelectorTerms:\n                    - matchExpressions:\n                      - {{key: kubernetes.io/arch, operator: In, values: [{archs}]}}\n                      - {{key: kubernetes.io/os, operator: In, values: [{oss}]}}\n"
            ),
        );
    }
    s
}

/// Validates `csv_text` with the multiarch suite, platforms read from the registry.
fn multiarch(w: &World, csv_text: &str) -> Vec<Finding> {
    let reg = client(&w.reg);
    let mut platforms = ImagePlatforms::new();
    let doc = olmctl::fbc::yaml::first_document(csv_text)
        .unwrap()
        .unwrap();
    for u in olmctl::checks::bundle::multiarch::images(&doc) {
        let r = parse_ref(&u.image).unwrap();
        let p = rt().block_on(olmctl::oci::platforms::platforms(&reg, &r));
        platforms.insert(u.image, p);
    }
    let mut o = Options {
        select: vec!["multiarch".into()],
        image_platforms: Some(Arc::new(platforms)),
        ..Default::default()
    };
    o.check_select().unwrap();
    let text = csv_text.to_string();
    run_with(move |_| text.clone(), &[], &o)
}

#[test]
fn platforms_are_read_from_indexes_and_single_images() {
    let w = world();
    let reg = client(&w.reg);
    let p = |t: &str| {
        rt().block_on(olmctl::oci::platforms::platforms(
            &reg,
            &parse_ref(t).unwrap(),
        ))
    };
    let pair = |o: &str, a: &str| (o.to_string(), a.to_string());
    assert_eq!(
        p(&w.multi).unwrap(),
        [pair("linux", "amd64"), pair("linux", "arm64")]
    );
    assert_eq!(p(&w.amd64).unwrap(), [pair("linux", "amd64")]);
    assert_eq!(
        p(&w.win).unwrap(),
        [pair("linux", "amd64"), pair("windows", "amd64")]
    );
    assert!(p(&w.missing).is_err());
}

#[test]
fn each_code_fails_and_passes() {
    let w = world();
    let both = ["arch.amd64", "arch.arm64"];
    let fit = Some(("amd64, arm64", "linux"));
    // Clean: a two-platform image everywhere, both labelled, the affinity matching.
    let clean = multiarch(&w, &csv(&w.multi, &w.multi, &both, fit));
    assert!(clean.is_empty(), "{clean:#?}");
    // Single-platform everything, no labels (amd64/linux assumed), affinity amd64: clean too.
    let f = multiarch(&w, &csv(&w.amd64, &w.amd64, &[], Some(("amd64", "linux"))));
    assert!(f.is_empty(), "{f:#?}");

    let cases: Vec<(&str, String, &str)> = vec![
        // The registry has no such image.
        (
            "ARC001",
            csv(&w.missing, &w.multi, &both, fit),
            "spec.install.spec.deployments[0].spec.template.spec.containers[0].image",
        ),
        // arm64 declared, the related image is amd64 only.
        (
            "ARC002",
            csv(&w.multi, &w.amd64, &both, fit),
            "spec.relatedImages[0].image",
        ),
        // The operator image has arm64, no label says so.
        (
            "ARC003",
            csv(&w.multi, &w.multi, &[], fit),
            "metadata.labels",
        ),
        // The operator image has windows, no os label.
        (
            "ARC004",
            csv(
                &w.win,
                &w.win,
                &["os.linux"],
                Some(("amd64", "linux, windows")),
            ),
            "metadata.labels",
        ),
        // The related image lacks arm64, which the operator image has.
        (
            "ARC005",
            csv(&w.multi, &w.amd64, &both, fit),
            "spec.relatedImages[0].image",
        ),
        // No node affinity.
        (
            "ARC006",
            csv(&w.multi, &w.multi, &both, None),
            "spec.install.spec.deployments[0].spec.template.spec.affinity",
        ),
        // The affinity leaves arm64 out.
        (
            "ARC007",
            csv(&w.multi, &w.multi, &both, Some(("amd64", "linux"))),
            "spec.install.spec.deployments[0].spec.template.spec.affinity",
        ),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (code, text, path) in &cases {
        let f = multiarch(&w, text);
        let hit = f.iter().find(|x| x.code == *code);
        let Some(hit) = hit else {
            panic!("{code}: not reported: {:?}", codes(&f));
        };
        assert_eq!(hit.path.as_deref(), Some(*path), "{code}: {hit:#?}");
        seen.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = olmctl::checks::bundle::multiarch::CODES
        .iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(seen, all);
    // Messages name the image and the platform.
    let f = multiarch(&w, &csv(&w.multi, &w.amd64, &both, fit));
    let e = f.iter().find(|x| x.code == "ARC002").unwrap();
    assert!(
        e.message.contains(&w.amd64) && e.message.contains("linux/arm64"),
        "{}",
        e.message
    );
}

#[test]
fn the_command_reads_the_registry_and_runs_only_when_named() {
    let w = world();
    let good = csv(
        &w.multi,
        &w.multi,
        &["arch.amd64", "arch.arm64"],
        Some(("amd64, arm64", "linux")),
    );
    let bad = csv(
        &w.multi,
        &w.amd64,
        &["arch.amd64", "arch.arm64"],
        Some(("amd64, arm64", "linux")),
    );
    let dir = common::write_tree(&[
        ("good/manifests/demo.clusterserviceversion.yaml", &good),
        ("good/manifests/widgets.crd.yaml", common::demo_bundle::CRD),
        (
            "good/metadata/annotations.yaml",
            common::demo_bundle::ANNOTATIONS,
        ),
        ("bad/manifests/demo.clusterserviceversion.yaml", &bad),
        ("bad/manifests/widgets.crd.yaml", common::demo_bundle::CRD),
        (
            "bad/metadata/annotations.yaml",
            common::demo_bundle::ANNOTATIONS,
        ),
    ]);
    let run = |sub: &str, args: &[&str]| {
        let o = std::process::Command::new(common::olmctl_bin())
            .args(["bundle", "validate"])
            .arg(dir.path().join(sub))
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let pushed = w.reg.requests().len();
    let (code, out) = run("good", &["--select", "multiarch"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        w.reg.requests()[pushed..]
            .iter()
            .any(|r| r.starts_with("GET /v2/op/manifests/multi")),
        "{:?}",
        &w.reg.requests()[pushed..]
    );
    let (code, out) = run("bad", &["--select-optional", "name=multiarch"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("ARC002") && out.contains("ARC005"), "{out}");
    // Not named: no registry request at all.
    let before = w.reg.requests().len();
    let (code, out) = run("bad", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("ARC"), "{out}");
    assert_eq!(w.reg.requests().len(), before, "the registry was asked");
}
