//! `olmctl check upgrade OLD NEW` and `olmctl check catalog DIR --bundles ...`: upgrade safety.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use olmctl::oci::deliver::{ScratchDir, Want};

use crate::args::{PullArgs, RegistryArgs};
use crate::inputs::pulled as pull_inputs;
use crate::term::{EXIT_USAGE, Report};
use olmctl::bundle::load::{BundleDir, bundle_dirs_in, by_csv_name, load_bundle};
use olmctl::checks::safety::walk::{
    Walked, catalog_package_edges, check_package_edges, nothing_checked,
};
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
        /// Where the bundles' contents are: a bundle directory, a package directory in the
        /// `<package>/<version>/` layout (operators/my-operator), a directory of such packages
        /// (operators/), or a YAML/JSON file mapping bundle names to directories or images
        /// (registry references, or oci:PATH[:TAG] for an OCI image layout).
        /// Directories are matched by their CSV's metadata.name. Without it, the bundle images
        /// named in the catalog are pulled. Exits 2 when none of them is a bundle of the catalog.
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
    /// Target OpenShift version or range (`4.21`, `4.16-4.21`), as the Kubernetes versions they
    /// ship (4.16-4.21 is 1.29-1.34). Without this or --k8s-version, each bundle's
    /// com.redhat.openshift.versions annotation gives its range for the API checks.
    #[arg(long, value_name = "X.Y[-X.Y]", conflicts_with = "k8s_version")]
    openshift_version: Option<String>,
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
    let mut target_from = None;
    let target = match (&c.k8s_version, &c.openshift_version) {
        (Some(s), _) => Some(K8sRange::parse(s).map_err(|e| format!("--k8s-version {e}"))?),
        (None, Some(os)) => {
            let (lo, hi) = olmctl::openshift::kubernetes_range(os)
                .map_err(|e| format!("--openshift-version: {e}"))?;
            target_from = Some(format!(
                "the newest Kubernetes release of --openshift-version {}",
                os.trim()
            ));
            Some(K8sRange {
                min: semver::Version::new(lo.0, lo.1, 0),
                max: semver::Version::new(hi.0, hi.1, 0),
            })
        }
        (None, None) => policy.k8s_version.clone(),
    };
    Ok(Options {
        policy,
        target,
        target_from,
    })
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
        .map(|(s, p)| match p {
            // The error names the scratch directory: say which image it holds.
            Some((_, dir)) => load_bundle(&dir).map_err(|e| format!("{s}: {e}")),
            // The error names the directory already.
            None => load_bundle(Path::new(s)).map_err(|e| e.to_string()),
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
/// bundle once, told apart by its CSV's name whatever the directory is named); map entries and
/// catalog images are returned as references. Fails (an error line, then notes) when none of
/// them is a bundle of the catalog (of `package`): a check of nothing must not pass.
fn bundle_sources(
    spec: Option<&Path>,
    cfg: &olmctl::fbc::decl::DeclarativeConfig,
    package: Option<&str>,
) -> Result<(Refs, Read), Vec<String>> {
    let wanted: Vec<&olmctl::fbc::decl::Bundle> = cfg
        .bundles
        .iter()
        .filter(|b| package.is_none_or(|p| b.package == p))
        .collect();
    let names: BTreeSet<&str> = wanted.iter().map(|b| b.name.as_str()).collect();
    let sources = match spec {
        None => {
            let refs: Refs = wanted
                .iter()
                .filter(|b| !b.image.is_empty())
                .map(|b| (b.name.clone(), b.image.clone()))
                .collect();
            if refs.is_empty() && !names.is_empty() {
                return Err(vec![
                    format!(
                        "no bundle of {} names an image to read its contents from",
                        of_what(package)
                    ),
                    looked_for(&names, package),
                    HELP_BUNDLES.to_string(),
                ]);
            }
            (refs, Read::new())
        }
        Some(p) if std::fs::metadata(p).is_err() => {
            return Err(vec![format!(
                "--bundles {}: no such directory or file",
                p.display()
            )]);
        }
        Some(p) if p.is_dir() => {
            let dirs = bundle_dirs_in(p).map_err(|e| vec![e.to_string()])?;
            let found = by_csv_name(&dirs, &|n| names.contains(n));
            if found.bundles.is_empty() && !names.is_empty() {
                return Err(none_matched(p, &dirs, &found, &names, package));
            }
            (Refs::new(), found.bundles)
        }
        Some(p) => {
            let map = bundle_map(p).map_err(|e| vec![e])?;
            let (refs, others): (Refs, Refs) = map
                .into_iter()
                .partition(|(n, _)| names.contains(n.as_str()));
            if refs.is_empty() && !names.is_empty() {
                let mut lines = vec![
                    format!(
                        "--bundles {}: none of its {} entries is a bundle of {}",
                        p.display(),
                        others.len(),
                        of_what(package)
                    ),
                    looked_for(&names, package),
                ];
                lines.push(format!(
                    "found: {}",
                    few(others.keys().map(String::as_str), others.len())
                ));
                lines.push(HELP_BUNDLES.to_string());
                return Err(lines);
            }
            (refs, Read::new())
        }
    };
    Ok(sources)
}

const HELP_BUNDLES: &str = "help: --bundles takes a bundle directory, a package directory of <version>/ bundle directories (operators/<package>), a directory of such packages (operators/), or a YAML/JSON map of bundle name to directory or image; bundles are matched by their CSV's metadata.name";

/// "package `p` in the catalog" or "the catalog".
fn of_what(package: Option<&str>) -> String {
    package.map_or_else(
        || "the catalog".to_string(),
        |p| format!("package `{p}` in the catalog"),
    )
}

/// Up to five items, then how many more.
fn few<'a>(items: impl Iterator<Item = &'a str>, total: usize) -> String {
    let shown: Vec<&str> = items.take(5).collect();
    let more = total.saturating_sub(shown.len());
    if total == 0 {
        return "nothing".to_string();
    }
    format!(
        "{}{}",
        shown.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    )
}

fn looked_for(names: &BTreeSet<&str>, package: Option<&str>) -> String {
    format!(
        "looked for: the {} bundle{} of {} ({})",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        of_what(package),
        few(names.iter().copied(), names.len())
    )
}

/// Why a `--bundles` directory gave no bundle of the catalog: what was looked for, and what
/// was found (the directories and their CSV names, or why they have none).
fn none_matched(
    root: &Path,
    dirs: &[PathBuf],
    found: &olmctl::bundle::load::ByCsvName,
    names: &BTreeSet<&str>,
    package: Option<&str>,
) -> Vec<String> {
    let head = if dirs.is_empty() {
        format!(
            "--bundles {}: no bundle directory there (looked for manifests/ and metadata/ in it, in <version>/ below it and in <package>/<version>/ below it)",
            root.display()
        )
    } else {
        format!(
            "--bundles {}: none of its {} bundle director{} is a bundle of {}",
            root.display(),
            dirs.len(),
            if dirs.len() == 1 { "y" } else { "ies" },
            of_what(package)
        )
    };
    let mut lines = vec![head, looked_for(names, package)];
    let named: Vec<String> = found
        .others
        .iter()
        .chain(&found.repeated)
        .map(|(d, n)| format!("{} (CSV {n})", d.display()))
        .collect();
    if !named.is_empty() {
        lines.push(format!(
            "found: {}",
            few(named.iter().map(String::as_str), named.len())
        ));
    }
    for (d, why) in found.unnamed.iter().take(5) {
        lines.push(format!("not read: {}: {why}", d.display()));
    }
    if found.unnamed.len() > 5 {
        lines.push(format!("not read: {} more", found.unnamed.len() - 5));
    }
    lines.push(HELP_BUNDLES.to_string());
    lines
}

/// A `--bundles` map file: bundle name → a directory (relative to the file) or an image.
fn bundle_map(p: &Path) -> Result<Refs, String> {
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
        Ok(map)
    } else {
        Err(format!(
            "{}: expected a mapping of bundle name to directory or image",
            p.display()
        ))
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
        Err(lines) => {
            // Catalog files that do not load may hold the bundles looked for: shown first.
            let load = olmctl::checks::fbc::load_errors(&loaded);
            if !load.is_empty() {
                emit(&load, "catalog files not loaded", c);
            }
            let mut lines = lines.iter();
            crate::term::error(lines.next().map_or("", String::as_str));
            for l in lines {
                eprintln!("   = {}", olmctl::text::esc(l));
            }
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
    let given: Vec<&str> = by_name.keys().copied().collect();
    all.findings
        .extend(nothing_checked(&all, &given, package, &opts));
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
    // Each package's findings are printed as it is checked, in the order given.
    let mut stream =
        match crate::report::Stream::new(c.output, false, packages.len(), "package", &c.findings) {
            Ok(s) => s,
            Err(code) => return code,
        };
    // The counts of every package; findings go to the stream as each package is checked.
    let mut all = Walked::default();
    let mut from_catalog = 0;
    for pkg in packages {
        let name = pkg.display().to_string();
        stream.checking(&name);
        let (dirs, semver) = match load_package(pkg) {
            Ok(x) => x,
            Err(e) => {
                stream.unread(e);
                continue;
            }
        };
        let fallback = pkg
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let (_, mut w, used_catalog) =
            check_history(&dirs, semver, graphs.as_ref(), &fallback, &opts);
        from_catalog += usize::from(used_catalog);
        let mut findings = std::mem::take(&mut w.findings);
        all.absorb(w);
        olmctl::diag::sort_findings(&mut findings);
        stream.done(&name, findings);
    }
    if let Some(l) = &loaded {
        let mut f = olmctl::checks::fbc::load_errors(l);
        olmctl::diag::sort_findings(&mut f);
        stream.add(f);
    }
    let what = format!(
        "{} packages ({from_catalog} with catalog edges), {} bundles, {} edges checked, {} not checked",
        packages.len(),
        all.bundles,
        all.checked,
        all.unchecked
    );
    stream.finish(&what)
}
