//! The catalogs the benches share: the v4.18 fixture and a 10x catalog built from it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The v4.18 fixture catalog.
pub fn fixture() -> PathBuf {
    olmctl_testdata::fixture_catalog()
}

/// Ten copies of the fixture: copy `i` renames every package `p` to `p-c<i>` (copy 0 keeps the
/// names), in the blobs and in their `olm.package` properties, and makes every long text its own
/// (descriptions, `alm-examples`, the icon's bytes), so no copy shares a piece with another as
/// distinct operators would not. Written as JSON, one file per package.
pub fn tenfold(out: &Path) -> (usize, usize) {
    let mut docs: Vec<(String, Value)> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture())
        .unwrap()
        .map(|e| e.unwrap().path().join("catalog.yaml"))
        .filter(|p| p.exists())
        .collect();
    files.sort();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for d in text.split("\n---") {
            if let Some(n) = olmctl::fbc::yaml::first_document(d).ok().flatten() {
                let v: Value = serde_json::from_str(&n.to_json()).unwrap();
                let pkg = if v["schema"] == "olm.package" {
                    v["name"].as_str().unwrap().to_string()
                } else {
                    v["package"].as_str().unwrap_or_default().to_string()
                };
                docs.push((pkg, v));
            }
        }
    }
    let (mut packages, mut bundles) = (0, 0);
    for i in 0..10 {
        let rename = |p: &str| {
            if i == 0 {
                p.to_string()
            } else {
                format!("{p}-c{i}")
            }
        };
        let mut by_pkg: std::collections::BTreeMap<String, String> = Default::default();
        for (pkg, v) in &docs {
            let mut v = v.clone();
            match v["schema"].as_str() {
                Some("olm.package") => {
                    v["name"] = rename(pkg).into();
                    packages += 1;
                    if let Some(d) = v["description"].as_str() {
                        v["description"] = format!("{d} (copy {i})").into();
                    }
                    if let Some(data) = v["icon"]["base64data"].as_str() {
                        let mut bytes =
                            olmctl::encoding::decode_forgiving(data).unwrap_or_default();
                        bytes.extend(std::iter::repeat_n(b' ', i));
                        v["icon"]["base64data"] = olmctl::encoding::base64(&bytes).into();
                    }
                }
                _ => {
                    v["package"] = rename(pkg).into();
                }
            }
            if v["schema"] == "olm.bundle" {
                bundles += 1;
                for p in v["properties"].as_array_mut().unwrap() {
                    if p["type"] == "olm.package" {
                        p["value"]["packageName"] = rename(pkg).into();
                    }
                    if p["type"] == "olm.csv.metadata" {
                        let m = &mut p["value"];
                        if let Some(d) = m["description"].as_str() {
                            m["description"] = format!("{d} (copy {i})").into();
                        }
                        if let Some(a) = m["annotations"]["alm-examples"].as_str() {
                            m["annotations"]["alm-examples"] =
                                format!("{a}{}", " ".repeat(i)).into();
                        }
                    }
                }
            }
            let s = by_pkg.entry(rename(pkg)).or_default();
            s.push_str(&serde_json::to_string(&v).unwrap());
            s.push('\n');
        }
        for (pkg, text) in by_pkg {
            let dir = out.join(&pkg);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("catalog.json"), text).unwrap();
        }
    }
    (packages, bundles)
}
