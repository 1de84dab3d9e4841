//! `olmctl install`: what OLM needs to install a package (CatalogSource, OperatorGroup,
//! Subscription, and an UpgradePolicy with `--gate`).

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, EXIT_USAGE, error, out};
use crate::install::{Catalog, Install};

/// `olmctl install` arguments.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The package to install.
    package: String,
    /// A catalog (index) image: a CatalogSource is created for it.
    #[arg(
        long,
        value_name = "IMAGE",
        conflicts_with = "catalog_source",
        required_unless_present = "catalog_source"
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
    /// The version to install (startingCSV <package>.v<version>).
    #[arg(long)]
    version: Option<String>,
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
    /// InstallPlan approval.
    #[arg(long, default_value = "Automatic", value_parser = ["Automatic", "Manual"])]
    approval: String,
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
}

/// Runs `olmctl install`.
pub fn run(a: InstallArgs) -> u8 {
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
        approval: a.approval,
        gate,
        poll_interval: a.poll_interval,
    };
    if let Err(e) = i.check() {
        error(e);
        return EXIT_USAGE;
    }
    if !a.print {
        error(
            "applying to a cluster is not in this build yet: write the manifests with --print and apply them (`olmctl install ... --print | kubectl apply -f -`)",
        );
        return EXIT_USAGE;
    }
    out(&i.yaml());
    EXIT_OK
}

/// The policy file, checked by the gate's reader, as JSON.
fn read_gate(f: &std::path::Path) -> Result<serde_json::Value, String> {
    // Read and parsed once: the gate's reader checks the document the manifests carry.
    let doc = crate::fbc::yaml::read_first_document(f)?
        .ok_or_else(|| format!("{}:1:1: empty policy document", f.display()))?;
    crate::gate::policy::from_node(&doc).map_err(|e| {
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
