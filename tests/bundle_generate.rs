//! `bundle generate`: the widget test operator (webhooks, a conversion webhook, RBAC, samples,
//! related images), determinism, input errors, and the round trip over every fixture bundle:
//! split the CSV into a base CSV plus plain manifests, regenerate, compare.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use olmctl::bundle::generate::{Generated, Options, generate, write};
use olmctl::bundle::load::{field, list_at, load_bundle, str_at};
use olmctl::bundle::tree::{empty, get_mut, obj, remove, s, seq, set, strip_pos};
use olmctl::diag::Severity;
use olmctl::fbc::node::{Node, Value};

fn widget_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/widget-operator")
}

fn widget_opts() -> Options {
    Options {
        manifests: vec![widget_dir()],
        package: "widget-operator".into(),
        version: "0.3.0".into(),
        channels: vec!["stable".into(), "fast".into()],
        default_channel: Some("stable".into()),
        replaces: Some("widget-operator.v0.2.0".into()),
        skip_range: Some(">=0.1.0 <0.3.0".into()),
        ignore_kinds: vec!["Namespace".into()],
        ..Options::default()
    }
}

fn file<'a>(g: &'a Generated, rel: &str) -> &'a str {
    &g.files
        .iter()
        .find(|(p, _)| p == Path::new(rel))
        .unwrap_or_else(|| panic!("{rel} not generated: {:?}", g.files))
        .1
}

fn parse(text: &str) -> Node {
    let mut docs = Vec::new();
    olmctl::fbc::yaml::parse_documents(text, |n| docs.push(n)).expect("generated YAML parses");
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

#[test]
fn widget_operator_bundle() {
    let g = generate(&widget_opts()).expect("generates");
    let names: Vec<String> = g
        .files
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "bundle.Dockerfile",
            "manifests/demo.example.com_widgets.yaml",
            "manifests/webhook-service_v1_service.yaml",
            "manifests/widget-operator-metrics-monitor_monitoring.coreos.com_v1_servicemonitor.yaml",
            "manifests/widget-operator-widget-editor-role_rbac.authorization.k8s.io_v1_clusterrole.yaml",
            "manifests/widget-operator.clusterserviceversion.yaml",
            "metadata/annotations.yaml",
        ]
    );
    let csv = parse(file(
        &g,
        "manifests/widget-operator.clusterserviceversion.yaml",
    ));
    assert_eq!(
        str_at(&csv, &["metadata", "name"]),
        Some("widget-operator.v0.3.0")
    );
    assert_eq!(str_at(&csv, &["spec", "version"]), Some("0.3.0"));
    assert_eq!(
        str_at(&csv, &["spec", "replaces"]),
        Some("widget-operator.v0.2.0")
    );
    assert_eq!(
        str_at(&csv, &["metadata", "annotations", "olm.skipRange"]),
        Some(">=0.1.0 <0.3.0")
    );
    assert!(field(&csv, &["metadata", "annotations", "createdAt"]).is_none());
    // Kept from the base.
    assert_eq!(
        str_at(&csv, &["spec", "displayName"]),
        Some("Widget Operator")
    );
    assert_eq!(str_at(&csv, &["spec", "minKubeVersion"]), Some("1.27.0"));
    // Webhooks: conversion, mutating, validating, all served by the manager deployment on the
    // Service's port 443 → container port 9443.
    let hooks = list_at(&csv, &["spec", "webhookdefinitions"]);
    let summary: Vec<(String, String, String, String)> = hooks
        .iter()
        .map(|h| {
            (
                str_at(h, &["type"]).unwrap_or("").into(),
                str_at(h, &["generateName"]).unwrap_or("").into(),
                str_at(h, &["deploymentName"]).unwrap_or("").into(),
                str_at(h, &["webhookPath"]).unwrap_or("").into(),
            )
        })
        .collect();
    let dep = "widget-operator-controller-manager";
    assert_eq!(
        summary,
        [
            (
                "ConversionWebhook".into(),
                "cwidgets.kb.io".into(),
                dep.into(),
                "/convert".into()
            ),
            (
                "MutatingAdmissionWebhook".into(),
                "mwidget.demo.example.com".into(),
                dep.into(),
                "/mutate-demo-example-com-v1-widget".into()
            ),
            (
                "ValidatingAdmissionWebhook".into(),
                "vwidget.demo.example.com".into(),
                dep.into(),
                "/validate-demo-example-com-v1-widget".into()
            ),
        ]
    );
    for h in hooks {
        assert_eq!(
            field(h, &["containerPort"]).map(|n| n.to_json()),
            Some("443".into())
        );
        assert_eq!(
            field(h, &["targetPort"]).map(|n| n.to_json()),
            Some("9443".into())
        );
    }
    assert_eq!(
        field(&hooks[0], &["conversionCRDs"]).map(Node::to_json),
        Some(r#"["widgets.demo.example.com"]"#.into())
    );
    // RBAC: the ClusterRoleBinding → clusterPermissions, the Role → permissions; the unbound
    // editor role stays a manifest; the operator's ServiceAccount is left to OLM.
    let install = ["spec", "install", "spec"];
    let perms = |k: &str| {
        let mut p = install.to_vec();
        p.push(k);
        list_at(&csv, &p)
            .iter()
            .map(|e| {
                (
                    str_at(e, &["serviceAccountName"]).unwrap_or("").to_string(),
                    list_at(e, &["rules"]).len(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(perms("clusterPermissions"), [(dep.to_string(), 2)]);
    assert_eq!(perms("permissions"), [(dep.to_string(), 2)]);
    // Owned CRDs: both served versions; the base's entry keeps its descriptors, the new one
    // gets its description from the schema.
    let owned = list_at(&csv, &["spec", "customresourcedefinitions", "owned"]);
    assert_eq!(owned.len(), 2);
    assert_eq!(str_at(&owned[0], &["version"]), Some("v1"));
    assert_eq!(list_at(&owned[0], &["specDescriptors"]).len(), 1);
    assert_eq!(str_at(&owned[1], &["version"]), Some("v1alpha1"));
    assert_eq!(
        str_at(&owned[1], &["description"]),
        Some("Widget is an early form of a widget.")
    );
    // Examples from the samples, in input order.
    let examples = str_at(&csv, &["metadata", "annotations", "alm-examples"]).expect("examples");
    let mut ex = Vec::new();
    olmctl::fbc::json::parse_stream(examples, |n| ex.push(n)).expect("JSON");
    let Value::Seq(items) = &ex[0].value else {
        panic!("not a list")
    };
    let ex_names: Vec<&str> = items
        .iter()
        .filter_map(|i| str_at(i, &["metadata", "name"]))
        .collect();
    assert_eq!(ex_names, ["widget-sample", "widget-sample-old"]);
    // Related images: the manager container and the RELATED_IMAGE_ env value.
    let images: Vec<(&str, &str)> = list_at(&csv, &["spec", "relatedImages"])
        .iter()
        .map(|r| {
            (
                str_at(r, &["name"]).unwrap_or(""),
                str_at(r, &["image"]).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        images,
        [
            ("manager", "quay.io/example/widget-operator:0.3.0"),
            ("widget-agent", "quay.io/example/widget-agent:0.3.0")
        ]
    );
    // WATCH_NAMESPACE follows the OperatorGroup.
    let env = list_at(
        &list_at(&csv, &["spec", "install", "spec", "deployments"])[0],
        &["spec", "template", "spec", "containers"],
    )[0]
    .clone();
    let watch = list_at(&env, &["env"])
        .iter()
        .find(|e| str_at(e, &["name"]) == Some("WATCH_NAMESPACE"))
        .cloned()
        .expect("WATCH_NAMESPACE");
    assert_eq!(
        str_at(&watch, &["valueFrom", "fieldRef", "fieldPath"]),
        Some("metadata.annotations['olm.targetNamespaces']")
    );
    // No namespace on bundle objects.
    let svc = parse(file(&g, "manifests/webhook-service_v1_service.yaml"));
    assert!(field(&svc, &["metadata", "namespace"]).is_none());
    // Labels = annotations.
    let annotations = file(&g, "metadata/annotations.yaml");
    let docker = file(&g, "bundle.Dockerfile");
    for line in annotations.lines().skip(1) {
        let (k, v) = line.trim().split_once(": ").expect("key: value");
        assert!(docker.contains(&format!("LABEL {k}={v}\n")), "{k}");
    }
    assert!(annotations.contains("channels.v1: stable,fast\n"));
}

/// A CRD the CSV's ConversionWebhook names is written without spec.conversion (OLM writes it
/// from the definition, cluster.md R4.3; shipped, it is live until then, R4.4), with a note; a
/// CRD converted by a Service outside the input keeps its stanza (OLM leaves it alone), and so
/// does the input. The generated bundle has no OLM014.
#[test]
fn conversion_webhook_crds_are_written_without_spec_conversion() {
    let input = std::fs::read_to_string(widget_dir().join("crd/widgets.yaml")).expect("crd");
    assert!(
        input.contains("  conversion:\n"),
        "the input keeps the stanza"
    );
    let outside = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.demo.example.com}\nspec:\n  group: demo.example.com\n  names: {kind: Gadget, plural: gadgets}\n  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: gadget-converter, namespace: elsewhere, path: /convert}\n      conversionReviewVersions: [v1]\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n";
    let dir = common::write_tree(&[("gadgets.yaml", outside)]);
    let mut o = widget_opts();
    o.manifests.push(dir.path().to_path_buf());
    let g = generate(&o).expect("generates");
    let widgets = parse(file(&g, "manifests/demo.example.com_widgets.yaml"));
    assert!(
        field(&widgets, &["spec", "conversion"]).is_none(),
        "{}",
        file(&g, "manifests/demo.example.com_widgets.yaml")
    );
    assert_eq!(
        str_at(&widgets, &["spec", "names", "kind"]),
        Some("Widget"),
        "the rest of the CRD is kept"
    );
    let gadgets = parse(file(&g, "manifests/demo.example.com_gadgets.yaml"));
    assert_eq!(
        str_at(&gadgets, &["spec", "conversion", "strategy"]),
        Some("Webhook")
    );
    let notes: Vec<&String> = g
        .notes
        .iter()
        .filter(|n| n.contains("spec.conversion left out"))
        .collect();
    assert_eq!(notes.len(), 1, "{:#?}", g.notes);
    assert!(
        notes[0].contains("\"widgets.demo.example.com\"") && notes[0].contains("widgets.yaml:"),
        "{}",
        notes[0]
    );
    let csv = parse(file(
        &g,
        "manifests/widget-operator.clusterserviceversion.yaml",
    ));
    let converted: Vec<String> = list_at(&csv, &["spec", "webhookdefinitions"])
        .iter()
        .filter(|h| str_at(h, &["type"]) == Some("ConversionWebhook"))
        .map(|h| {
            field(h, &["conversionCRDs"])
                .map(Node::to_json)
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(converted, [r#"["widgets.demo.example.com"]"#]);
    let out = tempfile::tempdir().expect("tmp");
    write(out.path(), &g).expect("writes");
    let b = load_bundle(out.path()).expect("loads");
    let f = olmctl::checks::bundle::validate(&b);
    assert!(!f.iter().any(|x| x.code == "OLM014"), "{f:#?}");
}

#[test]
fn widget_bundle_validates_and_renders() {
    let g = generate(&widget_opts()).expect("generates");
    let dir = tempfile::tempdir().expect("tmp");
    write(dir.path(), &g).expect("writes");
    let b = load_bundle(dir.path()).expect("loads");
    let findings = olmctl::checks::bundle::validate(&b);
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let r = olmctl::bundle::render::render(
        &b,
        "quay.io/example/widget-operator-bundle:0.3.0",
        olmctl::bundle::render::ObjectMode::CsvMetadata,
    )
    .expect("renders");
    assert_eq!(r.name, "widget-operator.v0.3.0");
    assert_eq!(r.package, "widget-operator");
}

#[test]
fn same_input_same_bytes() {
    let a = generate(&widget_opts()).expect("generates");
    let b = generate(&widget_opts()).expect("generates");
    assert_eq!(a.files, b.files);
    // Written twice (the second run over the first output) the tree is byte-identical, and a
    // stale manifest from an earlier run is removed.
    let d1 = tempfile::tempdir().expect("tmp");
    let d2 = tempfile::tempdir().expect("tmp");
    write(d1.path(), &a).expect("writes");
    std::fs::write(d2.path().join("stale.yaml"), "x: 1\n").expect("write");
    std::fs::create_dir_all(d2.path().join("manifests")).expect("mkdir");
    std::fs::write(d2.path().join("manifests/old.yaml"), "x: 1\n").expect("write");
    write(d2.path(), &b).expect("writes");
    write(d2.path(), &b).expect("writes again");
    for (rel, text) in &a.files {
        assert_eq!(
            std::fs::read_to_string(d2.path().join(rel)).expect("read"),
            *text
        );
        assert_eq!(
            std::fs::read_to_string(d1.path().join(rel)).expect("read"),
            *text
        );
    }
    assert!(!d2.path().join("manifests/old.yaml").exists());
    // createdAt only when asked.
    let mut o = widget_opts();
    o.created_at = Some("2026-01-02T03:04:05Z".into());
    let c = generate(&o).expect("generates");
    let csv = parse(file(
        &c,
        "manifests/widget-operator.clusterserviceversion.yaml",
    ));
    assert_eq!(
        str_at(&csv, &["metadata", "annotations", "createdAt"]),
        Some("2026-01-02T03:04:05Z")
    );
}

#[test]
fn input_errors_name_file_and_object() {
    // A Namespace cannot go into a bundle and is not dropped silently.
    let mut o = widget_opts();
    o.ignore_kinds.clear();
    let e = generate(&o).expect_err("Namespace").to_string();
    assert!(e.contains("manager.yaml:1:1"), "{e}");
    assert!(e.contains("Namespace \"widget-system\""), "{e}");
    assert!(e.contains("--ignore-kind Namespace"), "{e}");

    let cases: Vec<(&str, &str, &str)> = vec![
        ("bad.yaml", "a: [\n", "bad.yaml:2"),
        (
            "cert.yaml",
            "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n",
            "Certificate \"c\"",
        ),
        (
            "nokind.yaml",
            "metadata: {name: x}\n",
            "not a Kubernetes object",
        ),
        (
            "twice.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata: {a: '1'}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata: {a: '2'}\n",
            "defined twice",
        ),
        (
            "hook.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhooks:\n- name: v.x.io\n  clientConfig: {url: 'https://x'}\n",
            "has no clientConfig.service",
        ),
        (
            "hook2.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhooks:\n- name: v.x.io\n  clientConfig: {service: {name: nope}}\n",
            "Service \"nope\"",
        ),
        (
            "rel.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d2}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n        env:\n        - {name: RELATED_IMAGE_X, valueFrom: {configMapKeyRef: {name: a, key: b}}}\n",
            "RELATED_IMAGE_X uses valueFrom",
        ),
    ];
    for (name, text, want) in cases {
        let dir = common::write_tree(&[(name, text)]);
        let mut o = widget_opts();
        o.manifests.push(dir.path().to_path_buf());
        let e = generate(&o).expect_err(name).to_string();
        assert!(e.contains(want), "{name}: {e}");
        assert!(e.contains(name), "{name}: {e}");
    }
    for (field_name, edit) in [
        (
            "--version",
            Options {
                version: "1.2".into(),
                ..widget_opts()
            },
        ),
        (
            "--package",
            Options {
                package: "Bad_Name".into(),
                ..widget_opts()
            },
        ),
        (
            "--default-channel",
            Options {
                default_channel: Some("beta".into()),
                ..widget_opts()
            },
        ),
        (
            "--skip-range",
            Options {
                skip_range: Some(">=x".into()),
                ..widget_opts()
            },
        ),
        (
            "--channels",
            Options {
                channels: vec![],
                ..widget_opts()
            },
        ),
    ] {
        let e = generate(&edit).expect_err(field_name).to_string();
        assert!(e.contains(field_name), "{field_name}: {e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Round trip over the fixtures.

/// Splits a bundle's CSV into a base CSV and plain manifests (Deployments, Roles and bindings,
/// webhook configurations with their Services, conversion settings on the CRDs, samples), the
/// way an operator project keeps them. Returns the files to write and the extra service
/// accounts (those with permissions but no deployment).
fn split(b: &olmctl::bundle::load::BundleDir) -> (Vec<(String, String)>, Vec<String>) {
    let (_, csv) = b.csv().expect("csv");
    let csv = strip_pos(csv);
    let mut files: Vec<(String, String)> = Vec::new();
    let mut put = |name: String, n: &Node| {
        let mut out = String::new();
        olmctl::fbc::emit_yaml::write_yaml(n, &mut out);
        files.push((name, out));
    };
    let install = field(&csv, &["spec", "install", "spec"])
        .cloned()
        .unwrap_or_else(empty);
    let deployments = list_at(&install, &["deployments"]).to_vec();
    let mut dep_accounts = Vec::new();
    for (i, d) in deployments.iter().enumerate() {
        let mut meta = vec![("name", d_name(d))];
        if let Some(l) = field(d, &["label"]) {
            meta.push(("labels", l.clone()));
        }
        let dep = obj(vec![
            ("apiVersion", s("apps/v1")),
            ("kind", s("Deployment")),
            ("metadata", obj(meta)),
            ("spec", field(d, &["spec"]).cloned().unwrap_or_else(empty)),
        ]);
        dep_accounts.push(olmctl::bundle::generate::rbac::deployment_service_account(
            &olmctl::bundle::generate::collect::Obj {
                path: Path::new("x").into(),
                doc: dep.clone(),
            },
        ));
        put(format!("deploy/{i}.yaml"), &dep);
    }
    let mut extra = Vec::new();
    for (key, role_kind, binding_kind) in [
        ("permissions", "Role", "RoleBinding"),
        ("clusterPermissions", "ClusterRole", "ClusterRoleBinding"),
    ] {
        for (i, p) in list_at(&install, &[key]).iter().enumerate() {
            let sa = str_at(p, &["serviceAccountName"]).unwrap_or("default");
            if !dep_accounts.iter().any(|a| a == sa) && !extra.iter().any(|a| a == sa) {
                extra.push(sa.to_string());
            }
            let name = format!("rt-{}-{i}", key.to_lowercase());
            let role = obj(vec![
                ("apiVersion", s("rbac.authorization.k8s.io/v1")),
                ("kind", s(role_kind)),
                ("metadata", obj(vec![("name", s(&name))])),
                ("rules", seq(list_at(p, &["rules"]).to_vec())),
            ]);
            let binding = obj(vec![
                ("apiVersion", s("rbac.authorization.k8s.io/v1")),
                ("kind", s(binding_kind)),
                ("metadata", obj(vec![("name", s(&name))])),
                (
                    "roleRef",
                    obj(vec![
                        ("apiGroup", s("rbac.authorization.k8s.io")),
                        ("kind", s(role_kind)),
                        ("name", s(&name)),
                    ]),
                ),
                (
                    "subjects",
                    seq(vec![obj(vec![
                        ("kind", s("ServiceAccount")),
                        ("name", s(sa)),
                        ("namespace", s("system")),
                    ])]),
                ),
            ]);
            put(format!("rbac/{name}.yaml"), &role);
            put(format!("rbac/{name}-binding.yaml"), &binding);
        }
    }
    // Bundle manifests other than the CSV; CRDs get their conversion webhook settings below.
    let mut crds: BTreeMap<String, Node> = BTreeMap::new();
    let mut others = Vec::new();
    for (_, doc) in b.first_docs() {
        match str_at(doc, &["kind"]) {
            Some("ClusterServiceVersion") => {}
            Some("CustomResourceDefinition") => {
                crds.insert(
                    str_at(doc, &["metadata", "name"]).unwrap_or("").to_string(),
                    strip_pos(doc),
                );
            }
            _ => others.push(strip_pos(doc)),
        }
    }
    for (i, h) in list_at(&csv, &["spec", "webhookdefinitions"])
        .iter()
        .enumerate()
    {
        let dep = str_at(h, &["deploymentName"]).unwrap_or("");
        let labels = deployments
            .iter()
            .find(|d| str_at(d, &["name"]) == Some(dep))
            .and_then(|d| field(d, &["spec", "template", "metadata", "labels"]))
            .cloned()
            .unwrap_or_else(empty);
        let port = field(h, &["containerPort"])
            .cloned()
            .unwrap_or_else(|| olmctl::bundle::tree::num(443.0));
        let svc_name = format!("rt-webhook-{i}");
        let mut sp = vec![("port", port.clone())];
        if let Some(t) = field(h, &["targetPort"]) {
            sp.push(("targetPort", t.clone()));
        }
        put(
            format!("webhook/{svc_name}.yaml"),
            &obj(vec![
                ("apiVersion", s("v1")),
                ("kind", s("Service")),
                ("metadata", obj(vec![("name", s(&svc_name))])),
                (
                    "spec",
                    obj(vec![("selector", labels), ("ports", seq(vec![obj(sp)]))]),
                ),
            ]),
        );
        let mut service = vec![
            ("name", s(&svc_name)),
            ("namespace", s("system")),
            ("port", port),
        ];
        if let Some(p) = field(h, &["webhookPath"]) {
            service.push(("path", p.clone()));
        }
        let service = obj(service);
        let ty = str_at(h, &["type"]).unwrap_or("");
        if ty == "ConversionWebhook" {
            for c in list_at(h, &["conversionCRDs"])
                .iter()
                .filter_map(Node::as_str)
            {
                if let Some(crd) = crds.get_mut(c) {
                    let spec = get_mut(crd, "spec").expect("crd spec");
                    let mut webhook =
                        vec![("clientConfig", obj(vec![("service", service.clone())]))];
                    if let Some(r) = field(h, &["admissionReviewVersions"]) {
                        webhook.push(("conversionReviewVersions", r.clone()));
                    }
                    set(
                        spec,
                        "conversion",
                        obj(vec![("strategy", s("Webhook")), ("webhook", obj(webhook))]),
                    );
                }
            }
            continue;
        }
        let mut w = vec![
            ("name", s(str_at(h, &["generateName"]).unwrap_or(""))),
            ("clientConfig", obj(vec![("service", service)])),
        ];
        for k in [
            "admissionReviewVersions",
            "sideEffects",
            "failurePolicy",
            "matchPolicy",
            "objectSelector",
            "rules",
            "timeoutSeconds",
            "reinvocationPolicy",
        ] {
            if let Some(v) = field(h, &[k]) {
                w.push((k, v.clone()));
            }
        }
        let kind = if ty == "MutatingAdmissionWebhook" {
            "MutatingWebhookConfiguration"
        } else {
            "ValidatingWebhookConfiguration"
        };
        put(
            format!("webhook/cfg-{i}.yaml"),
            &obj(vec![
                ("apiVersion", s("admissionregistration.k8s.io/v1")),
                ("kind", s(kind)),
                ("metadata", obj(vec![("name", s(&format!("cfg-{i}")))])),
                ("webhooks", seq(vec![obj(w)])),
            ]),
        );
    }
    for (name, crd) in &crds {
        put(format!("crd/{name}.yaml"), crd);
    }
    for (i, o) in others.iter().enumerate() {
        put(format!("other/{i}.yaml"), o);
    }
    // The base: the CSV without what the manifests now carry.
    let mut base = csv.clone();
    if let Some(spec) = get_mut(&mut base, "spec") {
        set(spec, "install", obj(vec![("strategy", s("deployment"))]));
        remove(spec, "webhookdefinitions");
    }
    put("base.yaml".into(), &base);
    (files, extra)
}

fn d_name(d: &Node) -> Node {
    s(str_at(d, &["name"]).unwrap_or(""))
}

/// Why a regenerated CSV may legitimately differ from the original; the compare below
/// normalises exactly these.
fn normalise_original(csv: &Node, generated: &Node) -> Node {
    let mut n = strip_pos(csv);
    // The name is always <package>.v<version>.
    if let Some(m) = get_mut(&mut n, "metadata") {
        set(
            m,
            "name",
            s(str_at(generated, &["metadata", "name"]).unwrap_or("")),
        );
    }
    let spec = get_mut(&mut n, "spec").expect("spec");
    // Webhook defaults the CSV schema applies (containerPort 443) and the generator writes.
    if let Some(Value::Seq(hooks)) = get_mut(spec, "webhookdefinitions").map(|h| &mut h.value) {
        for h in hooks.iter_mut() {
            if field(h, &["containerPort"]).is_none() {
                set(h, "containerPort", olmctl::bundle::tree::num(443.0));
            }
        }
        hooks.sort_by_key(|h| {
            (
                str_at(h, &["generateName"]).unwrap_or("").to_string(),
                str_at(h, &["type"]).unwrap_or("").to_string(),
            )
        });
    }
    // Permissions are per service account, accounts sorted, rules concatenated.
    if let Some(install) = get_mut(spec, "install").and_then(|i| get_mut(i, "spec")) {
        // The install strategy has only these fields; OLM ignores others (percona-xtradb-
        // cluster-operator nests a stray `spec` in it), and the generator does not copy them.
        if let Value::Map(entries) = &mut install.value {
            entries.retain(|e| {
                matches!(
                    e.key.as_str(),
                    "deployments" | "permissions" | "clusterPermissions"
                )
            });
        }
        for key in ["permissions", "clusterPermissions"] {
            let mut by_sa: BTreeMap<String, Vec<Node>> = BTreeMap::new();
            for p in list_at(install, &[key]) {
                by_sa
                    .entry(
                        str_at(p, &["serviceAccountName"])
                            .unwrap_or("default")
                            .into(),
                    )
                    .or_default()
                    .extend(list_at(p, &["rules"]).iter().cloned());
            }
            if by_sa.is_empty() {
                remove(install, key);
            } else {
                set(
                    install,
                    key,
                    seq(by_sa
                        .into_iter()
                        .map(|(k, v)| obj(vec![("serviceAccountName", s(&k)), ("rules", seq(v))]))
                        .collect()),
                );
            }
        }
    }
    n
}

/// The generated CSV restricted to what the original has where the generator adds by design:
/// owned entries for further served versions, related images of the deployments.
/// `bundled_rules` are the rules of Roles/ClusterRoles the bundle ships as manifests: bound to
/// the CSV's account, the generator moves them into the CSV (as operator-sdk does).
fn normalise_generated(g: &Node, original: &Node, bundled_rules: &[String]) -> Node {
    let mut n = strip_pos(g);
    let spec = get_mut(&mut n, "spec").expect("spec");
    if let Some(install) = get_mut(spec, "install").and_then(|i| get_mut(i, "spec")) {
        for key in ["permissions", "clusterPermissions"] {
            let orig = list_at(original, &["spec", "install", "spec", key]);
            if let Some(Value::Seq(entries)) = get_mut(install, key).map(|p| &mut p.value) {
                for e in entries.iter_mut() {
                    let sa = str_at(e, &["serviceAccountName"]).unwrap_or("").to_string();
                    let want: Vec<Node> = orig
                        .iter()
                        .filter(|o| str_at(o, &["serviceAccountName"]) == Some(sa.as_str()))
                        .flat_map(|o| list_at(o, &["rules"]).iter().map(strip_pos))
                        .collect();
                    // Generated = original rules plus rules of bundled roles, as a multiset.
                    let mut extra: Vec<String> =
                        list_at(e, &["rules"]).iter().map(Node::to_json).collect();
                    let mut complete = true;
                    for w in &want {
                        match extra.iter().position(|x| *x == w.to_json()) {
                            Some(i) => {
                                extra.remove(i);
                            }
                            None => complete = false,
                        }
                    }
                    if complete && extra.iter().all(|x| bundled_rules.contains(x)) {
                        set(e, "rules", seq(want));
                    }
                }
                entries.retain(|e| !list_at(e, &["rules"]).is_empty());
                if entries.is_empty() {
                    remove(install, key);
                }
            }
        }
    }
    let key = |x: &Node| {
        (
            str_at(x, &["name"]).unwrap_or("").to_string(),
            str_at(x, &["version"]).unwrap_or("").to_string(),
        )
    };
    let orig_owned: Vec<_> = list_at(original, &["spec", "customresourcedefinitions", "owned"])
        .iter()
        .map(key)
        .collect();
    if let Some(Value::Seq(owned)) = get_mut(spec, "customresourcedefinitions")
        .and_then(|c| get_mut(c, "owned"))
        .map(|o| &mut o.value)
    {
        owned.retain(|o| orig_owned.contains(&key(o)));
        // Blank display names and descriptions are filled from the kind and the schema.
        for o in owned.iter_mut() {
            let orig = list_at(original, &["spec", "customresourcedefinitions", "owned"])
                .iter()
                .find(|x| key(x) == key(o));
            for f in ["displayName", "description"] {
                if orig.and_then(|x| str_at(x, &[f])).is_none_or(str::is_empty) {
                    if let Some(v) = orig.and_then(|x| field(x, &[f])) {
                        set(o, f, v.clone());
                    } else {
                        remove(o, f);
                    }
                }
            }
        }
    }
    let n_images = list_at(original, &["spec", "relatedImages"]).len();
    if let Some(Value::Seq(imgs)) = get_mut(spec, "relatedImages").map(|o| &mut o.value) {
        imgs.truncate(n_images);
        if imgs.is_empty() {
            remove(spec, "relatedImages");
        }
    }
    n
}

/// The first place where two trees differ, with both values (for failure messages).
fn first_diff(a: &Node, b: &Node, path: &str) -> Option<String> {
    match (&a.value, &b.value) {
        (Value::Map(x), Value::Map(_)) | (Value::Map(x), _) if matches!(b.value, Value::Map(_)) => {
            let mut keys: Vec<&String> = x.iter().map(|e| &e.key).collect();
            if let Value::Map(y) = &b.value {
                keys.extend(y.iter().map(|e| &e.key));
            }
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (field(a, &[k]), field(b, &[k])) {
                    (Some(va), Some(vb)) => {
                        if let Some(d) = first_diff(va, vb, &p) {
                            return Some(d);
                        }
                    }
                    (va, vb) => {
                        return Some(format!(
                            "{p}: {:?} vs {:?}",
                            va.map(Node::to_json),
                            vb.map(Node::to_json)
                        ));
                    }
                }
            }
            None
        }
        (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_diff(p, q, &format!("{path}[{i}]"))),
        _ if a.to_json() == b.to_json() => None,
        _ => {
            let (ja, jb) = (a.to_json(), b.to_json());
            Some(format!(
                "{path}: {} vs {}",
                &ja[..ja.len().min(300)],
                &jb[..jb.len().min(300)]
            ))
        }
    }
}

/// Top-level CSV paths where two normalised CSVs differ (`spec.install`, `metadata.annotations`, ...).
fn diff_paths(a: &Node, b: &Node) -> Vec<String> {
    let mut out = Vec::new();
    for top in ["metadata", "spec"] {
        let (x, y) = (field(a, &[top]), field(b, &[top]));
        let keys = |n: Option<&Node>| -> Vec<String> {
            match n.map(|n| &n.value) {
                Some(Value::Map(e)) => e.iter().map(|e| e.key.clone()).collect(),
                _ => Vec::new(),
            }
        };
        let mut all = keys(x);
        all.extend(keys(y));
        all.sort();
        all.dedup();
        for k in all {
            let vx = x.and_then(|x| field(x, &[&k]));
            let vy = y.and_then(|y| field(y, &[&k]));
            let same = match (vx, vy) {
                (Some(p), Some(q)) if k == "annotations" => {
                    // alm-examples compare as data.
                    let norm = |n: &Node| {
                        let mut n = n.clone();
                        if let Some(t) = str_at(&n, &["alm-examples"]).map(String::from) {
                            let mut v = Vec::new();
                            if olmctl::fbc::json::parse_stream(&t, |d| v.push(d)).is_ok()
                                && v.len() == 1
                            {
                                set(&mut n, "alm-examples", s(&v[0].to_json()));
                            }
                        }
                        n.to_json()
                    };
                    norm(p) == norm(q)
                }
                (Some(p), Some(q)) => p.to_json() == q.to_json(),
                (None, None) => true,
                _ => false,
            };
            if !same {
                out.push(format!("{top}.{k}"));
            }
        }
    }
    out
}

#[test]
fn round_trip_over_fixture_bundles() {
    let dirs = common::fixture_bundle_dirs();
    let mut equal = 0;
    let mut refused = 0;
    let mut one_per_crd = 0;
    let mut shipped_crs = 0;
    let mut differ: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut failed: Vec<String> = Vec::new();
    for (name, d) in &dirs {
        let b = load_bundle(d).expect("loads");
        if b.csv().is_none() || !b.problems.is_empty() {
            failed.push(format!("{name}: unreadable bundle"));
            continue;
        }
        // Bundles the generator refuses for a defect validation names (BND014: a manifest
        // that is not a Kubernetes object).
        let defect = olmctl::checks::bundle::validate(&b)
            .iter()
            .any(|f| f.code == "BND014");
        // ... or that ships one object twice with different content (move2kube-operator 0.3.8
        // has its metrics-reader ClusterRole as rbac v1 and v1beta1).
        let mut objects = std::collections::BTreeSet::new();
        let twice = b.first_docs().any(|(_, d)| {
            let k = (
                str_at(d, &["kind"]).unwrap_or("").to_string(),
                str_at(d, &["metadata", "name"]).unwrap_or("").to_string(),
            );
            !objects.insert(k)
        });
        let (files, extra) = split(&b);
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let tmp = common::write_tree(&refs);
        let (_, csv) = b.csv().expect("csv");
        let opts = Options {
            manifests: vec!["deploy", "rbac", "webhook", "crd", "other"]
                .into_iter()
                .map(|s| tmp.path().join(s))
                .filter(|p| p.exists())
                .collect(),
            csv_base: Some(tmp.path().join("base.yaml")),
            package: b
                .annotation(olmctl::bundle::load::keys::PACKAGE)
                .unwrap_or("")
                .to_string(),
            version: str_at(csv, &["spec", "version"]).unwrap_or("").to_string(),
            channels: vec!["stable".into()],
            extra_service_accounts: extra,
            ..Options::default()
        };
        let g = match generate(&opts) {
            Ok(g) => {
                assert!(
                    !defect,
                    "{name}: a manifest without apiVersion was accepted"
                );
                g
            }
            Err(e) if defect && e.to_string().contains("not a Kubernetes object") => {
                refused += 1;
                continue;
            }
            Err(e) if twice && e.to_string().contains("defined twice") => {
                refused += 1;
                continue;
            }
            Err(e) => {
                failed.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut bundled_rules = Vec::new();
        let mut ships_crs = false;
        let groups: Vec<String> = b
            .first_docs()
            .filter_map(|(_, d)| olmctl::bundle::load::crd_versions(d).map(|v| v.group.to_string()))
            .collect();
        for (_, d) in b.first_docs() {
            if matches!(str_at(d, &["kind"]), Some("Role" | "ClusterRole")) {
                bundled_rules.extend(list_at(d, &["rules"]).iter().map(Node::to_json));
            }
            let api = str_at(d, &["apiVersion"]).unwrap_or("");
            ships_crs |= groups.iter().any(|g| api.starts_with(&format!("{g}/")));
        }
        let again = generate(&opts).expect("second run");
        assert_eq!(g.files, again.files, "{name}: not deterministic");
        let text = &g
            .files
            .iter()
            .find(|(p, _)| {
                p.display()
                    .to_string()
                    .ends_with(".clusterserviceversion.yaml")
            })
            .expect("csv file")
            .1;
        let gen_csv = parse(text);
        let a = normalise_original(csv, &gen_csv);
        let mut bb = normalise_generated(&gen_csv, csv, &bundled_rules);
        if ships_crs {
            // The bundle ships custom resources as manifests; they become the examples.
            shipped_crs += 1;
            if let Some(m) = get_mut(&mut bb, "metadata").and_then(|m| get_mut(m, "annotations")) {
                match str_at(csv, &["metadata", "annotations", "alm-examples"]) {
                    Some(t) => set(m, "alm-examples", s(t)),
                    None => {
                        remove(m, "alm-examples");
                    }
                }
            }
        }
        let d = diff_paths(&a, &bb);
        if d.is_empty() {
            equal += 1;
        } else if name == "dbaas-operator" && d == ["spec.webhookdefinitions"] {
            // Written by an older operator-sdk with one ConversionWebhook per CRD; the
            // generator groups CRDs served at the same place, as current operator-sdk does.
            one_per_crd += 1;
        } else {
            for p in d {
                let e = differ.entry(p).or_default();
                if e.len() < 3 {
                    e.push(format!(
                        "{name}: {}",
                        first_diff(&a, &bb, "").unwrap_or_default()
                    ));
                } else {
                    e.push(name.clone());
                }
            }
        }
    }
    let summary: BTreeMap<&String, usize> = differ.iter().map(|(k, v)| (k, v.len())).collect();
    println!(
        "round trip: {equal} of {} equal, {one_per_crd} with ungrouped conversion webhooks ({shipped_crs} ship custom resources that become \
         the examples), {refused} refused for a defect; differing fields: {summary:?}; failed: \
         {failed:#?}",
        dirs.len()
    );
    for (k, v) in &differ {
        println!("{k}: {:#?}", &v[..v.len().min(3)]);
    }
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(equal + refused + one_per_crd, dirs.len(), "{summary:?}");
    assert_eq!(one_per_crd, 1);
}

#[test]
fn namespaced_rbac_stays_a_bundle_role_owned_by_the_csv() {
    // By default the leader-election Role becomes CSV `permissions`, which OLM lifts to a
    // ClusterRole under an AllNamespaces OperatorGroup.
    let g = generate(&widget_opts()).expect("generates");
    let csv = parse(file(
        &g,
        "manifests/widget-operator.clusterserviceversion.yaml",
    ));
    assert!(!list_at(&csv, &["spec", "install", "spec", "permissions"]).is_empty());
    // --namespaced-rbac keeps it, and its binding, as bundle manifests owned by the CSV.
    let opts = Options {
        namespaced_rbac: vec!["widget-operator-leader-election-role".into()],
        ..widget_opts()
    };
    let g = generate(&opts).expect("generates");
    let csv = parse(file(
        &g,
        "manifests/widget-operator.clusterserviceversion.yaml",
    ));
    assert!(
        list_at(&csv, &["spec", "install", "spec", "permissions"]).is_empty(),
        "no namespaced permissions left in the CSV"
    );
    for kind in ["role", "rolebinding"] {
        let o = parse(file(
            &g,
            &format!(
                "manifests/widget-operator-leader-election-{kind}_rbac.authorization.k8s.io_v1_{kind}.yaml"
            ),
        ));
        assert_eq!(str_at(&o, &["metadata", "namespace"]), None, "OLM sets it");
        let owner = &list_at(&o, &["metadata", "ownerReferences"])[0];
        assert_eq!(str_at(owner, &["kind"]), Some("ClusterServiceVersion"));
        assert_eq!(str_at(owner, &["name"]), Some("widget-operator.v0.3.0"));
    }
    // The binding's subject, the deployment's ServiceAccount, has no namespace: OLM creates the
    // binding in the install namespace with its subjects as they are, and a subject without a
    // namespace is the binding's own (the input said widget-system).
    let rb = parse(file(
        &g,
        "manifests/widget-operator-leader-election-rolebinding_rbac.authorization.k8s.io_v1_rolebinding.yaml",
    ));
    let subject = &list_at(&rb, &["subjects"])[0];
    assert_eq!(
        str_at(subject, &["name"]),
        Some("widget-operator-controller-manager")
    );
    assert_eq!(str_at(subject, &["namespace"]), None);
    // A name that is no Role is an error naming the flag.
    let bad = Options {
        namespaced_rbac: vec!["nope".into()],
        ..widget_opts()
    };
    let e = generate(&bad).expect_err("no such Role");
    assert!(e.to_string().contains("--namespaced-rbac nope"), "{e}");
}

type Pairs = Vec<(String, String)>;

/// The metadata of a generated bundle as (key, value) pairs: `annotations.yaml` in order, and
/// the Dockerfile's LABELs.
fn metadata_pairs(g: &Generated) -> (Pairs, Pairs) {
    let doc = parse(file(g, "metadata/annotations.yaml"));
    let ann = match &field(&doc, &["annotations"]).expect("annotations").value {
        Value::Map(m) => m
            .iter()
            .map(|e| (e.key.clone(), e.value.as_str().expect("string").to_string()))
            .collect(),
        _ => panic!("annotations is not a map"),
    };
    let labels = olmctl::bundle::generate::metadata::labels(file(g, "bundle.Dockerfile"))
        .expect("Dockerfile parses")
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect();
    (ann, labels)
}

/// Regenerating into an earlier bundle keeps the annotations olmctl does not own, in their
/// order, in both files: those added by hand to annotations.yaml, then the Dockerfile's own
/// LABELs; `--annotation` adds or replaces one. Before, both files were rewritten from the
/// flags and `com.redhat.openshift.versions` was lost.
#[test]
fn regeneration_keeps_hand_added_annotations_in_both_files() {
    let out = tempfile::tempdir().expect("tmp");
    write(out.path(), &generate(&widget_opts()).expect("generates")).expect("writes");
    let ann = out.path().join("metadata/annotations.yaml");
    let text = std::fs::read_to_string(&ann).unwrap()
        + "  com.redhat.openshift.versions: v4.14-v4.21\n  operators.operatorframework.io.bundle.package.v1: stale\n  zeta.example.com/last: \"1\"\n";
    std::fs::write(&ann, text).unwrap();
    let df = out.path().join("bundle.Dockerfile");
    let text = std::fs::read_to_string(&df).unwrap()
        + "LABEL com.redhat.delivery.operator.bundle=true \\\n      zeta.example.com/last=ignored\n";
    std::fs::write(&df, text).unwrap();
    let opts = Options {
        existing: Some(out.path().to_path_buf()),
        annotations: vec![
            ("zeta.example.com/last".into(), "2".into()),
            (
                "operators.operatorframework.io/builder".into(),
                "a \"b\" $c".into(),
            ),
        ],
        ..widget_opts()
    };
    let g = generate(&opts).expect("generates");
    let (ann, labels) = metadata_pairs(&g);
    assert_eq!(ann, labels, "both files hold the same annotations");
    let keys: Vec<&str> = ann.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "operators.operatorframework.io.bundle.mediatype.v1",
            "operators.operatorframework.io.bundle.manifests.v1",
            "operators.operatorframework.io.bundle.metadata.v1",
            "operators.operatorframework.io.bundle.package.v1",
            "operators.operatorframework.io.bundle.channels.v1",
            "operators.operatorframework.io.bundle.channel.default.v1",
            "com.redhat.openshift.versions",
            "zeta.example.com/last",
            "com.redhat.delivery.operator.bundle",
            "operators.operatorframework.io/builder",
        ]
    );
    let value = |k: &str| ann.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
    assert_eq!(value("com.redhat.openshift.versions"), Some("v4.14-v4.21"));
    assert_eq!(
        value("operators.operatorframework.io.bundle.package.v1"),
        Some("widget-operator")
    );
    assert_eq!(value("zeta.example.com/last"), Some("2"));
    assert_eq!(
        value("operators.operatorframework.io/builder"),
        Some("a \"b\" $c")
    );
    // The same again: same bytes.
    write(out.path(), &g).expect("writes");
    let again = generate(&Options {
        annotations: Vec::new(),
        ..opts.clone()
    })
    .expect("generates");
    assert_eq!(metadata_pairs(&again), metadata_pairs(&g));
}

#[test]
fn annotation_flags_are_validated() {
    for (k, v, says) in [
        ("bad key", "x", "annotation key \"bad key\""),
        ("a/b/c", "x", "a qualified name"),
        ("example.com/x", "two\nlines", "line breaks"),
        (
            "operators.operatorframework.io.bundle.channels.v1",
            "x",
            "--channels",
        ),
    ] {
        let opts = Options {
            annotations: vec![(k.into(), v.into())],
            ..widget_opts()
        };
        let e = generate(&opts).expect_err(k).to_string();
        assert!(e.contains("--annotation") && e.contains(says), "{k}: {e}");
    }
    // An earlier annotations.yaml with a key the API server refuses: named with its line.
    let out = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(out.path().join("metadata")).unwrap();
    std::fs::write(
        out.path().join("metadata/annotations.yaml"),
        "annotations:\n  ok: fine\n  not ok: x\n",
    )
    .unwrap();
    let opts = Options {
        existing: Some(out.path().to_path_buf()),
        ..widget_opts()
    };
    let e = generate(&opts).expect_err("bad key").to_string();
    assert!(
        e.contains("annotations.yaml:3:") && e.contains("\"not ok\""),
        "{e}"
    );
}

/// A scorecard Configuration among the manifests goes to tests/scorecard/config.yaml, as
/// operator-sdk's collector takes it; with a config there (given, or left by an earlier run)
/// both files get the test annotations and the Dockerfile copies the directory, as
/// operator-sdk's bundle template writes them.
#[test]
fn scorecard_config_is_carried() {
    let cfg_dir = tempfile::tempdir().expect("tmp");
    let cfg = cfg_dir.path().join("config.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: scorecard.operatorframework.io/v1alpha3\nkind: Configuration\nmetadata:\n  name: config\nstages:\n- parallel: true\n  tests:\n  - entrypoint: [scorecard-test, basic-check-spec]\n    image: quay.io/operator-framework/scorecard-test:v1.42.0\n    labels: {suite: basic, test: basic-check-spec-test}\n",
    )
    .unwrap();
    let mut opts = widget_opts();
    opts.manifests.push(cfg.clone());
    let g = generate(&opts).expect("generates");
    let written = parse(file(&g, "tests/scorecard/config.yaml"));
    assert_eq!(str_at(&written, &["kind"]), Some("Configuration"));
    assert_eq!(
        list_at(&written, &["stages"]).len(),
        1,
        "{}",
        file(&g, "tests/scorecard/config.yaml")
    );
    let check = |g: &Generated| {
        let (ann, labels) = metadata_pairs(g);
        assert_eq!(ann, labels);
        assert_eq!(
            ann[ann.len() - 2..],
            [
                (
                    "operators.operatorframework.io.test.mediatype.v1".to_string(),
                    "scorecard+v1".to_string()
                ),
                (
                    "operators.operatorframework.io.test.config.v1".to_string(),
                    "tests/scorecard/".to_string()
                ),
            ]
        );
        assert!(
            file(g, "bundle.Dockerfile")
                .ends_with("COPY metadata /metadata/\nCOPY tests/scorecard /tests/scorecard/\n"),
            "{}",
            file(g, "bundle.Dockerfile")
        );
    };
    check(&g);
    // The next run without the config in its input keeps the one in the output directory.
    let out = tempfile::tempdir().expect("tmp");
    write(out.path(), &g).expect("writes");
    let g2 = generate(&Options {
        existing: Some(out.path().to_path_buf()),
        ..widget_opts()
    })
    .expect("generates");
    assert!(g2.files.iter().all(|(p, _)| !p.starts_with("tests")));
    check(&g2);
    write(out.path(), &g2).expect("writes");
    assert!(out.path().join("tests/scorecard/config.yaml").is_file());
    // The bundle image carries it (the label names the directory).
    let b = load_bundle(out.path()).expect("loads");
    let img = olmctl::oci::bundle_image::build(&b, 0, None).expect("builds");
    assert_eq!(
        img.labels
            .get("operators.operatorframework.io.test.config.v1")
            .map(String::as_str),
        Some("tests/scorecard/")
    );
    // Two configs: refused, naming the first.
    let mut two = widget_opts();
    let cfg2 = cfg_dir.path().join("again.yaml");
    std::fs::write(
        &cfg2,
        std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("name: config", "name: other"),
    )
    .unwrap();
    two.manifests.extend([cfg, cfg2]);
    let e = generate(&two).expect_err("two configs").to_string();
    assert!(e.contains("a second scorecard Configuration"), "{e}");
}
