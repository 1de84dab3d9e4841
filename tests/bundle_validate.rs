//! `bundle validate`: one clean bundle, and for every code a mutation of it that triggers it.

mod common;

use common::demo_bundle::{ANNOTATIONS, CRD, CSV, codes, run, same};

#[test]
fn the_base_bundle_is_clean() {
    let f = run(same, &[]);
    assert!(f.is_empty(), "{f:#?}");
}

/// Every code: (code, CSV edit, extra files, expected JSON path or "", expected line or 0).
#[test]
fn each_code_fires_on_its_defect() {
    type Edit = fn(&str) -> String;
    type Case<'a> = (&'a str, Edit, Vec<(&'a str, &'a str)>, &'a str, u32);
    let other_default = ANNOTATIONS.replace("default.v1: stable", "default.v1: beta");
    let gadget_crd = CRD
        .replace("widgets", "gadgets")
        .replace("Widget", "Gadget");
    let two_docs = format!("{CRD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n");
    let cases: Vec<Case<'_>> = vec![
        (
            "BND001",
            same,
            vec![("manifests/broken.yaml", "a: [\n")],
            "",
            2,
        ),
        (
            "BND002",
            same,
            vec![("manifests/.hidden.yaml", "kind: Secret\n")],
            "",
            0,
        ),
        (
            "BND002",
            same,
            vec![("manifests/sub/x.yaml", "kind: Secret\n")],
            "",
            0,
        ),
        (
            "BND003",
            same,
            vec![(
                "manifests/d.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
            )],
            "kind",
            2,
        ),
        (
            "BND004",
            same,
            vec![("manifests/zz.clusterserviceversion.yaml", CSV)],
            "",
            1,
        ),
        (
            "BND004",
            same,
            vec![(
                "manifests/demo.clusterserviceversion.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            )],
            "",
            0,
        ),
        (
            "BND005",
            same,
            vec![(
                "metadata/annotations.yaml",
                "annotations:\n  operators.operatorframework.io.bundle.package.v1: demo\n",
            )],
            "annotations[\"operators.operatorframework.io.bundle.mediatype.v1\"]",
            2,
        ),
        (
            "BND005",
            same,
            vec![("metadata/annotations.yaml", "other: 1\n")],
            "",
            0,
        ),
        (
            "BND006",
            same,
            vec![("metadata/annotations.yaml", &other_default)],
            "annotations[\"operators.operatorframework.io.bundle.channel.default.v1\"]",
            7,
        ),
        (
            "BND007",
            |s| s.replace("version: v1, kind: Widget", "version: v2, kind: Widget"),
            vec![],
            "spec.customresourcedefinitions.owned[0]",
            22,
        ),
        (
            "BND008",
            same,
            vec![("manifests/gadgets.crd.yaml", &gadget_crd)],
            "",
            10,
        ),
        (
            "BND009",
            same,
            vec![("manifests/widgets2.crd.yaml", CRD)],
            "",
            10,
        ),
        (
            "BND010",
            same,
            vec![(
                "manifests/sa.yaml",
                "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: demo-operator}\n",
            )],
            "metadata.name",
            1,
        ),
        (
            "BND011",
            |s| s.replace("  version: 1.2.0\n", "  version: 1.2.0\n  release: '2'\n"),
            vec![],
            "metadata.name",
            4,
        ),
        (
            "BND012",
            |s| {
                s.replace(
                    "  - {name: manager, image: 'quay.io/demo/op:1.2.0'}\n",
                    "  - {name: manager, image: 'quay.io/Demo/op:1'}\n",
                )
            },
            vec![],
            "spec.relatedImages[0].image",
            37,
        ),
        (
            "BND013",
            same,
            vec![("manifests/widgets.crd.yaml", &two_docs)],
            "",
            12,
        ),
        (
            "BND014",
            same,
            vec![(
                "manifests/role.yaml",
                "kind: ClusterRole\nmetadata: {name: r}\n",
            )],
            "",
            1,
        ),
        (
            "CSV001",
            |s| s.replace("name: demo.v1.2.0", "name: Demo_v1.2.0"),
            vec![],
            "metadata.name",
            4,
        ),
        (
            "CSV001",
            |s| s.replace("replaces: demo.v1.1.0", "replaces: demo..v1"),
            vec![],
            "spec.replaces",
            14,
        ),
        (
            "CSV002",
            |s| s.replace("    alm-examples:", "    x-examples:"),
            vec![],
            "metadata.annotations[\"alm-examples\"]",
            1,
        ),
        (
            "CSV003",
            |s| s.replace("'[{\"apiVersion\"", "'[{apiVersion\""),
            vec![],
            "metadata.annotations[\"alm-examples\"]",
            6,
        ),
        (
            "CSV004",
            |s| s.replace("\"Widget\", \"metadata\"", "\"Gizmo\", \"metadata\""),
            vec![],
            "metadata.annotations[\"alm-examples\"]",
            6,
        ),
        (
            "CSV005",
            |s| {
                s.replace("'[{\"apiVersion\": \"demo.io/v1\", \"kind\": \"Widget\", \"metadata\": {\"name\": \"w\"}}]'", "'[]'")
            },
            vec![],
            "metadata.annotations[\"alm-examples\"]",
            6,
        ),
        (
            "CSV006",
            |s| {
                s.replace(
                    "  - {type: MultiNamespace, supported: false}\n",
                    "  - {type: OwnNamespace, supported: false}\n",
                )
            },
            vec![],
            "spec.installModes[2].type",
            18,
        ),
        (
            "CSV006",
            |s| s.replace("supported: true", "supported: false"),
            vec![],
            "spec.installModes",
            16,
        ),
        (
            "CSV007",
            |s| {
                s.replace(
                    "sideEffects: None}",
                    "sideEffects: None, conversionCRDs: [widgets.demo.io]}",
                )
            },
            vec![],
            "spec.installModes",
            16,
        ),
        (
            "CSV008",
            |s| s.replace("  minKubeVersion: 1.25.0\n", ""),
            vec![],
            "spec.minKubeVersion",
            1,
        ),
        (
            "CSV009",
            |s| s.replace("minKubeVersion: 1.25.0", "minKubeVersion: v1.25"),
            vec![],
            "spec.minKubeVersion",
            13,
        ),
        (
            "CSV010",
            |s| s.replace("  displayName: Demo\n", ""),
            vec![],
            "spec.displayName",
            1,
        ),
        (
            "CSV011",
            |s| s.replace("olm.skipRange:", "olm.skiprange:"),
            vec![],
            "metadata.annotations[\"olm.skiprange\"]",
            7,
        ),
        (
            "CSV012",
            |s| {
                s.replace(
                    "    olm.skipRange",
                    "    olm.properties: '[]'\n    olm.skipRange",
                )
            },
            vec![],
            "metadata.annotations[\"olm.properties\"]",
            7,
        ),
        (
            "CSV013",
            |s| s.replace("  version: 1.2.0\n", "  version: 1.2\n"),
            vec![],
            "spec.version",
            11,
        ),
        (
            "CSV014",
            |s| s.replace("strategy: deployment", "strategy: helm"),
            vec![],
            "spec.install.strategy",
            26,
        ),
        (
            "CSV015",
            |s| s.replace("{name: widgets.demo.io, version", "{name: widgets, version"),
            vec![],
            "spec.customresourcedefinitions.owned[0].name",
            22,
        ),
        (
            "CSV016",
            |s| {
                s.replace(
                    "deploymentName: demo-operator",
                    "deploymentName: demo-webhook",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].deploymentName",
            24,
        ),
        (
            "CSV017",
            |s| s.replace(">=1.0.0 <1.2.0", "<v1.2.0"),
            vec![],
            "metadata.annotations[\"olm.skipRange\"]",
            7,
        ),
        (
            "CSV018",
            |s| s.replace("name: demo.v1.2.0", "name: demo.latest"),
            vec![],
            "spec.version",
            11,
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (code, edit, extra, path, line) in &cases {
        let f = run(edit, extra);
        let hit = f
            .iter()
            .find(|x| x.code == *code && (path.is_empty() || x.path.as_deref() == Some(*path)))
            .or_else(|| f.iter().find(|x| x.code == *code));
        let Some(hit) = hit else {
            panic!("{code}: not reported; got {:?}", codes(&f));
        };
        common::demo_bundle::assert_at(hit, code, path, *line);
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = olmctl::checks::bundle::codes::CODES
        .iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(covered, all, "every bundle code has a failing case");
}

#[test]
fn fixture_bundles_validate_without_panicking() {
    let mut errors = std::collections::BTreeMap::new();
    let dirs = common::fixture_bundle_dirs();
    assert!(dirs.len() >= 300, "{}", dirs.len());
    for (_, d) in &dirs {
        let b = olmctl::bundle::load::load_bundle(d).expect("loads");
        for f in olmctl::checks::bundle::validate(&b) {
            if f.severity == olmctl::diag::Severity::Error {
                *errors.entry(f.code).or_insert(0) += 1;
            }
        }
    }
    // The error-level findings on the community bundles are real defects (see the README):
    // ClusterRoles without apiVersion (BND014), `v`-prefixed skipRanges OLM cannot parse
    // (CSV017), a ServiceAccount manifest shadowing the CSV's (BND010).
    let codes: Vec<&str> = errors.keys().copied().collect();
    assert_eq!(codes, ["BND010", "BND014", "CSV017"], "{errors:?}");
}

#[test]
fn select_runs_suites_and_codes() {
    use olmctl::checks::bundle::Options;
    let opts = |s: &[&str]| Options {
        select: s.iter().map(|x| x.to_string()).collect(),
        ..Options::default()
    };
    // Two defects of different suites: CSV008 (csv) and GP003 (good-practices).
    let edit = |s: &str| s.replace("  minKubeVersion: 1.25.0\n", "");
    let chans = ANNOTATIONS.replace("stable,fast", "stable,fast,alpha");
    let extra = [("metadata/annotations.yaml", chans.as_str())];
    let all = common::demo_bundle::run_with(edit, &extra, &opts(&[]));
    assert!(
        codes(&all).contains(&"CSV008") && codes(&all).contains(&"GP003"),
        "{all:?}"
    );
    for sel in [&["all"][..], &["ALL"]] {
        assert_eq!(
            common::demo_bundle::run_with(edit, &extra, &opts(sel)).len(),
            all.len()
        );
    }
    assert_eq!(
        codes(&common::demo_bundle::run_with(
            edit,
            &extra,
            &opts(&["csv"])
        )),
        ["CSV008"]
    );
    assert_eq!(
        codes(&common::demo_bundle::run_with(
            edit,
            &extra,
            &opts(&["gp003"])
        )),
        ["GP003"]
    );
    assert!(common::demo_bundle::run_with(edit, &extra, &opts(&["crd", "olm"])).is_empty());
    assert!(opts(&["bogus"]).check_select().is_err());
    assert!(
        opts(&["good-practices", "CSV008", "all"])
            .check_select()
            .is_ok()
    );
    // Every suite has codes, and every code belongs to exactly one suite.
    for c in olmctl::checks::bundle::codes() {
        let n = olmctl::checks::bundle::SUITES
            .iter()
            .filter(|(name, _, _)| *name != "all" && opts(&[name]).selects(c.code))
            .count();
        assert_eq!(n, 1, "{}", c.code);
    }
}
