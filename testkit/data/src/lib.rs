//! Test data shared by the library's tests (`tests/`), the command line's (`cli/tests/`), the
//! operator's and the benches: the real fixtures beside the workspace (`../shared/fixtures`),
//! small catalogs written to a temp dir and validated, a demo bundle to edit, hand-made hostile
//! archives; two real components, a docker-registry ([`registry`]) and /proc readings
//! ([`procfs`]); a thread that swaps a path with a link ([`race`]); and what running an image's entrypoint from its own layers takes ([`image`]).

pub mod demo_bundle;
pub mod hostile;
pub mod image;
pub mod procfs;
pub mod race;
pub mod registry;

use std::path::{Path, PathBuf};

use olmctl::diag::{Finding, Severity};

/// The repository's root directory.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The shared fixtures beside the repository (`../shared/fixtures`).
pub fn shared_fixtures() -> PathBuf {
    root().join("../shared/fixtures")
}

/// The real fixture catalog (read in place).
pub fn fixture_catalog() -> PathBuf {
    shared_fixtures().join("catalogs/v4.18")
}

/// Writes `files` (relative path, content) below a new temp dir.
pub fn write_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
    }
    dir
}

/// Loads and validates a directory.
pub fn validate_dir(dir: &Path) -> Vec<Finding> {
    let loaded = olmctl::fbc::load::load(&[dir.to_path_buf()]).expect("catalog loads");
    olmctl::checks::fbc::validate(&loaded)
}

/// Writes `files` and validates them.
pub fn findings(files: &[(&str, &str)]) -> Vec<Finding> {
    let dir = write_tree(files);
    validate_dir(dir.path())
}

/// Error-level findings only.
pub fn errors(f: &[Finding]) -> Vec<&Finding> {
    f.iter().filter(|x| x.severity == Severity::Error).collect()
}

/// The findings with `code`.
pub fn with_code<'a>(f: &'a [Finding], code: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.code == code).collect()
}

/// Asserts exactly one finding of `code` exists, at `file` (suffix) and `line` (and `col` when
/// given), and returns it.
pub fn one_at<'a>(
    f: &'a [Finding],
    code: &str,
    file: &str,
    line: u32,
    col: Option<u32>,
) -> &'a Finding {
    let hits = with_code(f, code);
    assert_eq!(hits.len(), 1, "expected one {code}, got: {f:#?}");
    let h = hits[0];
    let loc = h.location.as_ref().expect("finding has a location");
    assert!(
        loc.file.ends_with(file),
        "{code}: file {} should end with {file}",
        loc.file.display()
    );
    assert_eq!(loc.line, line, "{code} line: {h:#?}");
    if let Some(c) = col {
        assert_eq!(loc.column, c, "{code} column: {h:#?}");
    }
    h
}

/// A valid package blob plus channel and bundles, for building cases on.
pub const PKG: &str = "---
schema: olm.package
name: foo
defaultChannel: stable
";

/// A bundle blob of package foo at `version` named `foo.v<version>`.
pub fn bundle(version: &str) -> String {
    format!(
        "---
schema: olm.bundle
package: foo
name: foo.v{version}
image: quay.io/foo/bundle:v{version}
properties:
- type: olm.package
  value:
    packageName: foo
    version: {version}
"
    )
}

/// The fixture operators directory (bundle histories), read in place.
pub fn fixture_operators() -> PathBuf {
    shared_fixtures().join("operators")
}

/// Every bundle directory of the fixture operators: `(package dir name, version dir)`, sorted.
pub fn fixture_bundle_dirs() -> Vec<(String, PathBuf)> {
    olmctl::bundle::load::bundle_dirs_below(&fixture_operators())
        .expect("operators dir")
        .into_iter()
        .map(|v| {
            let pkg = v.parent().and_then(Path::file_name).expect("package");
            (pkg.to_string_lossy().to_string(), v)
        })
        .collect()
}

/// Every file below `dir` (recursively), sorted.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every blob of the v4.18 fixture as JSON, in file order.
pub fn fixture_blobs() -> Vec<serde_json::Value> {
    let mut docs = Vec::new();
    for f in files_in(&fixture_catalog()) {
        let text = std::fs::read_to_string(&f).expect("read fixture");
        for d in text.split("\n---") {
            if let Some(v) = olmctl::fbc::yaml::first_document(d).ok().flatten() {
                docs.push(serde_json::from_str(&v.to_json()).expect("JSON of a blob"));
            }
        }
    }
    docs
}

/// Writes `docs` as one JSON stream per package below a new temp dir.
pub fn write_blobs(docs: &[serde_json::Value]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut by_pkg: std::collections::BTreeMap<String, String> = Default::default();
    for d in docs {
        let pkg = if d["schema"] == "olm.package" {
            d["name"].as_str()
        } else {
            d["package"].as_str()
        }
        .unwrap_or_default();
        let s = by_pkg.entry(pkg.to_string()).or_default();
        s.push_str(&serde_json::to_string(d).expect("JSON"));
        s.push('\n');
    }
    for (pkg, text) in by_pkg {
        std::fs::create_dir_all(dir.path().join(&pkg)).expect("mkdir");
        std::fs::write(dir.path().join(&pkg).join("catalog.json"), text).expect("write");
    }
    dir
}

/// Makes a FIFO at `path`.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A TCP port free on 127.0.0.1 (for a server a test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind 127.0.0.1:0")
        .local_addr()
        .expect("local address")
        .port()
}

/// Adds to `docs` a copy of bundle `from` named `name` with `olm.package` version `version`
/// (and `image`, when given): a new release built from an existing one.
pub fn copy_bundle(
    docs: &mut Vec<serde_json::Value>,
    from: &str,
    name: &str,
    version: &str,
    image: Option<&str>,
) {
    let mut b = docs
        .iter()
        .find(|d| d["schema"] == "olm.bundle" && d["name"] == from)
        .expect("the bundle to copy")
        .clone();
    b["name"] = name.into();
    if let Some(i) = image {
        b["image"] = i.into();
    }
    for p in b["properties"].as_array_mut().expect("properties") {
        if p["type"] == "olm.package" {
            p["value"]["version"] = version.into();
        }
    }
    docs.push(b);
}

/// The fenced code block that follows `<!-- ci-example: NAME -->` in README.md (without its
/// fences): the examples the tests run as users would.
pub fn readme_example(name: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let marker = format!("<!-- ci-example: {name} -->\n");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker:?}"));
    let rest = &readme[at + marker.len()..];
    let body = rest
        .strip_prefix("```")
        .and_then(|r| r.split_once('\n'))
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no code block after {marker:?}"));
    let end = body.find("\n```").expect("the block's end");
    body[..=end].to_string()
}

/// `git ARGS` in `dir` with a fixed identity and no signing; its stdout, trimmed. Panics with
/// git's message when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=olmctl test",
            "-c",
            "user.email=test@olmctl.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Copies the files below `from` to `to` (created), keeping the tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}
