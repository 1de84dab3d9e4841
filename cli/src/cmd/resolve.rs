//! `olmctl resolve`: what OLM v0 will install in a namespace, decided as OLM's resolver
//! decides, from cluster objects in files and the catalogs' content; explained when OLM
//! cannot resolve.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};

use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, error, out};
use olmctl::resolve::state::ClusterState;

/// `olmctl resolve` arguments.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The namespace to resolve (OLM resolves one namespace at a time).
    #[arg(short = 'n', long)]
    namespace: String,
    /// Cluster objects: YAML or JSON files (`kubectl get -o yaml` dumps or multi-document
    /// files) of Subscriptions, ClusterServiceVersions, OperatorGroups and CatalogSources, or
    /// directories of such files. Other kinds are ignored. Without -f the live cluster is read
    /// (read-only: --kubeconfig, --context).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    cluster: crate::args::ClusterArgs,
    /// A catalog's content: NAME/NAMESPACE=DIR (an FBC directory) or NAME/NAMESPACE=IMAGE (a
    /// catalog image, pulled). A CatalogSource of the files without one is read from its
    /// spec.image; one given here without a CatalogSource object counts as a CatalogSource
    /// of priority 0.
    #[arg(long = "catalog", value_name = "NAME/NAMESPACE=DIR|IMAGE")]
    catalogs: Vec<String>,
    /// OLM's global catalog namespace, whose catalogs every namespace resolves from
    /// (`openshift-marketplace` on OpenShift).
    #[arg(long, default_value = "olm")]
    global_namespace: String,
    /// Add a Subscription that does not exist yet: PACKAGE or PACKAGE@CHANNEL (needs --from).
    #[arg(long, value_name = "PACKAGE[@CHANNEL]", requires = "from")]
    subscribe: Option<String>,
    /// The catalog of --subscribe: NAME/NAMESPACE of its CatalogSource.
    #[arg(long, value_name = "NAME/NAMESPACE", requires = "subscribe")]
    from: Option<String>,
    /// The startingCSV of --subscribe.
    #[arg(long, value_name = "CSV", requires = "subscribe")]
    starting_csv: Option<String>,
    /// How long pulling a catalog image may take.
    #[arg(long, default_value = "5m", value_parser = crate::args::parse_duration)]
    timeout: Duration,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// Reads the objects of `files` (documents of `kind: List` opened) into a state.
fn read_state(files: &[PathBuf]) -> Result<ClusterState, String> {
    let mut state = ClusterState::default();
    for f in crate::inputs::object_files(files)? {
        let text = olmctl::input::read_text(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        olmctl::gate::objects::each_object(&f, &text, &mut |_, _, n| {
            if let Ok(v) = serde_json::from_str::<Value>(&n.to_json()) {
                state.add(&v);
            }
        })
        .map_err(|e| e.to_string())?;
    }
    Ok(state)
}

/// Runs `olmctl resolve`.
pub fn run(a: ResolveArgs) -> u8 {
    match run_inner(&a) {
        Ok(code) => code,
        Err(e) => {
            error(e);
            EXIT_USAGE
        }
    }
}

fn run_inner(a: &ResolveArgs) -> Result<u8, String> {
    olmctl::names::check(olmctl::names::Rule::Label, "--namespace", &a.namespace)
        .map_err(|e| e.to_string())?;
    let mut state = if a.files.is_empty() {
        let connection = crate::cluster::Connection {
            kubeconfig: a.cluster.kubeconfig.clone(),
            context: a.cluster.context.clone(),
        };
        let objects = crate::cluster::resolution_objects(
            &connection,
            &a.namespace,
            &a.global_namespace,
            a.timeout,
        )?;
        let mut s = ClusterState::default();
        for o in &objects {
            s.add(o);
        }
        s
    } else {
        read_state(&a.files)?
    };
    let mut notes = Vec::new();
    if let Some(spec) = &a.subscribe {
        let from = crate::resolution::source_key(a.from.as_deref().unwrap_or_default(), "--from")?;
        let (package, channel) = spec.split_once('@').unwrap_or((spec, ""));
        if package.is_empty() {
            return Err(format!(
                "--subscribe {spec:?}: expected PACKAGE or PACKAGE@CHANNEL"
            ));
        }
        if state
            .subscriptions
            .iter()
            .any(|s| s.namespace == a.namespace && s.name == package)
        {
            return Err(format!(
                "--subscribe: a Subscription named {package} exists in namespace {} already",
                a.namespace
            ));
        }
        state.add(&json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": package, "namespace": a.namespace},
            "spec": {"name": package, "channel": channel, "source": from.name,
                     "sourceNamespace": from.namespace,
                     "startingCSV": a.starting_csv.as_deref().unwrap_or_default()}}));
        if !state
            .operator_groups
            .iter()
            .any(|o| o.namespace == a.namespace)
        {
            state.add(&json!({
                "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
                "metadata": {"name": a.namespace, "namespace": a.namespace}}));
            notes.push(format!(
                "namespace {} has no OperatorGroup: resolved as with the one `olmctl install` creates",
                a.namespace
            ));
        }
    }
    let given = crate::resolution::catalog_specs(&a.catalogs)?;
    let r = crate::resolution::resolve_namespace(
        &state,
        &a.namespace,
        &a.global_namespace,
        &given,
        a.timeout,
        &mut notes,
    )?;
    let code = match &r.result {
        Ok(_) => EXIT_OK,
        Err(_) => EXIT_FINDINGS,
    };
    match a.output {
        Output::Json => {
            let doc = crate::resolution::to_json(&a.namespace, &r, &notes);
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Output::Text => out(&crate::resolution::to_text(&a.namespace, &r, &notes)),
    }
    Ok(code)
}
