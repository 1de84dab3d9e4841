//! `olmctl packages` (kubectl-operator `list-available`): one row per channel of every
//! PackageManifest the cluster's package-server serves (`packages.operators.coreos.com/v1`),
//! with the catalog's display name and the channel's head CSV.

use serde::Serialize;
use serde_json::Value;

use super::text;

/// One row: a package's channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The package (the PackageManifest's name).
    pub name: String,
    /// The catalog, as shown: the CatalogSource's display name (`status.catalogSourceDisplayName`).
    pub catalog: String,
    /// The CatalogSource (`status.catalogSource`).
    pub catalog_source: String,
    /// Its namespace (`status.catalogSourceNamespace`).
    pub catalog_source_namespace: String,
    /// The channel.
    pub channel: String,
    /// The channel's head (`currentCSV`): the CSV a Subscription to it installs.
    #[serde(rename = "latestCSV")]
    pub latest_csv: String,
    /// Whether this is the package's default channel.
    pub default: bool,
    /// The manifest's `creationTimestamp` (its CatalogSource's).
    pub created: String,
}

/// The rows, as `operator_list_available.go :: newOperatorListAvailableCmd` prints them: the
/// manifests sorted by name (stably: the API's order for the same name, one per catalog), then
/// each manifest's channels in their order (package-server sorts them by name).
pub fn rows(manifests: &[Value]) -> Vec<Row> {
    let mut sorted: Vec<&Value> = manifests.iter().collect();
    sorted.sort_by(|a, b| text(a, "/metadata/name").cmp(text(b, "/metadata/name")));
    let mut out = Vec::new();
    for pm in sorted {
        let channels = pm.pointer("/status/channels").and_then(Value::as_array);
        let channels = channels.map(Vec::as_slice).unwrap_or_default();
        let default = text(pm, "/status/defaultChannel");
        for ch in channels {
            let name = text(ch, "/name");
            out.push(Row {
                name: text(pm, "/metadata/name").into(),
                catalog: text(pm, "/status/catalogSourceDisplayName").into(),
                catalog_source: text(pm, "/status/catalogSource").into(),
                catalog_source_namespace: text(pm, "/status/catalogSourceNamespace").into(),
                channel: name.into(),
                latest_csv: text(ch, "/currentCSV").into(),
                default: name == default || channels.len() == 1,
                created: text(pm, "/metadata/creationTimestamp").into(),
            });
        }
    }
    out
}

/// `--catalog NAME` or `--catalog NAMESPACE/NAME` as the label selector package-server's
/// manifests are selected by (`operator_list_available.go :: OperatorListAvailable.Run`: the
/// labels `catalog` and `catalog-namespace`; `NamespacedName.Set`: more than one `/` is
/// refused).
pub fn catalog_selector(catalog: &str) -> Result<String, String> {
    let (ns, name) = match catalog.split('/').collect::<Vec<_>>().as_slice() {
        [name] => (None, *name),
        [ns, name] => (Some(*ns), *name),
        _ => return Err(format!("invalid namespaced name value {catalog:?}")),
    };
    use crate::names::{Rule, check};
    check(Rule::LabelValue, "the catalog name", name).map_err(|e| e.to_string())?;
    let mut sel = vec![];
    if !name.is_empty() {
        sel.push(format!("catalog={name}"));
    }
    if let Some(ns) = ns.filter(|n| !n.is_empty()) {
        check(Rule::LabelValue, "the catalog namespace", ns).map_err(|e| e.to_string())?;
        sel.push(format!("catalog-namespace={ns}"));
    }
    Ok(sel.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pm(name: &str, catalog: &str, channels: &[(&str, &str)], default: &str) -> Value {
        let chs: Vec<Value> = channels
            .iter()
            .map(|(c, csv)| json!({"name": c, "currentCSV": csv}))
            .collect();
        json!({"metadata": {"name": name, "creationTimestamp": "2026-09-14T07:00:00Z"},
               "status": {"catalogSource": "cs", "catalogSourceNamespace": "olm",
                          "catalogSourceDisplayName": catalog, "defaultChannel": default,
                          "channels": chs}})
    }

    #[test]
    fn one_row_per_channel_sorted_by_package_then_in_channel_order() {
        let pms = [
            pm("zeta", "Z", &[("stable", "zeta.v2")], ""),
            pm(
                "alpha",
                "Community",
                &[("beta", "alpha.v2"), ("stable", "alpha.v1")],
                "stable",
            ),
            pm("alpha", "Certified", &[("fast", "alpha.v3")], "fast"),
        ];
        let r = rows(&pms);
        let got: Vec<(&str, &str, &str, &str, bool)> = r
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.catalog.as_str(),
                    r.channel.as_str(),
                    r.latest_csv.as_str(),
                    r.default,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("alpha", "Community", "beta", "alpha.v2", false),
                ("alpha", "Community", "stable", "alpha.v1", true),
                ("alpha", "Certified", "fast", "alpha.v3", true),
                ("zeta", "Z", "stable", "zeta.v2", true),
            ]
        );
    }

    #[test]
    fn a_catalog_flag_is_a_label_selector() {
        assert_eq!(catalog_selector("community").unwrap(), "catalog=community");
        assert_eq!(
            catalog_selector("olm/community").unwrap(),
            "catalog=community,catalog-namespace=olm"
        );
        assert!(
            catalog_selector("a/b/c")
                .unwrap_err()
                .contains("invalid namespaced name")
        );
        assert!(catalog_selector("a,b=c").is_err());
    }
}
