//! `olmctl resolve`: what OLM v0 will install in a namespace, decided as OLM's resolver
//! decides, from cluster objects in files and the catalogs' content; explained when OLM
//! cannot resolve.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};

use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, error, out};
use olmctl::fbc::decl::DeclarativeConfig;
use olmctl::resolve::entry::SourceKey;
use olmctl::resolve::explain::Explanation;
use olmctl::resolve::resolver::Failure;
use olmctl::resolve::state::ClusterState;
use olmctl::resolve::steps::{Action, CatalogContent, Plan, PulledBy, Request, resolve};
use olmctl::text::esc;

/// `olmctl resolve` arguments.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The namespace to resolve (OLM resolves one namespace at a time).
    #[arg(short = 'n', long)]
    namespace: String,
    /// Cluster objects: YAML or JSON files (`kubectl get -o yaml` dumps or multi-document
    /// files) of Subscriptions, ClusterServiceVersions, OperatorGroups and CatalogSources, or
    /// directories of such files. Other kinds are ignored.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
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

/// NAME/NAMESPACE.
fn source_key(s: &str, what: &str) -> Result<SourceKey, String> {
    match s.split_once('/') {
        Some((name, ns)) if !name.is_empty() && !ns.is_empty() && !ns.contains('/') => {
            Ok(SourceKey::new(name, ns))
        }
        _ => Err(format!("{what} {s:?}: expected NAME/NAMESPACE")),
    }
}

/// Reads the objects of `files` (documents of `kind: List` opened) into a state.
fn read_state(files: &[PathBuf]) -> Result<ClusterState, String> {
    let mut state = ClusterState::default();
    for f in crate::inputs::object_files(files)? {
        let text = olmctl::input::read_text(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let mut docs = Vec::new();
        olmctl::fbc::yaml::parse_documents(&text, |n| docs.push(n))
            .map_err(|e| format!("{}:{}:{}: {}", f.display(), e.line, e.column, e.message))?;
        for d in docs {
            let v: Value = serde_json::from_str(&d.to_json())
                .map_err(|e| format!("{}:{}: {e}", f.display(), d.pos.line))?;
            if !v.is_object() {
                return Err(format!(
                    "{}:{}:{}: not a Kubernetes object: {} where an object with apiVersion and kind belongs",
                    f.display(),
                    d.pos.line,
                    d.pos.col,
                    d.kind()
                ));
            }
            if v["kind"] == "List" {
                for item in v["items"].as_array().into_iter().flatten() {
                    state.add(item);
                }
            } else {
                state.add(&v);
            }
        }
    }
    Ok(state)
}

/// A catalog's content from a directory or an image.
fn read_catalog(
    what: &str,
    source: &str,
    timeout: Duration,
    scratch: &mut Vec<olmctl::oci::deliver::ScratchDir>,
) -> Result<DeclarativeConfig, String> {
    let dir = if Path::new(source).exists() {
        PathBuf::from(source)
    } else {
        let (d, s) = crate::inputs::pulled_dir(source, olmctl::oci::deliver::Want::Catalog, timeout)
            .map_err(|e| format!("{what}: cannot read catalog image {source}: {e}; pass --catalog {what}=DIR (a copy of the catalog)"))?;
        scratch.extend(s);
        d
    };
    crate::inputs::catalog_cfg(&dir).map_err(|e| format!("{what}: {e}"))
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
    let mut state = read_state(&a.files)?;
    let mut notes = Vec::new();
    if let Some(spec) = &a.subscribe {
        let from = source_key(a.from.as_deref().unwrap_or_default(), "--from")?;
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
    let mut given: Vec<(SourceKey, String)> = Vec::new();
    for c in &a.catalogs {
        let (k, src) = c
            .split_once('=')
            .ok_or_else(|| format!("--catalog {c:?}: expected NAME/NAMESPACE=DIR|IMAGE"))?;
        given.push((source_key(k, "--catalog")?, src.to_string()));
    }
    // The catalogs resolution reads: the namespace's and the global namespace's.
    let wanted = |k: &SourceKey| k.namespace == a.namespace || k.namespace == a.global_namespace;
    let mut sources: Vec<(SourceKey, String)> =
        given.iter().filter(|(k, _)| wanted(k)).cloned().collect();
    for cs in &state.catalog_sources {
        let k = SourceKey::new(&cs.name, &cs.namespace);
        if !wanted(&k) || sources.iter().any(|(g, _)| *g == k) {
            continue;
        }
        if cs.image.is_empty() {
            notes.push(format!(
                "CatalogSource {k} has no spec.image and no --catalog {k}=DIR: left out"
            ));
            continue;
        }
        sources.push((k, cs.image.clone()));
    }
    sources.sort();
    let mut scratch = Vec::new();
    let mut cfgs = Vec::new();
    for (k, src) in &sources {
        cfgs.push((
            k.clone(),
            read_catalog(&k.to_string(), src, a.timeout, &mut scratch)?,
        ));
    }
    let req = Request {
        namespace: a.namespace.clone(),
        global_namespace: a.global_namespace.clone(),
        state: &state,
        catalogs: cfgs
            .iter()
            .map(|(key, cfg)| CatalogContent {
                key: key.clone(),
                cfg,
            })
            .collect(),
    };
    let r = resolve(&req);
    let code = match &r.result {
        Ok(_) => EXIT_OK,
        Err(_) => EXIT_FINDINGS,
    };
    match a.output {
        Output::Json => {
            let doc = to_json(&a.namespace, &r, &notes);
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Output::Text => out(&to_text(&a.namespace, &r, &notes)),
    }
    Ok(code)
}

fn catalog_name(k: &SourceKey) -> String {
    format!("{}/{}", k.name, k.namespace)
}

fn pulled_json(p: &Option<PulledBy>) -> Value {
    match p {
        Some(PulledBy::Subscription(s)) => json!({"subscription": s}),
        Some(PulledBy::Requirement { bundle, text }) => {
            json!({"bundle": bundle, "requirement": text})
        }
        None => Value::Null,
    }
}

fn plan_json(p: &Plan) -> Value {
    let bundles: Vec<Value> = p
        .chosen
        .iter()
        .map(|c| {
            let (action, replaces) = match &c.action {
                Action::Install => ("install", Value::Null),
                Action::Upgrade(from) => ("upgrade", json!(from)),
            };
            json!({
                "csv": c.csv, "package": c.package, "version": c.version,
                "channel": c.channel, "catalog": catalog_name(&c.catalog),
                "bundle_image": c.bundle_path,
                "action": if c.up_to_date { "stay" } else { action },
                "replaces": replaces, "pulled_in_by": pulled_json(&c.pulled_by),
                "new_subscription": c.new_subscription,
            })
        })
        .collect();
    let stays: Vec<Value> = p
        .stays
        .iter()
        .map(|s| json!({"csv": s.csv, "subscription": s.subscription, "action": "stay"}))
        .collect();
    let subs: Vec<Value> = p
        .chosen
        .iter()
        .filter_map(|c| {
            c.new_subscription
                .as_ref()
                .map(|n| json!({"name": n, "action": "create", "startingCSV": c.csv}))
        })
        .chain(
            p.updated
                .iter()
                .map(|(n, csv)| json!({"name": n, "action": "update", "currentCSV": csv})),
        )
        .collect();
    json!({"bundles": bundles, "installed": stays, "subscriptions": subs})
}

fn explanation_json(e: &Explanation) -> Value {
    Value::Array(
        e.items
            .iter()
            .map(|i| {
                json!({
                    "subject": i.subject, "constraint": i.constraint, "means": i.means, "chain": i.chain,
                    "candidates": i.candidates.iter().map(|c| json!({
                        "id": c.id, "csv": c.csv, "version": c.version, "why_out": c.why_out
                    })).collect::<Vec<_>>(),
                    "fix": i.fix,
                })
            })
            .collect(),
    )
}

fn to_json(ns: &str, r: &olmctl::resolve::steps::Resolution, notes: &[String]) -> Value {
    let catalogs: Vec<String> = r.catalogs.iter().map(catalog_name).collect();
    let mut doc = json!({"namespace": ns, "catalogs": catalogs, "notes": notes});
    match &r.result {
        Ok(p) => {
            doc["resolved"] = json!(true);
            doc["nothing_to_resolve"] = json!(r.nothing_to_do);
            if let (Value::Object(d), Value::Object(p)) = (&mut doc, plan_json(p)) {
                d.extend(p);
            }
        }
        Err(f) => {
            doc["resolved"] = json!(false);
            doc["reason"] = json!(match f {
                Failure::NotSatisfiable(_) => "ConstraintsNotSatisfiable",
                Failure::Error(_) => "ErrorPreventedResolution",
            });
            doc["olm_message"] = json!(f.to_string());
            if let Some(e) = &r.explanation {
                doc["explanation"] = explanation_json(e);
            }
        }
    }
    doc
}

fn to_text(ns: &str, r: &olmctl::resolve::steps::Resolution, notes: &[String]) -> String {
    let mut s = String::new();
    for n in notes {
        s.push_str(&format!("note: {}\n", esc(n)));
    }
    if r.nothing_to_do {
        s.push_str(&format!(
            "namespace {} has no Subscription: OLM resolves nothing there\n",
            esc(ns)
        ));
        return s;
    }
    let catalogs: Vec<String> = r.catalogs.iter().map(catalog_name).collect();
    match &r.result {
        Ok(p) => {
            s.push_str(&format!(
                "OLM resolves namespace {} (catalogs read: {}):\n",
                esc(ns),
                esc(catalogs.join(", "))
            ));
            if p.chosen.is_empty() {
                s.push_str("  nothing to install or upgrade\n");
            }
            for c in &p.chosen {
                let verb = match (&c.action, c.up_to_date) {
                    (_, true) => "stay".to_string(),
                    (Action::Install, _) => "install".to_string(),
                    (Action::Upgrade(_), _) => "upgrade".to_string(),
                };
                s.push_str(&format!(
                    "  {verb:<8} {} ({} {}) from {}, channel {}\n",
                    esc(&c.csv),
                    esc(&c.package),
                    esc(&c.version),
                    esc(catalog_name(&c.catalog)),
                    esc(&c.channel)
                ));
                if let Action::Upgrade(from) = &c.action {
                    s.push_str(&format!("           replacing {}\n", esc(from)));
                }
                match &c.pulled_by {
                    Some(PulledBy::Subscription(sub)) => {
                        s.push_str(&format!("           for Subscription {}\n", esc(sub)))
                    }
                    Some(PulledBy::Requirement { bundle, text }) => s.push_str(&format!(
                        "           a dependency of {}: {}\n",
                        esc(bundle),
                        esc(text.split(" requires ").nth(1).unwrap_or(text))
                    )),
                    None => {}
                }
                if let Some(n) = &c.new_subscription {
                    s.push_str(&format!(
                        "           OLM creates Subscription {} (startingCSV {})\n",
                        esc(n),
                        esc(&c.csv)
                    ));
                }
            }
            for st in &p.stays {
                s.push_str(&format!("  {:<8} {} (installed)\n", "keep", esc(&st.csv)));
            }
        }
        Err(f) => {
            let reason = match f {
                Failure::NotSatisfiable(_) => "ConstraintsNotSatisfiable",
                Failure::Error(_) => "ErrorPreventedResolution",
            };
            s.push_str(&format!(
                "OLM cannot resolve namespace {} (catalogs read: {}).\n\nOLM's message (condition ResolutionFailed, reason {reason}, on every Subscription of the namespace):\n  {}\n",
                esc(ns),
                esc(catalogs.join(", ")),
                esc(f)
            ));
            if let Some(e) = &r.explanation {
                s.push_str("\nWhy (a smallest set of constraints that cannot hold together; drop any one and OLM resolves):\n");
                // Members with the same fix and no candidates of their own (the same missing
                // requirement of several bundles) are one entry, naming them all.
                let mut n = 0;
                let mut k = 0;
                while k < e.items.len() {
                    let i = &e.items[k];
                    let mut same = k + 1;
                    while same < e.items.len()
                        && !i.fix.is_empty()
                        && i.candidates.is_empty()
                        && e.items[same].candidates.is_empty()
                        && e.items[same].fix == i.fix
                    {
                        same += 1;
                    }
                    n += 1;
                    let means = if same > k + 1 {
                        let names: Vec<&str> = e.items[k..same]
                            .iter()
                            .map(|o| o.subject.as_str())
                            .collect();
                        i.means.replacen(
                            &format!("{} has ", i.subject),
                            &format!("{} have ", names.join(", ")),
                            1,
                        )
                    } else {
                        i.means.clone()
                    };
                    s.push_str(&format!("  {n}. {}\n", esc(&means)));
                    s.push_str(&format!("     OLM: {}\n", esc(&i.constraint)));
                    if same > k + 1 {
                        let others: Vec<&str> = e.items[k + 1..same]
                            .iter()
                            .map(|o| o.constraint.as_str())
                            .collect();
                        for o in others {
                            s.push_str(&format!("     OLM: {}\n", esc(o)));
                        }
                    } else if i.chain.len() > 1 {
                        s.push_str(&format!("     via: {}\n", esc(i.chain.join(" -> "))));
                    }
                    for c in &i.candidates {
                        s.push_str(&format!(
                            "     - {} (version {}): {}\n",
                            esc(&c.id),
                            esc(&c.version),
                            esc(&c.why_out)
                        ));
                    }
                    for f in &i.fix {
                        s.push_str(&format!("     fix: {}\n", esc(f)));
                    }
                    k = same;
                }
            }
        }
    }
    s
}
