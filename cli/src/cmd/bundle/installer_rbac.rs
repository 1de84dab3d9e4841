//! `olmctl bundle installer-rbac BUNDLE --install-namespace NS`: the ServiceAccount and RBAC that
//! operator-controller up to v1.10 needs (`spec.serviceAccount`) to install, upgrade and delete
//! exactly this bundle ([`olmctl::rbac::installer::installer_rbac`] over operator-controller's
//! rendering of it).

use clap::Args;
use olmctl::rbac::installer::{Options, installer_rbac};
use olmctl::text::esc;

use crate::args::{ManifestFormat, PullArgs, RegistryArgs, V1RenderArgs};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, out};

/// `bundle installer-rbac` arguments.
#[derive(Debug, Args)]
pub struct InstallerRbacArgs {
    /// The bundle: a directory (holding manifests/ and metadata/) or a bundle image.
    bundle: String,
    /// The ClusterExtension's spec.namespace (where the ServiceAccount is made).
    #[arg(long, value_name = "NS")]
    install_namespace: String,
    /// The ClusterExtension's name (default: the bundle's package).
    #[arg(long, value_name = "NAME")]
    cluster_extension: Option<String>,
    /// The installer ServiceAccount's name (default: <cluster-extension>-installer).
    #[arg(long, value_name = "NAME")]
    service_account: Option<String>,
    /// The installed bundle (directory or image), for an upgrade: its objects that the new
    /// bundle drops must be deletable too.
    #[arg(long, value_name = "OLD")]
    upgrade_from: Option<String>,
    #[command(flatten)]
    render: V1RenderArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = ManifestFormat::Yaml)]
    output: ManifestFormat,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    pull: PullArgs,
}

/// The bundle's objects as operator-controller renders them, its package, and where its RBAC
/// was written (to point at a rule) with the directory it was read from.
type Rendered = (
    Vec<serde_json::Value>,
    String,
    (Vec<olmctl::rbac::grants::Source>, std::path::PathBuf),
);

fn rendered(arg: &str, a: &InstallerRbacArgs) -> Result<Rendered, u8> {
    let (bundle, _scratch) = crate::inputs::bundle(arg, &a.registry, &a.pull)?;
    let package = bundle
        .annotation(olmctl::bundle::load::keys::PACKAGE)
        .unwrap_or_default()
        .to_string();
    // operator-controller v1.10: the line whose spec.serviceAccount is honoured.
    let opts = a.render.options(&a.install_namespace, "1.10");
    olmctl::olmv1::render::for_install(&bundle, &opts)
        .map(|o| {
            let sources = olmctl::rbac::grants::sources(&bundle);
            (o, package, (sources, bundle.dir.clone()))
        })
        .map_err(|r| {
            crate::term::error(format_args!(
                "{}: operator-controller would not install this bundle: {r}",
                esc(arg)
            ));
            EXIT_FINDINGS
        })
}

/// Runs `bundle installer-rbac`.
pub fn run(a: InstallerRbacArgs) -> u8 {
    use olmctl::names::{Rule, check};
    // The names given are checked before the bundle is read or pulled.
    if let Err(e) = a.render.check(&a.install_namespace) {
        crate::term::error(e);
        return EXIT_USAGE;
    }
    let given = [
        (
            Rule::Subdomain,
            "--cluster-extension",
            a.cluster_extension.as_ref(),
        ),
        (
            Rule::Subdomain,
            "--service-account",
            a.service_account.as_ref(),
        ),
    ];
    for (rule, what, value) in given {
        if let Some(v) = value
            && let Err(e) = check(rule, what, v)
        {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    }
    let (objects, package, (sources, root)) = match rendered(&a.bundle, &a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let old = match &a.upgrade_from {
        Some(o) => match rendered(o, &a) {
            Ok((objs, _, _)) => objs,
            Err(code) => return code,
        },
        None => Vec::new(),
    };
    let extension_what = if a.cluster_extension.is_some() {
        "--cluster-extension".to_string()
    } else {
        format!(
            "{}: the package name ({} in metadata/annotations.yaml; name the extension with --cluster-extension)",
            esc(&a.bundle),
            olmctl::bundle::load::keys::PACKAGE
        )
    };
    let extension = a.cluster_extension.clone().unwrap_or(package);
    let sa_what = if a.service_account.is_some() {
        "--service-account"
    } else {
        "the ServiceAccount name (<cluster-extension>-installer; name it with --service-account)"
    };
    let opts = Options {
        namespace: a.install_namespace.clone(),
        service_account: a
            .service_account
            .clone()
            .unwrap_or_else(|| format!("{extension}-installer")),
        extension,
    };
    if let Err(e) = opts.check(["--install-namespace", sa_what, &extension_what]) {
        crate::term::error(e);
        return EXIT_USAGE;
    }
    let objs = match installer_rbac(&objects, &old, &opts) {
        Ok(o) => o,
        Err(e) => {
            let e = e.locate(&objects, &sources, &root);
            crate::term::error(format_args!("{}: {e}", esc(&a.bundle)));
            return EXIT_USAGE;
        }
    };
    if a.output == ManifestFormat::Yaml {
        // The names were checked above (DNS-1123): nothing in them can end the comment.
        out(&format!(
            "# The installer ServiceAccount of ClusterExtension {} for operator-controller v1.10 and\n# earlier (spec.serviceAccount.name: {}), by olmctl bundle installer-rbac.\n",
            esc(&opts.extension),
            esc(&opts.service_account),
        ));
    }
    out(&a.output.render(&objs));
    EXIT_OK
}
