//! `olmctl catalog add|list|remove`: the cluster's CatalogSources, as kubectl-operator's
//! `catalog` commands manage them (`internal/cmd/catalog_add.go`, `catalog_list.go`,
//! `catalog_remove.go`). The other `catalog` commands work on File-Based Catalogs on disk.

use std::time::Duration;

use clap::Args;

use crate::args::{ScopeArgs, parse_duration};
use crate::cluster::manage;
use crate::term::{EXIT_OK, Output, out, tab_table};

/// `catalog add` arguments.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The CatalogSource's name.
    name: String,
    /// The index (catalog) image it serves.
    index_image: String,
    /// Display name of the index (default: the image's label
    /// alpha.operators.operatorframework.io.index.display-name.v1).
    #[arg(long, short = 'd')]
    display_name: Option<String>,
    /// Publisher of the index (default: the image's label
    /// alpha.operators.operatorframework.io.index.publisher.v1).
    #[arg(long, short = 'p')]
    publisher: Option<String>,
    /// Return once the CatalogSource is created, without waiting for it to be READY.
    #[arg(long)]
    no_wait: bool,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Give up after this long (e.g. 90s, 10m); a CatalogSource not READY by then is deleted.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    timeout: Duration,
    /// How often to read the CatalogSource.
    #[arg(long, default_value = "1s", value_parser = parse_duration, hide = true)]
    interval: Duration,
}

/// `catalog list` arguments.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List catalogs in all namespaces (the table gets a NAMESPACE column).
    #[arg(long, short = 'A', conflicts_with = "namespace")]
    all_namespaces: bool,
    #[command(flatten)]
    read: crate::args::ReadArgs,
}

/// `catalog remove` arguments.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The CatalogSource's name.
    name: String,
    #[command(flatten)]
    scope: ScopeArgs,
    /// Give up after this long (e.g. 30s, 2m).
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    timeout: Duration,
    /// How often to read the CatalogSource.
    #[arg(long, default_value = "1s", value_parser = parse_duration, hide = true)]
    interval: Duration,
}

/// The index image's labels, read from its config (`catalog_add.go :: labelsFor`).
fn image_labels(
    image: &str,
    timeout: Duration,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let registry = crate::args::RegistryArgs::defaults(timeout);
    crate::inputs::image_labels(image, &registry)
}

/// Runs `catalog add`.
pub fn add(a: AddArgs) -> u8 {
    // The labels are read only for what the flags leave unset (upstream pulls the image
    // whatever the flags say).
    let need_labels = a.display_name.is_none() || a.publisher.is_none();
    let labels = if need_labels {
        match image_labels(&a.index_image, a.timeout) {
            Ok(l) => l,
            Err(e) => {
                crate::term::error(format_args!(
                    "failed to add catalog: get image labels: {e} (pass --display-name and --publisher to skip reading them)"
                ));
                return crate::term::EXIT_USAGE;
            }
        }
    } else {
        Default::default()
    };
    let (display, publisher) = olmctl::manage::catalog_source::defaults(
        a.display_name.as_deref(),
        a.publisher.as_deref(),
        &labels,
    );
    let scope = a.scope.scope(a.timeout);
    let add = manage::AddCatalog {
        name: a.name,
        image: a.index_image,
        display_name: display,
        publisher,
        no_wait: a.no_wait,
        interval: a.interval,
    };
    manage::add_catalog(&scope, &add, &mut crate::cluster::ui::Terminal)
}

/// Runs `catalog list`.
pub fn list(a: ListArgs) -> u8 {
    let scope = a.read.scope.scope(a.read.timeout);
    let (ns, sources) = match manage::catalogs(&scope, a.all_namespaces) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let rows = olmctl::manage::catalog_source::rows(&sources);
    if a.read.output == Output::Json {
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        ));
        return EXIT_OK;
    }
    if rows.is_empty() {
        if a.all_namespaces {
            eprintln!("No resources found");
        } else {
            eprintln!(
                "No resources found in {} namespace.",
                olmctl::text::escape(&ns)
            );
        }
        return EXIT_OK;
    }
    let now = jiff::Timestamp::now();
    let mut head = vec!["NAME".to_string()];
    if a.all_namespaces {
        head.push("NAMESPACE".into());
    }
    head.extend(["DISPLAY", "TYPE", "PUBLISHER", "AGE"].map(String::from));
    let mut lines = vec![head];
    for r in rows {
        let mut l = vec![r.name];
        if a.all_namespaces {
            l.push(r.namespace);
        }
        l.extend([r.display, r.source_type, r.publisher, age(&r.created, now)]);
        lines.push(l);
    }
    out(&tab_table(&lines));
    EXIT_OK
}

use olmctl::manage::age::age;

/// Runs `catalog remove`.
pub fn remove(a: RemoveArgs) -> u8 {
    let scope = a.scope.scope(a.timeout);
    manage::remove_catalog(
        &scope,
        &a.name,
        a.interval,
        &mut crate::cluster::ui::Terminal,
    )
}
