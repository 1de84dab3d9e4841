//! Bad input never panics: random damage to the demo bundle's CSV and CRD (truncation, inserted
//! bytes, swapped indentation) goes through load, every validation suite, render and generate.

mod common;

use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use proptest::prelude::*;

/// Applies `edits` (position fraction, kind, byte) to `text`, keeping it UTF-8.
fn damage(text: &str, edits: &[(f64, u8, char)]) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for &(at, kind, c) in edits {
        if s.is_empty() {
            break;
        }
        let i = ((s.len() as f64) * at) as usize % s.len();
        match kind % 4 {
            0 => s.truncate(i),
            1 => s.insert(i, c),
            2 => {
                s.remove(i);
            }
            _ => s[i] = c,
        }
    }
    s.into_iter().collect()
}

fn chars() -> impl Strategy<Value = char> {
    prop::sample::select(vec![
        ' ', '\n', '\t', ':', '-', '[', ']', '{', '}', '"', '\'', '#', '&', '*', '!', '|', '>',
        '%', '@', '`', ',', '?', 'a', '0', 'é',
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn damaged_bundles_never_panic(
        csv_edits in prop::collection::vec((0.0f64..1.0, any::<u8>(), chars()), 1..6),
        crd_edits in prop::collection::vec((0.0f64..1.0, any::<u8>(), chars()), 0..4),
    ) {
        let csv = damage(CSV, &csv_edits);
        let crd = damage(CRD, &crd_edits);
        let dir = common::write_tree(&[
            ("manifests/demo.clusterserviceversion.yaml", &csv),
            ("manifests/widgets.crd.yaml", &crd),
            ("metadata/annotations.yaml", ANNOTATIONS),
        ]);
        if let Ok(b) = olmctl::bundle::load::load_bundle(dir.path()) {
            let findings = olmctl::checks::bundle::validate(&b);
            // Whatever was damaged, every finding names a file.
            prop_assert!(findings.iter().all(|f| f.location.is_some()));
            let _ = olmctl::bundle::render::render(
                &b,
                "quay.io/demo/bundle:1",
                olmctl::bundle::render::ObjectMode::CsvMetadata,
            );
        }
        // The same files as generator input (with a deployment so a CSV can be built).
        let dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: 'x/y:1'}]\n";
        let input = common::write_tree(&[
            ("base.yaml", &csv),
            ("m/crd.yaml", &crd),
            ("m/dep.yaml", dep),
        ]);
        let opts = olmctl::bundle::generate::Options {
            manifests: vec![input.path().join("m")],
            csv_base: Some(input.path().join("base.yaml")),
            package: "demo".into(),
            version: "1.2.0".into(),
            channels: vec!["stable".into()],
            ..Default::default()
        };
        if let Err(e) = olmctl::bundle::generate::generate(&opts) {
            // Errors name a file.
            let text = e.to_string();
            prop_assert!(text.contains(".yaml") || text.contains("<arguments>"), "{}", text);
        }
    }
}
