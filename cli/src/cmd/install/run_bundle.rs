//! `olmctl install --bundle DIR|IMAGE`, as operator-sdk's `run bundle` (internal/olm/operator/
//! bundle/install.go, `Install.Run`): a bundle directory is built and pushed as a bundle image
//! (`bundle build --push`), since the catalog must name the bundle by image; an image is used as
//! given. The one-bundle catalog ([`olmctl::install::one_bundle`]) is built on an opm base image
//! and pushed daemonless (`catalog push --base-image`), and installed from a CatalogSource that
//! names it by digest, as `install --catalog` installs.
//!
//! `--upgrade` is operator-sdk's `run bundle-upgrade` (internal/olm/operator/bundleupgrade/
//! upgrade.go, `Upgrade.Run`; internal/olm/operator/registry/index_image.go, `UpdateCatalog`):
//! the CatalogSource an earlier `install --bundle` made is read, the bundles its annotation
//! records are pulled and rendered again with the new one into one channel, each replacing the
//! one before it, and the catalog is pushed and the CatalogSource pointed at it (by digest),
//! so that OLM upgrades the Subscription. Without `--upgrade`, such a CatalogSource is not
//! changed: as `run bundle` fails on the CatalogSource it would create, and `run bundle-upgrade`
//! is the command that changes it.

use clap::Args;

use super::InstallArgs;
use crate::args::{PullArgs, RegistryArgs};
use crate::term::{EXIT_FINDINGS, EXIT_USAGE, error};
use olmctl::build::{CatalogSpec, Refused};
use olmctl::install::one_bundle::{
    BUNDLE_ANNOTATION, DEFAULT_BASE_IMAGE, OneBundle, chain_fbc, check_newer, record, recorded,
};
use olmctl::install::{Catalog, Install, catalog_source_name};
use olmctl::oci::deliver::{Dest, ScratchDir, Want};
use olmctl::oci::registry::Options as RegistryOptions;

/// The flags of `install --bundle`.
#[derive(Debug, Args)]
pub struct BundleArgs {
    /// Install one bundle, as operator-sdk run bundle: a bundle directory (built and pushed as
    /// <registry>/<package>-bundle:v<version>) or a bundle image (used as given) is served by a
    /// one-bundle catalog image (package, the bundle's default channel, the bundle) pushed to
    /// --registry or --tag, then installed from a CatalogSource <package>-catalog that names
    /// it by digest, starting at the bundle's CSV. `uninstall` deletes that CatalogSource.
    #[arg(long, value_name = "DIR|IMAGE",
          conflicts_with_all = ["catalog", "catalog_source", "olmv1", "version", "starting_csv", "channel", "catalog_dir"])]
    pub(super) bundle: Option<String>,
    /// With --bundle: the registry the cluster pulls from (HOST[/PATH]) that the images are
    /// pushed to: <registry>/<package>-catalog:v<version> (and the bundle image of a directory).
    #[arg(long, value_name = "HOST[/PATH]", requires = "bundle")]
    registry: Option<String>,
    /// With --bundle: the catalog image reference to push, instead of the one under --registry.
    #[arg(long, value_name = "REF", requires = "bundle")]
    tag: Option<String>,
    /// With --bundle: the image the catalog is appended to, which serves it (opm's entrypoint
    /// and `serve /configs`) [default: quay.io/operator-framework/opm:latest].
    #[arg(long, value_name = "IMAGE", requires = "bundle")]
    base_image: Option<String>,
    /// With --bundle: use plain HTTP with the registries (loopback registries always do).
    #[arg(long, requires = "bundle")]
    plain_http: bool,
    /// With --bundle: do not verify the registries' TLS certificates.
    #[arg(long, requires = "bundle")]
    insecure: bool,
    /// With --bundle, as operator-sdk run bundle-upgrade: add the bundle to the catalog of the
    /// CatalogSource <package>-catalog an earlier `install --bundle` made (the bundles its
    /// annotation olmctl.dev/bundle lists), replacing the last one, which must be older; the
    /// catalog is pushed again and the CatalogSource pointed at it, and OLM upgrades the
    /// Subscription. Without it, install --bundle does not change such a CatalogSource.
    #[arg(long, requires = "bundle", conflicts_with = "print")]
    pub(super) upgrade: bool,
}

/// A bundle at hand: its directory (kept by the scratch guard), its image (`None` for a
/// directory, until it is pushed) and what the catalog needs of it.
struct Loaded {
    input: String,
    dir: std::path::PathBuf,
    image: Option<String>,
    one: OneBundle,
    _scratch: Vec<ScratchDir>,
}

/// Loads a bundle directory, or pulls a bundle image.
async fn load(input: &str, opts: &RegistryOptions) -> Result<Loaded, Refused> {
    let path = std::path::Path::new(input);
    let (dir, image, scratch) = if path.exists() {
        (path.to_path_buf(), None, Vec::new())
    } else {
        let pull = crate::args::pull_options(&PullArgs {
            platform: None,
            max_size: 2 << 30,
        })?;
        let (dirs, scratch) =
            olmctl::oci::deliver::pull_inputs(&[input], opts, &pull, Want::Bundle)
                .await
                .map_err(|e| format!("--bundle: {e}"))?;
        let dir = dirs
            .into_iter()
            .next()
            .flatten()
            .map(|(_, d)| d)
            .ok_or_else(|| {
                format!("--bundle {input}: no such directory, nor an image reference")
            })?;
        (dir, Some(input.to_string()), scratch)
    };
    let b = olmctl::bundle::load::load_bundle(&dir).map_err(|e| format!("{input}: {e}"))?;
    let one = OneBundle::of(&b, image.as_deref().unwrap_or_default())
        .map_err(|e| format!("{input}: {e}"))?;
    Ok(Loaded {
        input: input.to_string(),
        dir: b.dir,
        image,
        one,
        _scratch: scratch,
    })
}

/// Pushes the new bundle (a directory) and the catalog of `previous` (the bundles the
/// CatalogSource records, oldest first) followed by it; returns the bundles as the catalog
/// serves them and the catalog image by digest.
async fn serve(
    a: &BundleArgs,
    mut new: Loaded,
    previous: Vec<Loaded>,
    opts: &RegistryOptions,
) -> Result<(Vec<OneBundle>, String), Refused> {
    let events = crate::report::stderr_events();
    // Refused before anything is pushed.
    if let Some(last) = previous.last() {
        check_newer(&last.one, &new.one)
            .map_err(|e| Refused::Usage(format!("{}: {e}", new.input)))?;
    }
    if new.image.is_none() {
        let Some(reg) = &a.registry else {
            return Err(Refused::Usage(format!(
                "{} is a bundle directory: its image is pushed as <registry>/{}-bundle:<version>; pass --registry",
                new.input, new.one.package
            )));
        };
        let dest = Dest {
            tag: OneBundle::bundle_ref(reg, &new.one.package, new.one.version.as_deref()),
            push: true,
            layout: None,
        };
        let built = olmctl::build::bundle(&new.dir, &dest, false, opts, events.as_ref()).await?;
        new.one.image = built.delivered.pinned.clone();
        new.image = Some(built.delivered.pinned);
    }
    let tag = match (&a.tag, &a.registry) {
        (Some(t), _) => t.clone(),
        (None, Some(r)) => new.one.catalog_ref(r),
        (None, None) => {
            return Err(Refused::Usage(
                "--bundle needs --registry (or --tag): where to push the catalog image the cluster pulls".into(),
            ));
        }
    };
    let mut chain = Vec::new();
    for l in previous.iter().chain([&new]) {
        let b =
            olmctl::bundle::load::load_bundle(&l.dir).map_err(|e| format!("{}: {e}", l.input))?;
        let rendered = olmctl::bundle::render::render(
            &b,
            &l.one.image,
            olmctl::bundle::render::ObjectMode::CsvMetadata,
        )
        .map_err(|e| format!("{}: {e}", l.input))?;
        chain.push((l.one.clone(), rendered.blob));
    }
    let refs: Vec<(&OneBundle, &olmctl::fbc::node::Node)> =
        chain.iter().map(|(o, n)| (o, n)).collect();
    let fbc = chain_fbc(&refs).map_err(|e| Refused::Usage(format!("{}: {e}", new.input)))?;
    // The catalog directory: <package>/catalog.json.
    let scratch = ScratchDir::new();
    let pkg_dir = scratch.0.join(&new.one.package);
    std::fs::create_dir_all(&pkg_dir)
        .and_then(|()| std::fs::write(pkg_dir.join("catalog.json"), fbc))
        .map_err(|e| format!("{}: {e}", pkg_dir.display()))?;
    let spec = CatalogSpec {
        dir: scratch.0.clone(),
        base_image: Some(
            a.base_image
                .clone()
                .unwrap_or_else(|| DEFAULT_BASE_IMAGE.into()),
        ),
        force: false,
        labels: Default::default(),
        format: olmctl::fbc::write::Format::Yaml,
        server: olmctl::oci::catalog_image::Server::Opm,
    };
    let dest = Dest {
        tag,
        push: true,
        layout: None,
    };
    let built = olmctl::build::catalog(&spec, &dest, opts, events.as_ref()).await?;
    Ok((
        chain.into_iter().map(|(o, _)| o).collect(),
        built.delivered.pinned,
    ))
}

/// The bundles the existing CatalogSource records, when `--upgrade` may add to it; `Err` with
/// the refusal otherwise.
fn previous_images(
    upgrade: bool,
    existing: Option<&serde_json::Value>,
    what: &str,
    package: &str,
) -> Result<Vec<String>, String> {
    let images = existing
        .and_then(|cs| cs["metadata"]["annotations"][BUNDLE_ANNOTATION].as_str())
        .map(recorded)
        .unwrap_or_default();
    match (upgrade, existing) {
        (false, Some(_)) if !images.is_empty() => Err(format!(
            "CatalogSource {what} already serves {} (made by olmctl install --bundle): pass --upgrade to add this bundle to its catalog, or run `olmctl uninstall {package}` first",
            images.join(", ")
        )),
        (false, _) => Ok(Vec::new()),
        (true, None) => Err(format!(
            "CatalogSource {what} not found: --upgrade adds a bundle to the catalog an earlier `olmctl install --bundle` made; run install --bundle without --upgrade"
        )),
        (true, Some(_)) if images.is_empty() => Err(format!(
            "CatalogSource {what} has no {BUNDLE_ANNOTATION} annotation: olmctl install --bundle did not make it, and --upgrade adds only to a catalog it made"
        )),
        (true, Some(_)) => Ok(images),
    }
}

fn refused(r: Refused) -> u8 {
    match r {
        Refused::Usage(e) => {
            error(e);
            EXIT_USAGE
        }
        Refused::Findings { errors, message } => {
            eprint!("{}", olmctl::diag::render_text(&errors, false));
            error(message);
            EXIT_FINDINGS
        }
    }
}

/// Runs `olmctl install --bundle`.
pub fn run(a: InstallArgs) -> u8 {
    let Some(input) = a.one_bundle.bundle.clone() else {
        return EXIT_USAGE;
    };
    let mut registry = RegistryArgs::defaults(a.live.timeout);
    registry.plain_http = a.one_bundle.plain_http;
    registry.insecure = a.one_bundle.insecure;
    let opts = match crate::args::registry_options(&registry, u64::MAX) {
        Ok(o) => o,
        Err(e) => return refused(e.into()),
    };
    let rt = match crate::term::runtime() {
        Ok(rt) => rt,
        Err(c) => return c,
    };
    let new = match rt.block_on(load(&input, &opts)) {
        Ok(l) => l,
        Err(r) => return refused(r),
    };
    let package = new.one.package.clone();
    if !a.package.is_empty() && a.package != package {
        error(format_args!(
            "{input} is a bundle of package {package}, not {}",
            a.package
        ));
        return EXIT_USAGE;
    }
    // The CatalogSource an earlier install --bundle made (not read with --print, which
    // connects to nothing).
    let name = catalog_source_name(&package);
    let what = format!("{}/{name}", a.catalog_namespace);
    let existing = if a.print {
        None
    } else {
        let connection: crate::cluster::Connection = a.live.cluster.clone().into();
        match crate::cluster::catalog_source(
            &connection,
            &a.catalog_namespace,
            &name,
            a.live.timeout,
        ) {
            Ok(cs) => cs,
            Err(e) => {
                error(format_args!("reading CatalogSource {what}: {e}"));
                return EXIT_USAGE;
            }
        }
    };
    let images = match previous_images(a.one_bundle.upgrade, existing.as_ref(), &what, &package) {
        Ok(i) => i,
        Err(e) => {
            error(e);
            return EXIT_USAGE;
        }
    };
    let mut previous = Vec::new();
    for image in &images {
        match rt.block_on(load(image, &opts)) {
            Ok(l) => previous.push(l),
            Err(r) => {
                return refused(match r {
                    Refused::Usage(e) => Refused::Usage(format!(
                        "{e} (a bundle CatalogSource {what} records in {BUNDLE_ANNOTATION})"
                    )),
                    r => r,
                });
            }
        }
    }
    let (chain, catalog) = match rt.block_on(serve(&a.one_bundle, new, previous, &opts)) {
        Ok(s) => s,
        Err(r) => return refused(r),
    };
    drop(rt);
    let gate = match &a.gate {
        Some(f) => match super::read_gate(f) {
            Ok(v) => Some(v),
            Err(e) => {
                error(e);
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    // The Subscription as the first install --bundle made it: it starts at the first bundle,
    // and OLM follows the channel's replaces from there.
    let first = &chain[0];
    let images: Vec<String> = chain.iter().map(|o| o.image.clone()).collect();
    // The catalog holds these bundles: the newest is the one to run. An upgrade keeps the
    // approval the Subscription has (a Manual one stays Manual) unless --approval is given.
    let approval = a
        .approval
        .or_else(|| {
            let connection: crate::cluster::Connection = a.live.cluster.clone().into();
            (a.one_bundle.upgrade && !a.print)
                .then(|| {
                    crate::cluster::subscription_approval(
                        &connection,
                        &a.namespace,
                        &package,
                        a.live.timeout,
                    )
                })
                .flatten()
        })
        .unwrap_or_else(|| "Automatic".into());
    let i = Install {
        package,
        catalog: Catalog::Image(catalog),
        catalog_namespace: a.catalog_namespace,
        channel: Some(first.channel.clone()),
        version: None,
        starting_csv: Some(first.csv.clone()),
        namespace: a.namespace,
        target_namespaces: a.target_namespace,
        operator_group: !a.no_operator_group,
        create_namespace: a.create_namespace,
        approval,
        gate,
        poll_interval: a.poll_interval,
        catalog_annotations: [(BUNDLE_ANNOTATION.to_string(), record(&images))].into(),
    };
    super::apply(i, a.print, a.live, None, false)
}
