//! Every YAML file of the shared fixtures (bundles, catalogs, the first-day certified operators
//! and catalogs) loads with olmctl's YAML reader into the documents PyYAML loads, in the same
//! order. PyYAML's CSafeLoader reads with libyaml, the C library go-yaml's scanner and parser
//! were ported from; where PyYAML's YAML 1.1 resolution differs from go-yaml v2's (which
//! operator-registry reaches through apimachinery's `NewYAMLOrJSONDecoder` and
//! sigs.k8s.io/yaml), the oracle follows go-yaml (tests/support/yaml_oracle.py says where).

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// Every `.yaml` / `.yml` file below `dir`, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    common::files_in(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect()
}

/// The documents olmctl reads from `text` as one compact JSON array (its objects' keys sorted,
/// as Go writes them) and their number, or the error.
fn olmctl_docs(text: &str) -> Result<(String, usize), String> {
    let mut out = String::from("[");
    let mut n = 0;
    olmctl::fbc::yaml::parse_documents(text, |doc| {
        if n > 0 {
            out.push(',');
        }
        n += 1;
        doc.write_json(&mut out);
    })
    .map_err(|e| format!("{}:{}: {}", e.line, e.column, e.message))?;
    out.push(']');
    Ok((out, n))
}

/// The first place where `a` and `b` differ (a JSON pointer and both values), numbers compared
/// by value (`1` and `1.0` are one float64 in Go).
fn first_difference(at: &str, a: &Value, b: &Value) -> Option<String> {
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 200 {
            format!("{}...", s.chars().take(200).collect::<String>())
        } else {
            s
        }
    };
    let differ = || Some(format!("{at}: olmctl {} / PyYAML {}", short(a), short(b)));
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => (x.as_f64() != y.as_f64()).then(differ).flatten(),
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return differ();
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(&format!("{at}/{i}"), x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys: Vec<&String> = x.keys().collect();
            if keys != y.keys().collect::<Vec<_>>() {
                return differ();
            }
            keys.into_iter().find_map(|k| {
                let k_at = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                first_difference(&k_at, &x[k], &y[k])
            })
        }
        _ => (a != b).then(differ).flatten(),
    }
}

#[test]
fn every_fixture_yaml_file_loads_as_pyyaml_loads_it() {
    let root = common::shared_fixtures();
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut all = 0;
    for path in yaml_files(&root) {
        all += 1;
        let bytes = std::fs::read(&path).expect("read fixture");
        // Identical files (the same CRD in many bundle versions) are compared once.
        if seen.insert(bytes.clone()) {
            files.push((path, bytes));
        }
    }
    let paths: String = files
        .iter()
        .map(|(p, _)| format!("{}\n", p.display()))
        .collect();
    let script = common::root().join("tests/support/yaml_oracle.py");
    let mut oracle = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (with PyYAML: scripts/test.sh installs it)");
    // The oracle reads every path before it writes anything.
    oracle
        .stdin
        .take()
        .expect("stdin")
        .write_all(paths.as_bytes())
        .expect("paths to the oracle");
    // olmctl reads the files while the oracle does (its output is read as it comes).
    let oracle = std::thread::spawn(move || oracle.wait_with_output());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut ours: Vec<Option<Result<(String, usize), String>>> = vec![None; files.len()];
    std::thread::scope(|scope| {
        let files = &files;
        let parts: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..files.len())
                        .step_by(threads)
                        .map(|i| match std::str::from_utf8(&files[i].1) {
                            Ok(text) => (i, olmctl_docs(text)),
                            Err(e) => (i, Err(format!("not UTF-8: {e}"))),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for part in parts {
            for (i, r) in part.join().expect("parser thread") {
                ours[i] = Some(r);
            }
        }
    });
    let out = oracle
        .join()
        .expect("oracle thread")
        .expect("the oracle's output");
    assert!(
        out.status.success(),
        "{}: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<&str> = std::str::from_utf8(&out.stdout)
        .expect("UTF-8 output")
        .lines()
        .collect();
    assert_eq!(theirs.len(), files.len(), "one line per file");
    let mut differences = Vec::new();
    let mut docs = 0;
    for (((path, _), ours), theirs) in files.iter().zip(ours).zip(&theirs) {
        let ours = ours.expect("parsed");
        let rel = path.strip_prefix(&root).unwrap_or(path).display();
        match (&ours, theirs.strip_prefix("docs ")) {
            (Ok((a, n)), Some(b)) => {
                docs += n;
                // The same text is the same documents; other text may still be (`1.0`, `1`).
                if a != b {
                    let a: Value = serde_json::from_str(a).expect("olmctl's JSON");
                    let b: Value = serde_json::from_str(b).expect("the oracle's JSON");
                    if let Some(d) = first_difference("", &a, &b) {
                        differences.push(format!("{rel}: documents{d}"));
                    }
                }
            }
            // Both refuse the file.
            (Err(_), None) => {}
            (Ok(_), None) => differences.push(format!("{rel}: olmctl reads it, PyYAML: {theirs}")),
            (Err(e), Some(_)) => {
                differences.push(format!("{rel}: olmctl refuses it ({e}), PyYAML reads it"))
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} files differ:\n{}",
        differences.len(),
        files.len(),
        differences.join("\n")
    );
    // The corpus is there: the real certified operators are in it, and it is large.
    assert!(
        files.iter().any(|(p, _)| p.ends_with(
            "first-day/operators/portworx-certified/24.2.2/manifests/core_v1_storagecluster_crd.yaml"
        )),
        "the first-day fixtures are part of the corpus"
    );
    assert!(all > 1000 && docs > 1000, "{all} files, {docs} documents");
}
