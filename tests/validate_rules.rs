//! One hand-written invalid catalog per rule: each asserts the code, the file, the line (and the
//! column where the rule points at a field value), and the subject. Plus opm's reference cases
//! (operator-registry `alpha/model/model_test.go`) and things opm accepts that must not be flagged.

mod common;

use common::*;
use olmctl::diag::Severity;

const CH_STABLE: &str = "---
schema: olm.channel
package: foo
name: stable
entries:
- name: foo.v1.0.0
";

fn base() -> String {
    format!("{PKG}{CH_STABLE}{}", bundle("1.0.0"))
}

fn pkg_and_bundle() -> String {
    format!("{PKG}{}", bundle("1.0.0"))
}

fn channel_and_bundle() -> String {
    format!("{CH_STABLE}{}", bundle("1.0.0"))
}

/// (code, base.yaml content, bad file name, bad file content, line, column)
struct Case {
    code: &'static str,
    base: String,
    file: &'static str,
    bad: String,
    line: u32,
    col: Option<u32>,
}

fn case(code: &'static str, base: String, bad: &str, line: u32, col: Option<u32>) -> Case {
    Case {
        code,
        base,
        file: "bad.yaml",
        bad: bad.to_string(),
        line,
        col,
    }
}

fn bundle_with_props(props: &str) -> String {
    format!(
        "---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/foo/bundle:v1
properties:
{props}"
    )
}

fn cases() -> Vec<Case> {
    let entry_channel = |entries: &str| {
        format!("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n{entries}")
    };
    let deprecations =
        |entries: &str| format!("---\nschema: olm.deprecations\npackage: foo\nentries:\n{entries}");
    let three = format!(
        "{PKG}{}{}{}",
        bundle("1.0.0"),
        bundle("2.0.0"),
        bundle("3.0.0")
    );
    let two = format!("{PKG}{}{}", bundle("1.0.0"), bundle("2.0.0"));
    vec![
        // Syntax and envelopes.
        case("FBC001", base(), "schema: olm.x\n  bad: x\n", 2, Some(6)),
        Case {
            file: "bad.json",
            bad: "{\"schema\": \"x.y\",\n \"a\": tru}\n".into(),
            ..case("FBC001", base(), "", 2, None)
        },
        case("FBC002", base(), "- a\n", 1, Some(1)),
        case("FBC002", base(), "---\nname: x\n", 2, Some(1)),
        case("FBC002", base(), "schema: x.y\nSchema: x.y\n", 2, Some(1)),
        // Fields.
        case(
            "FBC003",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n  replaces: 7\n"),
            7,
            Some(13),
        ),
        case(
            "FBC004",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n  replace: foo.v0.9.0\n"),
            7,
            Some(3),
        ),
        case(
            "FBC005",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n  Replaces: foo.v0.9.0\n"),
            7,
            Some(3),
        ),
        case(
            "FBC006",
            channel_and_bundle(),
            "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\nicon:\n  base64data: \"a$b=\"\n  mediatype: image/png\n",
            6,
            Some(15),
        ),
        // Packages.
        case(
            "FBC010",
            base(),
            "---\nschema: olm.package\ndefaultChannel: x\n",
            2,
            Some(1),
        ),
        case("FBC011", base(), PKG, 2, Some(1)),
        case(
            "FBC012",
            base(),
            "---\nschema: olm.package\nname: foo.bar\ndefaultChannel: x\n",
            2,
            Some(1),
        ),
        case(
            "FBC013",
            channel_and_bundle(),
            "---\nschema: olm.package\nname: foo\n",
            2,
            Some(1),
        ),
        case(
            "FBC014",
            channel_and_bundle(),
            "---\nschema: olm.package\nname: foo\ndefaultChannel: beta\n",
            2,
            Some(1),
        ),
        case("FBC015", String::new(), PKG, 2, Some(1)),
        case(
            "FBC016",
            channel_and_bundle(),
            "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\nicon:\n  base64data: aGVsbG8=\n  mediatype: text/plain\n",
            7,
            Some(14),
        ),
        // Channels.
        case(
            "FBC020",
            base(),
            "---\nschema: olm.channel\npackage: bar\nname: x\nentries:\n- name: a\n",
            2,
            Some(1),
        ),
        case(
            "FBC021",
            base(),
            "---\nschema: olm.channel\npackage: foo\nentries:\n- name: foo.v1.0.0\n",
            2,
            Some(1),
        ),
        case("FBC022", base(), CH_STABLE, 2, Some(1)),
        case(
            "FBC023",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n- name: foo.v1.0.0\n"),
            7,
            None,
        ),
        case(
            "FBC024",
            pkg_and_bundle(),
            "---\nschema: olm.channel\npackage: foo\nname: stable\nentries: []\n",
            2,
            Some(1),
        ),
        case(
            "FBC025",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n- name: foo.v9.0.0\n  replaces: foo.v1.0.0\n"),
            7,
            None,
        ),
        case(
            "FBC026",
            two.clone(),
            &entry_channel(
                "- name: foo.v1.0.0\n  replaces: foo.v2.0.0\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n",
            ),
            2,
            Some(1),
        ),
        case(
            "FBC027",
            two.clone(),
            &entry_channel("- name: foo.v1.0.0\n- name: foo.v2.0.0\n"),
            2,
            Some(1),
        ),
        case(
            "FBC028",
            three.clone(),
            &entry_channel(
                "- name: foo.v1.0.0\n  replaces: foo.v2.0.0\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v3.0.0\n  replaces: foo.v1.0.0\n",
            ),
            6,
            None,
        ),
        case(
            "FBC029",
            three.clone(),
            &entry_channel(
                "- name: foo.v1.0.0\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v3.0.0\n  skips:\n  - foo.v2.0.0\n",
            ),
            6,
            None,
        ),
        case(
            "FBC030",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n  skips:\n  - \"\"\n"),
            6,
            None,
        ),
        case(
            "FBC031",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n  skipRange: '>v0.1.0'\n"),
            7,
            Some(14),
        ),
        case(
            "FBC032",
            pkg_and_bundle(),
            &entry_channel("- name: foo.v1.0.0\n- replaces: foo.v1.0.0\n"),
            7,
            None,
        ),
        // Bundles.
        case(
            "FBC040",
            base(),
            "---\nschema: olm.bundle\nname: x.v1\nimage: quay.io/x/y:v1\n",
            2,
            Some(1),
        ),
        case(
            "FBC041",
            base(),
            "---\nschema: olm.bundle\npackage: bar\nname: bar.v1\nimage: quay.io/x/y:v1\n",
            2,
            Some(1),
        ),
        case("FBC042", base(), &bundle("1.0.0"), 2, Some(1)),
        case(
            "FBC043",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: foo\n    version: 1\n",
            ),
            10,
            Some(14),
        ),
        case(
            "FBC044",
            format!("{PKG}{CH_STABLE}"),
            "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/bundle:v1\n",
            2,
            Some(1),
        ),
        case(
            "FBC045",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: bar\n    version: 1.0.0\n",
            ),
            7,
            None,
        ),
        case(
            "FBC046",
            format!("{PKG}{CH_STABLE}"),
            "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/Foo/b:v1\nproperties:\n- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n",
            5,
            Some(8),
        ),
        case(
            "FBC047",
            format!("{PKG}{CH_STABLE}"),
            "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/b:v1\nproperties:\n- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\nrelatedImages:\n- image: quay.io/x@sha256:abc\n",
            10,
            None,
        ),
        case(
            "FBC048",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0.1\n",
            ),
            7,
            None,
        ),
        case(
            "FBC049",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n    release: '!!!'\n",
            ),
            7,
            None,
        ),
        case("FBC050", base(), &bundle("2.0.0"), 2, Some(1)),
        case(
            "FBC051",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n    release: '1'\n",
            ),
            2,
            Some(1),
        ),
        case(
            "FBC052",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0+b1\n    release: '1'\n",
            ),
            7,
            None,
        ),
        case(
            "FBC053",
            format!("{PKG}{CH_STABLE}"),
            "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nproperties:\n- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n",
            2,
            Some(1),
        ),
        Case {
            base: String::new(),
            ..case(
                "FBC054",
                String::new(),
                &format!(
                    "{PKG}{}---\nschema: olm.bundle\npackage: foo\nname: foo.other\nimage: quay.io/foo/b:v1\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: 1.0.0}}\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n- name: foo.other\n  replaces: foo.v1.0.0\n",
                    bundle("1.0.0")
                ),
                2,
                Some(1),
            )
        },
        case(
            "FBC055",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n- type: olm.csv.metadata\n  value: {displayName: A}\n- type: olm.csv.metadata\n  value: {displayName: B}\n",
            ),
            11,
            None,
        ),
        case(
            "FBC056",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n- type: olm.maxOpenShiftVersion\n  value: 4.10\n",
            ),
            10,
            Some(10),
        ),
        case(
            "FBC057",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n- type: olm.package.required\n  value: {packageName: bar, versionRange: '^1.0.0'}\n",
            ),
            10,
            Some(10),
        ),
        case(
            "FBC058",
            format!("{PKG}{CH_STABLE}"),
            &bundle_with_props(
                "- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\n- type: olm.gvk\n  value: {group: a.io, kind: '', version: v1}\n",
            ),
            10,
            Some(10),
        ),
        case(
            "FBC059",
            format!("{PKG}{CH_STABLE}"),
            "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: quay.io/foo/b:v1\nproperties:\n- type: olm.package\n  value: {packageName: foo, version: 1.0.0}\nrelatedImages:\n- image: \"\"\n  name: x\n",
            10,
            None,
        ),
        // Deprecations.
        case(
            "FBC060",
            base(),
            "---\nschema: olm.deprecations\nentries:\n- reference: {schema: olm.package}\n  message: gone\n",
            2,
            Some(1),
        ),
        case(
            "FBC061",
            base(),
            "---\nschema: olm.deprecations\npackage: bar\nentries:\n- reference: {schema: olm.package}\n  message: gone\n",
            2,
            Some(1),
        ),
        Case {
            base: format!(
                "{}{}",
                base(),
                deprecations("- reference: {schema: olm.package}\n  message: gone\n")
            ),
            ..case(
                "FBC062",
                String::new(),
                &deprecations(
                    "- reference: {schema: olm.channel, name: stable}\n  message: gone\n",
                ),
                2,
                Some(1),
            )
        },
        case(
            "FBC063",
            base(),
            &deprecations("- reference: {name: stable}\n  message: gone\n"),
            5,
            None,
        ),
        case(
            "FBC064",
            base(),
            &deprecations(
                "- reference: {schema: olm.package}\n  message: a\n- reference: {schema: olm.package}\n  message: b\n",
            ),
            7,
            None,
        ),
        case(
            "FBC065",
            base(),
            &deprecations("- reference: {schema: olm.bundle, name: foo.v9.0.0}\n  message: gone\n"),
            5,
            None,
        ),
        case(
            "FBC066",
            base(),
            &deprecations("- reference: {schema: olm.package}\n  message: \"\"\n"),
            5,
            None,
        ),
        // Custom schemas.
        case(
            "FBC070",
            base(),
            "---\nschema: \"#bad\"\nname: x\n",
            2,
            Some(1),
        ),
        case(
            "FBC071",
            format!("{}---\nschema: x.custom\npackage: foo\nname: a\n", base()),
            "---\nschema: x.custom\npackage: foo\nname: a\n",
            2,
            Some(1),
        ),
    ]
}

#[test]
fn every_code_has_a_failing_case_at_the_right_place() {
    let cases = cases();
    for c in &cases {
        let mut files = vec![(c.file, c.bad.as_str())];
        if !c.base.is_empty() {
            files.push(("a.yaml", c.base.as_str()));
        }
        let f = findings(&files);
        one_at(&f, c.code, c.file, c.line, c.col);
    }
    let covered: std::collections::BTreeSet<&str> = cases.iter().map(|c| c.code).collect();
    for code in olmctl::checks::fbc::CODES {
        assert!(
            covered.contains(code.code),
            "no test case for {}",
            code.code
        );
    }
}

#[test]
fn minimal_catalog_is_clean() {
    let f = findings(&[("foo/catalog.yaml", &base())]);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn all_findings_are_reported_in_one_run() {
    let bad = format!(
        "{PKG}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n  skipRange: '^1'\n- name: foo.v2.0.0\n{}---\nschema: olm.bundle\npackage: foo\nname: foo.v2.0.0\nimage: quay.io/Bad/x:v2\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: '2.0'}}\n",
        bundle("1.0.0")
    );
    let f = findings(&[("c.yaml", &bad)]);
    let codes: Vec<&str> = f.iter().map(|x| x.code).collect();
    for want in ["FBC027", "FBC031", "FBC046", "FBC048"] {
        assert!(codes.contains(&want), "missing {want} in {codes:?}");
    }
}

#[test]
fn subjects_name_package_channel_and_bundle() {
    let f = findings(&[
        ("base.yaml", &pkg_and_bundle()),
        (
            "bad.yaml",
            "---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n  skips: ['']\n",
        ),
    ]);
    let h = one_at(&f, "FBC030", "bad.yaml", 6, None);
    assert_eq!(h.subject.package.as_deref(), Some("foo"));
    assert_eq!(h.subject.channel.as_deref(), Some("stable"));
    assert_eq!(h.subject.bundle.as_deref(), Some("foo.v1.0.0"));
}

#[test]
fn unknown_field_suggests_the_real_one() {
    let f = findings(&[
        ("base.yaml", &pkg_and_bundle()),
        (
            "bad.yaml",
            "---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n  skip_range: '>=0.1.0 <1.0.0'\n",
        ),
    ]);
    let h = one_at(&f, "FBC004", "bad.yaml", 7, Some(3));
    assert_eq!(h.severity, Severity::Warning);
    assert_eq!(h.help.as_deref(), Some("did you mean `skipRange`?"));
}

// opm's reference cases (alpha/model/model_test.go TestValidReplacesChain, TestChannelHead).

fn channel_case(entries: &str) -> Vec<olmctl::diag::Finding> {
    let three = format!(
        "{PKG}{}{}{}",
        bundle("1.0.0"),
        bundle("2.0.0"),
        bundle("3.0.0")
    );
    findings(&[
        ("base.yaml", &three),
        (
            "ch.yaml",
            &format!("---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n{entries}"),
        ),
    ])
}

#[test]
fn opm_stranded_case() {
    let f = channel_case(
        "- name: foo.v3.0.0\n  skips: [foo.v2.0.0]\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v1.0.0\n",
    );
    let h = one_at(&f, "FBC029", "ch.yaml", 10, None);
    assert_eq!(
        h.message,
        "channel contains one or more stranded bundles: foo.v1.0.0"
    );
    assert_eq!(errors(&f).len(), 1, "{f:#?}");
}

#[test]
fn opm_skipped_replaces_stranded_case() {
    let f = channel_case(
        "- name: foo.v3.0.0\n  replaces: foo.v2.0.0\n  skips: [foo.v2.0.0]\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v1.0.0\n",
    );
    let h = one_at(&f, "FBC029", "ch.yaml", 11, None);
    assert!(h.message.ends_with(": foo.v1.0.0"), "{}", h.message);
}

#[test]
fn opm_cycle_no_hops_is_no_head() {
    let f = channel_case(
        "- name: foo.v1.0.0\n  replaces: foo.v1.0.0\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v3.0.0\n  replaces: foo.v2.0.0\n",
    );
    let h = one_at(&f, "FBC028", "ch.yaml", 6, None);
    assert_eq!(
        h.message,
        "detected cycle in replaces chain of upgrade graph: foo.v1.0.0 -> foo.v1.0.0"
    );
}

#[test]
fn opm_cycle_multiple_hops_covering_all_is_no_head() {
    let f = channel_case(
        "- name: foo.v1.0.0\n  replaces: foo.v3.0.0\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n- name: foo.v3.0.0\n  replaces: foo.v2.0.0\n",
    );
    let h = one_at(&f, "FBC026", "ch.yaml", 2, Some(1));
    assert_eq!(h.message, "no channel head found in graph");
}

#[test]
fn multiple_heads_are_sorted() {
    let f = channel_case("- name: foo.v3.0.0\n- name: foo.v1.0.0\n- name: foo.v2.0.0\n");
    let h = one_at(&f, "FBC027", "ch.yaml", 2, Some(1));
    assert_eq!(
        h.message,
        "multiple channel heads found in graph: foo.v1.0.0, foo.v2.0.0, foo.v3.0.0"
    );
}

#[test]
fn release_versions_normalize_names_and_count_as_distinct_versions() {
    let rel = |name: &str, release: &str| {
        format!(
            "---\nschema: olm.bundle\npackage: foo\nname: {name}\nimage: quay.io/foo/b:v1\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: 1.0.0, release: '{release}'}}\n"
        )
    };
    let text = format!(
        "{PKG}{}{}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo-v1.0.0-1\n- name: foo-v1.0.0-2\n  replaces: foo-v1.0.0-1\n",
        rel("foo-v1.0.0-1", "1"),
        rel("foo-v1.0.0-2", "2")
    );
    let f = findings(&[("c.yaml", &text)]);
    assert!(f.is_empty(), "{f:#?}");
    let dup = text
        .replace("release: '2'", "release: '1'")
        .replace("foo-v1.0.0-2", "foo-v1.0.0-1x");
    let f = findings(&[("c.yaml", &dup)]);
    let h = one_at(&f, "FBC054", "c.yaml", 2, Some(1));
    assert_eq!(
        h.message,
        "duplicate versions found in bundles: [{1.0.0-1: [foo-v1.0.0-1, foo-v1.0.0-1x]}]"
    );
}

// Things opm accepts: must not be flagged as errors.

#[test]
fn opm_accepted_graphs_are_not_errors() {
    // A dangling replaces at the tail, skips naming missing bundles, and a skipRange that would
    // cover the head: the head rule ignores skipRange and versions.
    let f = channel_case(
        "- name: foo.v1.0.0\n  replaces: foo.v0.9.0\n  skips: [foo.v0.1.0]\n- name: foo.v2.0.0\n  replaces: foo.v1.0.0\n  skipRange: '>=0.1.0 <9.0.0'\n- name: foo.v3.0.0\n  replaces: foo.v2.0.0\n",
    );
    assert!(errors(&f).is_empty(), "{f:#?}");
}

#[test]
fn build_metadata_makes_versions_distinct_like_opm() {
    let b = |name: &str, v: &str| {
        format!(
            "---\nschema: olm.bundle\npackage: foo\nname: {name}\nimage: quay.io/foo/b:v1\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: '{v}'}}\n"
        )
    };
    let text = format!(
        "{PKG}{}{}---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: a\n- name: b\n  replaces: a\n",
        b("a", "1.0.0+1"),
        b("b", "1.0.0+2")
    );
    let f = findings(&[("c.yaml", &text)]);
    assert!(f.is_empty(), "{f:#?}");
}

// Loading.

#[test]
fn indexignore_is_honoured() {
    let readme = "# A catalog\n\nSome: [text\n";
    let with_ignore = findings(&[
        ("foo/catalog.yaml", &base()),
        ("README.md", readme),
        (".indexignore", "README.md\n"),
    ]);
    assert!(with_ignore.is_empty(), "{with_ignore:#?}");
    let without = findings(&[("foo/catalog.yaml", &base()), ("README.md", readme)]);
    assert!(!errors(&without).is_empty());
    assert!(without.iter().all(|f| {
        f.location
            .as_ref()
            .is_some_and(|l| l.file.ends_with("README.md"))
    }));
    // Patterns are scoped to their directory.
    let scoped = findings(&[
        ("foo/catalog.yaml", &base()),
        ("docs/README.md", readme),
        ("docs/.indexignore", "*.md\n"),
    ]);
    assert!(scoped.is_empty(), "{scoped:#?}");
}

#[test]
fn json_and_yaml_files_mix_in_one_tree() {
    let json = r#"{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1.0.0"}]}"#;
    let f = findings(&[("a/index.json", json), ("b/bundles.yaml", &bundle("1.0.0"))]);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn malformed_json_reports_position() {
    let f = findings(&[(
        "x.json",
        "{\"schema\": \"olm.package\",\n  \"name\": \"a\"\n  \"x\": 1}\n",
    )]);
    let h = one_at(&f, "FBC001", "x.json", 3, Some(3));
    assert!(h.message.starts_with("cannot parse file:"), "{}", h.message);
}

#[test]
fn non_utf8_file_is_an_error_with_position() {
    let dir = write_tree(&[("foo/catalog.yaml", &base())]);
    std::fs::write(dir.path().join("logo.png"), b"ok\n\x89PNG\x00\xff").expect("write");
    let f = validate_dir(dir.path());
    one_at(&f, "FBC001", "logo.png", 2, Some(1));
}
