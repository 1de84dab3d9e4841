//! `catalog graph --format html` opened in headless Chromium (Debian's `chromium`): the page
//! draws every version of the chosen package, a click on a version shows its upgrade paths,
//! search marks matches, and the page requests nothing. A screenshot of the fixture's largest
//! channel is written to `target/graph-report/` for a person to look at.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The largest channel of the fixture: (package, channel, entry names, head).
fn largest_channel() -> (String, String, BTreeSet<String>, String) {
    let mut best: Option<(String, String, BTreeSet<String>, String)> = None;
    for v in common::fixture_blobs() {
        if v["schema"] != "olm.channel" {
            continue;
        }
        let entries = v["entries"].as_array().unwrap();
        let names: BTreeSet<String> = entries
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        let mut replaced = BTreeSet::new();
        for e in entries {
            replaced.extend(e["replaces"].as_str().map(String::from));
            for s in e["skips"].as_array().into_iter().flatten() {
                replaced.insert(s.as_str().unwrap().to_string());
            }
        }
        let head = names
            .iter()
            .find(|n| !replaced.contains(*n))
            .unwrap()
            .clone();
        if best.as_ref().is_none_or(|b| names.len() > b.2.len()) {
            best = Some((
                v["package"].as_str().unwrap().into(),
                v["name"].as_str().unwrap().into(),
                names,
                head,
            ));
        }
    }
    best.unwrap()
}

/// A screenshot of `page#fragment` at `size` (WxH), written to `target/graph-report/NAME` for
/// people to look at; its bytes.
fn screenshot(page: &Path, fragment: &str, name: &str, size: &str) -> Vec<u8> {
    let shots = common::root().join("target/graph-report");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join(name);
    let _ = std::fs::remove_file(&png);
    let url = format!("file://{}#{fragment}", page.display());
    let o = chromium(&[
        &format!("--window-size={size}"),
        &format!("--screenshot={}", png.display()),
        &url,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(&png).unwrap()
}

fn chromium(args: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .expect("run chromium (Debian package chromium; scripts/test.sh installs it)")
}

/// The DOM after the page's script ran, for `page#fragment`.
fn dom(page: &Path, fragment: &str) -> String {
    let url = format!("file://{}#{fragment}", page.display());
    let o = chromium(&["--dump-dom", &url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Values of `attr` on elements whose class list starts with `class_prefix`.
fn attrs(dom: &str, class_prefix: &str, attr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in dom.split('<').skip(1) {
        let tag = part.split('>').next().unwrap_or("");
        if !tag.contains(&format!("class=\"{class_prefix}")) {
            continue;
        }
        if let Some(rest) = tag.split(&format!("{attr}=\"")).nth(1) {
            out.push(rest.split('"').next().unwrap().to_string());
        }
    }
    out
}

/// The class of the drawn `<g>` element that has all of `attributes`.
fn g_class(dom: &str, attributes: &[String]) -> String {
    let tag = dom
        .split('<')
        .find(|t| t.starts_with("g ") && attributes.iter().all(|a| t.contains(a.as_str())))
        .unwrap_or_else(|| panic!("nothing drawn with {attributes:?}"));
    tag.split("class=\"")
        .nth(1)
        .and_then(|c| c.split('"').next())
        .unwrap_or_default()
        .to_string()
}

fn report() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let o = Command::new(common::olmctl_bin())
        .args(["catalog", "graph"])
        .arg(common::fixture_catalog())
        .args(["--format", "html", "--out"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (dir, page)
}

#[test]
fn the_report_draws_every_version_and_shows_paths_in_chromium() {
    let (pkg, ch, names, head) = largest_channel();
    assert!(names.len() >= 50, "{pkg}/{ch}: {}", names.len());
    let (_dir, page) = report();
    let text = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to load, and a policy that would block it anyway.
    assert!(text.contains("Content-Security-Policy\" content=\"default-src 'none';"));
    for needle in ["<link", " src=", "<iframe", "<img"] {
        assert!(!text.contains(needle), "{needle}");
    }
    // Click the oldest entry (by name order, any entry will do) through the page's own handler.
    let oldest = names.iter().next().unwrap().clone();
    let d = dom(&page, &format!("package={pkg}&channel={ch}&click={oldest}"));
    assert!(d.contains("data-ready=\"1\""), "the script did not finish");
    assert!(
        d.contains("data-resources=\"0\""),
        "the page requested something"
    );
    let drawn: BTreeSet<String> = attrs(&d, "node", "data-name").into_iter().collect();
    assert_eq!(drawn, names, "every version of {pkg}/{ch} is drawn");
    assert!(d.contains(&format!("data-selected=\"{oldest}\"")));
    // Both paths start at the clicked version and end at the head.
    for sem in ["v0", "v1"] {
        let block = d
            .split(&format!("class=\"path {sem}\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no {sem} path shown"));
        let block = block.split("</div>").next().unwrap();
        let hops: Vec<&str> = block
            .split("<li>")
            .skip(1)
            .map(|l| l.split("</li>").next().unwrap())
            .collect();
        assert_eq!(hops.first(), Some(&oldest.as_str()), "{sem}");
        if hops.last() == Some(&head.as_str()) {
            assert!(block.contains("reaches the head"), "{sem}: {block}");
        } else {
            assert!(block.contains("stops"), "{sem}: {block}");
        }
    }
    // Search marks the versions that match.
    let q = names.iter().nth(names.len() / 2).unwrap().clone();
    let d = dom(&page, &format!("package={pkg}&channel={ch}&q={q}"));
    let marked = attrs(&d, "node", "class")
        .into_iter()
        .filter(|c| c.split(' ').any(|w| w == "match"))
        .count();
    assert_eq!(marked, names.iter().filter(|n| n.contains(&q)).count());
    // A screenshot for people.
    let bytes = screenshot(
        &page,
        &format!("package={pkg}&channel={ch}&click={head}"),
        &format!("{pkg}.png"),
        "1400,2400",
    );
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 20_000, "{} bytes", bytes.len());
    // Without a fragment the page opens on the package with the most bundles.
    let d = dom(&page, "");
    let most = common::fixture_blobs()
        .iter()
        .filter(|b| b["schema"] == "olm.bundle")
        .fold(
            std::collections::BTreeMap::<String, usize>::new(),
            |mut m, b| {
                *m.entry(b["package"].as_str().unwrap().to_string())
                    .or_default() += 1;
                m
            },
        )
        .into_iter()
        .max_by_key(|(n, c)| (*c, std::cmp::Reverse(n.clone())))
        .unwrap()
        .0;
    assert!(d.contains(&format!("<h2>{most} / ")), "opens on {most}");
    let bytes = screenshot(&page, "", "largest-package.png", "1400,1600");
    assert!(bytes.len() > 20_000);
}

/// `catalog diff --output html`: the changed package comes first, the new version is drawn as
/// added with its new edge, the removed entry as removed with its edges, and the package's
/// changes are listed; the page requests nothing.
#[test]
fn the_diff_page_colours_what_was_added_and_removed() {
    const J: &str = "jumpstarter-operator";
    let mut docs = common::fixture_blobs();
    common::copy_bundle(
        &mut docs,
        &format!("{J}.v0.9.0"),
        &format!("{J}.v0.9.1"),
        "0.9.1",
        None,
    );
    for d in docs.iter_mut() {
        if d["schema"] == "olm.channel" && d["package"] == J {
            let entries = d["entries"].as_array_mut().unwrap();
            // 0.8.1-rc.1 leaves the channel; 0.8.1 now replaces 0.8.0 directly.
            entries.retain(|e| e["name"] != format!("{J}.v0.8.1-rc.1"));
            for e in entries.iter_mut() {
                if e["name"] == format!("{J}.v0.8.1") {
                    e["replaces"] = format!("{J}.v0.8.0").into();
                }
            }
            entries.push(serde_json::json!({"name": format!("{J}.v0.9.1"), "replaces": format!("{J}.v0.9.0")}));
        }
    }
    let new = common::write_blobs(&docs);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("diff.html");
    let o = Command::new(common::olmctl_bin())
        .args(["catalog", "diff"])
        .arg(common::fixture_catalog())
        .arg(new.path())
        .args(["--output", "html"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(&page, &o.stdout).unwrap();
    let d = dom(&page, "");
    assert!(d.contains("data-ready=\"1\"") && d.contains("data-resources=\"0\""));
    // The first changed package is shown, with its changes listed.
    assert!(
        d.contains(&format!("Changes in {J}")),
        "the changed package first"
    );
    assert!(d.contains(&format!("entries added: {J}.v0.9.1")));
    let class_of = |name: &str| g_class(&d, &[format!("data-name=\"{name}\"")]);
    assert!(
        class_of(&format!("{J}.v0.9.1"))
            .split(' ')
            .any(|c| c == "added")
    );
    assert!(
        class_of(&format!("{J}.v0.8.1-rc.1"))
            .split(' ')
            .any(|c| c == "removed")
    );
    assert!(!class_of(&format!("{J}.v0.9.0")).contains("added"));
    let edge = |from: &str, to: &str| {
        g_class(
            &d,
            &[
                format!("data-from=\"{J}.v{from}\""),
                format!("data-to=\"{J}.v{to}\""),
            ],
        )
    };
    assert_eq!(edge("0.9.0", "0.9.1"), "edge replaces added");
    assert_eq!(edge("0.8.0", "0.8.1"), "edge replaces added");
    assert_eq!(edge("0.8.1-rc.1", "0.8.1"), "edge replaces removed");
    assert_eq!(edge("0.8.0", "0.8.1-rc.1"), "edge replaces removed");
    assert_eq!(edge("0.9.0-rc.1", "0.9.0-rc.2"), "edge replaces");
    let bytes = screenshot(&page, "", "diff.png", "1400,900");
    assert!(bytes.len() > 10_000);
}
