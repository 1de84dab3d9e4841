//! `catalog graph --format html` opened in headless Chromium (Debian's `chromium`): the page
//! draws every version of the chosen package, a click on a version shows its upgrade paths,
//! search marks matches, and the page requests nothing. A screenshot of the fixture's largest
//! channel is written to `target/graph-report/` for a person to look at.
//!
//! The package overview (the default view: every version, a lane per channel) is measured in
//! the page itself: a copy of the report with a script appended records every version label's
//! bounding box and what a click highlighted into `<pre id="measure">`, read back from the DOM.

mod common;

use std::collections::{BTreeMap, BTreeSet};
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

/// The package with the most bundles in the fixture (ties: the first by name) and its bundles.
fn largest_package() -> (String, BTreeSet<String>) {
    let mut by_pkg: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for b in common::fixture_blobs() {
        if b["schema"] == "olm.bundle" {
            by_pkg
                .entry(b["package"].as_str().unwrap().to_string())
                .or_default()
                .insert(b["name"].as_str().unwrap().to_string());
        }
    }
    by_pkg
        .into_iter()
        .max_by_key(|(n, bs)| (bs.len(), std::cmp::Reverse(n.clone())))
        .unwrap()
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

/// A screenshot of an overview (`page#fragment`) for people, checked to be a real picture.
fn overview_screenshot(page: &Path, fragment: &str, name: &str, size: &str) {
    let bytes = screenshot(page, fragment, name, size);
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "{name}"
    );
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
    report_of(&common::fixture_catalog())
}

/// The report of the catalog in `catalog`.
fn report_of(catalog: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let o = Command::new(common::olmctl_bin())
        .args(["catalog", "graph"])
        .arg(catalog)
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
    let most = largest_package().0;
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

/// Appended to a copy of the report: after the page drew, records each version label's box and
/// whether it is hidden, each lane label's box, the drawing's box, and what is highlighted.
const MEASURE: &str = r#"<script>
(() => {
  const hidden = (e) => { for (; e && e.nodeType === 1; e = e.parentElement) { const s = getComputedStyle(e); if (s.display === 'none' || s.visibility === 'hidden') return true; } return false; };
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const out = {
    svg: box(document.querySelector('#graph svg')),
    labels: all('#graph .node').map((g) => { const t = g.querySelector('text'); return { name: g.getAttribute('data-name'), box: box(t), hidden: hidden(t) }; }),
    lanes: all('#graph .lane').map((g) => ({ name: g.getAttribute('data-channel'), head: g.getAttribute('data-head'), box: box(g.querySelector('text')) })),
    dots: all('#graph circle.dot.selected, #graph circle.dot.onpath').map((c) => [c.getAttribute('data-channel'), c.getAttribute('data-name')]),
    edges: all('#graph .edge.onpath').map((g) => [g.getAttribute('data-channel'), g.getAttribute('data-from') || '', g.getAttribute('data-to')]),
    channel: document.getElementById('details').getAttribute('data-channel'),
    hops: all('#details .path.v1 li').map((l) => l.textContent),
    stop: (document.querySelector('#details .path.v1 .stop') || {}).textContent || '',
  };
  const pre = document.createElement('pre');
  pre.id = 'measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"#;

/// A box as `getBoundingClientRect` gives it: left, top, width, height.
type Rect = [f64; 4];

/// A label [`MEASURE`] found: the version (or channel) it names, its box.
#[derive(serde::Deserialize)]
struct Label {
    name: String,
    #[serde(rename = "box")]
    rect: Rect,
    #[serde(default)]
    hidden: bool,
    #[serde(default)]
    head: String,
}

/// What [`MEASURE`] recorded: the drawing's box, the version and lane labels, the lit dots
/// (lane, version) and edges (lane, from or empty for a skipRange bracket, to), and the path
/// the details show (channel, OLM v1 hops, how it stops).
#[derive(serde::Deserialize)]
struct Measured {
    svg: Rect,
    labels: Vec<Label>,
    lanes: Vec<Label>,
    dots: BTreeSet<(String, String)>,
    edges: BTreeSet<(String, String, String)>,
    channel: Option<String>,
    hops: Vec<String>,
    stop: String,
}

/// What [`MEASURE`] recorded on `page#fragment`.
fn measure(page: &Path, fragment: &str) -> Measured {
    let text = std::fs::read_to_string(page).unwrap();
    let copy = page.with_extension("measure.html");
    std::fs::write(
        &copy,
        text.replacen("</body>", &format!("{MEASURE}</body>"), 1),
    )
    .unwrap();
    let d = dom(&copy, fragment);
    let json = d
        .split("<pre id=\"measure\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("nothing measured on {fragment}"));
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

/// How many pairs of `boxes` intersect (touching edges do not).
fn overlaps(boxes: &[Rect]) -> usize {
    let mut n = 0;
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3]
            {
                n += 1;
            }
        }
    }
    n
}

/// The overview as measured: every one of `versions` has exactly one label, visible (a
/// non-empty box inside the drawing, not hidden), and no two labels (of versions or of lanes)
/// intersect. Returns the number of labels drawn.
fn assert_overview_legible(m: &Measured, versions: &BTreeSet<String>, lanes: usize) -> usize {
    let svg = m.svg;
    assert_eq!(m.labels.len(), versions.len(), "one label per version");
    let drawn: BTreeSet<String> = m.labels.iter().map(|l| l.name.clone()).collect();
    assert_eq!(&drawn, versions, "every version is drawn");
    for l in &m.labels {
        let b = l.rect;
        assert!(!l.hidden, "{} is hidden", l.name);
        assert!(b[2] > 0.0 && b[3] > 0.0, "empty box: {} {b:?}", l.name);
        assert!(
            b[0] >= svg[0]
                && b[1] >= svg[1]
                && b[0] + b[2] <= svg[0] + svg[2]
                && b[1] + b[3] <= svg[1] + svg[3],
            "{} {b:?} is outside the drawing {svg:?}",
            l.name
        );
    }
    let mut boxes: Vec<Rect> = m.labels.iter().map(|l| l.rect).collect();
    assert_eq!(overlaps(&boxes), 0, "version labels overlap");
    assert_eq!(m.lanes.len(), lanes, "a lane per channel");
    boxes.extend(m.lanes.iter().map(|l| l.rect));
    assert_eq!(overlaps(&boxes), 0, "lane labels overlap");
    m.labels.len()
}

/// A click highlighted its path to the head of `lane`: the dots of the lane on the path the
/// page shows (first the clicked version, last the head) and only those; each step's edge (or
/// the skipRange bracket it lands by) and nothing else.
fn assert_path_highlighted(m: &Measured, clicked: &str, lane: &str) {
    assert_eq!(
        m.channel.as_deref(),
        Some(lane),
        "the path shown is the {lane} lane's"
    );
    let hops = &m.hops;
    let head = &m.lanes.iter().find(|l| l.name == lane).unwrap().head;
    assert_eq!(hops.first().map(String::as_str), Some(clicked));
    assert_eq!(hops.last(), Some(head), "{hops:?}");
    assert!(m.stop.contains("reaches the head"), "{}", m.stop);
    let want: BTreeSet<(String, String)> =
        hops.iter().map(|h| (lane.to_string(), h.clone())).collect();
    assert_eq!(m.dots, want, "the highlighted dots are the path's");
    let steps: BTreeSet<(String, String, String)> = hops
        .windows(2)
        .map(|w| (lane.to_string(), w[0].clone(), w[1].clone()))
        .collect();
    for (l, from, to) in &steps {
        let by_range = (l.clone(), String::new(), to.clone());
        assert!(
            m.edges.contains(&(l.clone(), from.clone(), to.clone())) || m.edges.contains(&by_range),
            "step {from} -> {to} not lit: {:?}",
            m.edges
        );
    }
    for e in &m.edges {
        let lands = steps
            .iter()
            .any(|s| e.1.is_empty() && s.0 == e.0 && s.2 == e.2);
        assert!(
            steps.contains(e) || lands,
            "{e:?} is not a step of {hops:?}"
        );
    }
}

/// The bundles of the fixture's `package` in `channel`, or every channel name of it when
/// `channel` is None.
fn fixture_channel(package: &str, channel: Option<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for b in common::fixture_blobs() {
        if b["schema"] != "olm.channel" || b["package"] != package {
            continue;
        }
        match channel {
            None => {
                out.insert(b["name"].as_str().unwrap().to_string());
            }
            Some(c) if b["name"] == c => {
                for e in b["entries"].as_array().unwrap() {
                    out.insert(e["name"].as_str().unwrap().to_string());
                }
            }
            Some(_) => {}
        }
    }
    out
}

/// The default view of the fixture's largest package draws all its versions, one legible label
/// each, with a lane per channel; a click on the oldest version of the default channel lights
/// its path to that channel's head.
#[test]
fn the_overview_draws_every_version_of_the_largest_package_legibly() {
    let (pkg, bundles) = largest_package();
    let lanes = fixture_channel(&pkg, None).len();
    let (_dir, page) = report();
    let m = measure(&page, "");
    let drawn = assert_overview_legible(&m, &bundles, lanes);
    eprintln!("{pkg}: {drawn} versions drawn in {lanes} lanes, 0 labels overlap");
    let default = common::fixture_blobs()
        .iter()
        .find(|b| b["schema"] == "olm.package" && b["name"] == pkg.as_str())
        .unwrap()["defaultChannel"]
        .as_str()
        .unwrap()
        .to_string();
    let in_default = fixture_channel(&pkg, Some(&default));
    // Rows run newest first.
    let oldest = &m
        .labels
        .iter()
        .rev()
        .find(|l| in_default.contains(&l.name))
        .unwrap()
        .name;
    let m = measure(&page, &format!("package={pkg}&click={oldest}"));
    assert_path_highlighted(&m, oldest, &default);
    let people = format!("click={oldest}");
    overview_screenshot(&page, &people, "overview.png", "1400,2400");
}

/// A package of 300 versions in 20 channels: minor-version channels chained by `replaces`
/// (each minor's first release replaces the previous minor's last, a bundle of another
/// channel, and skips a range of it), plus channels whose entries are also in the minor
/// channels (`fast`, `stable` with `skips` and a wide skipRange, `candidate`, two `eus`), a
/// deprecated channel and deprecated bundles.
fn big_catalog() -> (tempfile::TempDir, BTreeSet<String>) {
    use serde_json::{Value, json};
    const P: &str = "big-operator";
    let name = |m: u32, p: u32| format!("{P}.v1.{m}.{p}");
    let mut docs: Vec<Value> =
        vec![json!({"schema": "olm.package", "name": P, "defaultChannel": "stable"})];
    let mut all = BTreeSet::new();
    let channel = |n: &str, entries: Vec<Value>| json!({"schema": "olm.channel", "package": P, "name": n, "entries": entries});
    for m in 0..15 {
        let mut entries = Vec::new();
        for p in 0..20 {
            let n = name(m, p);
            all.insert(n.clone());
            docs.push(json!({"schema": "olm.bundle", "package": P, "name": n, "image": format!("quay.io/big/bundle:v1.{m}.{p}"),
                "properties": [{"type": "olm.package", "value": {"packageName": P, "version": format!("1.{m}.{p}")}}]}));
            let mut e = json!({"name": n});
            if p > 0 {
                e["replaces"] = name(m, p - 1).into();
            } else if m > 0 {
                e["replaces"] = name(m - 1, 19).into();
                e["skipRange"] = format!(">=1.{}.0 <1.{m}.0", m - 1).into();
            }
            if p % 7 == 3 {
                e["skips"] = json!([name(m, p - 2)]);
            }
            entries.push(e);
        }
        docs.push(channel(&format!("stable-1.{m}"), entries));
    }
    let chain = |names: Vec<String>| -> Vec<Value> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i == 0 {
                    json!({"name": n})
                } else {
                    json!({"name": n, "replaces": names[i - 1]})
                }
            })
            .collect()
    };
    docs.push(channel(
        "fast",
        chain((0..15).map(|m| name(m, 0)).collect()),
    ));
    let mut stable = chain(
        (0..15)
            .flat_map(|m| (0..20).step_by(5).map(move |p| (m, p)))
            .map(|(m, p)| name(m, p))
            .collect(),
    );
    let last = stable.len() - 1;
    stable[last]["skips"] = json!([name(14, 10)]);
    stable[last]["skipRange"] = ">=1.10.0 <1.14.15".into();
    docs.push(channel("stable", stable));
    docs.push(channel(
        "candidate",
        chain(
            (12..15)
                .flat_map(|m| (0..20).map(move |p| name(m, p)))
                .collect(),
        ),
    ));
    docs.push(channel(
        "eus-1.4",
        chain((0..5).map(|m| name(m, 19)).collect()),
    ));
    docs.push(channel(
        "eus-1.10",
        chain((5..11).map(|m| name(m, 19)).collect()),
    ));
    docs.push(json!({"schema": "olm.deprecations", "package": P, "entries": [
        {"reference": {"schema": "olm.channel", "name": "stable-1.0"}, "message": "1.0 is out of support"},
        {"reference": {"schema": "olm.bundle", "name": name(0, 1)}, "message": "broken upgrade"},
        {"reference": {"schema": "olm.bundle", "name": name(3, 4)}, "message": "CVE"}]}));
    (common::write_blobs(&docs), all)
}

#[test]
fn the_overview_of_300_versions_in_20_channels_is_legible_and_lights_paths() {
    let (catalog, versions) = big_catalog();
    assert_eq!(versions.len(), 300);
    let (_dir, page) = report_of(catalog.path());
    let text = std::fs::read_to_string(&page).unwrap();
    let again = report_of(catalog.path());
    assert_eq!(
        std::fs::read_to_string(&again.1).unwrap(),
        text,
        "the page is deterministic"
    );
    let m = measure(&page, "");
    assert_eq!(assert_overview_legible(&m, &versions, 20), 300);
    // A version of several channels: its label shows the default channel's path, its dot in
    // another lane that lane's.
    const V: &str = "big-operator.v1.10.0";
    let m = measure(&page, &format!("click={V}"));
    assert_path_highlighted(&m, V, "stable");
    let m = measure(&page, &format!("click={V}&lane=fast"));
    assert_path_highlighted(&m, V, "fast");
    let m = measure(&page, &format!("click={V}&lane=stable-1.10"));
    assert_path_highlighted(&m, V, "stable-1.10");
    // Deprecations are marked: the bundle's row, the channel's lane.
    let d = dom(&page, "");
    assert!(g_class(&d, &["data-name=\"big-operator.v1.3.4\"".into()]).contains("deprecated"));
    assert!(
        g_class(
            &d,
            &["data-channel=\"stable-1.0\"".into(), "class=\"lane".into()]
        )
        .contains("deprecated")
    );
    let people = format!("click={V}&lane=fast");
    overview_screenshot(&page, &people, "overview-300.png", "1600,2400");
}
