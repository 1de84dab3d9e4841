//! Property tests over whole catalogs: random blobs built from catalog-shaped fragments (right
//! and wrong types, missing and misspelled fields, random graphs) never panic the loader, the
//! checks or the writer; every finding has a location; a catalog without errors survives
//! `fmt` (written, reloaded and validated again) unchanged.

mod common;

use proptest::prelude::*;

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("foo".to_string()),
        Just("foo.v1.0.0".to_string()),
        Just("foo.v2.0.0".to_string()),
        Just("stable".to_string()),
        Just("1.0.0".to_string()),
        Just("2.0.0".to_string()),
        Just("'>=1.0.0 <2.0.0'".to_string()),
        Just("'^1'".to_string()),
        Just("7".to_string()),
        Just("null".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("quay.io/foo/b:v1".to_string()),
        "[a-z.]{0,6}",
    ]
}

fn field() -> impl Strategy<Value = (String, String)> {
    let key = prop_oneof![
        Just("name"),
        Just("package"),
        Just("defaultChannel"),
        Just("image"),
        Just("replaces"),
        Just("replace"),
        Just("Name"),
        Just("skipRange"),
        Just("message"),
    ];
    (key, scalar()).prop_map(|(k, v)| (k.to_string(), v))
}

fn blob() -> impl Strategy<Value = String> {
    let schema = prop_oneof![
        Just("olm.package"),
        Just("olm.channel"),
        Just("olm.bundle"),
        Just("olm.deprecations"),
        Just("x.custom"),
        Just(""),
    ];
    let entries = proptest::collection::vec(
        (
            prop_oneof![Just("foo.v1.0.0"), Just("foo.v2.0.0"), Just("foo.v3.0.0")],
            proptest::option::of(prop_oneof![
                Just("foo.v1.0.0"),
                Just("foo.v2.0.0"),
                Just("x")
            ]),
            proptest::collection::vec(
                prop_oneof![Just("foo.v1.0.0"), Just("foo.v2.0.0"), Just("")],
                0..2,
            ),
        ),
        0..4,
    );
    let props = proptest::collection::vec(
        (
            prop_oneof![
                Just("olm.package"),
                Just("olm.gvk"),
                Just("olm.csv.metadata"),
                Just("olm.maxOpenShiftVersion"),
                Just("x")
            ],
            prop_oneof![
                Just("{packageName: foo, version: 1.0.0}".to_string()),
                Just("{packageName: foo, version: 2.0.0}".to_string()),
                Just("{group: a, kind: K, version: v1}".to_string()),
                Just("4.10".to_string()),
                Just("[1]".to_string()),
                Just("x".to_string()),
            ],
        ),
        0..3,
    );
    (
        schema,
        proptest::collection::vec(field(), 0..4),
        entries,
        props,
    )
        .prop_map(|(schema, fields, entries, props)| {
            let mut s = String::from("---\n");
            if !schema.is_empty() {
                s.push_str(&format!("schema: {schema}\n"));
            }
            for (k, v) in fields {
                s.push_str(&format!("{k}: {v}\n"));
            }
            if !entries.is_empty() {
                s.push_str("entries:\n");
                for (n, r, skips) in entries {
                    s.push_str(&format!("- name: {n}\n"));
                    if let Some(r) = r {
                        s.push_str(&format!("  replaces: {r}\n"));
                    }
                    if !skips.is_empty() {
                        let q: Vec<String> = skips.iter().map(|x| format!("'{x}'")).collect();
                        s.push_str(&format!("  skips: [{}]\n", q.join(", ")));
                    }
                }
            }
            if !props.is_empty() {
                s.push_str("properties:\n");
                for (t, v) in props {
                    s.push_str(&format!("- type: {t}\n  value: {v}\n"));
                }
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_catalogs_never_panic(blobs in proptest::collection::vec(blob(), 0..8)) {
        let text: String = blobs.concat();
        let dir = common::write_tree(&[("foo/catalog.yaml", &text)]);
        let loaded = olmctl::fbc::load::load(&[dir.path().to_path_buf()]).expect("readable");
        let findings = olmctl::checks::fbc::validate(&loaded);
        for f in &findings {
            let loc = f.location.as_ref().expect("every finding has a location");
            prop_assert!(loc.line >= 1, "{f:?}");
        }
        let mut out = String::new();
        for (_, nodes) in olmctl::fbc::write::canonical(&loaded.cfg) {
            olmctl::fbc::write::write_blobs(&nodes, olmctl::fbc::write::Format::Yaml, &mut out);
        }
        if common::errors(&findings).is_empty() {
            let again = common::write_tree(&[("c.yaml", &out)]);
            let reloaded = olmctl::fbc::load::load(&[again.path().to_path_buf()]).expect("readable");
            prop_assert!(common::errors(&olmctl::checks::fbc::validate(&reloaded)).is_empty(), "{out}");
            let mut out2 = String::new();
            for (_, nodes) in olmctl::fbc::write::canonical(&reloaded.cfg) {
                olmctl::fbc::write::write_blobs(&nodes, olmctl::fbc::write::Format::Yaml, &mut out2);
            }
            prop_assert_eq!(out, out2);
        }
    }
}
