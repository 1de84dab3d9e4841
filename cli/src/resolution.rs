//! What `olmctl resolve` and `olmctl status --explain` share: the catalogs a namespace's
//! resolution reads (given as NAME/NAMESPACE=DIR|IMAGE, else its CatalogSources' images), the
//! resolution, and its text and JSON.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use olmctl::fbc::decl::DeclarativeConfig;
use olmctl::resolve::entry::SourceKey;
use olmctl::resolve::explain::Explanation;
use olmctl::resolve::resolver::Failure;
use olmctl::resolve::state::ClusterState;
use olmctl::resolve::steps::{
    Action, CatalogContent, Plan, PulledBy, Request, Resolution, resolve,
};
use olmctl::text::esc;

/// NAME/NAMESPACE.
pub fn source_key(s: &str, what: &str) -> Result<SourceKey, String> {
    match s.split_once('/') {
        Some((name, ns)) if !name.is_empty() && !ns.is_empty() && !ns.contains('/') => {
            Ok(SourceKey::new(name, ns))
        }
        _ => Err(format!("{what} {s:?}: expected NAME/NAMESPACE")),
    }
}

/// `--catalog NAME/NAMESPACE=DIR|IMAGE` values.
pub fn catalog_specs(specs: &[String]) -> Result<Vec<(SourceKey, String)>, String> {
    let mut given = Vec::new();
    for c in specs {
        let (k, src) = c
            .split_once('=')
            .ok_or_else(|| format!("--catalog {c:?}: expected NAME/NAMESPACE=DIR|IMAGE"))?;
        given.push((source_key(k, "--catalog")?, src.to_string()));
    }
    Ok(given)
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

/// A catalog of a namespace's resolution: its key, and its content or why it was not read.
pub type ReadCatalog = (SourceKey, Result<DeclarativeConfig, String>);

/// The catalogs a resolution of `namespace` reads besides `skip` (whose content is at hand):
/// those of the namespace and of the global namespace, each from `given` (NAME/NAMESPACE, DIR
/// or IMAGE) else its CatalogSource's `spec.image` (pulled; `reading` is told of each pull
/// first), in key order, each read or why not, and notes: a CatalogSource without an image is
/// left out.
pub fn namespace_catalogs(
    state: &ClusterState,
    namespace: &str,
    global_namespace: &str,
    given: &[(SourceKey, String)],
    skip: Option<&SourceKey>,
    timeout: Duration,
    reading: &mut dyn FnMut(&SourceKey, &str),
) -> (Vec<ReadCatalog>, Vec<String>) {
    let mut notes = Vec::new();
    let wanted = |k: &SourceKey| {
        (k.namespace == namespace || k.namespace == global_namespace) && Some(k) != skip
    };
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
    let read = sources
        .into_iter()
        .map(|(k, src)| {
            if !Path::new(&src).exists() {
                reading(&k, &src);
            }
            // The content is read into memory: the pulled copy can go at once.
            let mut scratch = Vec::new();
            let cfg = read_catalog(&k.to_string(), &src, timeout, &mut scratch);
            (k, cfg)
        })
        .collect();
    (read, notes)
}

/// Resolves `namespace` of `state`: the catalogs of the namespace and of the global namespace,
/// each from `given` (NAME/NAMESPACE, DIR or IMAGE) else its CatalogSource's `spec.image`
/// (pulled); what is left out is said in `notes`; a catalog that cannot be read is an error.
pub fn resolve_namespace(
    state: &ClusterState,
    namespace: &str,
    global_namespace: &str,
    given: &[(SourceKey, String)],
    timeout: Duration,
    notes: &mut Vec<String>,
) -> Result<Resolution, String> {
    let mut cfgs = Vec::new();
    let (read, said) = namespace_catalogs(
        state,
        namespace,
        global_namespace,
        given,
        None,
        timeout,
        &mut |_, _| {},
    );
    notes.extend(said);
    for (k, cfg) in read {
        cfgs.push((k, cfg?));
    }
    let req = Request {
        namespace: namespace.to_string(),
        global_namespace: global_namespace.to_string(),
        state,
        catalogs: cfgs
            .iter()
            .map(|(key, cfg)| CatalogContent {
                key: key.clone(),
                cfg,
            })
            .collect(),
    };
    let r = resolve(&req);
    for p in olmctl::resolve::passed::passed_over(&req, &r) {
        notes.push(format!(
            "Subscription {} gets {}, not {}, the head of channel {}: {} (OLM installs the highest bundle it can)",
            p.subscription,
            p.chosen,
            p.head,
            p.channel,
            p.why.join("; ")
        ));
    }
    Ok(r)
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

/// The note for a namespace OLM does not resolve now (`nothingToUpdate`).
const WAITING: &str = "every Subscription of the namespace waits on its InstallPlan (UpgradePending), so OLM does not resolve it now; this is what it decides when it next does";

pub fn to_json(ns: &str, r: &Resolution, notes: &[String]) -> Value {
    let catalogs: Vec<String> = r.catalogs.iter().map(catalog_name).collect();
    let mut notes = notes.to_vec();
    if r.waiting_on_plans {
        notes.push(WAITING.to_string());
    }
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

pub fn to_text(ns: &str, r: &Resolution, notes: &[String]) -> String {
    let mut s = String::new();
    for n in notes {
        s.push_str(&format!("note: {}\n", esc(n)));
    }
    if r.waiting_on_plans {
        s.push_str(&format!("note: {WAITING}\n"));
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
