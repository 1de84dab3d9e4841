//! `check upgrade --preflight olmv1`: what OLM v1's CRD upgrade-safety preflight (crdify, as
//! operator-controller runs it) refuses although olmctl's own verdict passes it, as errors with
//! the field path; the same changes are warnings (SCH014) without it. One failing and one
//! passing upgrade per item.

mod common;

use std::path::{Path, PathBuf};

use olmctl::bundle::load::load_bundle;
use olmctl::checks::safety::{Options, Policy, check_upgrade};
use olmctl::diag::{Finding, Severity};

fn data() -> PathBuf {
    common::root().join("tests/data/upgrade")
}

/// A widgets CRD whose `spec` has `props` (YAML flow mappings, one per line) in every version of
/// `versions` (name, extra props); the first version is the storage version.
fn crd(versions: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.io\nspec:\n  group: demo.io\n  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}\n  scope: Namespaced\n  versions:\n",
    );
    for (i, (name, props)) in versions.iter().enumerate() {
        s.push_str(&format!(
            "  - name: {name}\n    served: true\n    storage: {}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n{props}",
            i == 0
        ));
    }
    s
}

/// `spec` keywords and properties, indented for [`crd`].
fn spec(lines: &str) -> String {
    lines
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect()
}

fn check(old_crd: &str, new_crd: &str, olmv1: bool) -> Vec<Finding> {
    let tmp = tempfile::tempdir().expect("tmp");
    let copy = |dest: &Path, layers: &[PathBuf], crd: &str| {
        for l in layers {
            for e in common::files_in(l) {
                let to = dest.join(e.strip_prefix(l).unwrap());
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&e, &to).unwrap();
            }
        }
        std::fs::write(dest.join("manifests/widgets.crd.yaml"), crd).unwrap();
    };
    let (o, n) = (tmp.path().join("old"), tmp.path().join("new"));
    copy(&o, &[data().join("base")], old_crd);
    copy(&n, &[data().join("base"), data().join("next")], new_crd);
    let opts = Options {
        policy: Policy {
            preflight_olmv1: olmv1,
            ..Policy::default()
        },
        ..Options::default()
    };
    check_upgrade(
        &load_bundle(&o).expect("old"),
        &load_bundle(&n).expect("new"),
        &opts,
    )
}

fn errors(f: &[Finding]) -> Vec<String> {
    f.iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| {
            format!(
                "{} {} {}",
                x.code,
                x.path.as_deref().unwrap_or(""),
                x.message
            )
        })
        .collect()
}

/// The item: under --preflight olmv1 exactly one error, of `code` at `path`; without it a
/// warning (SCH014) or the same error (SCH010); the passing pair is clean either way.
fn item(what: &str, (old, bad, good): (&str, &str, &str), code: &str, path: &str) {
    let with = check(old, bad, true);
    let e = errors(&with);
    assert_eq!(e.len(), 1, "{what}: {e:#?}");
    assert!(
        e[0].starts_with(&format!("{code} {path} ")),
        "{what}: {e:#?}"
    );
    let without = check(old, bad, false);
    let hit = without.iter().find(|x| x.code == code).expect(what);
    let want = if code == "SCH014" {
        Severity::Warning
    } else {
        Severity::Error
    };
    assert_eq!(hit.severity, want, "{what}");
    for olmv1 in [true, false] {
        let f = check(old, good, olmv1);
        assert!(f.is_empty(), "{what} (passing, olmv1 {olmv1}): {f:#?}");
    }
}

#[test]
fn a_removed_cel_rule() {
    let with_rule = crd(&[(
        "v1",
        &spec(
            "x-kubernetes-validations:\n- rule: self.size <= 8\nproperties:\n  size: {type: integer}",
        ),
    )]);
    let without = crd(&[("v1", &spec("properties:\n  size: {type: integer}"))]);
    item(
        "CEL rule removed",
        (&with_rule, &without, &with_rule),
        "SCH014",
        "^.spec",
    );
}

#[test]
fn a_change_inside_additional_properties() {
    let labels = |n: u32| {
        crd(&[(
            "v1",
            &spec(&format!(
                "properties:\n  labels: {{type: object, additionalProperties: {{type: string, maxLength: {n}}}}}"
            )),
        )])
    };
    // Raising maxLength inside is fine for olmctl and crdify's nested check, but crdify's
    // unhandled diff of the parent still sees the additionalProperties schema change.
    item(
        "additionalProperties",
        (&labels(10), &labels(20), &labels(10)),
        "SCH014",
        "^.spec.labels",
    );
}

#[test]
fn exclusive_bounds_removed() {
    let bound = |kw: &str| {
        crd(&[(
            "v1",
            &spec(&format!(
                "properties:\n  size: {{type: integer, maximum: 10, minimum: 1{kw}}}"
            )),
        )])
    };
    for kw in ["exclusiveMaximum", "exclusiveMinimum"] {
        let on = bound(&format!(", {kw}: true"));
        item(kw, (&on, &bound(""), &on), "SCH014", "^.spec.size");
    }
}

#[test]
fn string_to_int_or_string() {
    let string = crd(&[("v1", &spec("properties:\n  port: {type: string}"))]);
    let ios = crd(&[(
        "v1",
        &spec("properties:\n  port: {x-kubernetes-int-or-string: true}"),
    )]);
    item(
        "int-or-string",
        (&string, &ios, &string),
        "SCH014",
        "^.spec.port",
    );
}

#[test]
fn a_one_of_branch_added() {
    let one_of = |branches: &str| {
        crd(&[(
            "v1",
            &spec(&format!(
                "oneOf: [{branches}]\nproperties:\n  a: {{type: string}}\n  b: {{type: string}}"
            )),
        )])
    };
    let old = one_of("{required: [a]}, {required: [b]}");
    // An added branch: an object with a and b now matches two of {a}, {b}, {a, b}? It matches
    // all three, which oneOf rejects. Reordering is no change.
    item(
        "oneOf branch added",
        (
            &old,
            &one_of("{required: [a]}, {required: [b]}, {required: [a, b]}"),
            &one_of("{required: [b]}, {required: [a]}"),
        ),
        "SCH010",
        "^.spec",
    );
}

#[test]
fn a_field_missing_from_a_higher_served_version() {
    // v1beta1 has `legacy`, v1 does not; conversion by webhook would be needed either way, so
    // both bundles say so (CRV006 is ratcheted: the old release had the same pair).
    let two = |v1: &str| {
        crd(&[
            (
                "v1",
                &spec(&format!("properties:\n  size: {{type: integer}}{v1}")),
            ),
            (
                "v1beta1",
                &spec("properties:\n  size: {type: integer}\n  legacy: {type: string}"),
            ),
        ])
    };
    let old = two("\n  legacy: {type: string}");
    let new = two("");
    let with = check(&old, &new, true);
    let e = errors(&with);
    assert!(
        e.iter().any(|x| x.starts_with("SCH014 ^.spec.legacy ")),
        "{e:#?}"
    );
    let without = check(&old, &new, false);
    let hit = without
        .iter()
        .find(|x| x.code == "SCH014")
        .expect("a warning");
    assert_eq!(hit.severity, Severity::Warning);
    // Passing: the field stays in both versions.
    let f = check(&old, &old, true);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn the_flag_and_the_policy_key() {
    let with_rule = crd(&[(
        "v1",
        &spec(
            "x-kubernetes-validations:\n- rule: self.size <= 8\nproperties:\n  size: {type: integer}",
        ),
    )]);
    let without = crd(&[("v1", &spec("properties:\n  size: {type: integer}"))]);
    let tmp = tempfile::tempdir().unwrap();
    let mk = |name: &str, layers: &[PathBuf], crd: &str| {
        let d = tmp.path().join(name);
        for l in layers {
            for e in common::files_in(l) {
                let to = d.join(e.strip_prefix(l).unwrap());
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&e, &to).unwrap();
            }
        }
        std::fs::write(d.join("manifests/widgets.crd.yaml"), crd).unwrap();
        d
    };
    let old = mk("old", &[data().join("base")], &with_rule);
    let new = mk("new", &[data().join("base"), data().join("next")], &without);
    std::fs::write(tmp.path().join("policy.yaml"), "preflight: olmv1\n").unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(common::olmctl_bin())
            .args(["check", "upgrade"])
            .arg(&old)
            .arg(&new)
            .args(extra)
            .output()
            .unwrap()
    };
    assert_eq!(run(&[]).status.code(), Some(0), "a warning only");
    let o = run(&["--preflight", "olmv1"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("SCH014") && out.contains("refused by OLM v1's CRD preflight"),
        "{out}"
    );
    let policy = tmp.path().join("policy.yaml");
    let o = run(&["--policy", policy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        run(&["--policy", policy.to_str().unwrap(), "--preflight", "none"])
            .status
            .code(),
        Some(0),
        "the flag wins"
    );
}
