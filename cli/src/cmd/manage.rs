//! kubectl-operator's commands on a cluster: `olmctl packages` (`kubectl olm list-available`),
//! `describe PACKAGE`, `upgrade SUBSCRIPTION` and `list-operands PACKAGE`, printed as
//! kubectl-operator prints them (`internal/cmd/operator_list_available.go`,
//! `operator_describe.go`, `operator_upgrade.go`, `operator_list_operands.go`).

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::args::{ScopeArgs, parse_duration};
use crate::cluster::manage::{self, UpgradeRequest};
use crate::term::{EXIT_OK, EXIT_USAGE, Output, error, out, tab_table};
use olmctl::manage::age::age;

/// `olmctl packages` arguments.
#[derive(Debug, Args)]
pub struct PackagesArgs {
    /// Only this package.
    package: Option<String>,
    /// The catalog to query, `NAME` or `NAMESPACE/NAME` (default: every catalog the namespace
    /// sees: its own and OLM's global namespace's).
    #[arg(long, short = 'c', value_name = "CATALOG")]
    catalog: Option<String>,
    #[command(flatten)]
    read: crate::args::ReadArgs,
}

/// `olmctl describe` arguments.
#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The package.
    package: String,
    /// The catalog that offers it, `NAME` or `NAMESPACE/NAME` (default: the first that does).
    #[arg(long, short = 'c', value_name = "CATALOG")]
    catalog: Option<String>,
    /// The channel to describe (default: the package's default channel).
    #[arg(long, short = 'C')]
    channel: Option<String>,
    /// Include the long description (the CSV's spec.description).
    #[arg(long, short = 'L')]
    with_long_description: bool,
    #[command(flatten)]
    read: crate::args::ReadArgs,
}

/// `olmctl upgrade` arguments.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The Subscription, or the package it subscribes to.
    subscription: String,
    /// Move the Subscription to this channel, then approve the plan OLM makes for it.
    #[arg(long, short = 'c')]
    channel: Option<String>,
    /// Return once the plan is approved (or the channel moved), without waiting for OLM.
    #[arg(long)]
    no_wait: bool,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Give up after this long (e.g. 90s, 10m).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    timeout: Duration,
    /// How often to read the objects OLM writes.
    #[arg(long, default_value = "2s", value_parser = parse_duration, hide = true)]
    interval: Duration,
}

/// `list-operands -o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OperandsOutput {
    /// The table.
    Text,
    /// A `List` as JSON.
    Json,
    /// A `List` as YAML.
    Yaml,
}

/// `olmctl list-operands` arguments.
#[derive(Debug, Args)]
pub struct OperandsArgs {
    /// The installed package (its Subscription in the namespace).
    package: String,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OperandsOutput::Text)]
    output: OperandsOutput,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Give up after this long (e.g. 30s, 2m).
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    timeout: Duration,
}

fn json(v: &impl serde::Serialize) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// `--catalog` as a label selector, or a usage error.
fn selector(catalog: Option<&str>) -> Result<Option<String>, u8> {
    match catalog.map(olmctl::manage::available::catalog_selector) {
        None => Ok(None),
        Some(Ok(s)) => Ok(Some(s)),
        Some(Err(e)) => {
            error(format_args!("--catalog: {e}"));
            Err(EXIT_USAGE)
        }
    }
}

/// As kubectl: nothing on stdout, a note on stderr.
fn none_found(ns: Option<&str>) -> u8 {
    match ns {
        Some(ns) => eprintln!(
            "No resources found in {} namespace.",
            olmctl::text::escape(ns)
        ),
        None => eprintln!("No resources found"),
    }
    EXIT_OK
}

/// Runs `olmctl packages`.
pub fn packages(a: PackagesArgs) -> u8 {
    let sel = match selector(a.catalog.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let scope = a.read.scope.scope(a.read.timeout);
    let (ns, pms) = match manage::packages(&scope, a.package.as_deref(), sel.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let rows = olmctl::manage::available::rows(&pms);
    match a.read.output {
        Output::Json => out(&json(&rows)),
        Output::Text if rows.is_empty() => return none_found(Some(&ns)),
        Output::Text => {
            let now = jiff::Timestamp::now();
            let mut lines = vec![
                ["NAME", "CATALOG", "CHANNEL", "LATEST CSV", "AGE"]
                    .map(String::from)
                    .to_vec(),
            ];
            lines.extend(rows.iter().map(|r| {
                vec![
                    r.name.clone(),
                    r.catalog.clone(),
                    r.channel.clone(),
                    r.latest_csv.clone(),
                    age(&r.created, now),
                ]
            }));
            out(&tab_table(&lines));
        }
    }
    EXIT_OK
}

/// Lines of a multi-line text, each escaped.
fn escaped_lines(s: &str) -> String {
    s.lines()
        .map(|l| olmctl::text::escape(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `olmctl describe`.
pub fn describe(a: DescribeArgs) -> u8 {
    let sel = match selector(a.catalog.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let scope = a.read.scope.scope(a.read.timeout);
    let pms = match manage::packages(&scope, Some(&a.package), sel.as_deref()) {
        Ok((_, pms)) => pms,
        Err(code) => return code,
    };
    let d = match olmctl::manage::describe::describe(&pms[0], a.channel.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            error(e);
            return EXIT_USAGE;
        }
    };
    if a.read.output == Output::Json {
        out(&json(&d));
        return EXIT_OK;
    }
    let e = |s: &str| escaped_lines(s);
    let header = |s: &str| format!("== {s} ==\n");
    let mut s = String::new();
    s.push_str(&header("Package"));
    s.push_str(&format!(
        "{} {} (by {})\n\n",
        e(&d.display_name),
        e(&d.version),
        e(&d.provider)
    ));
    s.push_str(&header("Repository"));
    s.push_str(&format!("{}\n\n", e(&d.repository)));
    s.push_str(&header("Catalog"));
    s.push_str(&format!("{}\n\n", e(&d.catalog)));
    s.push_str(&header("Channels"));
    s.push_str(&format!("{}\n\n", e(&d.channels.join("\n"))));
    s.push_str(&header("Install Modes"));
    s.push_str(&format!("{}\n\n", e(&d.install_modes.join("\n"))));
    s.push_str(&header("Description"));
    s.push_str(&format!("{}\n", e(&d.description)));
    if a.with_long_description {
        s.push('\n');
        s.push_str(&header("Long Description"));
        s.push_str(&e(&d.long_description));
        s.push('\n');
    }
    out(&s);
    EXIT_OK
}

/// Runs `olmctl upgrade`.
pub fn upgrade(a: UpgradeArgs) -> u8 {
    let req = UpgradeRequest {
        subscription: a.subscription,
        channel: a.channel,
        no_wait: a.no_wait,
        interval: a.interval,
    };
    let scope = a.scope.scope(a.timeout);
    manage::upgrade(&scope, &req, &mut crate::cluster::ui::Terminal)
}

/// Runs `olmctl list-operands`.
pub fn list_operands(a: OperandsArgs) -> u8 {
    let scope = a.scope.scope(a.timeout);
    let items = match manage::operands(&scope, &a.package) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    match a.output {
        OperandsOutput::Json => out(&json(&list)),
        OperandsOutput::Yaml => {
            out(&olmctl::fbc::emit_yaml::json_to_yaml(&list.to_string()).unwrap_or_default())
        }
        OperandsOutput::Text if items.is_empty() => return none_found(None),
        OperandsOutput::Text => {
            let now = jiff::Timestamp::now();
            let mut lines = vec![
                ["APIVERSION", "KIND", "NAMESPACE", "NAME", "AGE"]
                    .map(String::from)
                    .to_vec(),
            ];
            for r in olmctl::manage::operands::rows(&items) {
                lines.push(vec![
                    r.api_version,
                    r.kind,
                    r.namespace,
                    r.name,
                    age(&r.created, now),
                ]);
            }
            out(&tab_table(&lines));
        }
    }
    EXIT_OK
}
