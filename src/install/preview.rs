//! What OLM will do with an install before it is written: the install's own manifests (its
//! OperatorGroup, Subscription and CatalogSource) resolved as OLM's resolver resolves the
//! namespace ([`crate::resolve::steps::resolve`]) against the catalog's content.

use super::Install;
use crate::fbc::decl::DeclarativeConfig;
use crate::resolve::entry::SourceKey;
pub use crate::resolve::passed::PassedOver;
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
    let state = prepared(i, state);
    resolve(&request(i, cfg, &state, others))
}

/// `state` with the install's manifests applied, as [`preview`] describes.
fn prepared(i: &Install, state: &ClusterState) -> ClusterState {
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
    state
}

fn request<'c>(
    i: &Install,
    cfg: &'c DeclarativeConfig,
    state: &'c ClusterState,
    others: &[(SourceKey, &'c DeclarativeConfig)],
) -> Request<'c> {
    let (name, namespace) = i.source();
    let mut catalogs = vec![CatalogContent {
        key: SourceKey::new(name, namespace),
        cfg,
    }];
    catalogs.extend(others.iter().map(|(key, cfg)| CatalogContent {
        key: key.clone(),
        cfg,
    }));
    Request {
        namespace: i.namespace.clone(),
        global_namespace: i.catalog_namespace.clone(),
        state,
        catalogs,
    }
}

/// When `r` (the [`preview`] of `i`) installs a bundle of `i`'s package that is not the head
/// of its channel (the `--channel`, else the package's default), the head and why it is
/// passed over ([`crate::resolve::passed`]).
pub fn passed_over(
    i: &Install,
    cfg: &DeclarativeConfig,
    state: &ClusterState,
    others: &[(SourceKey, &DeclarativeConfig)],
    r: &Resolution,
) -> Option<PassedOver> {
    let state = prepared(i, state);
    crate::resolve::passed::passed_over(&request(i, cfg, &state, others), r)
        .into_iter()
        .find(|p| p.subscription == i.package)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::load::from_blobs as catalog_of;
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
