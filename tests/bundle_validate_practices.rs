//! `bundle validate`, suite good-practices (GP codes): for every code a mutation of the clean
//! demo bundle that triggers it, the cases upstream gets wrong, and the counts on the fixtures.

mod common;

use common::demo_bundle::{ANNOTATIONS, codes, run, same};

use olmctl::checks::bundle::practices::CODES;
use olmctl::diag::Severity;

const CHANNELS_KEY: &str = "annotations[\"operators.operatorframework.io.bundle.channels.v1\"]";
const DEFAULT_KEY: &str =
    "annotations[\"operators.operatorframework.io.bundle.channel.default.v1\"]";
const CONTAINER: &str = "spec.install.spec.deployments[0].spec.template.spec.containers[0]";

/// Adds `rule` (a flow mapping) as the only rule of a `section` permission.
fn with_rule(s: &str, section: &str, rule: &str) -> String {
    s.replace(
        "      deployments:\n",
        &format!(
            "      {section}:\n      - serviceAccountName: demo-operator\n        rules:\n        - {rule}\n      deployments:\n"
        ),
    )
}

fn gp_codes(f: &[olmctl::diag::Finding]) -> Vec<&'static str> {
    common::demo_bundle::codes_with(f, "GP")
}

/// Every code: (code, CSV edit, extra files, expected JSON path or "", expected line or 0).
#[test]
fn each_practices_code_fires_on_its_defect() {
    type Edit = fn(&str) -> String;
    type Case<'a> = (&'a str, Edit, Vec<(&'a str, &'a str)>, &'a str, u32);
    let alpha = ANNOTATIONS.replace("channels.v1: stable,fast", "channels.v1: stable,alpha");
    let preview = ANNOTATIONS.replace("default.v1: stable", "default.v1: preview");
    let cases: Vec<Case<'_>> = vec![
        (
            "GP001",
            |s| s.replace("{cpu: 10m, memory: 64Mi}", "{cpu: 10m}"),
            vec![],
            "spec.install.spec.deployments[0].spec.template.spec.containers[0].resources.requests",
            35,
        ),
        (
            "GP001",
            |s| {
                s.replace(
                    "              containers:\n",
                    "              initContainers:\n              - {name: init, image: 'quay.io/demo/op:1.2.0'}\n              containers:\n",
                )
            },
            vec![],
            "spec.install.spec.deployments[0].spec.template.spec.initContainers[0]",
            35,
        ),
        (
            "GP002",
            |s| s.replace(", description: A widget.}", "}"),
            vec![],
            "spec.customresourcedefinitions.owned[0].description",
            22,
        ),
        (
            "GP002",
            |s| {
                s.replace(
                    "  webhookdefinitions:\n",
                    "    required:\n    - {name: gadgets.other.io, version: v1, kind: Gadget, description: ' '}\n  webhookdefinitions:\n",
                )
            },
            vec![],
            "spec.customresourcedefinitions.required[0].description",
            24,
        ),
        (
            "GP003",
            same,
            vec![("metadata/annotations.yaml", &alpha)],
            CHANNELS_KEY,
            6,
        ),
        (
            "GP003",
            same,
            vec![("metadata/annotations.yaml", &preview)],
            DEFAULT_KEY,
            7,
        ),
        (
            "GP004",
            |s| {
                with_rule(
                    s,
                    "clusterPermissions",
                    "{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [get, create]}",
                )
            },
            vec![],
            "spec.install.spec.clusterPermissions[0].rules[0]",
            31,
        ),
        (
            "GP004",
            |s| {
                with_rule(
                    s,
                    "permissions",
                    "{apiGroups: ['*'], resources: ['*'], verbs: ['*']}",
                )
            },
            vec![],
            "spec.install.spec.permissions[0].rules[0]",
            31,
        ),
        (
            "GP005",
            |s| s.replace("name: demo.v1.2.0", "name: demo.v1.2.0.1"),
            vec![],
            "metadata.name",
            4,
        ),
        (
            "GP006",
            |s| s.replace("name: demo.v1.2.0", "name: demo-1.2.0"),
            vec![],
            "metadata.name",
            4,
        ),
        (
            "GP006",
            |s| s.replace("name: demo.v1.2.0", "name: demo.vault-1.2.0"),
            vec![],
            "metadata.name",
            4,
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (code, edit, extra, path, line) in &cases {
        let f = run(edit, extra);
        common::demo_bundle::assert_selections(code, &f, &|o| {
            common::demo_bundle::run_with(edit, extra, o)
        });
        let hits: Vec<_> = f.iter().filter(|x| x.code == *code).collect();
        assert_eq!(hits.len(), 1, "{code}: expected one finding; got {f:#?}");
        let hit = hits[0];
        assert_eq!(hit.severity, Severity::Warning, "{code}");
        common::demo_bundle::assert_at(hit, code, path, *line);
        assert!(hit.help.is_some(), "{code}: no help");
        assert_eq!(gp_codes(&f), [*code], "{code}: other GP codes fired");
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = CODES.iter().map(|c| c.code).collect();
    assert_eq!(covered, all, "every good-practices code has a failing case");
}

#[test]
fn resource_requests_name_what_is_missing() {
    let f = run(
        |s| s.replace("{cpu: 10m, memory: 64Mi}", "{memory: 64Mi}"),
        &[],
    );
    let hit = f.iter().find(|x| x.code == "GP001").expect("GP001");
    assert!(hit.message.contains("requests no cpu"), "{}", hit.message);
    assert!(!hit.message.contains("memory"), "{}", hit.message);
    // No resources at all: both named, pointing at the container.
    let f = run(
        |s| s.replace(", resources: {requests: {cpu: 10m, memory: 64Mi}}", ""),
        &[],
    );
    let hit = f.iter().find(|x| x.code == "GP001").expect("GP001");
    assert!(
        hit.message.contains("no cpu and no memory"),
        "{}",
        hit.message
    );
    assert_eq!(hit.path.as_deref(), Some(CONTAINER));
}

#[test]
fn limits_count_as_requests() {
    // Kubernetes defaults a missing request to the limit.
    let f = run(
        |s| {
            s.replace(
                "{requests: {cpu: 10m, memory: 64Mi}}",
                "{limits: {cpu: 1, memory: 64Mi}}",
            )
        },
        &[],
    );
    assert!(gp_codes(&f).is_empty(), "{f:#?}");
}

#[test]
fn narrow_or_read_only_crd_rules_are_fine() {
    for rule in [
        "{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [get, list, watch]}",
        "{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], resourceNames: [widgets.demo.io], verbs: [get, patch]}",
        "{apiGroups: [''], resources: ['*'], verbs: ['*']}",
    ] {
        let f = run(|s| with_rule(s, "permissions", rule), &[]);
        assert!(gp_codes(&f).is_empty(), "{rule}: {f:#?}");
    }
}

#[test]
fn csv_name_conventions() {
    // Fine: a dotted operator name; release naming with spec.release; a pre-release version.
    for (name, extra) in [
        ("my.vault.v1.2.0", ""),
        ("demo-v1.2.0-2", "  release: '2'\n"),
        ("demo.v1.2.0-rc.1", ""),
    ] {
        let f = run(
            |s| {
                s.replace("name: demo.v1.2.0", &format!("name: {name}"))
                    .replace("  version: 1.2.0\n", &format!("  version: 1.2.0\n{extra}"))
            },
            &[],
        );
        assert!(gp_codes(&f).is_empty(), "{name}: {f:#?}");
        assert!(!codes(&f).contains(&"BND011"), "{name}: {f:#?}");
    }
    // A name without spec.version is CSV018's, not reported twice.
    let f = run(|s| s.replace("name: demo.v1.2.0", "name: demo.latest"), &[]);
    assert_eq!(codes(&f), ["CSV018"], "{f:#?}");
}

#[test]
fn default_channel_already_listed_is_reported_once() {
    let a = ANNOTATIONS
        .replace("channels.v1: stable,fast", "channels.v1: alpha")
        .replace("default.v1: stable", "default.v1: alpha");
    let f = run(same, &[("metadata/annotations.yaml", &a)]);
    let hits: Vec<_> = f.iter().filter(|x| x.code == "GP003").collect();
    assert_eq!(hits.len(), 1, "{f:#?}");
    assert!(
        hits[0].message.contains("[\"alpha\"]"),
        "{}",
        hits[0].message
    );
}

/// The community bundles: good practices are warnings only, never errors. Warning counts (for
/// the record): GP001 73 (64 containers without any request, mostly `manager` and operator
/// containers of older or helm-based operators and kube-rbac-proxy sidecars; 9 requesting
/// memory but not cpu, which upstream misses), GP002 185 (owned CRDs without description),
/// GP003 199 (alpha, rolling, beta, latest... channels), GP004 97 (73 rules on
/// apiextensions.k8s.io, 24 on every group; 4 rules limited by resourceNames are not counted).
#[test]
fn practices_on_fixture_bundles() {
    let mut warnings = std::collections::BTreeMap::new();
    for (_, d) in common::fixture_bundle_dirs() {
        let b = olmctl::bundle::load::load_bundle(&d).expect("loads");
        for f in olmctl::checks::bundle::validate(&b) {
            if f.code.starts_with("GP") {
                assert_eq!(f.severity, Severity::Warning, "{f:#?}");
                *warnings.entry(f.code).or_insert(0) += 1;
            }
        }
    }
    let want: std::collections::BTreeMap<&str, i32> =
        [("GP001", 73), ("GP002", 185), ("GP003", 199), ("GP004", 97)].into();
    assert_eq!(warnings, want);
}
