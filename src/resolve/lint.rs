//! Catalog lint from OLM's resolver: requirements nothing provides, requirements OLM cannot
//! read (which stop the resolution of a whole namespace), and channel heads OLM cannot
//! install, each resolved as OLM would in an empty namespace.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::entry::SourceKey;
use super::requirement::dependencies;
use super::source::{Snapshot, catalog_snapshot};
use super::state::ClusterState;
use super::steps::resolve_with;
use crate::diag::Severity::{Error, Warning};
use crate::diag::{Finding, Location, Subject, sort_findings};
use crate::fbc::decl::DeclarativeConfig;

codes! {
    UNSATISFIED = "DEP001", Warning, "A bundle requires a package or API that no bundle of the catalog (or of the catalogs given with --with) provides: OLM cannot install it unless another catalog on the cluster does.";
    UNREADABLE = "DEP002", Error, "A bundle's requirement does not parse (olm.constraint, a version range): OLM's resolution of every namespace that sees the catalog stops with this error, for every Subscription there.";
    HEAD_UNINSTALLABLE = "DEP003", Warning, "OLM cannot install a channel's head in a namespace of its own: a Subscription to the channel starting at its head fails with constraints not satisfiable.";
}

/// The namespace the lint resolves in, and its catalogs' namespace.
const NS: &str = "olmctl-lint";

/// Lints `cfg` (the catalog `name`), with `with` as other catalogs that may satisfy its
/// requirements (as CatalogSources of the same namespace).
pub fn lint(cfg: &DeclarativeConfig, with: &[(String, &DeclarativeConfig)]) -> Vec<Finding> {
    let key = SourceKey::new("catalog", NS);
    let mut snapshots = vec![Snapshot {
        key: SourceKey::existing(NS),
        priority: 0,
        entries: Vec::new(),
    }];
    snapshots.push(catalog_snapshot(cfg, key.clone(), 0));
    for (name, c) in with {
        snapshots.push(catalog_snapshot(c, SourceKey::new(name.clone(), NS), 0));
    }
    let src: BTreeMap<(&str, &str), &crate::fbc::decl::Bundle> = cfg
        .bundles
        .iter()
        .map(|b| ((b.package.as_str(), b.name.as_str()), b))
        .collect();
    let at = |pkg: &str, name: &str| {
        src.get(&(pkg, name))
            .map(|b| Location::new(Arc::clone(&b.src.file), b.src.pos.line, b.src.pos.col))
    };
    let mut out = Vec::new();
    // Requirements, once per bundle (its entries in several channels share its properties).
    let mut seen = std::collections::BTreeSet::new();
    let mine = &snapshots[1];
    for e in &mine.entries {
        if !seen.insert((e.package().to_string(), e.name.clone())) {
            continue;
        }
        match dependencies(&e.properties) {
            Err(err) => out.push(
                Finding::new(&UNREADABLE, format!("bundle {}: {err}", e.name))
                    .at(at(e.package(), &e.name))
                    .about(Subject::bundle(e.package(), &e.name))
                    .help("fix the property: OLM reports this error (ErrorPreventedResolution) on every Subscription of every namespace that reads the catalog"),
            ),
            Ok(preds) => {
                for p in preds {
                    let any = snapshots
                        .iter()
                        .any(|s| s.entries.iter().any(|c| p.test(c)));
                    if !any {
                        out.push(
                            Finding::new(
                                &UNSATISFIED,
                                format!("bundle {} requires an operator {p}; no bundle of the catalogs read provides it", e.name),
                            )
                            .at(at(e.package(), &e.name))
                            .about(Subject::bundle(e.package(), &e.name))
                            .help("add the package that provides it to the catalog, or document the CatalogSource users need beside this one (olmctl catalog lint --with DIR checks against it)"),
                        );
                    }
                }
            }
        }
    }
    // Channel heads with requirements (or deprecated): resolved as a Subscription starting
    // at the head in an empty namespace.
    let entries: BTreeMap<(&str, &str, &str), &super::entry::Entry> = mine
        .entries
        .iter()
        .map(|e| ((e.package(), e.channel(), e.name.as_str()), e))
        .collect();
    for c in &cfg.channels {
        let crate::model::chain::Head::One(head) = crate::model::chain::heads(&c.entries) else {
            continue;
        };
        let Some(e) = entries.get(&(c.package.as_str(), c.name.as_str(), head)) else {
            continue;
        };
        let interesting = e.properties.iter().any(|p| {
            matches!(
                p.type_.as_str(),
                "olm.gvk.required"
                    | "olm.package.required"
                    | "olm.label.required"
                    | "olm.constraint"
                    | "olm.deprecated"
            )
        });
        if !interesting || dependencies(&e.properties).is_err() {
            continue;
        }
        let mut state = ClusterState::default();
        state.add(
            &serde_json::json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": NS, "namespace": NS}}),
        );
        state.add(&serde_json::json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": c.package, "namespace": NS},
            "spec": {"name": c.package, "channel": c.name, "source": key.name,
                     "sourceNamespace": NS, "startingCSV": head}}));
        let r = resolve_with(NS, &state, &snapshots);
        if let Err(f) = &r.result {
            out.push(
                Finding::new(
                    &HEAD_UNINSTALLABLE,
                    format!("the head {head} of channel {} cannot be installed: {f}", c.name),
                )
                .at(Some(Location::new(Arc::clone(&c.src.file), c.src.pos.line, c.src.pos.col)))
                .about(Subject::channel(&c.package, &c.name))
                .help(format!(
                    "olmctl resolve -n NS -f OG.yaml --catalog catalog/NS=DIR --subscribe {}@{} --from catalog/NS explains it",
                    c.package, c.name
                )),
            );
        }
    }
    sort_findings(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> DeclarativeConfig {
        let mut c = DeclarativeConfig::default();
        let problems =
            crate::fbc::load::parse_text(text, &Arc::from(std::path::Path::new("c.yaml")), &mut c);
        assert!(problems.is_empty(), "{problems:?}");
        c
    }

    const CATALOG: &str = r#"{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1"}]}
{"schema":"olm.bundle","package":"a","name":"a.v1","image":"x/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.package.required","value":{"packageName":"b","versionRange":">=1.0.0"}}]}
{"schema":"olm.package","name":"c","defaultChannel":"stable"}
{"schema":"olm.channel","package":"c","name":"stable","entries":[{"name":"c.v1"}]}
{"schema":"olm.bundle","package":"c","name":"c.v1","image":"x/c:1","properties":[{"type":"olm.package","value":{"packageName":"c","version":"1.0.0"}},{"type":"olm.constraint","value":{"nope":{}}}]}
"#;

    #[test]
    fn resolve_lint_codes() {
        let f = lint(&cfg(CATALOG), &[]);
        let codes: Vec<(&str, String)> = f.iter().map(|f| (f.code, f.message.clone())).collect();
        assert_eq!(
            codes,
            [
                ("DEP003", "the head a.v1 of channel stable cannot be installed: constraints not satisfiable: bundle a.v1 requires an operator with package: b and with version in range: >=1.0.0, subscription a exists, subscription a requires catalog/olmctl-lint/stable/a.v1".to_string()),
                ("DEP001", "bundle a.v1 requires an operator with package: b and with version in range: >=1.0.0; no bundle of the catalogs read provides it".to_string()),
                ("DEP002", "bundle c.v1: parse olm.constraint: json: unknown field \"nope\"".to_string()),
            ]
        );
        // Another catalog that provides b satisfies both.
        let b = cfg(
            r#"{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"b","name":"b.v1","image":"x/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.2.0"}}]}
"#,
        );
        let f = lint(&cfg(CATALOG), &[("b".into(), &b)]);
        assert_eq!(f.iter().map(|f| f.code).collect::<Vec<_>>(), ["DEP002"]);
    }
}
