//! Property tests for safe extraction: whatever a layer holds, extraction never panics, never
//! writes outside the target and never leaves a link that points outside it.

mod common;

use std::path::Path;

use common::hostile::hostile_tar;
use olmctl::oci::extract::{Budget, Limits, Select, apply_layer};
use proptest::prelude::*;

fn component() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "..", ".", "", ".wh.a", ".wh..wh..opq"])
}

fn path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(component(), 1..4))
        .prop_map(|(abs, parts)| format!("{}{}", if abs { "/" } else { "" }, parts.join("/")))
}

fn kind() -> impl Strategy<Value = tar::EntryType> {
    prop::sample::select(vec![
        tar::EntryType::Regular,
        tar::EntryType::Directory,
        tar::EntryType::Symlink,
        tar::EntryType::Link,
        tar::EntryType::Fifo,
    ])
}

/// Every symlink below `root` resolves (when its target exists) inside `root`.
fn links_stay_inside(root: &Path, dir: &Path) -> bool {
    let canon_root = root.canonicalize().unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.file_type().is_symlink() {
            if let Ok(t) = p.canonicalize()
                && !t.starts_with(&canon_root)
            {
                return false;
            }
        } else if m.is_dir() && !links_stay_inside(root, &p) {
            return false;
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn extraction_stays_inside(entries in prop::collection::vec((path(), kind(), path()), 1..8)) {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("dest");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&dest).unwrap();
        std::fs::create_dir(&outside).unwrap();
        let raw: Vec<(&str, tar::EntryType, &str, &[u8])> = entries
            .iter()
            .map(|(p, k, l)| (p.as_str(), *k, l.as_str(), &b"x"[..]))
            .collect();
        let tar = hostile_tar(&raw);
        let mut budget = Budget::new(Limits::default());
        let _ = apply_layer(&tar, "layer", None, &dest, &Select::default(), &mut budget);
        let mut names: Vec<String> = std::fs::read_dir(tmp.path()).unwrap().flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        prop_assert_eq!(names, vec!["dest".to_string(), "outside".to_string()]);
        prop_assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        prop_assert!(links_stay_inside(&dest, &dest));
    }
}
