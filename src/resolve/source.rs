//! Where the resolver's entries come from: a catalog as OLM reads it over the registry API
//! (`source_registry.go::registrySource.Snapshot` and `newOperatorFromBundle`, over
//! operator-registry's `ListBundles` and `api.ConvertModelBundleToAPIBundle`), and a namespace's
//! installed CSVs (`source_csvs.go::csvSource.Snapshot`, the `@existing` catalog).

use std::collections::BTreeMap;

use serde_json::Value;

use super::entry::{Entry, Property, SourceInfo, SourceKey, parse_tolerant};
use super::state::{ClusterState, Csv, CsvApi};
use crate::fbc::decl::DeclarativeConfig;
use crate::fbc::property::Typed;
use crate::range::Range;

/// One catalog's entries and its priority (`snapshotHeader`).
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The catalog.
    pub key: SourceKey,
    /// `CatalogSource.spec.priority` (`catsrcPriorityProvider`; 0 without a CatalogSource).
    pub priority: i64,
    /// One entry per bundle and channel, in `ListBundles` order.
    pub entries: Vec<Entry>,
}

/// `registrySource.Snapshot` of an FBC catalog served as `opm serve` serves it: one entry per
/// (bundle, channel), in `ListBundles` order (channel name, package name, bundle name).
/// A bundle without exactly one `olm.package` property is left out, as opm cannot convert it.
pub fn catalog_snapshot(cfg: &DeclarativeConfig, key: SourceKey, priority: i64) -> Snapshot {
    let defaults: BTreeMap<&str, &str> = cfg
        .packages
        .iter()
        .map(|p| (p.name.as_str(), p.default_channel.as_str()))
        .collect();
    let bundles: BTreeMap<(&str, &str), &crate::fbc::decl::Bundle> = cfg
        .bundles
        .iter()
        .map(|b| ((b.package.as_str(), b.name.as_str()), b))
        .collect();
    let mut listing = Vec::new();
    for c in &cfg.channels {
        if !defaults.contains_key(c.package.as_str()) {
            continue;
        }
        for e in &c.entries {
            if let Some(b) = bundles.get(&(c.package.as_str(), e.name.as_str())) {
                listing.push((c, e, *b));
            }
        }
    }
    listing.sort_by(|a, b| {
        (&a.0.name, &a.0.package, &a.1.name).cmp(&(&b.0.name, &b.0.package, &b.1.name))
    });
    listing.dedup_by(|a, b| {
        (&a.0.name, &a.0.package, &a.1.name) == (&b.0.name, &b.0.package, &b.1.name)
    });
    let mut entries = Vec::new();
    for (c, e, b) in listing {
        let packages: Vec<&str> = b
            .properties
            .iter()
            .filter_map(|p| p.as_package().map(|(_, v, _)| v))
            .collect();
        let [version] = packages.as_slice() else {
            continue;
        };
        // api.Bundle.Properties (every property but the bundle objects and CSV metadata),
        // then `legacyDependenciesToProperties` of its Dependencies: the required GVKs and
        // packages once more.
        let mut properties = Vec::new();
        let mut deps = Vec::new();
        for p in &b.properties {
            match &p.typed {
                Typed::BundleObject | Typed::CsvMetadata => continue,
                Typed::GvkRequired(g) => deps.push(Property::new(
                    "olm.gvk.required",
                    gvk_value("olm.gvk.required", &g.group, &g.version, &g.kind),
                )),
                Typed::PackageRequired {
                    package_name,
                    version_range,
                } => deps.push(Property::new(
                    "olm.package.required",
                    serde_json::json!({"packageName": package_name, "versionRange": version_range})
                        .to_string(),
                )),
                _ => {}
            }
            properties.push(Property::new(p.type_.clone(), p.value.to_json()));
        }
        properties.extend(deps);
        entries.push(Entry {
            name: b.name.clone(),
            replaces: e.replaces.clone(),
            skips: e.skips.clone(),
            skip_range: Range::parse(&e.skip_range).ok(),
            version: parse_tolerant(version),
            source: SourceInfo {
                package: c.package.clone(),
                channel: c.name.clone(),
                catalog: key.clone(),
                default_channel: defaults.get(c.package.as_str()) == Some(&c.name.as_str()),
                subscription: None,
            },
            properties,
            bundle_path: b.image.clone(),
        });
    }
    Snapshot {
        key,
        priority,
        entries,
    }
}

/// A GVK property's value as OLM marshals it: `olm.gvk` as `opregistry.GVKProperty` (group,
/// kind, version), `olm.gvk.required` as the struct of `requiredAPIsToProperties` and
/// `legacyDependenciesToProperties` (group, version, kind).
fn gvk_value(type_: &str, g: &str, v: &str, k: &str) -> String {
    let (g, v, k) = (Value::from(g), Value::from(v), Value::from(k));
    if type_ == "olm.gvk" {
        format!("{{\"group\":{g},\"kind\":{k},\"version\":{v}}}")
    } else {
        format!("{{\"group\":{g},\"version\":{v},\"kind\":{k}}}")
    }
}

/// The GVK property values of APIs, sorted by their JSON as `providedAPIsToProperties` sorts.
fn api_properties(type_: &str, apis: &[(String, String, String)]) -> Vec<Property> {
    let mut values: Vec<String> = apis
        .iter()
        .map(|(g, v, k)| gvk_value(type_, g, v, k))
        .collect();
    values.sort();
    values.dedup();
    values
        .into_iter()
        .map(|v| Property::new(type_, v))
        .collect()
}

/// `newEntryFromV1Alpha1CSV`'s API set: CRDs as (group from the name, version, kind), then
/// APIServices; an error for a CRD name without a group.
fn api_set(crds: &[CsvApi], services: &[CsvApi]) -> Result<Vec<(String, String, String)>, String> {
    let mut out = Vec::new();
    for c in crds {
        let Some((_, group)) = c.name.split_once('.') else {
            return Err(format!("error parsing crd name: {}", c.name));
        };
        out.push((group.to_string(), c.version.clone(), c.kind.clone()));
    }
    for a in services {
        out.push((a.group.clone(), a.version.clone(), a.kind.clone()));
    }
    Ok(out)
}

/// A CSV's `spec.version` as OLM reads it (`OperatorVersion.UnmarshalJSON`: blang's
/// `ParseTolerant`); absent, the zero version (Go's zero value). `None`: a version OLM's
/// client cannot decode.
fn csv_version(v: &str) -> Option<semver::Version> {
    if v.is_empty() {
        Some(semver::Version::new(0, 0, 0))
    } else {
        parse_tolerant(v)
    }
}

/// `PropertyListFromPropertiesAnnotation`: `{"properties":[{"type":..,"value":..}]}`.
fn annotation_properties(csv: &Csv, text: &str) -> Result<Vec<Property>, String> {
    let fail = |e: String| format!("failed to retrieve properties of csv \"{}\": {e}", csv.name);
    let v: Value = serde_json::from_str(text).map_err(|e| fail(e.to_string()))?;
    let list = match v.get("properties") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(fail("properties is not a list".into())),
    };
    Ok(list
        .iter()
        .map(|p| {
            Property::new(
                p.get("type").and_then(Value::as_str).unwrap_or_default(),
                p.get("value").map_or("null".to_string(), Value::to_string),
            )
        })
        .collect())
}

/// `csvSource.Snapshot` for `namespace`: one entry per CSV that is not a copy, properties
/// from the `operatorframework.io/properties` annotation, else inferred (provided and
/// required APIs, and `olm.package` when exactly one package's Subscription installed it).
/// Fail-forward upgrades (`TechPreviewUnsafeFailForward`) are not modelled.
pub fn existing_snapshot(state: &ClusterState, namespace: &str) -> Result<Snapshot, String> {
    let key = SourceKey::existing(namespace);
    let subs: Vec<_> = state.subscriptions_in(namespace).collect();
    let mut entries = Vec::new();
    for csv in state
        .csvs
        .iter()
        .filter(|c| c.namespace == namespace && !c.copied)
    {
        let provided = api_set(&csv.owned_crds, &csv.owned_apis)?;
        let required = api_set(&csv.required_crds, &csv.required_apis)?;
        let subscription = subs
            .iter()
            .find(|s| s.installed_csv == csv.name)
            .map(|s| s.name.clone());
        let properties = match &csv.properties {
            Some(text) => annotation_properties(csv, text)?,
            None => {
                let mut ps = api_properties("olm.gvk", &provided);
                ps.extend(api_properties("olm.gvk.required", &required));
                let pkgs: std::collections::BTreeSet<&str> = subs
                    .iter()
                    .filter(|s| s.installed_csv == csv.name && !s.package.is_empty())
                    .map(|s| s.package.as_str())
                    .collect();
                if let [pkg] = pkgs.into_iter().collect::<Vec<_>>().as_slice() {
                    // `csv.Spec.Version.String()`, empty for the zero version.
                    let version = csv_version(&csv.version)
                        .filter(|v| *v != semver::Version::new(0, 0, 0))
                        .map(|v| v.to_string())
                        .unwrap_or_default();
                    ps.push(Property::new(
                        "olm.package",
                        serde_json::json!({"packageName": pkg, "version": version}).to_string(),
                    ));
                }
                ps
            }
        };
        let mut e = Entry {
            name: csv.name.clone(),
            replaces: String::new(),
            skips: Vec::new(),
            skip_range: None,
            version: csv_version(&csv.version),
            source: SourceInfo {
                catalog: key.clone(),
                subscription,
                ..SourceInfo::default()
            },
            properties,
            bundle_path: String::new(),
        };
        if let Some(pkg) = e
            .properties
            .iter()
            .filter(|p| p.type_ == "olm.package")
            .filter_map(|p| p.field("packageName").ok())
            .next_back()
        {
            e.source.package = pkg.to_string();
        }
        entries.push(e);
    }
    Ok(Snapshot {
        key,
        priority: 0,
        entries,
    })
}
