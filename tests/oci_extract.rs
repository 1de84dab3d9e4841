//! Safe extraction, entry by entry: hostile archives are refused with a message naming the
//! entry, nothing is written through symlinks, whiteouts remove what lower layers wrote.

mod common;

use std::fs;
use std::path::Path;

use common::hostile::hostile_tar;
use olmctl::oci::extract::{Budget, Limits, Select, apply_layer};
use olmctl::oci::layer::gzip;

fn apply(tar: &[u8], dest: &Path) -> Result<(), String> {
    let mut b = Budget::new(Limits::default());
    apply_layer(
        &gzip(tar),
        "layer 0",
        None,
        dest,
        &Select::default(),
        &mut b,
    )
}

#[test]
fn refuses_traversal_absolute_and_devices() {
    for (entries, want) in [
        (
            vec![("../evil", tar::EntryType::Regular, "", &b"x"[..])],
            "`..`",
        ),
        (
            vec![("a/../../evil", tar::EntryType::Regular, "", &b"x"[..])],
            "`..`",
        ),
        (
            vec![("/etc/passwd", tar::EntryType::Regular, "", &b"x"[..])],
            "absolute",
        ),
        (vec![("dev", tar::EntryType::Char, "", &b""[..])], "device"),
        (vec![("fifo", tar::EntryType::Fifo, "", &b""[..])], "FIFO"),
        (
            vec![("l", tar::EntryType::Symlink, "../../etc", &b""[..])],
            "escapes",
        ),
        (
            vec![("a/l", tar::EntryType::Symlink, "../..", &b""[..])],
            "escapes",
        ),
        (
            vec![("l", tar::EntryType::Symlink, "/etc/passwd", &b""[..])],
            "absolute",
        ),
        (
            vec![("h", tar::EntryType::Link, "/etc/passwd", &b""[..])],
            "absolute",
        ),
        (
            vec![("h", tar::EntryType::Link, "missing", &b""[..])],
            "extracted before",
        ),
    ] {
        let d = tempfile::tempdir().unwrap();
        let e = apply(&hostile_tar(&entries), d.path()).unwrap_err();
        assert!(e.contains(want), "{entries:?}: {e}");
    }
}

#[test]
fn never_writes_through_a_symlink() {
    let outside = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    // A link that stays inside is fine, but writing below it is refused: a later entry
    // could otherwise follow it wherever a replaced link points.
    let tar = hostile_tar(&[
        ("dir", tar::EntryType::Directory, "", b""),
        ("l", tar::EntryType::Symlink, "dir", b""),
        ("l/file", tar::EntryType::Regular, "", b"x"),
    ]);
    let e = apply(&tar, d.path()).unwrap_err();
    assert!(e.contains("through the symlink"), "{e}");
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[test]
fn whiteouts_remove_lower_layers() {
    let d = tempfile::tempdir().unwrap();
    apply(
        &hostile_tar(&[
            ("a/x", tar::EntryType::Regular, "", b"1"),
            ("a/y", tar::EntryType::Regular, "", b"2"),
            ("b/z", tar::EntryType::Regular, "", b"3"),
        ]),
        d.path(),
    )
    .unwrap();
    apply(
        &hostile_tar(&[
            ("a/.wh.x", tar::EntryType::Regular, "", b""),
            ("b/.wh..wh..opq", tar::EntryType::Regular, "", b""),
            ("b/new", tar::EntryType::Regular, "", b"4"),
        ]),
        d.path(),
    )
    .unwrap();
    assert!(!d.path().join("a/x").exists());
    assert!(d.path().join("a/y").exists());
    assert!(!d.path().join("b/z").exists());
    assert!(d.path().join("b/new").exists());
}
