//! `olmctl bundle render BUNDLE --olmv1`: the objects OLM v1's operator-controller applies for a
//! registry+v1 bundle ([`olmctl::olmv1::render::manifests`]), or its reason to refuse it.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use olmctl::oci::deliver::Want;
use olmctl::olmv1::render::{CertProvider, Options};
use olmctl::text::esc;

use crate::args::{PullArgs, RegistryArgs};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, out};

/// `bundle render` arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The bundle: a directory (holding manifests/ and metadata/) or a bundle image.
    bundle: String,
    /// Render as OLM v1 (operator-controller) installs the bundle for a ClusterExtension.
    #[arg(long, required = true)]
    olmv1: bool,
    /// The ClusterExtension's spec.namespace.
    #[arg(long, value_name = "NS")]
    install_namespace: String,
    /// The watch namespace (spec.config.inline.watchNamespace); default: all namespaces when
    /// the bundle supports AllNamespaces.
    #[arg(long, value_name = "NS")]
    watch_namespace: Option<String>,
    /// Who provides webhook certificates: cert-manager (operator-controller's first choice),
    /// OpenShift's service CA, or none (the renderer alone, as upstream's regression tests run it).
    #[arg(long, value_enum, default_value_t = Provider::CertManager)]
    cert_provider: Provider,
    /// The operator-controller release line: 1.11 (and later) sets olm.operatorNamespace on the
    /// pods, 1.10 does not.
    #[arg(long, value_name = "VERSION", default_value = "1.11", value_parser = ["1.10", "1.11"])]
    operator_controller: String,
    /// operator-controller runs with the SingleOwnNamespaceInstallSupport gate (Alpha): bundles
    /// without AllNamespaces are accepted.
    #[arg(long)]
    single_own_namespace: bool,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Yaml)]
    output: Format,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    pull: PullArgs,
}

/// `--cert-provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// cert-manager: an Issuer and a Certificate per webhook service.
    CertManager,
    /// OpenShift's service CA: annotations only.
    OpenshiftServiceCa,
    /// None.
    None,
}

/// `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A multi-document YAML stream.
    Yaml,
    /// One JSON document: a list of the objects.
    Json,
}

/// Runs `bundle render`.
pub fn run(a: RenderArgs) -> u8 {
    let (pulled, _scratch) =
        match crate::inputs::pulled(&[a.bundle.as_str()], &a.registry, &a.pull, Want::Bundle) {
            Ok(p) => p,
            Err(e) => {
                crate::term::error(e);
                return EXIT_USAGE;
            }
        };
    let dir = pulled
        .into_iter()
        .next()
        .flatten()
        .map_or_else(|| PathBuf::from(&a.bundle), |(_, d)| d);
    let bundle = match olmctl::bundle::load::load_bundle(&dir) {
        Ok(b) => b,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let opts = Options {
        install_namespace: a.install_namespace,
        watch_namespace: a.watch_namespace,
        cert_provider: match a.cert_provider {
            Provider::CertManager => CertProvider::CertManager,
            Provider::OpenshiftServiceCa => CertProvider::OpenshiftServiceCa,
            Provider::None => CertProvider::None,
        },
        operator_namespace_annotation: a.operator_controller != "1.10",
        single_own_namespace: a.single_own_namespace,
    };
    match olmctl::olmv1::render::manifests(&bundle, &opts) {
        Ok(objs) => {
            match a.output {
                Format::Yaml => out(&olmctl::olmv1::render::to_yaml(&objs)),
                Format::Json => out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&objs).unwrap_or_default()
                )),
            }
            EXIT_OK
        }
        Err(refused) => {
            crate::term::error(format_args!(
                "{}: operator-controller would not install this bundle: {refused}",
                esc(&a.bundle)
            ));
            EXIT_FINDINGS
        }
    }
}
