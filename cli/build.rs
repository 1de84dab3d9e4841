// Build script (also operator/build.rs): the commit the binary is built from, for `--version`,
// as `OLMCTL_COMMIT` = `<12 hex digits> <commit date>` (as rustc prints its own), or `commit
// unknown` outside a git checkout of this repository (a source archive, a vendored copy inside
// another repository). Runs again only when HEAD moves, not on every source change.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// The commit of the checkout holding `workspace`, watching the files that move with HEAD.
fn commit(workspace: &Path) -> Option<String> {
    // Only this repository's own checkout: not a repository the sources were copied into.
    let top = PathBuf::from(git(workspace, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != workspace.canonicalize().ok()? {
        return None;
    }
    let git_dir = workspace.join(git(workspace, &["rev-parse", "--git-dir"])?);
    let common = workspace.join(git(workspace, &["rev-parse", "--git-common-dir"])?);
    let mut watched = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(r) = git(workspace, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(r));
    }
    // A file that does not exist would make cargo run this script on every build.
    for f in watched.iter().filter(|f| f.is_file()) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    git(
        workspace,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--abbrev=12",
            "--format=%h %cs",
        ],
    )
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // cli/ and operator/ sit one level below the workspace root.
    let workspace = manifest.parent().unwrap_or(&manifest).to_path_buf();
    let commit = commit(&workspace).unwrap_or_else(|| "commit unknown".to_string());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=OLMCTL_COMMIT={commit}");
}
