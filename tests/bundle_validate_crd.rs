//! `bundle validate`, crd suite: the demo bundle is clean, every CRD code fires on its defect
//! (v1 and v1beta1), garbage CRDs never panic, and the fixture bundles give the known findings.

mod common;

use std::collections::BTreeMap;

use common::demo_bundle::{CRD, codes, run, same};
use olmctl::diag::{Finding, Severity};

const CRD_FILE: &str = "manifests/widgets.crd.yaml";

/// The demo CRD with a fuller v1 schema (line numbers in the cases refer to this text).
fn rich() -> String {
    CRD.replace(
        "  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n",
        "  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              tags:
                type: array
                items: {type: string}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
",
    )
}

/// A v1beta1 CRD in the old form: top-level version, validation and printer columns, a
/// non-structural schema (no types), pruning off by default.
const V1BETA1: &str = "apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.io
spec:
  group: demo.io
  names: {kind: Widget, plural: widgets}
  version: v1
  validation:
    openAPIV3Schema:
      properties:
        spec:
          properties:
            size: {type: integer}
  additionalPrinterColumns:
  - {name: Size, type: integer, JSONPath: .spec.size}
";

fn crd_findings(text: &str) -> Vec<Finding> {
    run(same, &[(CRD_FILE, text)])
        .into_iter()
        .filter(|f| f.code.starts_with("CRD"))
        .collect()
}

#[test]
fn the_demo_bundle_is_clean() {
    let f = run(same, &[]);
    assert!(f.is_empty(), "{f:#?}");
    let f = crd_findings(&rich());
    assert!(f.is_empty(), "{f:#?}");
}

/// Every code: (code, CRD text, expected JSON path, expected line).
#[test]
fn each_code_fires_on_its_defect() {
    let r = rich();
    let size = |s: &str| r.replace("size: {type: integer}", s);
    let cases: Vec<(&str, String, &str, u32)> = vec![
        ("CRD001", r.replace("name: widgets.demo.io", "name: widget.demo.io"), "metadata.name", 4),
        ("CRD002", r.replace("group: demo.io", "group: demo"), "spec.group", 6),
        ("CRD002", r.replace("group: demo.io", "group: Demo.io"), "spec.group", 6),
        ("CRD003", r.replace("scope: Namespaced", "scope: Namespace"), "spec.scope", 8),
        ("CRD003", r.replace("  scope: Namespaced\n", ""), "spec.scope", 5),
        (
            "CRD023",
            r.replace("widgets.demo.io", "widgets.demo.k8s.io").replace("group: demo.io", "group: demo.k8s.io"),
            "metadata.annotations[\"api-approved.kubernetes.io\"]",
            3,
        ),
        (
            "CRD023",
            r.replace("widgets.demo.io", "widgets.demo.k8s.io\n  annotations: {api-approved.kubernetes.io: approved}").replace("group: demo.io", "group: demo.k8s.io"),
            "metadata.annotations[\"api-approved.kubernetes.io\"]",
            5,
        ),
        (
            "CRD004",
            r.replace("{kind: Widget, plural: widgets}", "{kind: Widget, plural: widgets, listKind: Widget}"),
            "spec.names.listKind",
            7,
        ),
        (
            "CRD004",
            r.replace("{kind: Widget, plural: widgets}", "{kind: Widget, plural: widgets, shortNames: [w_1]}"),
            "spec.names.shortNames[0]",
            7,
        ),
        ("CRD004", r.replace("kind: Widget, ", ""), "spec.names.kind", 7),
        ("CRD005", r.replace("- name: v1\n", "- name: V1\n"), "spec.versions[0].name", 10),
        ("CRD005", CRD.replace("  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n", "  versions: []\n"), "spec.versions", 9),
        ("CRD006", r.replace("storage: true", "storage: false"), "spec.versions", 10),
        ("CRD007", r.replace("served: true", "served: false"), "spec.versions", 10),
        (
            "CRD008",
            CRD.replace(", schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}", ""),
            "spec.versions[0].schema.openAPIV3Schema",
            10,
        ),
        ("CRD009", r.replace("        type: object\n        properties:\n", "        type: array\n        properties:\n"), "spec.versions[0].schema.openAPIV3Schema.type", 17),
        ("CRD009", r.replace("        type: object\n        properties:\n", "        properties:\n"), "spec.versions[0].schema.openAPIV3Schema.type", 17),
        (
            "CRD009",
            r.replace("        type: object\n        properties:\n", "        type: object\n        required: [spec]\n        minProperties: 1\n        properties:\n"),
            "spec.versions[0].schema.openAPIV3Schema.minProperties",
            20,
        ),
        (
            "CRD010",
            size("size: {minimum: 1}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type",
            23,
        ),
        (
            "CRD011",
            r.replace("                type: array\n                items: {type: string}\n", "                type: array\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags.items",
            24,
        ),
        (
            "CRD011",
            r.replace("items: {type: string}", "items: [{type: string}]"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags.items",
            26,
        ),
        (
            "CRD012",
            size("size: {type: object, properties: {a: {type: string}}, additionalProperties: false}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.additionalProperties",
            23,
        ),
        (
            "CRD013",
            r.replace("        properties:\n          spec:\n", "        properties:\n          metadata: {type: object, properties: {labels: {type: object}}}\n          spec:\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.metadata",
            20,
        ),
        (
            "CRD013",
            r.replace("        properties:\n          spec:\n", "        properties:\n          kind: {type: integer}\n          spec:\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.kind.type",
            20,
        ),
        (
            "CRD014",
            size("size: {type: array, items: {type: integer}, uniqueItems: true}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.uniqueItems",
            23,
        ),
        (
            "CRD014",
            size("size: {$ref: '#/definitions/size'}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.$ref",
            23,
        ),
        (
            "CRD014",
            size("size: {type: int}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type",
            23,
        ),
        (
            "CRD015",
            size("size: {type: integer, anyOf: [{type: integer}, {minimum: 2}]}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.anyOf[0].type",
            23,
        ),
        (
            "CRD015",
            r.replace("            type: object\n            properties:\n", "            type: object\n            oneOf: [{required: [other], properties: {other: {minimum: 1}}}]\n            properties:\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.other",
            22,
        ),
        (
            "CRD016",
            r.replace("x-kubernetes-preserve-unknown-fields: true\n", "x-kubernetes-preserve-unknown-fields: false\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.status.x-kubernetes-preserve-unknown-fields",
            29,
        ),
        (
            "CRD016",
            r.replace("                items: {type: string}\n", "                items: {type: string}\n                x-kubernetes-list-type: map\n"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags.items.type",
            26,
        ),
        (
            "CRD017",
            size("size: {type: string, x-kubernetes-int-or-string: true}"),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type",
            23,
        ),
        (
            "CRD018",
            r.replace("type: integer, jsonPath", "type: int, jsonPath"),
            "spec.versions[0].additionalPrinterColumns[0].type",
            15,
        ),
        (
            "CRD018",
            r.replace("jsonPath: .spec.size", "JSONPath: .spec.size"),
            "spec.versions[0].additionalPrinterColumns[0].jsonPath",
            15,
        ),
        (
            "CRD019",
            r.replace("  scope: Namespaced\n", "  scope: Namespaced\n  conversion: {strategy: Webhook}\n"),
            "spec.conversion.webhook.clientConfig",
            9,
        ),
        (
            "CRD019",
            r.replace("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig: {service: {name: svc, namespace: ns, path: /convert}}\n      conversionReviewVersions: [v2]\n"),
            "spec.conversion.webhook.conversionReviewVersions",
            13,
        ),
        (
            "CRD020",
            r.replace("  scope: Namespaced\n", "  scope: Namespaced\n  preserveUnknownFields: true\n"),
            "spec.preserveUnknownFields",
            9,
        ),
        (
            "CRD021",
            r.replace("subresources: {status: {}}", "subresources: {status: {}, scale: {specReplicasPath: .spec.size, statusReplicasPath: status.size}}"),
            "spec.versions[0].subresources.scale.statusReplicasPath",
            13,
        ),
        (
            "CRD022",
            V1BETA1.replace("  version: v1\n", "  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"),
            "spec.validation",
            11,
        ),
        (
            "CRD022",
            V1BETA1
                .replace("  version: v1\n", "  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n")
                .replace("  validation:\n    openAPIV3Schema:\n      properties:\n        spec:\n          properties:\n            size: {type: integer}\n", ""),
            "spec.versions[0].schema",
            9,
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (code, text, path, line) in &cases {
        let f = crd_findings(text);
        common::demo_bundle::assert_selections(code, &f, &|o| {
            common::demo_bundle::run_with(same, &[(CRD_FILE, text)], o)
        });
        let hit = f.iter().find(|x| {
            x.code == *code
                && x.path.as_deref() == Some(*path)
                && x.location.as_ref().map(|l| l.line) == Some(*line)
        });
        assert!(
            hit.is_some(),
            "{code} at {path}:{line} expected, got: {f:#?}"
        );
        let h = hit.expect("checked");
        assert!(
            h.message.starts_with("CRD "),
            "{code}: message names the CRD: {h:#?}"
        );
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = olmctl::checks::bundle::crd::CODES
        .iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(covered, all, "every CRD code has a failing case");
}

#[test]
fn v1beta1_crds_are_read_with_their_defaults() {
    // Non-structural, pruning off (the v1beta1 default): accepted by the API server, so the
    // missing types are warnings only.
    let f = crd_findings(V1BETA1);
    assert!(f.iter().all(|x| x.severity == Severity::Warning), "{f:#?}");
    assert_eq!(codes(&f), ["CRD009", "CRD010"], "{f:#?}");
    assert!(
        f.iter()
            .all(|x| x.help.as_deref().is_some_and(|h| h.contains("v1beta1"))),
        "{f:#?}"
    );
    // With pruning on, the schema must be structural: the same findings are errors.
    let pruned = V1BETA1.replace(
        "  version: v1\n",
        "  version: v1\n  preserveUnknownFields: false\n",
    );
    let f = crd_findings(&pruned);
    assert!(
        !f.is_empty() && f.iter().all(|x| x.severity == Severity::Error),
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|x| x.path.as_deref()
                == Some("spec.validation.openAPIV3Schema.properties.spec.type")),
        "{f:#?}"
    );
    // A structural v1beta1 CRD is clean; its JSONPath column spelling is the v1beta1 one.
    let structural = V1BETA1
        .replace("      properties:\n        spec:\n          properties:\n", "      type: object\n      properties:\n        spec:\n          type: object\n          properties:\n");
    let f = crd_findings(&structural);
    assert!(f.is_empty(), "{f:#?}");
    // v1beta1 defaults scope (no CRD003 above); API approval of protected groups is only
    // enforced by the v1 API, so it is a warning here.
    let k8s = structural
        .replace("widgets.demo.io", "widgets.demo.k8s.io")
        .replace("group: demo.io", "group: demo.k8s.io");
    let f = crd_findings(&k8s);
    assert_eq!(codes(&f), ["CRD023"], "{f:#?}");
    assert_eq!(f[0].severity, Severity::Warning, "{f:#?}");
    // The top-level printer column and webhook conversion rules apply in their v1beta1 form.
    let bad = structural
        .replace("type: integer, JSONPath", "type: integer, jsonPath")
        .replace("  version: v1\n", "  version: v1\n  conversion: {strategy: Webhook, webhookClientConfig: {url: 'http://x/convert'}}\n");
    let f = crd_findings(&bad);
    let paths: Vec<(&str, &str)> = f
        .iter()
        .map(|x| (x.code, x.path.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        paths,
        [
            ("CRD020", "spec.conversion.strategy"),
            ("CRD019", "spec.conversion.webhookClientConfig.url"),
            ("CRD018", "spec.additionalPrinterColumns[0].JSONPath"),
        ],
        "{f:#?}"
    );
}

#[test]
fn garbage_crds_never_panic() {
    let head = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.demo.io}\n";
    let bodies = [
        "spec: 5\n",
        "spec: {group: [], names: 3, scope: {}, versions: x}\n",
        "spec: {versions: [1, null, {name: 7, schema: 3}, {schema: {openAPIV3Schema: []}}]}\n",
        "spec: {versions: [{name: v1, storage: true, schema: {openAPIV3Schema: {type: [a], properties: [1, 2], items: 7, additionalProperties: x, anyOf: {a: 1}, not: 3, allOf: [1, {properties: 2}]}}}]}\n",
        "spec: {versions: [{name: v1, storage: true, schema: {openAPIV3Schema: {type: object, properties: {a: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [k, k, 3], items: {type: object, properties: {k: null}}}, metadata: 5, kind: {}}}}}]}\n",
        "spec: {conversion: {strategy: Webhook, webhook: {clientConfig: {url: 'https://', service: 3}, conversionReviewVersions: 'v1'}}}\n",
        "spec: {conversion: {strategy: Webhook, webhook: {clientConfig: {url: 5}}}}\n",
        "spec: {conversion: {strategy: Webhook, webhook: {clientConfig: {service: {port: 99999999999, path: 4}}}}}\n",
        "spec: {names: {kind: 'É', plural: 'ü', shortNames: [null, 'ä'], categories: 4}, group: 'é.x'}\n",
        "spec: {versions: [{name: v1, subresources: {scale: 5}, additionalPrinterColumns: [1, {type: 3}]}]}\n",
    ];
    for b in bodies {
        let text = format!("{head}{b}");
        let _ = crd_findings(&text);
        let beta = text.replace(
            "apiextensions.k8s.io/v1\n",
            "apiextensions.k8s.io/v1beta1\n",
        );
        let _ = crd_findings(&beta);
    }
}

/// Error-level CRD findings on the 307 community bundles: none. Their CRDs were all accepted by
/// the API server, and the suite reports nothing there that the API server would reject.
/// Warnings:
/// - CRD017 (1): node-healthcheck-operator 0.1.1 declares `maxUnhealthy` as `type: string` with
///   `x-kubernetes-int-or-string: true`, so an integer value (documented as valid) is rejected;
///   later releases dropped the type.
/// - CRD023 (4): cockroachdb 2.0.9, 2.1.1, 2.1.11 and 3.0.7 define the protected group
///   `charts.helm.k8s.io` without the api-approved.kubernetes.io annotation. They are v1beta1
///   CRDs, which Kubernetes 1.21 and older did not check; as v1 CRDs they would be rejected.
#[test]
fn fixture_bundles_give_the_known_crd_findings() {
    let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
    let mut warnings: BTreeMap<&str, usize> = BTreeMap::new();
    let dirs = common::fixture_bundle_dirs();
    assert!(dirs.len() >= 300, "{}", dirs.len());
    for (_, d) in &dirs {
        let b = olmctl::bundle::load::load_bundle(d).expect("loads");
        for f in olmctl::checks::bundle::validate(&b) {
            if !f.code.starts_with("CRD") {
                continue;
            }
            let m = if f.severity == Severity::Error {
                &mut errors
            } else {
                &mut warnings
            };
            *m.entry(f.code).or_insert(0) += 1;
        }
    }
    assert_eq!(errors, BTreeMap::new());
    assert_eq!(warnings, BTreeMap::from([("CRD017", 1), ("CRD023", 4)]));
}
