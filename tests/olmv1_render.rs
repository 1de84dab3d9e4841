//! `olmv1::render` against operator-controller's own regression data (tests/data/olmv1-render,
//! README there): the same objects, in upstream's harness order (kind, namespace, name), equal as
//! parsed objects. Go's typed marshalling writes zero values the renderer's input did not have
//! (`status: {}`, `resources: {}`, `strategy: {}`, `conditions: null`) and drops
//! `creationTimestamp: null`; both sides are compared with null values and empty objects
//! removed, which the API server treats as absent.

use std::path::{Path, PathBuf};

use olmctl::bundle::load::{load_bundle, parse_file};
use olmctl::olmv1::render::{CertProvider, Options, render};
use serde_json::Value;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/olmv1-render")
}

/// Null values and empty objects removed, recursively (an object emptied by that goes too).
fn normalized(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let m: serde_json::Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| normalized(v).map(|v| (k.clone(), v)))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Value::Array(a) => Some(Value::Array(
            a.iter()
                .map(|x| normalized(x).unwrap_or(Value::Null))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

fn key(v: &Value) -> (String, String, String) {
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    (
        s(&v["kind"]),
        s(&v["metadata"]["namespace"]),
        s(&v["metadata"]["name"]),
    )
}

fn expected(case: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(case)
        .expect("expected dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let docs = parse_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            serde_json::from_str(&docs[0].to_json()).expect("JSON")
        })
        .collect()
}

fn check(bundle: &str, case: &str, install: &str, watch: Option<&str>) {
    // The deployment config of the case, when upstream's case has one.
    let config = data()
        .join("deployment-config")
        .join(format!("{case}.json"));
    let deployment_config: Option<Value> = config.exists().then(|| {
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("json")
    });
    let b = load_bundle(&data().join("bundles").join(bundle)).expect("bundle");
    let opts = Options {
        install_namespace: install.into(),
        watch_namespace: watch.map(String::from),
        cert_provider: CertProvider::None,
        operator_namespace_annotation: true,
        single_own_namespace: false,
        deployment_config,
    };
    // As a ClusterExtension's configuration, the case's watch namespace and deployment config
    // pass operator-controller's configuration schema.
    if watch.is_some() || opts.deployment_config.is_some() {
        olmctl::olmv1::render::manifests(&b, &opts)
            .unwrap_or_else(|e| panic!("{bundle} {case} as a ClusterExtension: {e}"));
    }
    let mut got = render(&b, &opts).unwrap_or_else(|e| panic!("{bundle} {case}: {e}"));
    got.sort_by_key(key);
    let want = expected(&data().join("expected-manifests").join(bundle).join(case));
    let names = |v: &[Value]| v.iter().map(key).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&want), "{bundle} {case}: the objects");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            normalized(g),
            normalized(w),
            "{bundle} {case}: {:?}",
            key(w)
        );
    }
}

#[test]
fn argocd_in_all_namespaces() {
    check(
        "argocd-operator.v0.6.0",
        "all-namespaces",
        "argocd-system",
        None,
    );
}

/// The Alpha `DeploymentConfig` gate: every option, an empty affinity, an empty node
/// affinity (upstream's three cases).
#[test]
fn argocd_with_deployment_configs() {
    for case in [
        "with-deploymentconfig-options",
        "with-empty-affinity",
        "with-empty-affinity-subtype",
    ] {
        check("argocd-operator.v0.6.0", case, "argocd-system", None);
    }
}

#[test]
fn argocd_in_a_single_namespace() {
    check(
        "argocd-operator.v0.6.0",
        "single-namespace",
        "argocd-system",
        Some("argocd-watch"),
    );
}

#[test]
fn argocd_in_its_own_namespace() {
    check(
        "argocd-operator.v0.6.0",
        "own-namespace",
        "argocd-system",
        Some("argocd-system"),
    );
}

#[test]
fn webhooks_of_every_type() {
    check(
        "webhook-operator.v0.0.5",
        "all-webhook-types",
        "webhook-system",
        None,
    );
}

fn webhook_bundle() -> olmctl::bundle::load::BundleDir {
    load_bundle(&data().join("bundles/webhook-operator.v0.0.5")).expect("bundle")
}

fn opts(provider: CertProvider, watch: Option<&str>) -> Options {
    Options {
        install_namespace: "webhook-system".into(),
        watch_namespace: watch.map(String::from),
        cert_provider: provider,
        operator_namespace_annotation: true,
        single_own_namespace: false,
        deployment_config: None,
    }
}

fn find<'a>(objs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objs.iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| {
            panic!(
                "no {kind} {name} in {:?}",
                objs.iter().map(key).collect::<Vec<_>>()
            )
        })
}

/// cert-manager (`certmanager.go`): an Issuer and a Certificate for the webhook service, the CA
/// injected into the webhook configurations and the conversion CRD, the secret mounted.
#[test]
fn cert_manager_wires_the_webhooks() {
    let objs =
        olmctl::olmv1::render::manifests(&webhook_bundle(), &opts(CertProvider::CertManager, None))
            .expect("renders");
    let svc = "webhook-operator-controller-manager-service";
    let cert = format!("{svc}-cert");
    // `ObjectNameForBaseAndSuffix(cert, "selfsigned-issuer")`: 48 + 1 + 17 bytes is over 63, so
    // the base is cut to 63 - 17 - 1 = 45 bytes.
    let issuer_name = format!("{}-selfsigned-issuer", &cert[..45]);
    assert_eq!(issuer_name.len(), 63);
    let issuer = find(&objs, "Issuer", &issuer_name);
    assert_eq!(issuer["spec"], serde_json::json!({"selfSigned": {}}));
    let c = find(&objs, "Certificate", &cert);
    assert_eq!(c["metadata"]["namespace"], "webhook-system");
    assert_eq!(c["spec"]["secretName"], cert.as_str());
    assert_eq!(c["spec"]["commonName"], format!("{svc}.webhook-system"));
    assert_eq!(
        c["spec"]["dnsNames"],
        serde_json::json!([
            format!("{svc}.webhook-system"),
            format!("{svc}.webhook-system.svc"),
            format!("{svc}.webhook-system.svc.cluster.local")
        ])
    );
    assert_eq!(c["spec"]["duration"], "17520h0m0s");
    assert_eq!(c["spec"]["renewBefore"], "24h0m0s");
    assert_eq!(
        c["spec"]["issuerRef"],
        serde_json::json!({"name": issuer_name})
    );
    let inject = format!("webhook-system/{cert}");
    for (kind, name) in [
        ("ValidatingWebhookConfiguration", "vwebhooktest-v1.kb.io"),
        ("MutatingWebhookConfiguration", "mwebhooktest-v1.kb.io"),
        (
            "CustomResourceDefinition",
            "webhooktests.webhook.operators.coreos.io",
        ),
    ] {
        let o = find(&objs, kind, name);
        assert_eq!(
            o["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            inject.as_str(),
            "{kind}"
        );
    }
    let d = find(&objs, "Deployment", "webhook-operator-controller-manager");
    let volumes = d["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .expect("volumes");
    let webhook_cert = volumes
        .iter()
        .find(|v| v["name"] == "webhook-cert")
        .expect("webhook-cert volume");
    assert_eq!(webhook_cert["secret"]["secretName"], cert.as_str());
    let mounts = d["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
        .as_array()
        .expect("mounts");
    assert!(mounts.iter().any(|m| m["name"] == "webhook-cert"
        && m["mountPath"] == "/tmp/k8s-webhook-server/serving-certs"));
    // The generators' order: the certificate objects last.
    assert_eq!(
        objs.last().map(|o| &o["kind"]),
        Some(&Value::from("Certificate"))
    );
}

/// OpenShift's service CA: annotations only, no objects of its own.
#[test]
fn the_service_ca_annotates() {
    let objs = olmctl::olmv1::render::manifests(
        &webhook_bundle(),
        &opts(CertProvider::OpenshiftServiceCa, None),
    )
    .expect("renders");
    let svc = find(
        &objs,
        "Service",
        "webhook-operator-controller-manager-service",
    );
    assert_eq!(
        svc["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"],
        "webhook-operator-controller-manager-service-cert"
    );
    let v = find(
        &objs,
        "ValidatingWebhookConfiguration",
        "vwebhooktest-v1.kb.io",
    );
    assert_eq!(
        v["metadata"]["annotations"]["service.beta.openshift.io/inject-cabundle"],
        "true"
    );
    assert!(
        !objs
            .iter()
            .any(|o| o["kind"] == "Certificate" || o["kind"] == "Issuer")
    );
}

/// What operator-controller refuses, in its words.
#[test]
fn refusals_are_operator_controllers() {
    let b = webhook_bundle();
    let e = olmctl::olmv1::render::manifests(&b, &opts(CertProvider::None, None)).unwrap_err();
    assert_eq!(
        e.0,
        "unsupported bundle: webhookDefinitions are not supported: certificate provider is nil"
    );
    // A watch namespace for an AllNamespaces-only bundle: a ClusterExtension's configuration
    // is refused by its schema (no watchNamespace for such a bundle) before rendering...
    for ns in ["x", "webhook-system"] {
        let e = olmctl::olmv1::render::manifests(&b, &opts(CertProvider::CertManager, Some(ns)))
            .unwrap_err();
        assert_eq!(
            e.0,
            "invalid ClusterExtension configuration: invalid configuration: unknown field \"watchNamespace\""
        );
    }
    // ...while the renderer itself, given the target namespace, refuses it in its own words.
    let e =
        olmctl::olmv1::render::render(&b, &opts(CertProvider::CertManager, Some("x"))).unwrap_err();
    assert_eq!(
        e.0,
        "invalid option(s): invalid target namespaces [x]: supported install modes \
         [AllNamespaces] do not support target namespaces [x]"
    );
    let e =
        olmctl::olmv1::render::render(&b, &opts(CertProvider::CertManager, Some("webhook-system")))
            .unwrap_err();
    assert_eq!(
        e.0,
        "invalid option(s): invalid target namespaces [webhook-system]: supported install modes \
         [AllNamespaces] do not support targeting own namespace"
    );
}

/// The bundle as operator-controller's bundle source reads it (`fsBundleSource.GetBundle`): every
/// document of a file, lists flattened, dotfiles read (opm skips them), subdirectories refused.
#[test]
fn the_bundle_is_read_as_operator_controller_reads_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("b");
    olmctl_testdata::copy_tree(&data().join("bundles/webhook-operator.v0.0.5"), &dir);
    std::fs::write(
        dir.join("manifests/extra.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\napiVersion: v1\n\
         kind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: two\n\
         - apiVersion: v1\n  kind: Secret\n  metadata:\n    name: three\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("manifests/.hidden.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dot\n",
    )
    .expect("write");
    let b = load_bundle(&dir).expect("bundle");
    let objs = olmctl::olmv1::render::manifests(&b, &opts(CertProvider::CertManager, None))
        .expect("renders");
    let others: Vec<(String, String)> = objs
        .iter()
        .filter(|o| o["kind"] == "ConfigMap" || o["kind"] == "Secret")
        .map(|o| {
            let k = key(o);
            (k.0, format!("{}/{}", k.1, k.2))
        })
        .collect();
    assert_eq!(
        others,
        [
            ("ConfigMap".to_string(), "webhook-system/dot".to_string()),
            ("ConfigMap".into(), "webhook-system/one".into()),
            ("ConfigMap".into(), "webhook-system/two".into()),
            ("Secret".into(), "webhook-system/three".into()),
        ]
    );
    std::fs::create_dir(dir.join("manifests/sub")).expect("mkdir");
    let b = load_bundle(&dir).expect("bundle");
    let e =
        olmctl::olmv1::render::manifests(&b, &opts(CertProvider::CertManager, None)).unwrap_err();
    assert_eq!(
        e.0,
        "subdirectories are not allowed within the \"manifests\" directory of the bundle image \
         filesystem: found \"manifests/sub\""
    );
}

/// Dependencies are refused at resolution (`NoDependencyValidation`), before rendering: the
/// first dependency property of the bundle's catalog entry, as opm renders it. Community
/// bundles with each kind.
#[test]
fn dependencies_are_refused_as_the_resolver_refuses_them() {
    let cases = [
        (
            "ndmspc-operator/0.11.4",
            "ndmspc-operator.v0.11.4",
            "olm.package.required",
        ),
        (
            "cluster-aas-operator/0.0.1",
            "cluster-aas-operator.v0.0.1",
            "olm.gvk.required",
        ),
        (
            "dbaas-operator/0.5.0",
            "dbaas-operator.v0.5.0",
            "olm.constraint",
        ),
    ];
    for (dir, name, prop) in cases {
        let b = load_bundle(
            &olmctl_testdata::shared_fixtures()
                .join("operators")
                .join(dir),
        )
        .expect("bundle");
        let e = olmctl::olmv1::render::for_install(&b, &opts(CertProvider::CertManager, None))
            .unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "bundle \"{name}\" has a dependency declared via property \"{prop}\" which is \
                 currently not supported"
            )
        );
    }
}

const CSV_FILE: &str = "manifests/webhook-operator.clusterserviceversion.yaml";

/// webhook-operator v0.0.5 with its CSV's text edited by `edit`, rendered with cert-manager.
fn edited_webhook_bundle(edit: impl Fn(&str) -> String) -> Result<Vec<Value>, String> {
    edited_webhook_bundle_with(edit, olmctl::olmv1::render::render)
}

/// The webhook bundle with its CSV edited, rendered by `renderer` (upstream's renderer alone,
/// or [`olmctl::olmv1::render::manifests`] with what the API server would refuse).
fn edited_webhook_bundle_with(
    edit: impl Fn(&str) -> String,
    renderer: fn(
        &olmctl::bundle::load::BundleDir,
        &olmctl::olmv1::render::Options,
    ) -> Result<Vec<Value>, olmctl::olmv1::render::Refused>,
) -> Result<Vec<Value>, String> {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("b");
    olmctl_testdata::copy_tree(&data().join("bundles/webhook-operator.v0.0.5"), &dir);
    let csv = dir.join(CSV_FILE);
    let text = std::fs::read_to_string(&csv).expect("csv");
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changes the CSV");
    std::fs::write(&csv, edited).expect("write");
    let b = load_bundle(&dir).expect("bundle");
    renderer(&b, &opts(CertProvider::CertManager, None)).map_err(|e| e.0)
}

fn with_container_port(port: &str) -> Result<Vec<Value>, String> {
    edited_webhook_bundle(|t| t.replace("containerPort: 443", &format!("containerPort: {port}")))
}

/// A webhook's `containerPort` is an int32 read as Kubernetes' unstructured converter reads it
/// (`source.go :: GetBundle`, `runtime.DefaultUnstructuredConverter.FromUnstructured`): 0, -1
/// and 65536 are int32s and rendered as given (the Service falls back to 443 for a port below
/// 1, as `getWebhookServicePort` does); an integer past int32 is truncated (2^32 is 0) and so is
/// an integral float past int64 (`1e+20`, 0 as amd64 converts it); a fraction or a string is
/// refused with the converter's message, naming the file.
#[test]
fn webhook_ports_are_read_as_int32() {
    for (given, port, service) in [
        ("0", 0, 443),
        ("-1", -1, 443),
        ("65536", 65536, 65536),
        ("4294967296", 0, 443),
        ("4294967297", 1, 1),
        ("1e+20", 0, 443),
        ("443.0", 443, 443),
    ] {
        let objs = with_container_port(given).unwrap_or_else(|e| panic!("{given}: {e}"));
        let v = find(
            &objs,
            "ValidatingWebhookConfiguration",
            "vwebhooktest-v1.kb.io",
        );
        assert_eq!(
            v["webhooks"][0]["clientConfig"]["service"]["port"],
            serde_json::json!(port),
            "{given}"
        );
        let crd = find(
            &objs,
            "CustomResourceDefinition",
            "webhooktests.webhook.operators.coreos.io",
        );
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"],
            serde_json::json!(port),
            "{given}"
        );
        let svc = find(
            &objs,
            "Service",
            "webhook-operator-controller-manager-service",
        );
        assert_eq!(
            svc["spec"]["ports"],
            serde_json::json!([{"name": service.to_string(), "port": service, "targetPort": 9443}]),
            "{given}"
        );
    }
    let refused = |e: &str| format!("error parsing objects in \"{CSV_FILE}\": {e}");
    for (given, e) in [
        ("1.5", "cannot convert float64 to int32"),
        ("\"443\"", "unrecognized type: int32"),
        ("true", "unrecognized type: int32"),
        ("[443]", "unrecognized type: int32"),
    ] {
        assert_eq!(with_container_port(given), Err(refused(e)), "{given}");
    }
    // Rendered, the ports upstream's decoder leaves outside 1..65535 would be refused by the
    // API server (`ValidateWebhookService`'s `IsValidPortNum`): printed, they are refused.
    for (given, port) in [
        ("0", "0"),
        ("-1", "-1"),
        ("65536", "65536"),
        ("4294967296", "0"),
        ("1e+20", "0"),
    ] {
        let port_edit =
            |t: &str| t.replace("containerPort: 443", &format!("containerPort: {given}"));
        let e = edited_webhook_bundle_with(port_edit, olmctl::olmv1::render::manifests)
            .expect_err(given);
        assert_eq!(
            e,
            format!(
                "the API server would refuse a rendered object: ValidatingWebhookConfiguration.admissionregistration.k8s.io \"vwebhooktest-v1.kb.io\" is invalid: webhooks[0].clientConfig.service.port: Invalid value: {port}: port is not valid: must be between 1 and 65535, inclusive (the CSV's webhookdefinitions[2].containerPort: OLM v1 reads it as the bundle has it, where OLM v0's CSV CRD defaults it to 443)"
            ),
            "{given}"
        );
    }
}

/// The rest of a webhook definition in its Go types: `rules` a list of RuleWithOperations,
/// `targetPort` an IntOrString (through its `UnmarshalJSON`, so `encoding/json`'s messages),
/// `timeoutSeconds` an int32, the policies strings.
#[test]
fn webhook_definitions_are_read_in_their_types() {
    let refused = |e: &str| format!("error parsing objects in \"{CSV_FILE}\": {e}");
    let rules = |to: &str| {
        let to = to.to_string();
        move |t: &str| {
            t.replacen(
                "      rules:\n",
                &format!("      rules: {to}\n      was:\n"),
                1,
            )
        }
    };
    assert_eq!(
        edited_webhook_bundle(rules("x")),
        Err(refused("cannot restore slice from string"))
    );
    assert_eq!(
        edited_webhook_bundle(rules("{}")),
        Err(refused("cannot restore slice from map"))
    );
    assert_eq!(
        edited_webhook_bundle(rules("[x]")),
        Err(refused("cannot restore struct from: string"))
    );
    assert_eq!(
        edited_webhook_bundle(rules("[{operations: [1]}]")),
        Err(refused("cannot convert int64 to v1.OperationType"))
    );
    let target = |to: &str| {
        let to = to.to_string();
        move |t: &str| t.replace("targetPort: 9443", &format!("targetPort: {to}"))
    };
    for (given, what) in [
        ("2147483648", "number 2147483648"),
        ("1.5", "number 1.5"),
        ("1e+20", "number 100000000000000000000"),
        ("true", "bool"),
        ("[1]", "array"),
    ] {
        assert_eq!(
            edited_webhook_bundle(target(given)),
            Err(refused(&format!(
                "json: cannot unmarshal {what} into Go value of type int32"
            ))),
            "{given}"
        );
    }
    // A string target port is a named port, its IntValue its number.
    let objs = edited_webhook_bundle(target("\"9443\"")).expect("renders");
    let svc = find(
        &objs,
        "Service",
        "webhook-operator-controller-manager-service",
    );
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], "9443");
    assert_eq!(
        edited_webhook_bundle(|t| t.replace("failurePolicy: Fail", "failurePolicy: 1")),
        Err(refused("cannot convert int64 to v1.FailurePolicyType"))
    );
    let objs = edited_webhook_bundle(|t| {
        t.replace(
            "failurePolicy: Fail",
            "failurePolicy: Fail\n      timeoutSeconds: 4294967306",
        )
    })
    .expect("renders");
    let m = find(
        &objs,
        "MutatingWebhookConfiguration",
        "mwebhooktest-v1.kb.io",
    );
    assert_eq!(m["webhooks"][0]["timeoutSeconds"], 10);
}

/// The install strategy and install modes in their Go types: a deployment's container port an
/// int32 (truncated past its range), its replicas an int32, install modes' `supported` a bool,
/// permissions' rules a list.
#[test]
fn the_install_strategy_is_read_in_its_types() {
    let refused = |e: &str| format!("error parsing objects in \"{CSV_FILE}\": {e}");
    let objs = edited_webhook_bundle(|t| {
        t.replace("- containerPort: 9443", "- containerPort: 4294976739")
    })
    .expect("renders");
    let d = find(&objs, "Deployment", "webhook-operator-controller-manager");
    let ports = &d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .find(|c| c["ports"].is_array())
        .expect("a container with ports")["ports"];
    assert_eq!(ports[0]["containerPort"], 9443);
    assert_eq!(
        edited_webhook_bundle(|t| t.replace("replicas: 1", "replicas: \"1\"")),
        Err(refused("unrecognized type: int32"))
    );
    assert_eq!(
        edited_webhook_bundle(|t| t.replacen("supported: true", "supported: \"true\"", 1)),
        Err(refused("unrecognized type: bool"))
    );
    assert_eq!(
        edited_webhook_bundle(|t| t.replacen("rules:\n", "rules: all\n          was:\n", 1)),
        Err(refused("cannot restore slice from string"))
    );
}
