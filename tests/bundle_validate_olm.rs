//! `bundle validate`, suite olm (OLM codes: what OLM v0 rejects at install time and OLM v1's
//! registry+v1 rules) and the bundle size codes (BND015, BND016): for every code a mutation of
//! the clean demo bundle that triggers it, and the counts on the fixtures.

mod common;

use common::demo_bundle::{CRD, codes, run, same};

use olmctl::checks::bundle::{runtime, size};
use olmctl::diag::{Finding, Severity};

const WEBHOOK_END: &str = "sideEffects: None}\n";

/// Gives the demo webhook (`spec.webhookdefinitions[0]`, line 24) `rules` (flow sequence).
fn with_rules(s: &str, rules: &str) -> String {
    s.replace(
        WEBHOOK_END,
        &format!("sideEffects: None, rules: {rules}}}\n"),
    )
}

/// Appends webhook definitions (flow mappings, one per line from line 25) after the demo one.
fn with_webhooks(s: &str, hooks: &[&str]) -> String {
    let mut add = String::from(WEBHOOK_END);
    for h in hooks {
        add.push_str(&format!("  - {h}\n"));
    }
    s.replace(WEBHOOK_END, &add)
}

/// The demo CRD with a conversion webhook stanza of its own (line 6), as kubebuilder's
/// `webhook_in_<kind>.yaml` patch writes it.
fn with_stanza(crd: &str) -> String {
    crd.replace(
        "spec:\n",
        "spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: webhook-service, namespace: system, path: /convert}\n      conversionReviewVersions: [v1]\n",
    )
}

const CONVERT: &str = "{generateName: cwidget.demo.io, type: ConversionWebhook, deploymentName: demo-operator, admissionReviewVersions: [v1], sideEffects: None, conversionCRDs: [widgets.demo.io]}";

fn olm_codes(f: &[Finding]) -> Vec<&'static str> {
    common::demo_bundle::codes_with(f, "OLM")
}

/// Every code: (code, CSV edit, extra files, expected JSON path or "", expected line or 0).
#[test]
fn each_olm_code_fires_on_its_defect() {
    type Edit = fn(&str) -> String;
    type Case<'a> = (&'a str, Edit, Vec<(&'a str, &'a str)>, &'a str, u32);
    let keep_unknown = CRD.replace("spec:\n", "spec:\n  preserveUnknownFields: true\n");
    let v1beta1 = CRD.replace(
        "apiextensions.k8s.io/v1\n",
        "apiextensions.k8s.io/v1beta1\n",
    );
    let stanza = with_stanza(CRD);
    let cases: Vec<Case<'_>> = vec![
        (
            "OLM001",
            |s| {
                with_rules(
                    s,
                    "[{apiGroups: ['*'], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].rules[0].apiGroups[0]",
            24,
        ),
        (
            "OLM001",
            |s| {
                with_rules(
                    s,
                    "[{apiGroups: [demo.io, operators.coreos.com], resources: [widgets]}]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].rules[0].apiGroups[1]",
            24,
        ),
        (
            "OLM001",
            |s| {
                with_rules(
                    s,
                    "[{apiGroups: [olm.operatorframework.io], resources: ['*']}]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].rules[0].apiGroups[0]",
            24,
        ),
        (
            "OLM002",
            |s| {
                with_rules(
                    s,
                    "[{apiGroups: [admissionregistration.k8s.io], resources: [ValidatingWebhookConfiguration]}]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].rules[0].resources[0]",
            24,
        ),
        (
            "OLM002",
            |s| {
                with_rules(
                    s,
                    "[{apiGroups: [admissionregistration.k8s.io], resources: [mutatingwebhookconfigurations/status]}]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].rules[0].resources[0]",
            24,
        ),
        (
            "OLM003",
            |s| {
                with_webhooks(
                    s,
                    &[
                        "{generateName: cwidget.demo.io, type: ConversionWebhook, deploymentName: demo-operator, admissionReviewVersions: [v1], sideEffects: None}",
                    ],
                )
            },
            vec![],
            "spec.webhookdefinitions[1].conversionCRDs",
            25,
        ),
        (
            "OLM004",
            |s| with_webhooks(s, &[&CONVERT.replace("widgets.demo.io", "gadgets.demo.io")]),
            vec![],
            "spec.webhookdefinitions[1].conversionCRDs[0]",
            25,
        ),
        (
            "OLM005",
            |s| with_webhooks(s, &[CONVERT, &CONVERT.replace("cwidget", "c2widget")]),
            vec![],
            "spec.webhookdefinitions[2].conversionCRDs[0]",
            26,
        ),
        (
            "OLM006",
            |s| with_webhooks(s, &[CONVERT]),
            vec![("manifests/widgets.crd.yaml", &keep_unknown)],
            "spec.preserveUnknownFields",
            6,
        ),
        (
            "OLM006",
            |s| with_webhooks(s, &[CONVERT]),
            vec![("manifests/widgets.crd.yaml", &v1beta1)],
            "spec.preserveUnknownFields",
            1,
        ),
        (
            "OLM007",
            |s| {
                s.replace(
                    "  relatedImages:\n",
                    "      - {name: demo-operator, spec: {template: {spec: {containers: []}}}}\n  relatedImages:\n",
                )
            },
            vec![],
            "spec.install.spec.deployments[1].name",
            36,
        ),
        (
            "OLM008",
            |s| s.replace("demo-operator", "Demo-Operator"),
            vec![],
            "spec.install.spec.deployments[0].name",
            29,
        ),
        (
            "OLM009",
            |s| {
                with_webhooks(
                    s,
                    &[
                        "{generateName: vwidget.demo.io, type: ValidatingAdmissionWebhook, deploymentName: demo-operator, admissionReviewVersions: [v1], sideEffects: None}",
                    ],
                )
            },
            vec![],
            "spec.webhookdefinitions[1].generateName",
            25,
        ),
        (
            "OLM010",
            |s| {
                s.replace(
                    "generateName: vwidget.demo.io",
                    "generateName: vwidget_demo.io",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].generateName",
            24,
        ),
        (
            "OLM010",
            |s| {
                s.replace(
                    "generateName: vwidget.demo.io",
                    "generateName: vwidget-demo",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].generateName",
            24,
        ),
        (
            "OLM011",
            |s| {
                s.replace(
                    "type: ValidatingAdmissionWebhook",
                    "type: ValidatingWebhook",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].type",
            24,
        ),
        (
            "OLM012",
            |s| s.replace(WEBHOOK_END, "sideEffects: None, containerPort: 70000}\n"),
            vec![],
            "spec.webhookdefinitions[0].containerPort",
            24,
        ),
        (
            "OLM013",
            |s| s.replace(", sideEffects: None}", "}"),
            vec![],
            "spec.webhookdefinitions[0].sideEffects",
            24,
        ),
        (
            "OLM013",
            |s| s.replace("sideEffects: None}", "sideEffects: Unknown}"),
            vec![],
            "spec.webhookdefinitions[0].sideEffects",
            24,
        ),
        (
            "OLM013",
            |s| {
                s.replace(
                    "admissionReviewVersions: [v1]",
                    "admissionReviewVersions: [v2]",
                )
            },
            vec![],
            "spec.webhookdefinitions[0].admissionReviewVersions",
            24,
        ),
        (
            "OLM014",
            |s| with_webhooks(s, &[CONVERT]),
            vec![("manifests/widgets.crd.yaml", &stanza)],
            "spec.conversion",
            6,
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
        let declared = runtime::CODES
            .iter()
            .find(|c| c.code == *code)
            .expect("declared");
        assert_eq!(hit.severity, declared.severity, "{code}");
        common::demo_bundle::assert_at(hit, code, path, *line);
        assert!(hit.help.is_some(), "{code}: no help");
        assert_eq!(olm_codes(&f), [*code], "{code}: other OLM codes fired");
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = runtime::CODES.iter().map(|c| c.code).collect();
    assert_eq!(covered, all, "every olm code has a failing case");
}

#[test]
fn accepted_webhooks_are_clean() {
    // Ordinary rules, a conversion webhook on an owned v1 CRD (with AllNamespaces only), the
    // same name for webhooks of different types, and port 9443.
    let f = run(
        |s| {
            let s = with_rules(
                s,
                "[{apiGroups: [demo.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [widgets]}, {apiGroups: [admissionregistration.k8s.io], resources: [other]}]",
            );
            let s = with_webhooks(&s, &[&CONVERT.replace("cwidget", "vwidget")])
                .replace("supported: true}", "supported: false}")
                .replace(
                    "{type: AllNamespaces, supported: false}",
                    "{type: AllNamespaces, supported: true}",
                );
            s.replace(WEBHOOK_END, "sideEffects: None, containerPort: 9443}\n")
        },
        &[],
    );
    assert!(olm_codes(&f).is_empty(), "{f:#?}");
    assert!(!codes(&f).contains(&"CSV007"), "{f:#?}");
    // Rules of a conversion webhook are not admission rules.
    let f = run(
        |s| {
            with_webhooks(
                s,
                &[&CONVERT.replace('}', ", rules: [{apiGroups: ['*']}]}")],
            )
        },
        &[],
    );
    assert!(olm_codes(&f).is_empty(), "{f:#?}");
}

/// OLM014 needs both: a CRD's own stanza without a ConversionWebhook naming it is the CRD's
/// business (a plain deploy, or a webhook OLM does not manage), and a ConversionWebhook over a
/// CRD without the stanza (or with `conversion: null`) is how a bundle should be.
#[test]
fn conversion_stanza_passes_without_a_csv_webhook_naming_its_crd() {
    let widgets = "manifests/widgets.crd.yaml";
    let stanza = with_stanza(CRD);
    let null = CRD.replace("spec:\n", "spec:\n  conversion: null\n");
    let gadget = CRD
        .replace("widgets", "gadgets")
        .replace("Widget", "Gadget");
    // The conversion webhook with AllNamespaces the only install mode (CSV007 otherwise).
    let webhook = |s: &str| {
        with_webhooks(s, &[CONVERT])
            .replace("supported: true}", "supported: false}")
            .replace(
                "{type: AllNamespaces, supported: false}",
                "{type: AllNamespaces, supported: true}",
            )
    };
    let no_olm014 = |what: &str, f: &[Finding]| {
        assert!(!codes(f).contains(&"OLM014"), "{what}: {f:#?}");
    };
    no_olm014("stanza, no webhook", &run(same, &[(widgets, &stanza)]));
    let f = run(webhook, &[]);
    assert!(f.is_empty(), "webhook, no stanza: {f:#?}");
    no_olm014(
        "webhook, conversion: null",
        &run(webhook, &[(widgets, &null)]),
    );
    let other = CONVERT.replace("widgets.demo.io", "gadgets.demo.io");
    no_olm014(
        "stanza on a CRD the webhook does not name",
        &run(
            |s| with_webhooks(s, &[&other]),
            &[(widgets, &stanza), ("manifests/gadgets.crd.yaml", &gadget)],
        ),
    );
}

#[test]
fn each_forbidden_rule_entry_is_reported() {
    let f = run(
        |s| {
            with_rules(
                s,
                "[{apiGroups: ['*', admissionregistration.k8s.io], resources: ['*', pods]}]",
            )
        },
        &[],
    );
    assert_eq!(olm_codes(&f), ["OLM001", "OLM002"], "{f:#?}");
}

/// A YAML file of `n` bytes of base64-alphabet text from an LCG: gzip gets it to ~3/4, and
/// base64 back to ~n, so its compressed size (as OLM counts it) is close to `n`.
fn noise(n: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut s = String::with_capacity(n + n / 70 + 16);
    s.push_str("blob: |\n");
    let mut col = 0;
    while s.len() < n {
        if col == 0 {
            s.push_str("  ");
        }
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s.push(ALPHABET[(x >> 58) as usize] as char);
        col += 1;
        if col == 76 {
            s.push('\n');
            col = 0;
        }
    }
    s.push('\n');
    s
}

#[test]
fn bundle_size_codes() {
    let mut covered = std::collections::BTreeSet::new();
    for (code, n) in [("BND016", 950_000), ("BND015", 1_200_000)] {
        let blob = noise(n);
        let f = run(same, &[("metadata/blob.yaml", &blob)]);
        let hits: Vec<_> = f
            .iter()
            .filter(|x| x.code == "BND015" || x.code == "BND016")
            .collect();
        assert_eq!(hits.len(), 1, "{code}: {f:#?}");
        let hit = hits[0];
        assert_eq!(hit.code, code, "{hit:#?}");
        assert!(hit.message.contains("max=1.0 MB"), "{}", hit.message);
        assert!(
            hit.message.contains("Bundle uncompressed size is"),
            "{}",
            hit.message
        );
        assert!(
            hit.help.as_deref().is_some_and(|h| h.contains("blob.yaml")),
            "{hit:#?}"
        );
        assert!(!codes(&f).contains(&"BND001"), "{f:#?}");
        covered.insert(hit.code);
    }
    let all: std::collections::BTreeSet<&str> = size::CODES.iter().map(|c| c.code).collect();
    assert_eq!(covered, all);
    // Under 85%: nothing.
    let f = run(same, &[("metadata/blob.yaml", &noise(800_000))]);
    assert!(
        !codes(&f).iter().any(|c| *c == "BND015" || *c == "BND016"),
        "{f:#?}"
    );
}

#[test]
fn sizes_print_in_1000_based_units() {
    assert_eq!(size::format_bytes(999), "999 B");
    assert_eq!(size::format_bytes(891_290), "891.3 kB");
    assert_eq!(size::format_bytes(1 << 20), "1.0 MB");
    assert_eq!(size::format_bytes(2_500_000_000), "2.5 GB");
}

/// The community bundles were accepted by the community pipeline and installed by OLM: none
/// has a forbidden webhook rule, a broken conversion webhook (41 conversion webhooks, all on
/// owned v1 CRDs with preserveUnknownFields false or unset), a duplicate or invalid deployment
/// or webhook name (admission webhook names all have three or more segments), an unknown
/// webhook type, a bad port or missing/invalid sideEffects and admissionReviewVersions; and
/// none is near the size limit (the largest is 2.7 MB raw, far below 1 MiB compressed). So
/// no OLM error, and neither BND015 nor BND016, fires on them. The one OLM warning is OLM014:
/// every one of the 37 bundles with a ConversionWebhook ships its 68 CRDs with the stanza
/// operator-sdk copies from kustomize (cluster-aas-operator, dbaas-operator, kepler-operator,
/// opendatahub-operator).
#[test]
fn olm_and_size_on_fixture_bundles() {
    let mut found = std::collections::BTreeMap::new();
    let mut stanza_bundles = std::collections::BTreeSet::new();
    for (name, d) in common::fixture_bundle_dirs() {
        let b = olmctl::bundle::load::load_bundle(&d).expect("loads");
        for f in olmctl::checks::bundle::validate(&b) {
            if f.code.starts_with("OLM") || f.code == "BND015" || f.code == "BND016" {
                *found.entry((f.code, f.severity)).or_insert(0) += 1;
            }
            if f.code == "OLM014" {
                stanza_bundles.insert((name.clone(), d.clone()));
            }
        }
    }
    let want: std::collections::BTreeMap<(&str, Severity), i32> =
        [(("OLM014", Severity::Warning), 68)].into_iter().collect();
    assert_eq!(found, want);
    assert_eq!(stanza_bundles.len(), 37);
    let packages: std::collections::BTreeSet<&str> =
        stanza_bundles.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        packages.into_iter().collect::<Vec<_>>(),
        [
            "cluster-aas-operator",
            "dbaas-operator",
            "kepler-operator",
            "opendatahub-operator"
        ]
    );
}
