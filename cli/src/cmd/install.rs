//! `olmctl install`: what OLM needs to install a package (CatalogSource, OperatorGroup,
//! Subscription, and an UpgradePolicy with `--gate`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::args::{ClusterArgs, parse_duration};
use crate::cluster::{Connection, InstallRequest, UninstallRequest, Waiting};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, error, out};
use olmctl::install::uninstall::Uninstall;
use olmctl::install::{Catalog, Install};

mod run_bundle;

/// Cluster connection and waiting flags, shared by install and uninstall.
#[derive(Debug, Args)]
pub struct LiveArgs {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Give up after this long (e.g. 90s, 10m): every API call and the wait for OLM end within
    /// it (one call within 60s at most); a confirmation's wait for its answer is not counted.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    timeout: Duration,
    /// How often to read the objects OLM writes.
    #[arg(long, default_value = "2s", value_parser = parse_duration, hide = true)]
    interval: Duration,
    /// Answer yes to confirmations (approving the InstallPlan; deleting CRDs).
    #[arg(long, short = 'y')]
    yes: bool,
    /// Return once the objects are written, without waiting for OLM.
    #[arg(long)]
    no_wait: bool,
}

impl LiveArgs {
    fn split(self) -> (Connection, Waiting) {
        (
            self.cluster.into(),
            Waiting {
                timeout: self.timeout,
                interval: self.interval,
                yes: self.yes,
                no_wait: self.no_wait,
            },
        )
    }
}

/// `olmctl install` arguments.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The package to install (with --bundle: the bundle's, which it must match when given).
    #[arg(
        default_value = "",
        hide_default_value = true,
        required_unless_present = "bundle"
    )]
    package: String,
    /// A catalog (index) image: a CatalogSource is created for it.
    #[arg(
        long,
        value_name = "IMAGE",
        conflicts_with = "catalog_source",
        required_unless_present_any = ["catalog_source", "cluster_catalog", "bundle"]
    )]
    catalog: Option<String>,
    /// An existing CatalogSource to install from.
    #[arg(long, value_name = "NAME")]
    catalog_source: Option<String>,
    /// The CatalogSource's namespace (OLM's global catalog namespace).
    #[arg(long, default_value = "olm")]
    catalog_namespace: String,
    /// The channel (default: the package's default channel).
    #[arg(long)]
    channel: Option<String>,
    /// The version to install: its startingCSV is the name of the package's bundle of that
    /// version in the channel (default: the package's default channel), looked up in
    /// --catalog-dir, else the --catalog image, else the --catalog-source's image (read from
    /// the cluster; not with --print). Without a catalog the name is a guess,
    /// <package>.v<version>, and a warning says so.
    #[arg(long)]
    version: Option<String>,
    /// A copy of the catalog (an FBC directory) to look --version up in and to resolve
    /// against, instead of pulling the catalog image.
    #[arg(long, value_name = "DIR")]
    catalog_dir: Option<PathBuf>,
    /// Do not resolve the install first. By default, when the catalog's content is at hand
    /// (--catalog-dir, or the catalog --version reads), the namespace is resolved as OLM's
    /// resolver will resolve it (on a cluster with its CSVs, Subscriptions and other
    /// CatalogSources, pulled): the dependencies OLM installs too are named, and an install
    /// OLM could not resolve is refused (exit 1) before anything is written, with why.
    #[arg(long)]
    no_resolve: bool,
    /// The starting CSV by name, when it does not follow <package>.v<version>.
    #[arg(long, value_name = "CSV", conflicts_with = "version")]
    starting_csv: Option<String>,
    /// The install namespace.
    #[arg(long, short = 'n', default_value = "operators")]
    namespace: String,
    /// A namespace the operator watches (repeatable; default: all namespaces).
    #[arg(long, value_name = "NS")]
    target_namespace: Vec<String>,
    /// Do not create an OperatorGroup (the namespace has one).
    #[arg(long)]
    no_operator_group: bool,
    /// Also create the Namespace.
    #[arg(long)]
    create_namespace: bool,
    /// InstallPlan approval (default: Automatic; Manual with --version or --starting-csv, which
    /// pin the install to that version: only its plan is approved, and newer versions wait).
    /// `--version X --approval Automatic` starts at X and then follows the channel.
    #[arg(long, value_parser = ["Automatic", "Manual"])]
    approval: Option<String>,
    /// An UpgradePolicy for olmctl-operator to approve this namespace's upgrades by (approval
    /// becomes Manual).
    #[arg(long, value_name = "POLICY.yaml")]
    gate: Option<PathBuf>,
    /// Registry poll interval of a catalog image given by tag.
    #[arg(long, default_value = "30m")]
    poll_interval: String,
    /// Write the manifests to stdout instead of applying them (for GitOps, or `kubectl apply -f -`).
    #[arg(long)]
    print: bool,
    /// Install with OLM v1 (operator-controller): a ClusterCatalog for --catalog and a
    /// ClusterExtension; --version is its version or range, --channel its channel.
    #[arg(long)]
    olmv1: bool,
    /// OLM v1: install from this existing ClusterCatalog.
    #[arg(long, value_name = "NAME", requires = "olmv1", conflicts_with_all = ["catalog", "catalog_source"])]
    cluster_catalog: Option<String>,
    /// OLM v1 up to operator-controller v1.10: the ServiceAccount that installs the bundle
    /// (spec.serviceAccount.name; its RBAC: `olmctl bundle installer-rbac`).
    #[arg(long, value_name = "NAME", requires = "olmv1")]
    service_account: Option<String>,
    /// OLM v1 with --service-account: the bundle the extension resolves to, as a bundle
    /// directory, to derive the installer RBAC from instead of resolving it in the catalog and
    /// pulling its image (with --catalog-dir the catalog is read from that directory instead).
    /// With --print and nothing to read, the manifests are printed without the installer RBAC
    /// and a warning says so.
    #[arg(long, value_name = "DIR", requires = "service_account")]
    bundle_dir: Option<PathBuf>,
    /// With --service-account --print: exit 3 when the installer RBAC cannot be derived (the
    /// manifests are still printed without it).
    #[arg(long, requires = "service_account")]
    require_rbac: bool,
    #[command(flatten)]
    one_bundle: run_bundle::BundleArgs,
    #[command(flatten)]
    live: LiveArgs,
}

/// `olmctl uninstall` arguments.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The package.
    package: String,
    /// The install namespace.
    #[arg(long, short = 'n', default_value = "operators")]
    namespace: String,
    /// The Subscription's name (default: the package's, as `olmctl install` names it).
    #[arg(long, value_name = "NAME")]
    subscription: Option<String>,
    /// Also delete the package's own CRDs, and with them every custom resource of them: those
    /// its CSVs own that its bundle shipped (the InstallPlans, else the bundle read from the
    /// catalog) and no other CSV owns or requires; every other is kept, and said.
    #[arg(long)]
    delete_crds: bool,
    /// Also delete the CatalogSource, when `olmctl install` created it.
    #[arg(long)]
    delete_catalog_source: bool,
    /// Uninstall an OLM v1 ClusterExtension (named after the package): delete it, wait for
    /// operator-controller to remove the bundle, then the installer RBAC olmctl labelled for it.
    #[arg(long)]
    olmv1: bool,
    /// OLM v1: also delete the ClusterCatalog `<package>-catalog` that `install --olmv1` created.
    #[arg(long, requires = "olmv1")]
    delete_cluster_catalog: bool,
    #[command(flatten)]
    live: LiveArgs,
}

/// Runs `olmctl uninstall`.
pub fn run_uninstall(a: UninstallArgs) -> u8 {
    let (connection, waiting) = a.live.split();
    if a.olmv1 {
        if a.delete_crds || a.delete_catalog_source || a.subscription.is_some() {
            error(
                "--delete-crds, --delete-catalog-source and --subscription are for OLM v0; operator-controller removes an extension's CRDs with it",
            );
            return EXIT_USAGE;
        }
        // The ClusterExtension's name, the ClusterCatalog install --olmv1 named after it, and
        // the value of the label its installer RBAC is found by: checked before anything is
        // deleted, so that the uninstall cannot stop halfway.
        use olmctl::names::{Rule, check};
        let checked = check(Rule::Subdomain, "the package name", &a.package).and_then(|()| {
            check(
                Rule::LabelValue,
                "the package name (the value of the label olmctl.dev/installer-for)",
                &a.package,
            )
        });
        if let Err(e) = checked {
            error(e);
            return EXIT_USAGE;
        }
        let catalog = a
            .delete_cluster_catalog
            .then(|| format!("{}-catalog", a.package));
        return crate::cluster::run_uninstall_v1(
            &a.package,
            catalog.as_deref(),
            connection,
            waiting,
        );
    }
    let uninstall = Uninstall {
        package: a.package,
        subscription: a.subscription,
        namespace: a.namespace,
        delete_crds: a.delete_crds,
        delete_catalog_source: a.delete_catalog_source,
    };
    if let Err(e) = uninstall.check() {
        error(e);
        return EXIT_USAGE;
    }
    crate::cluster::run_uninstall(UninstallRequest {
        uninstall,
        connection,
        waiting,
    })
}

/// `install --olmv1`: the ClusterCatalog and ClusterExtension, printed or applied.
fn run_v1(a: InstallArgs) -> u8 {
    let v0_only = [
        (a.catalog_source.is_some(), "--catalog-source"),
        (a.starting_csv.is_some(), "--starting-csv"),
        (
            a.catalog_dir.is_some() && a.service_account.is_none(),
            "--catalog-dir (without --service-account)",
        ),
        (!a.target_namespace.is_empty(), "--target-namespace"),
        (a.no_operator_group, "--no-operator-group"),
        (a.approval.is_some(), "--approval"),
        (a.gate.is_some(), "--gate"),
    ];
    if let Some((_, flag)) = v0_only.iter().find(|(given, _)| *given) {
        error(format_args!(
            "{flag} is for OLM v0 (Subscriptions); with --olmv1 use --cluster-catalog, --version and --channel"
        ));
        return EXIT_USAGE;
    }
    let poll = match parse_duration(&a.poll_interval) {
        Ok(d) => u32::try_from(d.as_secs().div_ceil(60).max(1)).unwrap_or(u32::MAX),
        Err(e) => {
            error(format_args!("--poll-interval: {e}"));
            return EXIT_USAGE;
        }
    };
    let i = olmctl::install::olmv1::InstallV1 {
        package: a.package,
        catalog: match (a.catalog, a.cluster_catalog) {
            (Some(img), _) => olmctl::install::olmv1::Catalog::Image(img),
            (None, Some(c)) => olmctl::install::olmv1::Catalog::Existing(c),
            (None, None) => unreachable!("clap requires one"),
        },
        version: a.version,
        channels: a.channel.into_iter().collect(),
        namespace: a.namespace,
        service_account: a.service_account,
        create_namespace: a.create_namespace,
        poll_interval_minutes: Some(poll),
        installer_rbac: Vec::new(),
    };
    if let Err(e) = i.check() {
        error(e);
        return EXIT_USAGE;
    }
    let mut i = i;
    let timeout = a.live.timeout;
    let (connection, waiting) = a.live.split();
    let mut code = EXIT_OK;
    if i.service_account.is_some() {
        // The catalog to resolve the bundle in: the directory given, the image given, or the
        // one the existing ClusterCatalog serves (read from the cluster; not with --print,
        // which connects to nothing).
        let source = match (&a.bundle_dir, &a.catalog_dir, &i.catalog) {
            (Some(d), _, _) => Ok(RbacSource::BundleDir(d)),
            (None, Some(d), _) => Ok(RbacSource::CatalogDir(d)),
            (None, None, olmctl::install::olmv1::Catalog::Image(image)) => {
                Ok(RbacSource::CatalogImage(image.clone()))
            }
            (None, None, olmctl::install::olmv1::Catalog::Existing(name)) if !a.print => {
                match crate::cluster::cluster_catalog_image(&connection, name, timeout) {
                    Some(image) => Ok(RbacSource::CatalogImage(image)),
                    None => Err(RbacError::Unreadable(format!(
                        "ClusterCatalog {name}: no image to read the bundle from"
                    ))),
                }
            }
            (None, None, olmctl::install::olmv1::Catalog::Existing(name)) => {
                Err(RbacError::Unreadable(format!(
                    "ClusterCatalog {name}'s image is on the cluster, which --print does not reach"
                )))
            }
        };
        match source.and_then(|s| installer_rbac_v1(&i, s, timeout)) {
            Ok(objs) => i.installer_rbac = objs,
            Err(RbacError::Unreadable(e)) if a.print => {
                crate::term::warning(format_args!(
                    "{e}: the installer ServiceAccount {} and its RBAC are left out of the manifests (pass --catalog-dir DIR or --bundle-dir DIR to derive them offline)",
                    i.service_account.as_deref().unwrap_or_default()
                ));
                if a.require_rbac {
                    code = EXIT_NO_RBAC;
                }
            }
            Err(RbacError::Unreadable(e) | RbacError::Failed(e)) => {
                error(e);
                return EXIT_USAGE;
            }
        }
    }
    if a.print {
        out(&olmctl::olmv1::render::to_yaml(&i.manifests()));
        return code;
    }
    crate::cluster::run_install_v1(i, connection, waiting)
}

/// `install --print --service-account --require-rbac`: the manifests were printed without the
/// installer RBAC, which could not be derived.
const EXIT_NO_RBAC: u8 = 3;

/// Where the installer RBAC's bundle comes from.
enum RbacSource<'a> {
    /// The bundle itself (`--bundle-dir`).
    BundleDir(&'a std::path::Path),
    /// A copy of the catalog (`--catalog-dir`): resolved there, the bundle's image pulled.
    CatalogDir(&'a std::path::Path),
    /// The catalog image: pulled, resolved, the bundle's image pulled.
    CatalogImage(String),
}

/// Why the installer RBAC was not derived.
enum RbacError {
    /// An image could not be pulled (with --print, the manifests go out without the RBAC).
    Unreadable(String),
    /// Anything else: a directory given cannot be read, the package does not resolve, the
    /// bundle is refused.
    Failed(String),
}

/// The installer ServiceAccount and RBAC for the bundle a new extension resolves to: the
/// catalog read, the bundle chosen as operator-controller chooses it
/// ([`olmctl::olmv1::resolve::for_install`]), its image pulled (or the bundle directory given),
/// rendered as v1.10 renders it, and [`olmctl::rbac::installer::installer_rbac`].
fn installer_rbac_v1(
    i: &olmctl::install::olmv1::InstallV1,
    source: RbacSource<'_>,
    timeout: Duration,
) -> Result<Vec<serde_json::Value>, RbacError> {
    use RbacError::{Failed, Unreadable};
    use olmctl::oci::deliver::Want;
    let pulled = |image: &str, want: Want| crate::inputs::pulled_dir(image, want, timeout);
    let resolve = |cfg: &olmctl::fbc::decl::DeclarativeConfig, catalog: &str| {
        olmctl::olmv1::resolve::for_install(cfg, &i.package, &i.channels, i.version.as_deref())
            .map_err(|e| Failed(format!("{catalog}: {e}")))
    };
    let given = matches!(source, RbacSource::BundleDir(_));
    let (bdir, _scratch, shown) = match source {
        RbacSource::BundleDir(d) => (d.to_path_buf(), None, d.display().to_string()),
        RbacSource::CatalogDir(d) => {
            let cfg = olmctl::fbc::load::load_catalog(&[d.to_path_buf()])
                .map_err(Failed)?
                .cfg;
            let chosen = resolve(&cfg, &d.display().to_string())?;
            let (b, scratch) = pulled(&chosen.image, Want::Bundle).map_err(Unreadable)?;
            (b, Some(scratch), chosen.image)
        }
        RbacSource::CatalogImage(catalog) => {
            let (dir, _catalog_scratch) = pulled(&catalog, Want::Catalog).map_err(Unreadable)?;
            let cfg = olmctl::fbc::load::load_catalog(&[dir])
                .map_err(Unreadable)?
                .cfg;
            let chosen = resolve(&cfg, &catalog)?;
            let (b, scratch) = pulled(&chosen.image, Want::Bundle).map_err(Unreadable)?;
            (b, Some(scratch), chosen.image)
        }
    };
    let bundle =
        olmctl::bundle::load::load_bundle(&bdir).map_err(|e| Failed(format!("{shown}: {e}")))?;
    let package = bundle
        .annotation(olmctl::bundle::load::keys::PACKAGE)
        .unwrap_or_default();
    // A bundle directory given stands for the resolved bundle: it must be of the package.
    if given && package != i.package {
        return Err(Failed(format!(
            "{shown}: the bundle is of package {}, not {}",
            olmctl::text::esc(package),
            olmctl::text::esc(&i.package)
        )));
    }
    let opts = olmctl::olmv1::render::Options {
        install_namespace: i.namespace.clone(),
        watch_namespace: None,
        cert_provider: olmctl::olmv1::render::CertProvider::CertManager,
        operator_namespace_annotation: false,
        single_own_namespace: false,
        deployment_config: None,
    };
    let objects = olmctl::olmv1::render::for_install(&bundle, &opts).map_err(|r| {
        Failed(format!(
            "{shown}: operator-controller would not install this bundle: {r}"
        ))
    })?;
    olmctl::rbac::installer::installer_rbac(
        &objects,
        &[],
        &olmctl::rbac::installer::Options {
            namespace: i.namespace.clone(),
            service_account: i.service_account.clone().unwrap_or_default(),
            extension: i.package.clone(),
        },
    )
    .map_err(|e| {
        let e = e.locate(
            &objects,
            &olmctl::rbac::grants::sources(&bundle),
            &bundle.dir,
        );
        Failed(format!("{shown}: {e}"))
    })
}

/// Runs `olmctl install`.
pub fn run(a: InstallArgs) -> u8 {
    if a.one_bundle.bundle.is_some() {
        return run_bundle::run(a);
    }
    if a.olmv1 {
        return run_v1(a);
    }
    let gate = match &a.gate {
        Some(f) => match read_gate(f) {
            Ok(v) => Some(v),
            Err(e) => {
                error(e);
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let pinning = a.version.is_some() || a.starting_csv.is_some();
    let approval = a
        .approval
        .unwrap_or_else(|| if pinning { "Manual" } else { "Automatic" }.into());
    let i = Install {
        package: a.package,
        catalog: match (a.catalog, a.catalog_source) {
            (Some(img), _) => Catalog::Image(img),
            (None, Some(s)) => Catalog::Source(s),
            (None, None) => unreachable!("clap requires one"),
        },
        catalog_namespace: a.catalog_namespace,
        channel: a.channel,
        version: a.version,
        starting_csv: a.starting_csv,
        namespace: a.namespace,
        target_namespaces: a.target_namespace,
        operator_group: !a.no_operator_group,
        create_namespace: a.create_namespace,
        approval,
        gate,
        poll_interval: a.poll_interval,
        catalog_annotations: Default::default(),
    };
    apply(i, a.print, a.live, a.catalog_dir.as_deref(), !a.no_resolve)
}

/// Checks an OLM v0 install, looks its `--version` up in the catalog at hand (`catalog_dir`,
/// else the catalog image), then prints its manifests or applies them and follows OLM.
fn apply(
    mut i: Install,
    print: bool,
    live: LiveArgs,
    catalog_dir: Option<&std::path::Path>,
    resolve: bool,
) -> u8 {
    if let Err(e) = i.check() {
        error(e);
        return EXIT_USAGE;
    }
    let timeout = live.timeout;
    let (connection, waiting) = live.split();
    let mut at_hand = None;
    if catalog_dir.is_some() || (i.version.is_some() && i.starting_csv.is_none()) {
        match catalog_at_hand(&i, catalog_dir, print, &connection, timeout) {
            Ok(c) => at_hand = c,
            Err(e) => {
                error(e);
                return EXIT_USAGE;
            }
        }
    }
    if i.version.is_some() && i.starting_csv.is_none() {
        let version = i.version.clone().unwrap_or_default();
        match &at_hand {
            Some((what, cfg)) => {
                match olmctl::install::starting_csv::lookup(
                    cfg,
                    &i.package,
                    i.channel.as_deref(),
                    &version,
                ) {
                    Ok(f) => i.starting_csv = Some(f.csv),
                    Err(e) => {
                        error(format_args!("--version {version}: {what}: {e}"));
                        return EXIT_USAGE;
                    }
                }
            }
            None => {
                if let Some(note) = i.guess_note() {
                    crate::term::warning(note);
                }
            }
        }
    }
    if resolve && let Some((what, cfg)) = &at_hand {
        // On a cluster, what else the namespace has and the other catalogs OLM reads; with
        // --print (which connects to nothing) the install's catalog alone.
        let seen = if print {
            Seen::alone(what)
        } else {
            cluster_context(&i, &connection, timeout)
        };
        let others: Vec<_> = seen.others.iter().map(|(k, c)| (k.clone(), c)).collect();
        let r = olmctl::install::preview::preview(&i, cfg, &seen.state, &others);
        if let Err(code) = report_preview(&i, &r, &seen) {
            return code;
        }
        if let Some(p) = olmctl::install::preview::passed_over(&i, cfg, &seen.state, &others, &r) {
            use olmctl::text::esc;
            eprintln!(
                "note: OLM installs {}, not {}, the head of channel {}: {} (OLM takes the highest bundle it can install; `olmctl resolve` explains, --version or --starting-csv chooses)",
                esc(&p.chosen),
                esc(&p.head),
                esc(&p.channel),
                esc(&p.why.join("; "))
            );
        }
    }
    if print {
        out(&i.yaml());
        return EXIT_OK;
    }
    crate::cluster::run_install(InstallRequest {
        install: i,
        connection,
        waiting,
    })
}

/// The catalog at hand for `--version` and the resolution: `--catalog-dir`, else the
/// `--catalog` image pulled, else (not with `--print`, which connects to nothing) the image of
/// the `--catalog-source` read from the cluster. `Ok(None)`: no catalog at hand.
fn catalog_at_hand(
    i: &Install,
    dir: Option<&std::path::Path>,
    print: bool,
    connection: &Connection,
    timeout: Duration,
) -> Result<Option<(String, olmctl::fbc::decl::DeclarativeConfig)>, String> {
    let version = i.version.as_deref().unwrap_or_default();
    if let Some(d) = dir {
        let cfg = olmctl::catalog::load(&[d.to_path_buf()])
            .map_err(|e| format!("--catalog-dir: {e}"))?
            .cfg;
        return Ok(Some((d.display().to_string(), cfg)));
    }
    let image = match &i.catalog {
        Catalog::Image(image) => Some(image.clone()),
        Catalog::Source(name) if !print => {
            crate::cluster::catalog_source_image(connection, &i.catalog_namespace, name, timeout)
        }
        Catalog::Source(_) => None,
    };
    let Some(image) = image else {
        return Ok(None);
    };
    let (d, _scratch) =
        crate::inputs::pulled_dir(&image, olmctl::oci::deliver::Want::Catalog, timeout).map_err(
            |e| {
                format!(
                    "--version {version}: cannot read catalog {image} to look its CSV up: {e}; pass --catalog-dir DIR (a copy of the catalog) or --starting-csv NAME"
                )
            },
        )?;
    let cfg = olmctl::fbc::load::load_catalog(&[d])
        .map_err(|e| format!("{image}: {e}"))?
        .cfg;
    Ok(Some((image, cfg)))
}

/// What the resolution before an install read besides the install's own catalog.
#[derive(Default)]
struct Seen {
    /// The cluster's objects (empty with --print).
    state: olmctl::resolve::state::ClusterState,
    /// The other catalogs of the namespace and the global namespace, read.
    others: Vec<(
        olmctl::resolve::entry::SourceKey,
        olmctl::fbc::decl::DeclarativeConfig,
    )>,
    /// What could not be read: the resolution may miss what it holds, so a failure is not a
    /// refusal.
    left_out: Vec<String>,
    /// Said before the resolution's answer.
    notes: Vec<String>,
    /// With --print: only the install's catalog (named) was read.
    alone: Option<String>,
}

impl Seen {
    fn alone(what: &str) -> Seen {
        Seen {
            alone: Some(what.to_string()),
            ..Seen::default()
        }
    }
}

/// The namespace's Subscriptions, CSVs and OperatorGroups and the CatalogSources of the
/// namespace and the global namespace (`--catalog-namespace`), read from the cluster, and the
/// content of every catalog but the install's own (pulled from its image, said on stderr
/// first). Nothing that fails here stops the install: it is left out, and said.
fn cluster_context(i: &Install, connection: &Connection, timeout: Duration) -> Seen {
    let mut seen = Seen::default();
    let objects = match crate::cluster::resolution_objects(
        connection,
        &i.namespace,
        &i.catalog_namespace,
        timeout,
    ) {
        Ok(o) => o,
        Err(e) => {
            seen.left_out.push(format!(
                "the namespace's Subscriptions, CSVs, OperatorGroups and CatalogSources ({e})"
            ));
            return seen;
        }
    };
    for o in &objects {
        seen.state.add(o);
    }
    let (name, ns) = i.source();
    let own = olmctl::resolve::entry::SourceKey::new(&name, &ns);
    let (catalogs, notes) = crate::resolution::namespace_catalogs(
        &seen.state,
        &i.namespace,
        &i.catalog_namespace,
        &[],
        Some(&own),
        timeout,
        &mut |k, image| {
            eprintln!(
                "reading catalog {} ({}) to resolve the install as OLM will",
                olmctl::text::esc(&k.to_string()),
                olmctl::text::esc(image)
            )
        },
    );
    seen.notes = notes;
    for (k, cfg) in catalogs {
        match cfg {
            Ok(c) => seen.others.push((k, c)),
            Err(e) => seen.left_out.push(format!("catalog {k} ({e})")),
        }
    }
    seen
}

/// Says what OLM installs besides the package (its dependencies, from which catalog, under
/// which Subscription) on stderr; an install OLM cannot resolve is refused with OLM's message
/// and the explanation (`Err(exit status)`), unless something the resolution needed could not
/// be read (then it is a warning and the install goes on: OLM decides with everything).
fn report_preview(
    i: &Install,
    r: &olmctl::resolve::steps::Resolution,
    seen: &Seen,
) -> Result<(), u8> {
    use olmctl::resolve::steps::PulledBy;
    use olmctl::text::esc;
    for n in &seen.notes {
        eprintln!("note: {}", esc(n));
    }
    for l in &seen.left_out {
        eprintln!(
            "warning: the resolution before the install could not read {}",
            esc(l)
        );
    }
    match &r.result {
        Ok(plan) => {
            for c in &plan.chosen {
                if let Some(PulledBy::Requirement { bundle, .. }) = &c.pulled_by {
                    eprintln!(
                        "note: OLM also installs {} ({} {}) from {}/{}, a dependency of {}{}",
                        esc(&c.csv),
                        esc(&c.package),
                        esc(&c.version),
                        esc(&c.catalog.name),
                        esc(&c.catalog.namespace),
                        esc(bundle),
                        c.new_subscription
                            .as_ref()
                            .map(|s| format!(", with Subscription {}", esc(s)))
                            .unwrap_or_default()
                    );
                }
            }
            Ok(())
        }
        Err(f) => {
            let partial = !seen.left_out.is_empty();
            if partial {
                eprintln!(
                    "warning: OLM would not resolve the install of {} in namespace {} from what could be read; installing anyway, as OLM decides with every catalog",
                    esc(&i.package),
                    esc(&i.namespace)
                );
            } else {
                let from = match &seen.alone {
                    Some(what) => format!(
                        " (resolved against {what} alone: --print reads no other catalog of the cluster)"
                    ),
                    None => String::new(),
                };
                error(format_args!(
                    "OLM could not resolve the install of {} in namespace {}{from}: nothing was written (--no-resolve installs anyway)",
                    i.package, i.namespace
                ));
            }
            eprintln!("OLM's message: {}", esc(f));
            if let Some(e) = &r.explanation {
                for (n, item) in e.items.iter().enumerate() {
                    eprintln!("  {}. {}", n + 1, esc(&item.means));
                    for c in &item.candidates {
                        eprintln!(
                            "     - {} (version {}): {}",
                            esc(&c.csv),
                            esc(&c.version),
                            esc(&c.why_out)
                        );
                    }
                    for f in &item.fix {
                        eprintln!("     fix: {}", esc(f));
                    }
                }
            }
            if partial { Ok(()) } else { Err(EXIT_FINDINGS) }
        }
    }
}

/// The policy file, checked by the gate's reader, as JSON.
fn read_gate(f: &std::path::Path) -> Result<serde_json::Value, String> {
    // Read and parsed once: the gate's reader checks the document the manifests carry.
    let doc = olmctl::fbc::yaml::read_first_document(f)?
        .ok_or_else(|| format!("{}:1:1: empty policy document", f.display()))?;
    olmctl::gate::policy::from_node(&doc).map_err(|e| {
        format!(
            "{}:{}:{}: {}",
            f.display(),
            e.pos.line,
            e.pos.col,
            e.message
        )
    })?;
    serde_json::from_str(&doc.to_json()).map_err(|e| format!("{}: {e}", f.display()))
}
