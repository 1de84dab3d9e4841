//! `bundle validate`'s optional suites: `objects` (OBJ codes, api's object validator) and
//! `community` (COM codes, api's community validator): each code's failing and passing case,
//! selection (only when named), operator-sdk's selector syntax, and the CLI's optional values.

mod common;

use common::demo_bundle::{assert_selections, codes, run, run_with, same};
use olmctl::checks::bundle::Options;
use olmctl::diag::Finding;

fn opts(select: &[&str]) -> Options {
    let mut o = Options {
        select: select.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    o.check_select().expect("valid selection");
    o
}

fn only<'a>(f: &'a [Finding], prefix: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.code.starts_with(prefix)).collect()
}

const PDB: &str = "manifests/pdb.yaml";
const ROLE: &str = "manifests/role.yaml";

fn pdb(spec: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: demo}}\nspec:\n  selector: {{matchLabels: {{app: demo}}}}\n  {spec}\n"
    )
}

fn role(kind: &str, rule: &str) -> String {
    format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{name: demo-extra}}\nrules:\n- {rule}\n"
    )
}

#[test]
fn objects_codes_fail_and_pass() {
    let prio = |g: &str| {
        format!(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: demo-high}}\nvalue: 1000\nglobalDefault: {g}\n"
        )
    };
    let csv_rule = |s: &str| {
        s.replace(
            "  install:\n    strategy: deployment\n    spec:\n",
            "  install:\n    strategy: deployment\n    spec:\n      clusterPermissions:\n      - serviceAccountName: demo-operator\n        rules:\n        - {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n",
        )
    };
    type Edit = fn(&str) -> String;
    /// (code, CSV edit, extra files, expected count, JSON path)
    type Case = (
        &'static str,
        Edit,
        Vec<(&'static str, String)>,
        usize,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "OBJ001",
            same,
            vec![(PDB, pdb("maxUnavailable: 0"))],
            1,
            "spec.maxUnavailable",
        ),
        (
            "OBJ001",
            same,
            vec![(PDB, pdb("maxUnavailable: '0%'"))],
            1,
            "spec.maxUnavailable",
        ),
        (
            "OBJ001",
            same,
            vec![(PDB, pdb("maxUnavailable: '50%'"))],
            0,
            "",
        ),
        ("OBJ001", same, vec![(PDB, pdb("maxUnavailable: 1"))], 0, ""),
        (
            "OBJ002",
            same,
            vec![(PDB, pdb("minAvailable: '100%'"))],
            1,
            "spec.minAvailable",
        ),
        (
            "OBJ002",
            same,
            vec![(PDB, pdb("minAvailable: '50%'"))],
            0,
            "",
        ),
        (
            "OBJ003",
            same,
            vec![("manifests/prio.yaml", prio("true"))],
            1,
            "globalDefault",
        ),
        (
            "OBJ003",
            same,
            vec![("manifests/prio.yaml", prio("false"))],
            0,
            "",
        ),
        (
            "OBJ004",
            same,
            vec![(
                ROLE,
                role(
                    "Role",
                    "{apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [create]}",
                ),
            )],
            1,
            "rules[0]",
        ),
        (
            "OBJ004",
            same,
            vec![(
                ROLE,
                role(
                    "ClusterRole",
                    "{apiGroups: [policy], resources: [poddisruptionbudgets], verbs: [get, list]}",
                ),
            )],
            0,
            "",
        ),
        (
            "OBJ005",
            same,
            vec![(
                ROLE,
                role(
                    "ClusterRole",
                    "{apiGroups: [security.openshift.io], resources: [securitycontextconstraints], resourceNames: [restricted], verbs: [patch]}",
                ),
            )],
            1,
            "rules[0]",
        ),
        (
            "OBJ005",
            same,
            vec![(
                ROLE,
                role(
                    "ClusterRole",
                    "{apiGroups: [security.openshift.io], resources: [securitycontextconstraints], resourceNames: [demo-scc], verbs: [patch, use]}",
                ),
            )],
            0,
            "",
        ),
        // Named SCCs of its own: fine.
        (
            "OBJ006",
            same,
            vec![(
                ROLE,
                role(
                    "ClusterRole",
                    "{apiGroups: [security.openshift.io], resources: [securitycontextconstraints], resourceNames: [demo-scc], verbs: [update]}",
                ),
            )],
            0,
            "",
        ),
        // No resourceNames: every SCC, the defaults included.
        (
            "OBJ006",
            same,
            vec![(
                ROLE,
                role(
                    "ClusterRole",
                    "{apiGroups: [security.openshift.io], resources: [securitycontextconstraints], verbs: [update]}",
                ),
            )],
            1,
            "rules[0]",
        ),
        // The CSV's own permissions, with wildcards: both PDB writes and default SCCs.
        (
            "OBJ004",
            csv_rule,
            vec![],
            1,
            "spec.install.spec.clusterPermissions[0].rules[0]",
        ),
        (
            "OBJ006",
            csv_rule,
            vec![],
            1,
            "spec.install.spec.clusterPermissions[0].rules[0]",
        ),
    ];
    let mut failing = std::collections::BTreeSet::new();
    for (code, edit, files, n, path) in &cases {
        let extra: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
        let f = run_with(edit, &extra, &opts(&["objects"]));
        let hits: Vec<&Finding> = f.iter().filter(|x| x.code == *code).collect();
        assert_eq!(hits.len(), *n, "{code} {files:?}: {f:#?}");
        if let Some(h) = hits.first() {
            assert_eq!(h.path.as_deref(), Some(*path), "{code}");
            failing.insert(*code);
        }
        // Not run unless named: by default, with `all`, or another suite.
        assert!(
            only(&run(edit, &extra), "OBJ").is_empty(),
            "{code}: ran by default"
        );
        assert!(
            only(&run_with(edit, &extra, &opts(&["all"])), "OBJ").is_empty(),
            "{code}: ran with all"
        );
        let named = run_with(edit, &extra, &opts(&["objects"]));
        assert_selections(code, &named, &|o| run_with(edit, &extra, o));
    }
    let all: std::collections::BTreeSet<&str> = olmctl::checks::bundle::objects::CODES
        .iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(failing, all);
    // Messages say what and where, as upstream words them.
    let f = run_with(
        same,
        &[(PDB, &pdb("maxUnavailable: 0"))],
        &opts(&["OBJ001"]),
    );
    assert_eq!(
        f[0].message,
        "PodDisruptionBudget demo: maxUnavailable field cannot be set to 0 or 0%"
    );
}

/// A Role of rbac.authorization.k8s.io/v1beta1: removed in Kubernetes 1.22.
fn v1beta1_role() -> (&'static str, String) {
    (
        ROLE,
        "apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: Role\nmetadata: {name: demo-old}\nrules: []\n".to_string(),
    )
}

fn with_max(v: &str) -> impl Fn(&str) -> String {
    let v = v.to_string();
    move |s: &str| {
        s.replace(
            "    capabilities: Basic Install\n",
            &format!("    capabilities: Basic Install\n    olm.properties: '{v}'\n"),
        )
    }
}

fn community(
    edit: &dyn Fn(&str) -> String,
    extra: &[(&str, &str)],
    dockerfile: Option<&str>,
) -> Vec<Finding> {
    let mut o = opts(&["community"]);
    o.index_file = dockerfile.map(|t| ("bundle.Dockerfile".into(), t.to_string()));
    run_with(edit, extra, &o)
}

#[test]
fn community_codes_fail_and_pass() {
    let (rf, rt) = v1beta1_role();
    let old = [(rf, rt.as_str())];
    let ok_max = with_max(r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.8"}]"#);
    let label = |v: &str| {
        format!(
            "FROM scratch\nLABEL operators.operatorframework.io.bundle.package.v1=demo\nLABEL com.redhat.openshift.versions=\"{v}\"\n"
        )
    };

    // No removed API: nothing to say, even without the property or the label.
    assert!(community(&same, &[], None).is_empty());
    // A clean bundle with removed APIs: the property below 4.9 and a range ending at 4.8.
    assert_eq!(
        codes(&community(&ok_max, &old, Some(&label("v4.6-v4.8")))),
        Vec::<&str>::new()
    );
    assert!(community(&ok_max, &old, Some(&label("=v4.8"))).is_empty());

    let cases: Vec<(&str, Vec<Finding>)> = vec![
        ("COM001", community(&same, &old, Some(&label("v4.6-v4.8")))),
        (
            "COM001",
            community(
                &with_max(r#"[{"type": "olm.package", "value": "x"}]"#),
                &old,
                Some(&label("v4.6-v4.8")),
            ),
        ),
        (
            "COM002",
            community(&with_max("not json"), &old, Some(&label("v4.6-v4.8"))),
        ),
        (
            "COM002",
            community(
                &with_max(r#"[{"type": "olm.maxOpenShiftVersion", "value": "four"}]"#),
                &old,
                Some(&label("v4.6-v4.8")),
            ),
        ),
        (
            "COM003",
            community(
                &with_max(r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.9"}]"#),
                &old,
                Some(&label("v4.6-v4.8")),
            ),
        ),
        ("COM004", community(&ok_max, &old, None)),
        ("COM005", community(&ok_max, &old, Some("FROM scratch\n"))),
        ("COM006", community(&ok_max, &old, Some(&label("four")))),
        ("COM007", community(&ok_max, &old, Some(&label("v4.6")))),
        (
            "COM007",
            community(&ok_max, &old, Some(&label("v4.6-v4.10"))),
        ),
        ("COM007", community(&ok_max, &old, Some(&label("=v4.9")))),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (code, f) in &cases {
        assert_eq!(codes(f), [*code], "{f:#?}");
        seen.insert(*code);
    }
    // Every selection naming a code or its suite reports it (the Dockerfile given).
    let docker = label("v4.6");
    assert_selections("COM007", &community(&ok_max, &old, Some(&docker)), &|o| {
        let mut o = o.clone();
        o.index_file = Some(("bundle.Dockerfile".into(), docker.clone()));
        run_with(&ok_max, &old, &o)
    });
    let all: std::collections::BTreeSet<&str> = olmctl::checks::bundle::community::CODES
        .iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(seen, all);
    // The Dockerfile finding points at the label's line.
    let f = community(&ok_max, &old, Some(&label("v4.6")));
    assert_eq!(f[0].location.as_ref().map(|l| l.line), Some(3));
    // Without index-path, the label in metadata/annotations.yaml counts.
    let ann = format!(
        "{}  com.redhat.openshift.versions: v4.6-v4.8\n",
        common::demo_bundle::ANNOTATIONS
    );
    let f = community(
        &ok_max,
        &[old[0], ("metadata/annotations.yaml", &ann)],
        None,
    );
    assert!(f.is_empty(), "{f:#?}");
    // Not run by default.
    assert!(only(&run(same, &old), "COM").is_empty());
}

#[test]
fn operator_sdk_selectors_and_optional_values() {
    // suite=operatorframework is operatorhub + deprecated-apis + good-practices.
    let mut o = Options {
        select: vec!["suite=operatorframework".into()],
        ..Default::default()
    };
    o.check_select().unwrap();
    assert_eq!(
        o.select,
        ["operatorhub", "deprecated-apis", "good-practices"]
    );
    let mut o = Options {
        optional: vec!["name=objects".into(), "name=community".into()],
        ..Default::default()
    };
    o.check_select().unwrap();
    assert_eq!(o.optional, ["objects", "community"]);
    assert!(
        o.runs("CSV") && o.runs("OBJ") && o.runs("COM"),
        "defaults plus the optional ones"
    );
    let mut bad = Options {
        select: vec!["name=nope".into()],
        ..Default::default()
    };
    assert!(
        bad.check_select()
            .unwrap_err()
            .contains("operator-sdk selector")
    );

    // The CLI: --select-optional and --optional-values index-path=FILE.
    let (rf, rt) = v1beta1_role();
    let csv = with_max(r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.8"}]"#)(
        common::demo_bundle::CSV,
    );
    let dir = common::write_tree(&[
        ("b/manifests/demo.clusterserviceversion.yaml", &csv),
        ("b/manifests/widgets.crd.yaml", common::demo_bundle::CRD),
        (&format!("b/{rf}"), &rt),
        (
            "b/metadata/annotations.yaml",
            common::demo_bundle::ANNOTATIONS,
        ),
        (
            "good.Dockerfile",
            "LABEL com.redhat.openshift.versions=\"v4.6-v4.8\"\n",
        ),
        (
            "bad.Dockerfile",
            "LABEL com.redhat.openshift.versions=\"v4.6\"\n",
        ),
    ]);
    let run_cli = |args: &[&str]| {
        let o = std::process::Command::new(common::olmctl_bin())
            .args(["bundle", "validate"])
            .arg(dir.path().join("b"))
            .args(args)
            .output()
            .expect("runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let p = |f: &str| format!("index-path={}", dir.path().join(f).display());
    let (code, out) = run_cli(&[
        "--select",
        "community",
        "--optional-values",
        &p("good.Dockerfile"),
    ]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run_cli(&[
        "--select-optional",
        "name=community",
        "--optional-values",
        &p("bad.Dockerfile"),
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("COM007") && out.contains("bad.Dockerfile:1:1"),
        "{out}"
    );
    assert!(out.contains("API001"), "the default suites ran too: {out}");
    let (code, out) = run_cli(&[
        "--select",
        "community",
        "--optional-values",
        "index-path=/nonexistent/Dockerfile",
    ]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("/nonexistent/Dockerfile"), "{out}");
    let (code, out) = run_cli(&["--optional-values", "color=blue"]);
    assert_eq!(code, Some(2), "{out}");
}
