//! `bundle validate`: one clean bundle, and for every code a mutation of it that triggers it.

mod common;

use common::demo_bundle::{ANNOTATIONS, CRD, CSV, codes, run, same};
use olmctl::checks::bundle::{Options, validate_with};

#[test]
fn the_base_bundle_is_clean() {
    let f = run(same, &[]);
    assert!(f.is_empty(), "{f:#?}");
}

type Edit = fn(&str) -> String;
/// (code, CSV edit, extra files, expected JSON path or "", expected line or 0).
/// A case as written, borrowing its files.
type RawCase<'a> = (
    &'static str,
    Edit,
    Vec<(&'static str, &'a str)>,
    &'static str,
    u32,
);
type Case = (
    &'static str,
    Edit,
    Vec<(&'static str, String)>,
    &'static str,
    u32,
);

/// Every code of the bundle and CSV suites with a mutation of the demo bundle that triggers it.
fn cases() -> Vec<Case> {
    let other_default = ANNOTATIONS.replace("default.v1: stable", "default.v1: beta");
    let gadget_crd = CRD
        .replace("widgets", "gadgets")
        .replace("Widget", "Gadget");
    let two_docs = format!("{CRD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n");
    let cases: Vec<RawCase<'_>> = vec![
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
    cases
        .into_iter()
        .map(|(c, e, x, p, l)| {
            let x = x.into_iter().map(|(f, t)| (f, t.to_string())).collect();
            (c, e, x, p, l)
        })
        .collect()
}

fn extra(c: &Case) -> Vec<(&str, &str)> {
    c.2.iter().map(|(f, t)| (*f, t.as_str())).collect()
}

#[test]
fn each_code_fires_on_its_defect() {
    let mut covered = std::collections::BTreeSet::new();
    for case in &cases() {
        let (code, edit, _, path, line) = case;
        let f = run(edit, &extra(case));
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

#[test]
fn every_code_fires_under_every_selection_naming_it_or_its_suite() {
    let mut swept = std::collections::BTreeSet::new();
    for case in &cases() {
        let (_, edit, ..) = case;
        let files = extra(case);
        let all = run(edit, &files);
        if all.iter().all(|f| swept.contains(f.code)) {
            continue;
        }
        swept.extend(all.iter().map(|f| f.code));
        common::demo_bundle::assert_selections(case.0, &all, &|o| {
            common::demo_bundle::run_with(edit, &files, o)
        });
    }
    // Real bundles reach the other suites (CRD, API, HUB, GP, OLM).
    for (name, d) in common::fixture_bundle_dirs() {
        let b = olmctl::bundle::load::load_bundle(&d).expect("loads");
        let all = validate_with(&b, &Options::default());
        if all.iter().all(|f| swept.contains(f.code)) {
            continue;
        }
        swept.extend(all.iter().map(|f| f.code));
        common::demo_bundle::assert_selections(&name, &all, &|o| validate_with(&b, o));
    }
    // Every BND and CSV code; the other suites' files sweep theirs case by case.
    for c in olmctl::checks::bundle::codes::CODES {
        assert!(swept.contains(c.code), "{} not swept", c.code);
    }
}

/// operator-framework/api decodes an empty `alm-examples` as an empty list: every provided API
/// lacks an example.
#[test]
fn an_empty_alm_examples_warns_for_every_provided_api() {
    let f = run(
        |s| {
            s.replace(
                r#"'[{"apiVersion": "demo.io/v1", "kind": "Widget", "metadata": {"name": "w"}}]'"#,
                "''",
            )
        },
        &[],
    );
    assert_eq!(codes(&f), ["CSV005"], "{f:#?}");
    assert_eq!(
        f[0].message,
        "provided API should have an example annotation: demo.io/v1, Kind=Widget"
    );
}

/// Go decodes the CSV into typed fields (sigs.k8s.io/yaml with the target type): a YAML number
/// or boolean in a string field is read as its text, `1.21` as "1.21", `true` as "true".
#[test]
fn yaml_scalars_of_other_types_fill_string_fields_as_go_reads_them() {
    for (written, read) in [
        ("1.21", "1.21"),
        ("1", "1"),
        ("1.20", "1.2"),
        ("true", "true"),
    ] {
        let f = run(
            |s| {
                s.replace(
                    "minKubeVersion: 1.25.0",
                    &format!("minKubeVersion: {written}"),
                )
            },
            &[],
        );
        let hit = f.iter().find(|x| x.code == "CSV009");
        assert!(hit.is_some(), "{written}: {:?}", codes(&f));
        assert!(
            hit.unwrap()
                .message
                .contains(&format!("invalid value: {read} ")),
            "{written}: {}",
            hit.unwrap().message
        );
        assert!(!codes(&f).contains(&"CSV008"), "{written}: read as unset");
    }
    // An annotation (map[string]string) the same way: capabilities 5 is "5".
    let f = run(
        |s| s.replace("capabilities: Basic Install", "capabilities: 5"),
        &[],
    );
    assert_eq!(codes(&f), ["HUB011"], "{f:#?}");
    assert!(f[0].message.contains("\"5\""), "{}", f[0].message);
    // Numbers where Go has numbers stay numbers: `supported: true` is a bool, and the
    // Deployment spec is typed (replicas: 1).
    let f = run(
        |s| {
            s.replace(
                "        spec:\n          template:",
                "        spec:\n          replicas: 1\n          template:",
            )
        },
        &[],
    );
    assert!(f.is_empty(), "{f:#?}");
}

/// metadata/annotations.yaml is a `map[string]string` to Go: a channel written `1` is "1".
#[test]
fn annotation_values_of_other_yaml_types_are_their_text() {
    let ann = ANNOTATIONS
        .replace("channels.v1: stable,fast", "channels.v1: 1")
        .replace("channel.default.v1: stable", "channel.default.v1: 1");
    let f = run(same, &[("metadata/annotations.yaml", &ann)]);
    assert_eq!(codes(&f), ["GP003"], "{f:#?}");
    assert!(f[0].message.contains("\"1\""), "{}", f[0].message);
}
