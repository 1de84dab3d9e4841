//! Image benchmark against a local registry (Debian's docker-registry on 127.0.0.1):
//! build + push of a fixture bundle and of the v4.18 catalog (load, validate, canonical form,
//! layer, push), each to a fresh repository so every blob is uploaded. Baseline in the same run:
//! `skopeo copy` of the same image from an OCI layout to a fresh repository (push only, no
//! build), and the build alone. Prints medians of 5 runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use olmctl::oci::image::Artifact;
use olmctl::oci::registry::{Options, Registry, parse_ref};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut(usize)) -> Duration {
    median(
        (0..runs)
            .map(|i| {
                let s = Instant::now();
                f(i);
                s.elapsed()
            })
            .collect(),
    )
}

fn build_bundle(dir: &Path) -> Artifact {
    let b = olmctl::bundle::load::load_bundle(dir).expect("bundle");
    let findings = olmctl::checks::bundle::validate(&b);
    assert!(
        findings
            .iter()
            .all(|f| f.severity != olmctl::diag::Severity::Error)
    );
    olmctl::oci::bundle_image::build(&b, 0, None)
        .expect("build")
        .artifact
}

fn build_catalog(dir: &Path) -> Artifact {
    let loaded = olmctl::fbc::load::load(&[dir.to_path_buf()]).expect("catalog");
    let findings = olmctl::checks::fbc::validate(&loaded);
    assert!(
        findings
            .iter()
            .all(|f| f.severity != olmctl::diag::Severity::Error)
    );
    let files = olmctl::fbc::write::canonical_files(&loaded.cfg, olmctl::fbc::write::Format::Yaml);
    let layer = olmctl::oci::catalog_image::configs_layer(&files, 0).expect("layer");
    let labels = olmctl::oci::catalog_image::labels(&Default::default());
    olmctl::oci::catalog_image::standalone(&layer, &labels, None)
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let bundle = root.join("operators/kube-green/0.7.1");
    let catalog = root.join("catalogs/v4.18");
    let reg = olmctl_testdata::registry::TestRegistry::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = |tag: &str| {
        let r = parse_ref(tag).expect("ref");
        Registry::new(
            Options {
                ..Options::default()
            },
            &[&r],
            &[&r],
        )
    };
    let layouts = tempfile::tempdir().expect("tempdir");
    println!(
        "image benchmark, local registry {} (medians of 5)",
        reg.addr
    );
    for (name, dir, build) in [
        (
            "bundle kube-green 0.7.1",
            &bundle,
            build_bundle as fn(&Path) -> Artifact,
        ),
        ("catalog v4.18", &catalog, build_catalog),
    ] {
        let size: usize = build(dir).manifests()[0]
            .blobs
            .iter()
            .map(|b| b.desc.size as usize)
            .sum();
        let t_build = time(5, |_| {
            build(dir);
        });
        let slug = name.split(' ').next().unwrap_or("x");
        let t_push = time(5, |i| {
            let tag = reg.image(&format!("bench-{slug}-{i}:v1"));
            let art = build(dir);
            rt.block_on(client(&tag).push(&parse_ref(&tag).expect("ref"), &art))
                .expect("push");
        });
        // Baseline: skopeo pushing the same image from an OCI layout.
        let layout: PathBuf = layouts.path().join(slug);
        olmctl::oci::layout::write(&layout, "v1", &build(dir)).expect("layout");
        let t_skopeo = time(5, |i| {
            let st = Command::new("skopeo")
                .args(["copy", "-q", "--dest-tls-verify=false"])
                .arg(format!("oci:{}:v1", layout.display()))
                .arg(format!(
                    "docker://{}",
                    reg.image(&format!("skopeo-{slug}-{i}:v1"))
                ))
                .status()
                .expect("skopeo");
            assert!(st.success());
        });
        println!(
            "{name}: {size} bytes of blobs; build {:.1} ms; build+push {:.1} ms; skopeo copy (push only) {:.1} ms; ratio {:.2}",
            t_build.as_secs_f64() * 1e3,
            t_push.as_secs_f64() * 1e3,
            t_skopeo.as_secs_f64() * 1e3,
            t_push.as_secs_f64() / t_skopeo.as_secs_f64()
        );
    }
}
