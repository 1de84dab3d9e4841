//! `olmctl install --bundle DIR|IMAGE`, as operator-sdk's `run bundle` (internal/olm/operator/
//! bundle/install.go, `Install.Run`): a bundle directory is built and pushed as a bundle image
//! (`bundle build --push`), since the catalog must name the bundle by image; an image is used as
//! given. The one-bundle catalog ([`olmctl::install::one_bundle`]) is built on an opm base image
//! and pushed daemonless (`catalog push --base-image`), and installed from a CatalogSource that
//! names it by digest, as `install --catalog` installs.

use clap::Args;

use super::InstallArgs;
use crate::args::{PullArgs, RegistryArgs};
use crate::term::{EXIT_FINDINGS, EXIT_USAGE, error};
use olmctl::build::{CatalogSpec, Refused};
use olmctl::install::one_bundle::{BUNDLE_ANNOTATION, DEFAULT_BASE_IMAGE, OneBundle};
use olmctl::install::{Catalog, Install};
use olmctl::oci::deliver::{Dest, ScratchDir, Want};

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
}

/// What was built and pushed: the bundle as the catalog serves it, and the catalog image by
/// digest.
struct Served {
    one: OneBundle,
    catalog: String,
}

/// Builds and pushes the bundle (a directory) and its one-bundle catalog.
async fn serve(a: &BundleArgs, input: &str, registry: &RegistryArgs) -> Result<Served, Refused> {
    let opts = crate::args::registry_options(registry, u64::MAX)?;
    let events = crate::report::stderr_events();
    let path = std::path::Path::new(input);
    // The bundle's directory (pulled for an image), and its image.
    let (dir, image, _pulled) = if path.exists() {
        let b = olmctl::bundle::load::load_bundle(path).map_err(|e| e.to_string())?;
        let one = OneBundle::of(&b, "").map_err(|e| format!("{input}: {e}"))?;
        let Some(reg) = &a.registry else {
            return Err(Refused::Usage(format!(
                "{input} is a bundle directory: its image is pushed as <registry>/{}-bundle:<version>; pass --registry",
                one.package
            )));
        };
        let dest = Dest {
            tag: OneBundle::bundle_ref(reg, &one.package, one.version.as_deref()),
            push: true,
            layout: None,
        };
        let built = olmctl::build::bundle(path, &dest, false, &opts, events.as_ref()).await?;
        (b.dir, built.delivered.pinned, Vec::new())
    } else {
        let pull = crate::args::pull_options(&PullArgs {
            platform: None,
            max_size: 2 << 30,
        })?;
        let (dirs, scratch) =
            olmctl::oci::deliver::pull_inputs(&[input], &opts, &pull, Want::Bundle)
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
        (dir, input.to_string(), scratch)
    };
    let b = olmctl::bundle::load::load_bundle(&dir).map_err(|e| format!("{input}: {e}"))?;
    let one = OneBundle::of(&b, &image).map_err(|e| format!("{input}: {e}"))?;
    let rendered =
        olmctl::bundle::render::render(&b, &image, olmctl::bundle::render::ObjectMode::CsvMetadata)
            .map_err(|e| format!("{input}: {e}"))?;
    let tag = match (&a.tag, &a.registry) {
        (Some(t), _) => t.clone(),
        (None, Some(r)) => one.catalog_ref(r),
        (None, None) => {
            return Err(Refused::Usage(
                "--bundle needs --registry (or --tag): where to push the catalog image the cluster pulls".into(),
            ));
        }
    };
    // The catalog directory: <package>/catalog.json.
    let scratch = ScratchDir::new();
    let pkg_dir = scratch.0.join(&one.package);
    std::fs::create_dir_all(&pkg_dir)
        .and_then(|()| std::fs::write(pkg_dir.join("catalog.json"), one.fbc(&rendered.blob)))
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
    let built = olmctl::build::catalog(&spec, &dest, &opts, events.as_ref()).await?;
    Ok(Served {
        one,
        catalog: built.delivered.pinned,
    })
}

/// Runs `olmctl install --bundle`.
pub fn run(a: InstallArgs) -> u8 {
    let Some(input) = a.one_bundle.bundle.clone() else {
        return EXIT_USAGE;
    };
    let mut registry = RegistryArgs::defaults(a.live.timeout);
    registry.plain_http = a.one_bundle.plain_http;
    registry.insecure = a.one_bundle.insecure;
    let rt = match crate::term::runtime() {
        Ok(rt) => rt,
        Err(c) => return c,
    };
    let served = match rt.block_on(serve(&a.one_bundle, &input, &registry)) {
        Ok(s) => s,
        Err(Refused::Usage(e)) => {
            error(e);
            return EXIT_USAGE;
        }
        Err(Refused::Findings { errors, message }) => {
            eprint!("{}", olmctl::diag::render_text(&errors, false));
            error(message);
            return EXIT_FINDINGS;
        }
    };
    drop(rt);
    let one = served.one;
    if !a.package.is_empty() && a.package != one.package {
        error(format_args!(
            "{input} is a bundle of package {}, not {}",
            one.package, a.package
        ));
        return EXIT_USAGE;
    }
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
    let i = Install {
        package: one.package.clone(),
        catalog: Catalog::Image(served.catalog),
        catalog_namespace: a.catalog_namespace,
        channel: Some(one.channel.clone()),
        version: None,
        starting_csv: Some(one.csv.clone()),
        namespace: a.namespace,
        target_namespaces: a.target_namespace,
        operator_group: !a.no_operator_group,
        create_namespace: a.create_namespace,
        // The catalog holds this one bundle: nothing newer to hold back.
        approval: a.approval.unwrap_or_else(|| "Automatic".into()),
        gate,
        poll_interval: a.poll_interval,
        catalog_annotations: [(BUNDLE_ANNOTATION.to_string(), one.image.clone())].into(),
    };
    super::apply(i, a.print, a.live, None)
}
