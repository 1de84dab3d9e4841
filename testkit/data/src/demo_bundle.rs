//! A small clean registry+v1 bundle ("demo") that every bundle check accepts, and helpers that
//! validate it after an edit. Tests of each check mutate it to trigger exactly one code.

use olmctl::diag::Finding;

pub const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.channels.v1: stable,fast\n  operators.operatorframework.io.bundle.channel.default.v1: stable\n";

pub const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.io\nspec:\n  group: demo.io\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n";

pub const CSV: &str = r#"apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: demo.v1.2.0
  annotations:
    alm-examples: '[{"apiVersion": "demo.io/v1", "kind": "Widget", "metadata": {"name": "w"}}]'
    olm.skipRange: '>=1.0.0 <1.2.0'
    capabilities: Basic Install
    categories: 'Database, Storage'
spec:
  version: 1.2.0
  displayName: Demo
  minKubeVersion: 1.25.0
  replaces: demo.v1.1.0
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: SingleNamespace, supported: true}
  - {type: MultiNamespace, supported: false}
  - {type: AllNamespaces, supported: true}
  customresourcedefinitions:
    owned:
    - {name: widgets.demo.io, version: v1, kind: Widget, displayName: Widget, description: A widget.}
  webhookdefinitions:
  - {generateName: vwidget.demo.io, type: ValidatingAdmissionWebhook, deploymentName: demo-operator, containerPort: 443, admissionReviewVersions: [v1], sideEffects: None}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: demo-operator
        spec:
          template:
            spec:
              serviceAccountName: demo-operator
              containers:
              - {name: manager, image: 'quay.io/demo/op:1.2.0', resources: {requests: {cpu: 10m, memory: 64Mi}}}
  relatedImages:
  - {name: manager, image: 'quay.io/demo/op:1.2.0'}
  description: Runs widgets.
  maturity: stable
  keywords: [widgets]
  provider: {name: Demo Inc, url: 'https://demo.io'}
  maintainers:
  - {name: Demo Team, email: team@demo.io}
  links:
  - {name: Docs, url: 'https://demo.io/docs'}
  icon:
  - {base64data: iVBORw0KGgo=, mediatype: image/png}
"#;

/// Validates the base bundle with `edit` applied to the CSV text and `extra` files added.
pub fn run(edit: impl Fn(&str) -> String, extra: &[(&str, &str)]) -> Vec<Finding> {
    run_with(edit, extra, &olmctl::checks::bundle::Options::default())
}

/// Like [`run`], with validation options.
pub fn run_with(
    edit: impl Fn(&str) -> String,
    extra: &[(&str, &str)],
    opts: &olmctl::checks::bundle::Options,
) -> Vec<Finding> {
    let csv = edit(CSV);
    let mut files: Vec<(&str, &str)> = vec![
        ("manifests/demo.clusterserviceversion.yaml", &csv),
        ("manifests/widgets.crd.yaml", CRD),
        ("metadata/annotations.yaml", ANNOTATIONS),
    ];
    for (p, t) in extra {
        files.retain(|(q, _)| q != p);
        files.push((p, t));
    }
    let dir = super::write_tree(&files);
    let b = olmctl::bundle::load::load_bundle(dir.path()).expect("loads");
    olmctl::checks::bundle::validate_with(&b, opts)
}

/// The codes of `f`, in order, without adjacent repeats.
pub fn codes(f: &[Finding]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = f.iter().map(|x| x.code).collect();
    v.dedup();
    v
}

/// The identity edit.
pub fn same(s: &str) -> String {
    s.to_string()
}

/// Asserts that `hit` (a finding of `code`) is about the JSON path `path` (unless empty) at
/// line `line` of its file (unless 0).
pub fn assert_at(hit: &Finding, code: &str, path: &str, line: u32) {
    if !path.is_empty() {
        assert_eq!(hit.path.as_deref(), Some(path), "{code}: {hit:#?}");
    }
    if line > 0 {
        assert_eq!(
            hit.location.as_ref().map(|l| l.line),
            Some(line),
            "{code}: {hit:#?}"
        );
    }
}

/// The codes of `f` with `prefix` (one suite), in order, without adjacent repeats.
pub fn codes_with(f: &[Finding], prefix: &str) -> Vec<&'static str> {
    codes(f)
        .into_iter()
        .filter(|c| c.starts_with(prefix))
        .collect()
}

/// The findings of `code` alone, or of its suite, or of `all`: each selection that names a code
/// or its suite must report exactly what the unselected run reports for it.
pub fn assert_selections(
    label: &str,
    found: &[Finding],
    run: &dyn Fn(&olmctl::checks::bundle::Options) -> Vec<Finding>,
) {
    // The codes to sweep are those of `found`; the reference is the run of every suite, the
    // optional ones included (which `all` leaves out).
    use olmctl::checks::bundle::{OPTIONAL, SUITES};
    let optional = SUITES
        .iter()
        .filter(|(_, p, _)| OPTIONAL.contains(p))
        .map(|(n, _, _)| n.to_string())
        .collect();
    let all = run(&olmctl::checks::bundle::Options {
        optional,
        ..Default::default()
    });
    let is_optional =
        |c: &str| OPTIONAL.contains(&c.trim_end_matches(|d: char| d.is_ascii_digit()));
    let show = |f: &[Finding]| -> Vec<String> {
        f.iter()
            .map(|x| {
                let at = x.location.as_ref().map(|l| {
                    let file = std::path::Path::new(&*l.file)
                        .file_name()
                        .map(|n| n.to_owned());
                    (file, l.line, l.column)
                });
                format!("{} {:?} {at:?} {}", x.code, x.path, x.message)
            })
            .collect()
    };
    let mut codes: Vec<&str> = found.iter().map(|f| f.code).collect();
    codes.sort_unstable();
    codes.dedup();
    for code in codes {
        let prefix = code.trim_end_matches(|c: char| c.is_ascii_digit());
        let suite = SUITES
            .iter()
            .find(|(_, p, _)| *p == prefix)
            .map(|(n, _, _)| *n)
            .expect("a suite per prefix");
        let of_suite = |c: &str| c.trim_end_matches(|d: char| d.is_ascii_digit()) == prefix;
        for sel in [code, suite, "all"] {
            let keep = |c: &str| match sel {
                "all" => !is_optional(c),
                s if s == code => c == code,
                _ => of_suite(c),
            };
            let want: Vec<Finding> = all.iter().filter(|f| keep(f.code)).cloned().collect();
            let got = run(&olmctl::checks::bundle::Options {
                select: vec![sel.to_string()],
                ..Default::default()
            });
            assert_eq!(show(&got), show(&want), "{label}: --select {sel}");
        }
    }
}
