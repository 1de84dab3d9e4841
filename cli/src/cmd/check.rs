//! `olmctl check upgrade OLD NEW` and `olmctl check catalog DIR --bundles ...`: upgrade safety.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use olmctl::oci::deliver::{ScratchDir, Want};

use crate::args::{PullArgs, RegistryArgs};
use crate::inputs::pulled as pull_inputs;
use crate::term::{EXIT_USAGE, Report};
use olmctl::bundle::load::{BundleDir, bundle_dirs_below, load_bundle};
use olmctl::checks::safety::walk::{Walked, catalog_package_edges, check_package_edges};
use olmctl::checks::safety::{Facts, K8sRange, Options, Policy, check_upgrade_of};
use olmctl::diag::Finding;

/// Upgrade-safety checks.
#[derive(Debug, Subcommand)]
pub enum CheckCmd {
    /// Check the upgrade from one bundle to another (directories or bundle images).
    Upgrade {
        /// The bundle users run now.
        old: String,
        /// The bundle they upgrade to.
        new: String,
        #[command(flatten)]
        common: Common,
    },
    /// Check every upgrade edge of a catalog (every channel; replaces, skips, skipRange; OLM v0
    /// and v1), and every bundle on its own.
    Catalog {
        /// The catalog directory (or file).
        dir: PathBuf,
        /// Where the bundles' contents are: a directory holding bundle directories (matched by
        /// CSV name), or a YAML/JSON file mapping bundle names to directories or images.
        /// Without it, the bundle images named in the catalog are pulled.
        #[arg(long)]
        bundles: Option<PathBuf>,
        /// Only this package.
        #[arg(long)]
        package: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Check a package's whole bundle history: every `<package>/<version>/` bundle directory
    /// (the community-operators layout), with the edges of --catalog when it has the package,
    /// else the CSVs' replaces, skips and olm.skipRange (plus version order per channel when
    /// the package's ci.yaml says `updateGraph: semver-mode`).
    History {
        /// Package directories.
        #[arg(required = true)]
        packages: Vec<PathBuf>,
        /// A catalog (directory or file) whose channels define the edges.
        #[arg(long)]
        catalog: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

/// Flags shared by the check commands.
#[derive(Debug, Args)]
pub struct Common {
    /// Target Kubernetes version or range (`1.30`, `1.28-1.31`): APIs removed at or before the
    /// newest are errors; a minKubeVersion above the oldest is an error. Default: the policy's
    /// k8sVersion, else each bundle's minKubeVersion.
    #[arg(long)]
    k8s_version: Option<String>,
    /// Policy file (YAML): skew allowances, crdify settings, per-code severities.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Also report, as errors with the field path, what this installer's preflight refuses:
    /// `olmv1` is OLM v1's CRD upgrade-safety preflight (crdify as operator-controller runs it).
    #[arg(long, value_name = "INSTALLER", value_parser = ["olmv1", "none"])]
    preflight: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
    output: Report,
    #[command(flatten)]
    findings: crate::report::FindingArgs,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    pull: PullArgs,
}

/// Runs a check command.
pub fn run(cmd: CheckCmd) -> u8 {
    match cmd {
        CheckCmd::Upgrade { old, new, common } => upgrade(&old, &new, &common),
        CheckCmd::Catalog {
            dir,
            bundles,
            package,
            common,
        } => catalog(&dir, bundles.as_deref(), package.as_deref(), &common),
        CheckCmd::History {
            packages,
            catalog,
            common,
        } => history(&packages, catalog.as_deref(), &common),
    }
}

fn options(c: &Common) -> Result<Options, String> {
    let mut policy = match &c.policy {
        Some(p) => olmctl::codes::load_policy(p).map_err(|e| format!("policy {e}"))?,
        None => Policy::default(),
    };
    if let Some(p) = &c.preflight {
        policy.preflight_olmv1 = p == "olmv1";
    }
    let target = match &c.k8s_version {
        Some(s) => Some(K8sRange::parse(s).map_err(|e| format!("--k8s-version {e}"))?),
        None => policy.k8s_version.clone(),
    };
    Ok(Options { policy, target })
}

fn emit(findings: &[Finding], what: &str, c: &Common) -> u8 {
    crate::report::findings_with(findings, None, &c.findings, what, c.output, false)
}

/// Reads bundles given as directories or image references; images are pulled into scratch
/// directories kept in `scratch`.
fn read_bundles(
    inputs: &[&str],
    c: &Common,
    scratch: &mut Vec<ScratchDir>,
) -> Result<Vec<BundleDir>, String> {
    let (pulled, dirs) = pull_inputs(inputs, &c.registry, &c.pull, Want::Bundle)?;
    scratch.extend(dirs);
    inputs
        .iter()
        .zip(pulled)
        .map(|(s, p)| {
            let dir = p.map_or_else(|| PathBuf::from(s), |(_, d)| d);
            load_bundle(&dir).map_err(|e| format!("{s}: {e}"))
        })
        .collect()
}

fn upgrade(old: &str, new: &str, c: &Common) -> u8 {
    let opts = match options(c) {
        Ok(o) => o,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let mut scratch = Vec::new();
    let bundles = match read_bundles(&[old, new], c, &mut scratch) {
        Ok(b) => b,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let (o, n) = (Facts::of(&bundles[0]), Facts::of(&bundles[1]));
    let findings = check_upgrade_of(&o, &n, &opts);
    let what = format!(
        "{} {} -> {} {}",
        o.name,
        o.version_str(),
        n.name,
        n.version_str()
    );
    emit(&findings, &what, c)
}

/// Bundle name → where its contents are (a directory or an image reference still to read).
type Refs = BTreeMap<String, String>;
/// Bundle name → contents already read.
type Read = BTreeMap<String, BundleDir>;

/// Where each catalog bundle's contents come from. A directory of bundles is read here (each
/// bundle once); map entries and catalog images are returned as references.
fn bundle_sources(
    spec: Option<&Path>,
    cfg: &olmctl::fbc::decl::DeclarativeConfig,
    package: Option<&str>,
) -> Result<(Refs, Read), String> {
    let wanted = cfg
        .bundles
        .iter()
        .filter(|b| package.is_none_or(|p| b.package == p));
    match spec {
        None => Ok((
            wanted
                .filter(|b| !b.image.is_empty())
                .map(|b| (b.name.clone(), b.image.clone()))
                .collect(),
            Read::new(),
        )),
        Some(p) if p.is_dir() => {
            let names: std::collections::BTreeSet<&str> = wanted.map(|b| b.name.as_str()).collect();
            let mut read = Read::new();
            for d in bundle_dirs_below(p).map_err(|e| e.to_string())? {
                // Directories that are not readable bundles are not bundles of the catalog.
                let Ok(b) = load_bundle(&d) else { continue };
                let name = b
                    .csv()
                    .and_then(|(_, c)| olmctl::bundle::load::str_at(c, &["metadata", "name"]))
                    .map(str::to_string);
                if let Some(name) = name.filter(|n| names.contains(n.as_str())) {
                    read.entry(name).or_insert(b);
                }
            }
            Ok((Refs::new(), read))
        }
        Some(p) => {
            let doc = olmctl::fbc::yaml::read_first_document(p)?;
            let base = p.parent().unwrap_or(Path::new("."));
            let mut map = BTreeMap::new();
            if let Some(olmctl::fbc::node::Value::Map(m)) = doc.as_ref().map(|d| &d.value) {
                for e in m {
                    let Some(v) = e.value.as_str() else {
                        return Err(format!(
                            "{}:{}:{}: the value of {:?} must be a directory or an image reference",
                            p.display(),
                            e.value.pos.line,
                            e.value.pos.col,
                            e.key
                        ));
                    };
                    let local = base.join(v);
                    let v = if local.exists() {
                        local.display().to_string()
                    } else {
                        v.to_string()
                    };
                    map.insert(e.key.clone(), v);
                }
            } else {
                return Err(format!(
                    "{}: expected a mapping of bundle name to directory or image",
                    p.display()
                ));
            }
            Ok((map, Read::new()))
        }
    }
}

fn catalog(dir: &Path, bundles: Option<&Path>, package: Option<&str>, c: &Common) -> u8 {
    let opts = match options(c) {
        Ok(o) => o,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let loaded = match crate::inputs::catalog(&[dir.to_path_buf()]) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Some(p) = package
        && !loaded.cfg.packages.iter().any(|x| x.name == p)
    {
        crate::term::error(format_args!("package `{p}` is not in the catalog"));
        return EXIT_USAGE;
    }
    let (refs, mut read) = match bundle_sources(bundles, &loaded.cfg, package) {
        Ok(s) => s,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let inputs: Vec<&str> = refs.values().map(String::as_str).collect();
    let mut scratch = Vec::new();
    match read_bundles(&inputs, c, &mut scratch) {
        Ok(b) => read.extend(refs.keys().cloned().zip(b)),
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    }
    let by_name: BTreeMap<&str, &BundleDir> = read.iter().map(|(n, b)| (n.as_str(), b)).collect();
    let pkg_of: BTreeMap<&str, &str> = loaded
        .cfg
        .bundles
        .iter()
        .map(|b| (b.name.as_str(), b.package.as_str()))
        .collect();
    let mut all = Walked::default();
    let has = |pkg: &str, b: &str| by_name.contains_key(b) && pkg_of.get(b) == Some(&pkg);
    let graphs = olmctl::graph::CatalogGraphs::build(&loaded.cfg, package);
    for (pkg, edges) in catalog_package_edges(&graphs, package, &has) {
        let facts: BTreeMap<String, Facts<'_>> = by_name
            .iter()
            .filter(|(n, _)| pkg_of.get(*n) == Some(&pkg.as_str()))
            .map(|(n, b)| {
                let mut f = Facts::of(b);
                f.package = pkg.clone();
                (n.to_string(), f)
            })
            .collect();
        all.absorb(check_package_edges(&pkg, &facts, &edges, &opts));
    }
    // Catalog files that do not load would hide edges.
    all.findings
        .extend(olmctl::checks::fbc::load_errors(&loaded));
    olmctl::diag::sort_findings(&mut all.findings);
    let what = format!(
        "{} edges checked, {} not checked, {} bundles",
        all.checked, all.unchecked, all.bundles
    );
    emit(&all.findings, &what, c)
}

fn history(packages: &[PathBuf], catalog: Option<&Path>, c: &Common) -> u8 {
    use olmctl::checks::safety::walk::{check_history, load_package};
    let opts = match options(c) {
        Ok(o) => o,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let loaded = match catalog {
        Some(d) => match crate::inputs::catalog(&[d.to_path_buf()]) {
            Ok(l) => Some(l),
            Err(code) => return code,
        },
        None => None,
    };
    let graphs = loaded
        .as_ref()
        .map(|l| olmctl::graph::CatalogGraphs::build(&l.cfg, None));
    let mut all = Walked::default();
    let mut from_catalog = 0;
    for pkg in packages {
        let (dirs, semver) = match load_package(pkg) {
            Ok(x) => x,
            Err(e) => {
                crate::term::error(e);
                return EXIT_USAGE;
            }
        };
        let fallback = pkg
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let (_, w, used_catalog) = check_history(&dirs, semver, graphs.as_ref(), &fallback, &opts);
        from_catalog += usize::from(used_catalog);
        all.absorb(w);
    }
    if let Some(l) = &loaded {
        all.findings.extend(olmctl::checks::fbc::load_errors(l));
    }
    olmctl::diag::sort_findings(&mut all.findings);
    let what = format!(
        "{} packages ({from_catalog} with catalog edges), {} bundles, {} edges checked, {} not checked",
        packages.len(),
        all.bundles,
        all.checked,
        all.unchecked
    );
    emit(&all.findings, &what, c)
}
