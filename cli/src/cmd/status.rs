//! `olmctl status` (`kubectl olm status`): the Subscriptions of a namespace or of all, their
//! CSVs, the InstallPlans waiting for approval and the upgrade gate's decisions on them, in one
//! table printed as `kubectl get` prints (or JSON).

use std::time::Duration;

use clap::Args;
use olmctl::status::Row;

use crate::args::{ClusterArgs, parse_duration};
use crate::cluster::StatusRequest;
use crate::term::{EXIT_OK, Output, out};

/// `olmctl status` arguments.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The namespace (default: the kubeconfig context's namespace, else `default`, as kubectl).
    #[arg(
        long,
        short = 'n',
        value_name = "NS",
        conflicts_with = "all_namespaces"
    )]
    namespace: Option<String>,
    /// Every namespace (the table gets a NAMESPACE column).
    #[arg(long, short = 'A')]
    all_namespaces: bool,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
    output: Output,
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Give up after this long (e.g. 30s, 2m).
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    timeout: Duration,
    /// For each namespace with a Subscription whose ResolutionFailed condition is set: resolve
    /// it again from the live state, as OLM's resolver does, and say why it fails (or that it
    /// resolves now and the condition is stale). The catalogs are pulled from the
    /// CatalogSources' images unless --catalog gives them.
    #[arg(long)]
    explain: bool,
    /// With --explain: a catalog's content, NAME/NAMESPACE=DIR or NAME/NAMESPACE=IMAGE.
    #[arg(
        long = "catalog",
        value_name = "NAME/NAMESPACE=DIR|IMAGE",
        requires = "explain"
    )]
    catalogs: Vec<String>,
    /// With --explain: OLM's global catalog namespace (`openshift-marketplace` on OpenShift).
    #[arg(long, default_value = "olm", requires = "explain")]
    global_namespace: String,
}

/// The columns, after NAMESPACE (with `--all-namespaces`).
const HEADERS: [&str; 10] = [
    "NAME",
    "PACKAGE",
    "CHANNEL",
    "INSTALLED",
    "CURRENT",
    "STATE",
    "CSV PHASE",
    "PENDING PLAN",
    "INSTALLS",
    "GATE",
];

/// Runs `olmctl status`.
pub fn run(a: StatusArgs) -> u8 {
    // A namespace given is checked before the cluster is reached (the context's, once read).
    if let Some(ns) = &a.namespace
        && let Err(e) = olmctl::names::check(olmctl::names::Rule::Label, "--namespace", ns)
    {
        crate::term::error(e);
        return crate::term::EXIT_USAGE;
    }
    let connection: crate::cluster::Connection = a.cluster.into();
    let req = StatusRequest {
        namespace: a.namespace,
        all_namespaces: a.all_namespaces,
        connection: connection.clone(),
        timeout: a.timeout,
    };
    let listing = match crate::cluster::run_status(&req) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match a.output {
        Output::Json => out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&listing.rows).unwrap_or_default()
        )),
        // As kubectl: nothing on stdout, a note on stderr.
        Output::Text if listing.rows.is_empty() => match &listing.namespace {
            Some(ns) => eprintln!(
                "No resources found in {} namespace.",
                olmctl::text::escape(ns)
            ),
            None => eprintln!("No resources found"),
        },
        Output::Text => out(&table(&listing.rows, listing.namespace.is_none())),
    }
    if a.explain {
        let mut namespaces: Vec<&str> = listing.rows.iter().map(|r| r.namespace.as_str()).collect();
        namespaces.sort();
        namespaces.dedup();
        let given = match crate::resolution::catalog_specs(&a.catalogs) {
            Ok(g) => g,
            Err(e) => {
                crate::term::error(e);
                return crate::term::EXIT_USAGE;
            }
        };
        for ns in namespaces {
            match explain(&connection, ns, &a.global_namespace, &given, a.timeout) {
                Ok(Some(text)) => out(&text),
                Ok(None) => {}
                Err(e) => {
                    crate::term::error(format_args!("--explain, namespace {ns}: {e}"));
                    return crate::term::EXIT_USAGE;
                }
            }
        }
    }
    EXIT_OK
}

/// `--explain` for one namespace: `None` when no Subscription there has ResolutionFailed
/// set; else its condition and the namespace resolved again from the live state.
fn explain(
    connection: &crate::cluster::Connection,
    ns: &str,
    global: &str,
    given: &[(olmctl::resolve::entry::SourceKey, String)],
    timeout: Duration,
) -> Result<Option<String>, String> {
    use olmctl::text::esc;
    let objects = crate::cluster::resolution_objects(connection, ns, global, timeout)?;
    let failed: Vec<(String, String, String)> = objects
        .iter()
        .filter(|o| o["kind"] == "Subscription")
        .filter_map(|o| {
            let c = o["status"]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "ResolutionFailed" && c["status"] == "True")?;
            Some((
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                c["reason"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            ))
        })
        .collect();
    if failed.is_empty() {
        return Ok(None);
    }
    let mut state = olmctl::resolve::state::ClusterState::default();
    for o in &objects {
        state.add(o);
    }
    let mut notes = Vec::new();
    let r = crate::resolution::resolve_namespace(&state, ns, global, given, timeout, &mut notes)?;
    let mut s = String::from("\n");
    for (name, reason, message) in &failed {
        s.push_str(&format!(
            "Subscription {}/{}: ResolutionFailed ({}): {}\n",
            esc(ns),
            esc(name),
            esc(reason),
            esc(message)
        ));
    }
    if r.result.is_ok() {
        s.push_str(&format!(
            "Resolved again from the live state, namespace {} resolves now: the condition is stale (OLM writes it again on its next resolution of the namespace).\n",
            esc(ns)
        ));
    }
    s.push_str(&crate::resolution::to_text(ns, &r, &notes));
    Ok(Some(s))
}

/// Characters a cell shows at most (after escaping): longer values end in `…` (kubectl's
/// printers truncate nothing, so one Subscription with a 1 MB channel padded every row of the
/// table to a megabyte). Wider than any Kubernetes name (253) and any channel or CSV of the
/// fixtures; `-o json` keeps every value whole.
pub const MAX_CELL: usize = 256;

/// `cell` cut to [`MAX_CELL`] characters, the last an ellipsis when cut.
fn cut(cell: String) -> String {
    match cell.char_indices().nth(MAX_CELL - 1) {
        Some((end, _)) if cell.chars().count() > MAX_CELL => format!("{}…", &cell[..end]),
        _ => cell,
    }
}

/// The cells of a row: `<none>` for an empty one (as kubectl), control characters escaped,
/// each cut to [`MAX_CELL`].
fn cells(r: &Row, with_namespace: bool) -> Vec<String> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut c = Vec::with_capacity(HEADERS.len() + 1);
    if with_namespace {
        c.push(r.namespace.clone());
    }
    c.extend([
        opt(&r.subscription),
        opt(&r.package),
        opt(&r.channel),
        opt(&r.installed_csv),
        opt(&r.current_csv),
        opt(&r.state),
        opt(&r.csv_phase),
        opt(&r.pending_plan),
        r.pending_csvs.join(","),
        opt(&r.gate),
    ]);
    c.into_iter()
        .map(|s| match s.as_str() {
            "" => "<none>".to_string(),
            // At most one character past the cut is escaped: the rest is never shown.
            s => {
                let head: String = s.chars().take(MAX_CELL + 1).collect();
                cut(olmctl::text::escape(&head).into_owned())
            }
        })
        .collect()
}

/// The table as kubectl's printers write it (cli-runtime `printers.GetNewTabWriter`: Go's
/// tabwriter with minimum width 6 and padding 3, padded with spaces): every column but the last
/// as wide as its widest cell plus 3 (at least 6), counted in characters.
fn table(rows: &[Row], with_namespace: bool) -> String {
    let mut lines: Vec<Vec<String>> = Vec::with_capacity(rows.len() + 1);
    let mut head: Vec<String> = Vec::new();
    if with_namespace {
        head.push("NAMESPACE".into());
    }
    head.extend(HEADERS.iter().map(|h| h.to_string()));
    lines.push(head);
    lines.extend(rows.iter().map(|r| cells(r, with_namespace)));
    crate::term::tabwrite(&lines, 6, 3)
}
