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
    let req = StatusRequest {
        namespace: a.namespace,
        all_namespaces: a.all_namespaces,
        connection: a.cluster.into(),
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
    EXIT_OK
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
