//! `olmctl bundle render BUNDLE [--olmv1]`: the objects OLM v1's operator-controller applies for a
//! registry+v1 bundle ([`olmctl::olmv1::render::manifests`]), or its reason to refuse it.

use clap::Args;
use olmctl::text::esc;

use crate::args::{ManifestFormat, PullArgs, RegistryArgs};
use crate::term::{EXIT_FINDINGS, EXIT_OK, out};

/// `bundle render` arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The bundle: a directory (holding manifests/ and metadata/) or a bundle image.
    bundle: String,
    /// Render as OLM v1 (operator-controller) installs the bundle for a ClusterExtension:
    /// the only mode, so the default (accepted for scripts that pass it).
    #[arg(long)]
    olmv1: bool,
    /// The ClusterExtension's spec.namespace.
    #[arg(long, value_name = "NS")]
    install_namespace: String,
    #[command(flatten)]
    render: crate::args::V1RenderArgs,
    /// The operator-controller release line: 1.11 (and later) sets olm.operatorNamespace on the
    /// pods, 1.10 does not.
    #[arg(long, value_name = "VERSION", default_value = "1.11", value_parser = ["1.10", "1.11"])]
    operator_controller: String,
    /// A ClusterExtension deploymentConfig (YAML or JSON object: env, envFrom, volumes,
    /// volumeMounts, tolerations, resources, nodeSelector, affinity, annotations) applied to
    /// every Deployment, as operator-controller's Alpha DeploymentConfig gate does.
    #[arg(long, value_name = "FILE")]
    deployment_config: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = ManifestFormat::Yaml)]
    output: ManifestFormat,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    pull: PullArgs,
}

/// Runs `bundle render`.
pub fn run(a: RenderArgs) -> u8 {
    if let Err(e) = a.render.check(&a.install_namespace) {
        crate::term::error(e);
        return crate::term::EXIT_USAGE;
    }
    let (bundle, _scratch) = match crate::inputs::bundle(&a.bundle, &a.registry, &a.pull) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let mut opts = a
        .render
        .options(&a.install_namespace, &a.operator_controller);
    if let Some(f) = &a.deployment_config {
        match read_deployment_config(f) {
            Ok(v) => opts.deployment_config = Some(v),
            Err(e) => {
                crate::term::error(e);
                return crate::term::EXIT_USAGE;
            }
        }
    }
    match olmctl::olmv1::render::manifests(&bundle, &opts) {
        Ok(objs) => {
            // What the renderer makes of it; from a catalog, the resolver refuses it first.
            if let Err(refused) = olmctl::olmv1::render::check_dependencies(&bundle) {
                crate::term::warning(format_args!(
                    "{}: operator-controller's resolver would not install this bundle from a catalog: {refused}; these are the objects its renderer makes of it",
                    esc(&a.bundle)
                ));
            }
            out(&a.output.render(&objs));
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

/// The deploymentConfig file: one YAML or JSON object.
fn read_deployment_config(f: &std::path::Path) -> Result<serde_json::Value, String> {
    let doc = olmctl::fbc::yaml::read_first_document(f)?.ok_or_else(|| {
        format!(
            "{}:1:1: empty deploymentConfig document",
            esc(&f.display().to_string())
        )
    })?;
    let v: serde_json::Value = serde_json::from_str(&doc.to_json())
        .map_err(|e| format!("{}: {e}", esc(&f.display().to_string())))?;
    if !v.is_object() {
        return Err(format!(
            "{}:{}:{}: a deploymentConfig is an object (env, envFrom, volumes, volumeMounts, tolerations, resources, nodeSelector, affinity, annotations), not {}",
            esc(&f.display().to_string()),
            doc.pos.line,
            doc.pos.col,
            doc.kind()
        ));
    }
    Ok(v)
}
