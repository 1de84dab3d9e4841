//! `bundle validate`, suite `deprecated-apis` (API codes): removed Kubernetes APIs in bundle
//! manifests, CSV resources and examples, and RBAC rules on resources gone from their group.

mod common;

use std::collections::BTreeMap;

use common::demo_bundle::{CRD, codes, run, run_with, same};
use olmctl::checks::bundle::Options;
use olmctl::checks::bundle::apis::{CODES, REMOVED_APIS, parse_kube_version, removed};
use olmctl::diag::{Finding, Severity};

const V1BETA1_ROLE: &str = "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata:\n  name: x\nrules: []\n";

fn with_resource(s: &str) -> String {
    s.replace(
        "description: A widget.}",
        "description: A widget., resources: [{kind: CronJob, name: c, version: batch/v1beta1}]}",
    )
}

fn with_example(s: &str) -> String {
    s.replace(
        r#""metadata": {"name": "w"}}]"#,
        r#""metadata": {"name": "w"}}, {"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "c"}}]"#,
    )
}

/// Adds a `permissions` block with `rule` (flow style) to the install strategy.
fn with_rule(s: &str, rule: &str) -> String {
    s.replace(
        "  relatedImages:\n",
        &format!(
            "      permissions:\n      - serviceAccountName: demo-operator\n        rules:\n        - {rule}\n  relatedImages:\n"
        ),
    )
}

fn psp_rule(s: &str) -> String {
    with_rule(
        s,
        "{apiGroups: [policy], resources: [podsecuritypolicies], verbs: [use]}",
    )
}

fn review_v2(s: &str) -> String {
    s.replace(
        "admissionReviewVersions: [v1]",
        "admissionReviewVersions: [v2]",
    )
}

fn no_min_kube(s: &str) -> String {
    s.replace("  minKubeVersion: 1.25.0\n", "")
}

fn one<'a>(f: &'a [Finding], code: &str) -> &'a Finding {
    let hits: Vec<&Finding> = f.iter().filter(|x| x.code == code).collect();
    assert_eq!(hits.len(), 1, "expected one {code}: {f:#?}");
    hits[0]
}

/// Every code: (code, CSV edit, extra files, expected JSON path, expected line).
#[test]
fn each_code_fires_on_its_defect() {
    type Edit = fn(&str) -> String;
    type Case<'a> = (&'a str, Edit, Vec<(&'a str, &'a str)>, &'a str, u32);
    let v1beta1_crd = CRD.replace(
        "apiextensions.k8s.io/v1\n",
        "apiextensions.k8s.io/v1beta1\n",
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "API001",
            same,
            vec![("manifests/role.yaml", V1BETA1_ROLE)],
            "apiVersion",
            1,
        ),
        (
            "API001",
            same,
            vec![("manifests/widgets.crd.yaml", &v1beta1_crd)],
            "apiVersion",
            1,
        ),
        (
            "API002",
            with_resource,
            vec![],
            "spec.customresourcedefinitions.owned[0].resources[0].version",
            22,
        ),
        (
            "API003",
            with_example,
            vec![],
            "metadata.annotations[\"alm-examples\"][1].apiVersion",
            6,
        ),
        (
            "API004",
            psp_rule,
            vec![],
            "spec.install.spec.permissions[0].rules[0].resources[0]",
            39,
        ),
        (
            "API005",
            review_v2,
            vec![],
            "spec.webhookdefinitions[0].admissionReviewVersions",
            24,
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (code, edit, extra, path, line) in &cases {
        let f = run(edit, extra);
        common::demo_bundle::assert_selections(code, &f, &|o| {
            common::demo_bundle::run_with(edit, extra, o)
        });
        let Some(hit) = f.iter().find(|x| x.code == *code) else {
            panic!("{code}: not reported; got {:?}", codes(&f));
        };
        common::demo_bundle::assert_at(hit, code, path, *line);
        assert!(hit.help.is_some(), "{code}: {hit:#?}");
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = CODES.iter().map(|c| c.code).collect();
    assert_eq!(covered, all, "every API code has a failing case");
}

#[test]
fn the_demo_bundle_has_no_api_findings() {
    let f = run(same, &[]);
    assert!(f.iter().all(|x| !x.code.starts_with("API")), "{f:#?}");
}

#[test]
fn message_names_object_api_removal_and_replacement() {
    let f = run(same, &[("manifests/role.yaml", V1BETA1_ROLE)]);
    let h = one(&f, "API001");
    assert_eq!(
        h.message,
        "ClusterRole \"x\" uses rbac.authorization.k8s.io/v1beta1, removed in Kubernetes 1.22; use rbac.authorization.k8s.io/v1"
    );
    assert!(
        h.location
            .as_ref()
            .is_some_and(|l| l.file.ends_with("manifests/role.yaml") && l.column > 0)
    );
    let f = run(with_resource, &[]);
    assert!(
        one(&f, "API002")
            .message
            .contains("CronJob of \"widgets.demo.io\"")
    );
    assert!(one(&f, "API002").message.contains("use batch/v1"));
    let f = run(
        |s| {
            s.replace(
                "  webhookdefinitions:\n",
                "  apiservicedefinitions:\n    required:\n    - {name: v1.m.demo.io, group: m.demo.io, version: v1, kind: M, resources: [{kind: PodDisruptionBudget, name: p, version: policy/v1beta1}]}\n  webhookdefinitions:\n",
            )
        },
        &[],
    );
    assert_eq!(
        one(&f, "API002").path.as_deref(),
        Some("spec.apiservicedefinitions.required[0].resources[0].version")
    );
    let f = run(with_example, &[]);
    assert!(
        one(&f, "API003")
            .message
            .starts_with("alm-examples item 1, CronJob \"c\", uses batch/v1beta1")
    );
}

#[test]
fn one_finding_per_object() {
    let other = V1BETA1_ROLE.replace("name: x", "name: y");
    let pdb =
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {}\n";
    let f = run(
        same,
        &[
            ("manifests/role.yaml", V1BETA1_ROLE),
            ("manifests/role2.yaml", &other),
            ("manifests/pdb.yaml", pdb),
        ],
    );
    let msgs: Vec<&str> = f
        .iter()
        .filter(|x| x.code == "API001")
        .map(|x| x.message.as_str())
        .collect();
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert!(msgs.iter().any(|m| m.contains("PodDisruptionBudget \"p\"")
        && m.contains("removed in Kubernetes 1.25; use policy/v1")));
}

#[test]
fn severity_follows_the_target_version() {
    let files = [("manifests/role.yaml", V1BETA1_ROLE)];
    let sev = |edit: fn(&str) -> String, k8s: Option<&str>| {
        let opts = Options {
            k8s_version: k8s.map(|v| parse_kube_version(v).expect("parses")),
            ..Options::default()
        };
        one(&run_with(edit, &files, &opts), "API001").severity
    };
    // Demo: minKubeVersion 1.25.0 >= 1.22: the API does not exist where the bundle runs.
    assert_eq!(sev(same, None), Severity::Error);
    // No target at all: a warning.
    assert_eq!(sev(no_min_kube, None), Severity::Warning);
    // --k8s-version at or after the removal: an error; before it: a warning.
    assert_eq!(sev(no_min_kube, Some("1.22")), Severity::Error);
    assert_eq!(sev(no_min_kube, Some("v1.22.0")), Severity::Error);
    assert_eq!(sev(no_min_kube, Some("1.21.9")), Severity::Warning);
    // --k8s-version wins over minKubeVersion.
    assert_eq!(sev(same, Some("1.21")), Severity::Warning);
    // minKubeVersion read tolerantly.
    assert_eq!(
        sev(
            |s| s.replace("1.25.0\n  replaces", "v1.22\n  replaces"),
            None
        ),
        Severity::Error
    );
    assert_eq!(
        sev(
            |s| s.replace("1.25.0\n  replaces", "1.21.0\n  replaces"),
            None
        ),
        Severity::Warning
    );
    // An unreadable minKubeVersion gives no target (CSV009 reports it).
    assert_eq!(
        sev(
            |s| s.replace("1.25.0\n  replaces", "latest\n  replaces"),
            None
        ),
        Severity::Warning
    );
    // The other codes switch the same way.
    let opts = Options {
        k8s_version: Some(semver::Version::new(1, 25, 0)),
        ..Options::default()
    };
    for (code, edit) in [
        ("API002", with_resource as fn(&str) -> String),
        ("API003", with_example),
    ] {
        let f = run(|s| no_min_kube(&edit(s)), &[]);
        assert_eq!(one(&f, code).severity, Severity::Warning, "{code}");
        let f = run_with(|s| no_min_kube(&edit(s)), &[], &opts);
        assert_eq!(one(&f, code).severity, Severity::Error, "{code}");
    }
}

#[test]
fn rbac_warns_only_on_resources_gone_from_their_group() {
    // Always a warning: rules carry no version.
    let opts = Options {
        k8s_version: Some(semver::Version::new(1, 30, 0)),
        ..Options::default()
    };
    let f = run_with(psp_rule, &[], &opts);
    let h = one(&f, "API004");
    assert_eq!(h.severity, Severity::Warning);
    assert!(
        h.message
            .contains("policy podsecuritypolicies, removed in Kubernetes 1.25"),
        "{h:#?}"
    );
    // Upstream's old false positives: these resources still exist under newer versions.
    for rule in [
        "{apiGroups: [batch], resources: [cronjobs], verbs: [get]}",
        "{apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [get]}",
        "{apiGroups: [autoscaling], resources: [horizontalpodautoscalers], verbs: [get]}",
        "{apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get]}",
        "{apiGroups: [events.k8s.io], resources: [events], verbs: [get]}",
        "{apiGroups: [node.k8s.io], resources: [runtimeclasses], verbs: [get]}",
        "{apiGroups: [''], resources: [podsecuritypolicies], verbs: [get]}",
    ] {
        let f = run(|s| with_rule(s, rule), &[]);
        assert!(f.iter().all(|x| x.code != "API004"), "{rule}: {f:#?}");
    }
    // clusterPermissions too, and the `use` subresource form.
    let f = run(
        |s| {
            s.replace(
                "  relatedImages:\n",
                "      clusterPermissions:\n      - serviceAccountName: demo-operator\n        rules:\n        - {apiGroups: [extensions, policy], resources: [pods, podsecuritypolicies/use], verbs: [use]}\n  relatedImages:\n",
            )
        },
        &[],
    );
    assert_eq!(
        one(&f, "API004").path.as_deref(),
        Some("spec.install.spec.clusterPermissions[0].rules[0].resources[1]")
    );
}

#[test]
fn bare_resource_versions_and_current_apis_are_not_matched() {
    // `version: v1beta1` names no group: nothing can be proven.
    let f = run(
        |s| {
            s.replace(
                "description: A widget.}",
                "description: A widget., resources: [{kind: CronJob, name: c, version: v1beta1}, {kind: CronJob, name: d, version: batch/v1}]}",
            )
        },
        &[],
    );
    assert!(f.iter().all(|x| x.code != "API002"), "{f:#?}");
    let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {}\n";
    let f = run(same, &[("manifests/pdb.yaml", pdb)]);
    assert!(f.iter().all(|x| x.code != "API001"), "{f:#?}");
}

#[test]
fn bad_input_does_not_panic() {
    for text in [
        "apiVersion: [1]\nkind: ClusterRole\n",
        "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: {a: 1}\n",
        "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole\nmetadata: 3\n",
        "- 1\n- 2\n",
    ] {
        let _ = run(same, &[("manifests/odd.yaml", text)]);
    }
    for edit in [
        |s: &str| s.replace("[{\"apiVersion\"", "[3, {\"apiVersion\""),
        |s: &str| s.replace("alm-examples: '[", "alm-examples: '{\"a\": ["),
        |s: &str| with_rule(s, "{apiGroups: policy, resources: 7}"),
        |s: &str| s.replace("minKubeVersion: 1.25.0", "minKubeVersion: [1]"),
    ] {
        let _ = run(edit, &[]);
    }
}

/// The table covers every removal release from 1.16 to 1.32 and answers exact GVKs only.
#[test]
fn removal_table() {
    let releases: std::collections::BTreeSet<(u64, u64)> =
        REMOVED_APIS.iter().map(|r| r.removed_in).collect();
    assert_eq!(
        releases.into_iter().collect::<Vec<_>>(),
        [
            (1, 16),
            (1, 22),
            (1, 25),
            (1, 26),
            (1, 27),
            (1, 29),
            (1, 32)
        ]
    );
    let r = removed("extensions/v1beta1", "Ingress").expect("row");
    assert_eq!(
        (r.removed_in, r.replacement),
        ((1, 22), "networking.k8s.io/v1")
    );
    let r = removed("apps/v1beta2", "Deployment").expect("row");
    assert_eq!((r.removed_in, r.replacement), ((1, 16), "apps/v1"));
    assert_eq!(
        removed("storage.k8s.io/v1beta1", "CSIStorageCapacity").map(|r| r.removed_in),
        Some((1, 27))
    );
    assert_eq!(
        removed("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema").map(|r| r.removed_in),
        Some((1, 32))
    );
    assert!(removed("policy/v1beta1", "PodSecurityPolicy").is_some());
    assert!(removed("policy/v1", "PodDisruptionBudget").is_none());
    assert!(removed("batch/v1beta1", "Job").is_none());
    assert!(removed("demo.io/v1beta1", "CronJob").is_none());
    // Every row: a group/version with a version, kinds, and a replacement.
    for r in REMOVED_APIS {
        assert!(r.group_version.contains('/'), "{r:?}");
        assert!(!r.kinds.is_empty() && !r.replacement.is_empty(), "{r:?}");
    }
}

#[test]
fn kube_versions_parse_tolerantly() {
    let v = |s| parse_kube_version(s).map(|v| v.to_string());
    assert_eq!(v("1.22").as_deref(), Some("1.22.0"));
    assert_eq!(v("v1.25.3").as_deref(), Some("1.25.3"));
    assert_eq!(v(" 1 ").as_deref(), Some("1.0.0"));
    assert_eq!(v("1.22.0-0").as_deref(), Some("1.22.0"));
    assert_eq!(v("latest"), None);
    assert_eq!(v("1..2"), None);
    assert_eq!(v("1.2.3.4"), None);
    assert_eq!(v(""), None);
}

/// `bundle validate --select deprecated-apis -o json EXTRA.. hawtio-operator/0.1.0` (a v1beta1
/// CRD, no minKubeVersion): the exit status, the JSON report and stderr.
fn validate_hawtio(extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let dir = common::fixture_operators().join("hawtio-operator/0.1.0");
    let mut args = vec![
        "bundle",
        "validate",
        "--select",
        "deprecated-apis",
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    args.push(dir.to_str().expect("utf-8 path"));
    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args(&args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run olmctl");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (
        o.status.code(),
        v,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `--k8s-version` through the binary (the CLI's parser is private): hawtio-operator 0.1.0 has a
/// v1beta1 CRD and no minKubeVersion.
#[test]
fn cli_k8s_version_switches_severity() {
    let run = |extra: &[&str]| {
        let (code, v, _) = validate_hawtio(extra);
        (code, v)
    };
    let sev = |v: &serde_json::Value| {
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| {
                format!(
                    "{} {}",
                    f["code"].as_str().unwrap_or(""),
                    f["severity"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
    };
    let (code, v) = run(&[]);
    assert_eq!(code, Some(0));
    assert_eq!(sev(&v), ["API001 warning"]);
    let (code, v) = run(&["--k8s-version", "v1.22"]);
    assert_eq!(code, Some(1));
    assert_eq!(sev(&v), ["API001 error"]);
    let (code, v) = run(&["--k8s-version", "1.21"]);
    assert_eq!(code, Some(0));
    assert_eq!(sev(&v), ["API001 warning"]);
    let (code, _) = run(&["--k8s-version", "next"]);
    assert_eq!(code, Some(2));
}

/// The community bundles: (code, severity) → count of API findings, without and with a
/// Kubernetes 1.22 target.
#[test]
fn fixture_bundles() {
    let count = |opts: &Options| {
        let mut m: BTreeMap<(&str, Severity), usize> = BTreeMap::new();
        for (_, d) in common::fixture_bundle_dirs() {
            let b = olmctl::bundle::load::load_bundle(&d).expect("loads");
            for f in olmctl::checks::bundle::validate_with(&b, opts) {
                if f.code.starts_with("API") {
                    *m.entry((f.code, f.severity)).or_default() += 1;
                }
            }
        }
        m
    };
    // API001: the 15 apiextensions.k8s.io/v1beta1 CRDs of cockroachdb 2.0.9-3.0.7
    // (minKubeVersion 1.8.0), opendatahub-operator 0.6.0-1.1.0 (1.13.0 to 1.18.0) and
    // hawtio-operator 0.1.0-0.3.0 (none). Every target is before 1.22, so they are warnings,
    // and no error: the pipeline that accepted them found nothing either.
    let plain = count(&Options::default());
    assert_eq!(
        plain.into_iter().collect::<Vec<_>>(),
        [
            (("API001", Severity::Warning), 15),
            (("API005", Severity::Warning), 8)
        ]
    );
    // API005: dbaas-operator 0.5.0 (written by an older operator-sdk) lists only v1beta1 in its
    // 8 webhook definitions (3 admission, 5 conversion webhooks; the 5 CRDs' own lists are
    // replaced by OLM with the conversion webhooks' lists). Kubernetes still sends v1beta1
    // reviews, so warnings.
    // On a 1.22 cluster the CRDs cannot be created: errors.
    let on_122 = count(&Options {
        k8s_version: Some(semver::Version::new(1, 22, 0)),
        ..Options::default()
    });
    assert_eq!(
        on_122.into_iter().collect::<Vec<_>>(),
        [
            (("API001", Severity::Error), 15),
            (("API005", Severity::Warning), 8)
        ]
    );
}

/// API005 severities: only v1beta1 is a warning; only v1 before Kubernetes 1.16 is an error;
/// v1 (with or without v1beta1) on 1.16 and later is clean.
#[test]
fn review_versions_against_the_target() {
    let only_beta = |s: &str| {
        s.replace(
            "admissionReviewVersions: [v1]",
            "admissionReviewVersions: [v1beta1]",
        )
    };
    let f = run(only_beta, &[]);
    assert_eq!(one(&f, "API005").severity, Severity::Warning);
    let old_kube = |s: &str| s.replace("minKubeVersion: 1.25.0", "minKubeVersion: 1.15.0");
    let f = run(old_kube, &[]);
    assert_eq!(one(&f, "API005").severity, Severity::Error);
    assert!(run(same, &[]).iter().all(|x| x.code != "API005"));
    let conv = CRD.replace(
        "  scope: Namespaced\n",
        "  scope: Namespaced\n  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1beta1], clientConfig: {service: {name: s, namespace: n}}}}\n",
    );
    let f = run(same, &[("manifests/widgets.crd.yaml", &conv)]);
    let hit = one(&f, "API005");
    assert_eq!(
        hit.path.as_deref(),
        Some("spec.conversion.webhook.conversionReviewVersions")
    );
    assert!(hit.message.contains("ConversionReview"), "{hit:#?}");
}

/// API005 follows what OLM installs: a CRD listed by a CSV ConversionWebhook gets the webhook's
/// list (its own is replaced and not checked), the webhook's list is named a ConversionReview
/// list, and a v1beta1 CRD without a list defaults to [v1beta1] (a warning).
#[test]
fn review_versions_follow_olm_rewrites() {
    let conv_crd = |list: &str| {
        CRD.replace(
            "  scope: Namespaced\n",
            &format!("  scope: Namespaced\n  conversion: {{strategy: Webhook, webhook: {{conversionReviewVersions: {list}, clientConfig: {{service: {{name: s, namespace: n}}}}}}}}\n"),
        )
    };
    let conv_webhook = |s: &str| {
        s.replace(
            "  webhookdefinitions:\n",
            "  webhookdefinitions:\n  - {generateName: cwidgets.demo.io, type: ConversionWebhook, deploymentName: demo-operator, admissionReviewVersions: [v1beta1], sideEffects: None, conversionCRDs: [widgets.demo.io]}\n",
        )
    };
    let f = run(
        conv_webhook,
        &[("manifests/widgets.crd.yaml", &conv_crd("[v2]"))],
    );
    let hit = one(&f, "API005");
    assert_eq!(hit.severity, Severity::Warning);
    assert!(
        hit.message.contains("cwidgets.demo.io") && hit.message.contains("ConversionReview"),
        "{hit:#?}"
    );
    let v1beta1 = CRD
        .replace("apiextensions.k8s.io/v1\n", "apiextensions.k8s.io/v1beta1\n")
        .replace("  scope: Namespaced\n", "  scope: Namespaced\n  conversion: {strategy: Webhook, webhookClientConfig: {service: {name: s, namespace: n}}}\n");
    let f = run(same, &[("manifests/widgets.crd.yaml", &v1beta1)]);
    let hit = one(&f, "API005");
    assert_eq!(
        (hit.severity, hit.path.as_deref()),
        (Severity::Warning, Some("spec.conversion"))
    );
}

/// The demo bundle's annotations with `com.redhat.openshift.versions: <value>`.
fn openshift_annotations(value: &str) -> String {
    format!(
        "{}  com.redhat.openshift.versions: \"{value}\"\n",
        common::demo_bundle::ANNOTATIONS
    )
}

fn min_kube_1_11(s: &str) -> String {
    s.replace("  minKubeVersion: 1.25.0\n", "  minKubeVersion: 1.11.0\n")
}

/// Issue 40 item 16: the OpenShift range a bundle declares is the Kubernetes range its APIs are
/// judged against. trilio's case: minKubeVersion 1.11 and webhooks listing only v1 (API005
/// errors), published for OpenShift 4.12 and later (Kubernetes 1.25 and later: no error).
#[test]
fn the_openshift_range_of_the_annotation_is_the_target() {
    let api005 = |f: &[Finding]| {
        f.iter()
            .filter(|x| x.code == "API005")
            .map(|x| x.severity)
            .collect::<Vec<_>>()
    };
    let f = run(min_kube_1_11, &[]);
    assert_eq!(api005(&f), [Severity::Error], "{f:#?}");
    let ann = openshift_annotations("v4.12");
    let f = run(min_kube_1_11, &[("metadata/annotations.yaml", &ann)]);
    assert_eq!(api005(&f), [], "{f:#?}");
    // --k8s-version still wins over the annotation.
    let opts = Options {
        k8s_version: Some(semver::Version::new(1, 11, 0)),
        ..Options::default()
    };
    let f =
        common::demo_bundle::run_with(min_kube_1_11, &[("metadata/annotations.yaml", &ann)], &opts);
    assert_eq!(api005(&f), [Severity::Error], "{f:#?}");

    // A v1beta1 RBAC role (removed in Kubernetes 1.22): an error when a release of the range
    // ships 1.22 or later, a warning when the whole range is older.
    let cases = [
        ("v4.6-v4.8", Severity::Warning), // 1.19-1.21
        ("=v4.8", Severity::Warning),     // 1.21
        ("=v4.9", Severity::Error),       // 1.22
        ("v4.8", Severity::Error),        // 1.21 and every later release
        ("v4.18-v4.22", Severity::Error), // after the table: at least 1.34
    ];
    for (value, want) in cases {
        let ann = openshift_annotations(value);
        let f = run(
            min_kube_1_11,
            &[
                ("manifests/role.yaml", V1BETA1_ROLE),
                ("metadata/annotations.yaml", &ann),
            ],
        );
        let hit = one(&f, "API001");
        assert_eq!(hit.severity, want, "{value}: {hit:#?}");
        let help = hit.help.as_deref().unwrap_or_default();
        assert!(
            help.contains(&format!("com.redhat.openshift.versions {value:?}")),
            "{value}: {help}"
        );
    }
    // A value outside Red Hat's syntax is not a range: minKubeVersion decides, as before.
    let ann = openshift_annotations("v4.6,v4.7");
    let f = run(
        min_kube_1_11,
        &[
            ("manifests/role.yaml", V1BETA1_ROLE),
            ("metadata/annotations.yaml", &ann),
        ],
    );
    assert_eq!(one(&f, "API001").severity, Severity::Warning);
}

/// `--openshift-version` through the binary: hawtio-operator 0.1.0's v1beta1 CRD (removed in
/// Kubernetes 1.22) is an error on OpenShift 4.9 (1.22), a warning on 4.8 (1.21); a release the
/// table does not know is exit 2; `check upgrade` takes a range.
#[test]
fn cli_openshift_version_is_its_kubernetes_version() {
    let dir = common::fixture_operators().join("hawtio-operator/0.1.0");
    let run = validate_hawtio;
    let first = |v: &serde_json::Value| {
        let f = &v["findings"][0];
        (
            f["code"].as_str().unwrap_or("").to_string(),
            f["severity"].as_str().unwrap_or("").to_string(),
            f["help"].as_str().unwrap_or("").to_string(),
        )
    };
    let (code, v, _) = run(&["--openshift-version", "4.9"]);
    assert_eq!(code, Some(1));
    let (c, sev, help) = first(&v);
    assert_eq!((c.as_str(), sev.as_str()), ("API001", "error"));
    assert!(
        help.starts_with("the Kubernetes release of --openshift-version 4.9 is 1.22.0,"),
        "{help}"
    );
    let (code, v, _) = run(&["--openshift-version", "v4.8"]);
    assert_eq!(code, Some(0));
    assert_eq!(first(&v).1, "warning");
    let (code, _, err) = run(&["--openshift-version", "4.99"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("OpenShift 4.99 is not in olmctl's table"),
        "{err}"
    );
    let (code, _, err) = run(&["--openshift-version", "4.21", "--k8s-version", "1.34"]);
    assert_eq!(code, Some(2), "{err}");

    let o = std::process::Command::new(crate::common::olmctl_bin())
        .args([
            "check",
            "upgrade",
            dir.to_str().expect("utf-8"),
            dir.to_str().expect("utf-8"),
            "--openshift-version",
            "4.6-4.9",
            "-o",
            "json",
        ])
        .output()
        .expect("run olmctl");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("the newest Kubernetes release of --openshift-version 4.6-4.9 is 1.22.0"),
        "{text}"
    );
}
