//! What OLM will do with an install before it is written: the install's own manifests (its
//! OperatorGroup, Subscription and CatalogSource) resolved as OLM's resolver resolves the
//! namespace ([`crate::resolve::steps::resolve`]) against the catalog's content.

use super::Install;
use crate::fbc::decl::DeclarativeConfig;
use crate::resolve::entry::SourceKey;
use crate::resolve::state::ClusterState;
use crate::resolve::steps::{CatalogContent, Request, Resolution, resolve};

/// Resolves the namespace of `i` as it is after the install: its manifests applied to `state`
/// as the install applies them (an object of the same name updated, a Subscription keeping its
/// status; no OperatorGroup of its own where the namespace has one, as the install skips it;
/// one assumed when the install creates none: `--no-operator-group` says the namespace has
/// one), and `cfg` as the content of the install's CatalogSource. `state` holds what else the
/// cluster has (the namespace's CSVs, Subscriptions and OperatorGroups, the CatalogSources of
/// the namespace and the global namespace), if known; `others` the content of those other
/// catalogs.
pub fn preview(
    i: &Install,
    cfg: &DeclarativeConfig,
    state: &ClusterState,
    others: &[(SourceKey, &DeclarativeConfig)],
) -> Resolution {
    let mut state = state.clone();
    let has_group = state
        .operator_groups
        .iter()
        .any(|o| o.namespace == i.namespace);
    for m in i.manifests() {
        if has_group && m["kind"] == "OperatorGroup" {
            continue;
        }
        state.apply(&m);
    }
    if !state
        .operator_groups
        .iter()
        .any(|o| o.namespace == i.namespace)
    {
        state.add(&serde_json::json!({
            "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": i.namespace, "namespace": i.namespace}}));
    }
    let (name, namespace) = i.source();
    let mut catalogs = vec![CatalogContent {
        key: SourceKey::new(name, namespace),
        cfg,
    }];
    catalogs.extend(others.iter().map(|(key, cfg)| CatalogContent {
        key: key.clone(),
        cfg,
    }));
    resolve(&Request {
        namespace: i.namespace.clone(),
        global_namespace: i.catalog_namespace.clone(),
        state: &state,
        catalogs,
    })
}

/// The bundle OLM installs for a Subscription without a startingCSV when it is not the head of
/// the channel: OLM's resolver takes the highest bundle of the channel that can be installed,
/// so a head whose requirements nothing satisfies is passed over, silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    /// The CSV OLM installs.
    pub chosen: String,
    /// The channel's head.
    pub head: String,
    /// The channel.
    pub channel: String,
    /// Why the head cannot be installed: the constraints of the resolution starting at it that
    /// are not the Subscription's own (OLM's text, e.g. `bundle X requires an operator with
    /// package: P ...`), else OLM's message.
    pub why: Vec<String>,
}

/// When `r` (the [`preview`] of `i`) installs a bundle of `i`'s package that is not the head
/// of its channel (the `--channel`, else the package's default), the head and why it is passed
/// over (the same install starting at the head, resolved).
pub fn passed_over(
    i: &Install,
    cfg: &DeclarativeConfig,
    state: &ClusterState,
    others: &[(SourceKey, &DeclarativeConfig)],
    r: &Resolution,
) -> Option<PassedOver> {
    if i.starting_csv.is_some() {
        return None;
    }
    let plan = r.result.as_ref().ok()?;
    let chosen = plan.chosen.iter().find(|c| c.package == i.package)?;
    let channel = match &i.channel {
        Some(c) => c.clone(),
        None => cfg
            .packages
            .iter()
            .find(|p| p.name == i.package)?
            .default_channel
            .clone(),
    };
    let entries = &cfg
        .channels
        .iter()
        .find(|c| c.package == i.package && c.name == channel)?
        .entries;
    let crate::model::chain::Head::One(head) = crate::model::chain::heads(entries) else {
        return None;
    };
    if chosen.csv == head {
        return None;
    }
    let mut at_head = i.clone();
    at_head.starting_csv = Some(head.to_string());
    let failed = preview(&at_head, cfg, state, others);
    let f = failed.result.err()?;
    let why = match &failed.explanation {
        Some(e)
            if e.items
                .iter()
                .any(|it| !it.constraint.starts_with("subscription ")) =>
        {
            e.items
                .iter()
                .filter(|it| !it.constraint.starts_with("subscription "))
                .map(|it| it.constraint.clone())
                .collect()
        }
        _ => vec![f.to_string()],
    };
    Some(PassedOver {
        chosen: chosen.csv.clone(),
        head: head.to_string(),
        channel,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::fixture::catalog_of;
    use crate::install::Catalog;
    use serde_json::{Value, json};

    fn bundle(pkg: &str, version: &str, requires: Option<&str>) -> Vec<Value> {
        let name = format!("{pkg}.v{version}");
        let mut props = vec![json!({"type": "olm.package",
            "value": {"packageName": pkg, "version": version}})];
        if let Some(r) = requires {
            props.push(json!({"type": "olm.package.required",
                "value": {"packageName": r, "versionRange": ">=1.0.0"}}));
        }
        vec![
            json!({"schema": "olm.package", "name": pkg, "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": pkg, "name": "stable",
                   "entries": [{"name": name}]}),
            json!({"schema": "olm.bundle", "package": pkg, "name": name,
                   "image": format!("example.com/{pkg}:{version}"), "properties": props}),
        ]
    }

    fn install() -> Install {
        Install {
            package: "app".into(),
            catalog: Catalog::Image("example.com/app-catalog:1".into()),
            channel: None,
            version: None,
            namespace: "team".into(),
            ..crate::install::tests::base()
        }
    }

    #[test]
    fn the_clusters_other_catalogs_and_csvs_take_part() {
        let own = catalog_of(&bundle("app", "1.0.0", Some("dep")));
        let other = catalog_of(&bundle("dep", "1.2.0", None));
        // The install's catalog alone: nothing provides dep.
        let r = preview(&install(), &own, &ClusterState::default(), &[]);
        assert!(r.result.is_err(), "dep is in no catalog");
        // On a cluster whose global namespace has a catalog with dep: OLM takes it from there.
        let mut state = ClusterState::default();
        state.add(
            &json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": "community", "namespace": "olm"},
            "spec": {"image": "example.com/community:1"}}),
        );
        let key = SourceKey::new("community", "olm");
        let r = preview(&install(), &own, &state, &[(key.clone(), &other)]);
        let plan = r.result.expect("resolved");
        let dep = plan
            .chosen
            .iter()
            .find(|c| c.package == "dep")
            .expect("dep chosen");
        assert_eq!((dep.csv.as_str(), &dep.catalog), ("dep.v1.2.0", &key));
        assert_eq!(
            dep.new_subscription.as_deref(),
            Some("dep-stable-community-olm")
        );
        // A namespace with an OperatorGroup of another name (the install skips its own) and
        // dep installed without a Subscription: the installed CSV satisfies it.
        state.add(
            &json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": "team-og", "namespace": "team"}}),
        );
        state.add(&json!({"apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "dep.v1.1.0", "namespace": "team", "annotations": {
                "operatorframework.io/properties": "{\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"dep\",\"version\":\"1.1.0\"}}]}"}},
            "spec": {"version": "1.1.0"}, "status": {"phase": "Succeeded"}}));
        let r = preview(&install(), &own, &state, &[(key, &other)]);
        let plan = r.result.expect("resolved");
        let packages: Vec<&str> = plan.chosen.iter().map(|c| c.package.as_str()).collect();
        assert_eq!(packages, ["app"], "dep is installed already");
    }

    #[test]
    fn a_head_that_cannot_be_installed_is_passed_over_and_said_why() {
        // app 2.0.0 (the head) requires dep, which no catalog has; 1.0.0 requires nothing.
        let mut blobs = bundle("app", "1.0.0", None);
        blobs.extend(bundle("app", "2.0.0", Some("dep")).into_iter().skip(2));
        blobs[1] = json!({"schema": "olm.channel", "package": "app", "name": "stable",
            "entries": [{"name": "app.v1.0.0"}, {"name": "app.v2.0.0", "replaces": "app.v1.0.0"}]});
        let own = catalog_of(&blobs);
        let st = ClusterState::default();
        let r = preview(&install(), &own, &st, &[]);
        let p = passed_over(&install(), &own, &st, &[], &r).expect("passed over");
        assert_eq!(
            (p.chosen.as_str(), p.head.as_str(), p.channel.as_str()),
            ("app.v1.0.0", "app.v2.0.0", "stable")
        );
        assert_eq!(
            p.why,
            [
                "bundle app.v2.0.0 requires an operator with package: dep and with version in range: >=1.0.0"
            ]
        );
        // The head itself, or a pinned start: nothing to say.
        let mut pinned = install();
        pinned.starting_csv = Some("app.v1.0.0".into());
        let r = preview(&pinned, &own, &st, &[]);
        assert_eq!(passed_over(&pinned, &own, &st, &[], &r), None);
        let other = catalog_of(&bundle("dep", "1.0.0", None));
        let with = [(SourceKey::new("community", "olm"), &other)];
        let r = preview(&install(), &own, &st, &with);
        assert_eq!(passed_over(&install(), &own, &st, &with, &r), None);
    }
}
