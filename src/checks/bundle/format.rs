//! Bundle format and cross-object rules (BND codes).

use std::collections::{BTreeMap, BTreeSet};

use super::Ctx;
use super::codes::*;
use crate::bundle::SUPPORTED_KINDS;
use crate::bundle::csv_types::crd_descriptions;
use crate::bundle::load::{crd_versions, keys, kind_of, list_at, pos_at, str_at};
use crate::fbc::node::{Pos, Value};

pub(super) fn check(cx: &mut Ctx<'_>) {
    let b = cx.bundle;
    for p in &b.problems {
        cx.push(
            &UNREADABLE,
            format!("cannot parse: {}", p.message),
            &p.path,
            p.pos,
            None,
        )
        .help = Some("fix the file: opm skips files it cannot decode, so their objects would be missing from the bundle".into());
    }
    for p in &b.skipped {
        let what = if p.is_dir() {
            "a subdirectory"
        } else {
            "a hidden file"
        };
        cx.push(
            &MANIFESTS_LAYOUT,
            format!("manifests/ contains {what}; bundles hold top-level manifest files only"),
            p,
            Pos::default(),
            None,
        );
    }
    let mut csvs = Vec::new();
    for m in &b.manifests {
        if m.docs.len() > 1 {
            let second = &m.docs[1];
            cx.push(
                &EXTRA_DOCUMENT,
                format!(
                    "{} YAML documents in one file; OLM reads only the first, the other {} are dropped",
                    m.docs.len(),
                    m.docs.len() - 1
                ),
                &m.path,
                second.pos,
                None,
            )
            .help = Some("put each object in its own file".into());
        }
        let Some(doc) = m.docs.first() else { continue };
        let kind = kind_of(doc);
        let api = str_at(doc, &["apiVersion"]);
        let name = str_at(doc, &["metadata", "name"]);
        if !matches!(doc.value, Value::Map(_)) || kind.is_none() || api.is_none() {
            let missing = match (api.is_none(), kind.is_none()) {
                (true, true) => "apiVersion and kind",
                (true, false) => "apiVersion",
                _ => "kind",
            };
            cx.push(
                &NOT_AN_OBJECT,
                format!("not a Kubernetes object: {missing} missing; opm cannot decode it and drops it from the bundle"),
                &m.path,
                doc.pos,
                None,
            );
            continue;
        }
        let kind = kind.unwrap_or_default();
        if name.is_none_or(str::is_empty) && kind != "ClusterServiceVersion" {
            cx.push(
                &NOT_AN_OBJECT,
                format!("{kind} has no metadata.name"),
                &m.path,
                doc.pos,
                Some("metadata.name"),
            );
        }
        if !SUPPORTED_KINDS.contains(&kind) {
            let pos = pos_at(doc, &["kind"]);
            cx.push(
                &UNSUPPORTED_KIND,
                format!("{kind} is not a supported kind for a registry+v1 bundle"),
                &m.path,
                pos,
                Some("kind"),
            )
            .help = Some(format!(
                "remove it, or create it from the operator at runtime; supported: {}",
                SUPPORTED_KINDS.join(", ")
            ));
        }
        if kind == "ClusterServiceVersion" {
            csvs.push((m.path.clone(), doc.pos));
        }
    }
    let manifests_dir = b.dir.join("manifests");
    match csvs.len() {
        0 => {
            cx.push(
                &CSV_COUNT,
                "no ClusterServiceVersion in manifests/",
                &manifests_dir,
                Pos::default(),
                None,
            );
        }
        1 => {}
        n => {
            for (p, pos) in &csvs[1..] {
                cx.push(
                    &CSV_COUNT,
                    format!("{n} ClusterServiceVersions in the bundle; OLM uses only the first"),
                    p,
                    *pos,
                    None,
                );
            }
        }
    }
    annotations(cx);
    crds(cx);
    service_accounts(cx);
}

fn annotations(cx: &mut Ctx<'_>) {
    let b = cx.bundle;
    let Some(a) = &b.annotations else {
        cx.push(
            &ANNOTATIONS,
            "no annotations file: metadata/ needs a file with an `annotations` block",
            &b.dir.join("metadata"),
            Pos::default(),
            None,
        );
        return;
    };
    let required = [
        (keys::MEDIATYPE, Some("registry+v1")),
        (keys::MANIFESTS, Some("manifests/")),
        (keys::METADATA, Some("metadata/")),
        (keys::PACKAGE, None),
        (keys::CHANNELS, None),
    ];
    for (key, want) in required {
        let path = format!("annotations[\"{key}\"]");
        match b.annotation(key) {
            None | Some("") => {
                cx.push(
                    &ANNOTATIONS,
                    format!("annotation {key} is missing or empty"),
                    &a.path,
                    a.node.pos,
                    Some(&path),
                );
            }
            Some(v) => {
                if let Some(w) = want
                    && v != w
                {
                    let pos = annotation_pos(a, key);
                    cx.push(
                        &ANNOTATIONS,
                        format!("annotation {key} is {v:?}; a registry+v1 bundle needs {w:?}"),
                        &a.path,
                        pos,
                        Some(&path),
                    );
                }
            }
        }
    }
    if let Some(d) = b.annotation(keys::DEFAULT_CHANNEL) {
        let path = format!("annotations[\"{}\"]", keys::DEFAULT_CHANNEL);
        let pos = annotation_pos(a, keys::DEFAULT_CHANNEL);
        let channels: Vec<&str> = b
            .annotation(keys::CHANNELS)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .collect();
        if d.is_empty() {
            cx.push(
                &ANNOTATIONS,
                "the default channel annotation is empty",
                &a.path,
                pos,
                Some(&path),
            );
        } else if !channels.contains(&d) {
            cx.push(
                &DEFAULT_CHANNEL,
                format!(
                    "default channel {d:?} is not one of the bundle's channels ({})",
                    channels.join(", ")
                ),
                &a.path,
                pos,
                Some(&path),
            );
        }
    }
}

fn annotation_pos(a: &crate::bundle::load::MetaFile, key: &str) -> Pos {
    pos_at(&a.node, &[key])
}

/// Owned CRDs ⇔ bundled CRDs, duplicates (operator-framework/api bundle validator rows 1–3).
fn crds(cx: &mut Ctx<'_>) {
    let b = cx.bundle;
    let Some((csv_file, csv)) = b.csv() else {
        return;
    };
    // Bundled CRD versions: (group, version, kind) → where.
    let mut bundled: BTreeMap<(String, String, String), (std::sync::Arc<std::path::Path>, Pos)> =
        BTreeMap::new();
    let mut group_kinds = BTreeSet::new();
    for (path, doc) in b.first_docs() {
        let Some(c) = crd_versions(doc) else { continue };
        group_kinds.insert((c.group.to_string(), c.kind.to_string()));
        for (v, pos) in c.versions {
            let key = (c.group.to_string(), v.to_string(), c.kind.to_string());
            if let std::collections::btree_map::Entry::Vacant(e) = bundled.entry(key) {
                e.insert((path.clone(), pos));
            } else {
                cx.push(
                    &DUPLICATE_CRD,
                    format!(
                        "duplicate CRD {}/{v}, Kind={} in the bundle",
                        c.group, c.kind
                    ),
                    path,
                    pos,
                    None,
                );
            }
        }
    }
    let owned = crd_descriptions(csv, true);
    let owned_items = list_at(csv, &["spec", "customresourcedefinitions", "owned"]);
    let mut owned_gk = BTreeSet::new();
    for (i, (_, group, version, kind)) in owned.iter().enumerate() {
        owned_gk.insert((group.clone(), kind.clone()));
        if !bundled.contains_key(&(group.clone(), version.clone(), kind.clone())) {
            let pos = owned_items.get(i).map_or(csv.pos, |n| n.pos);
            cx.push(
                &OWNED_CRD_MISSING,
                format!("owned CRD {group}/{version}, Kind={kind} is not in the bundle"),
                csv_file,
                pos,
                Some(&format!("spec.customresourcedefinitions.owned[{i}]")),
            )
            .help = Some(
                "add the CRD manifest to manifests/, or fix name/version/kind of the owned entry"
                    .into(),
            );
        }
    }
    for (group, kind) in group_kinds.difference(&owned_gk) {
        if let Some(((_, v, _), (path, pos))) = bundled
            .iter()
            .find(|((g, _, k), _)| g == group && k == kind)
        {
            cx.push(
                &CRD_NOT_OWNED,
                format!("CRD {group}/{v}, Kind={kind} is in the bundle but not owned by the CSV"),
                path,
                *pos,
                None,
            )
            .help = Some("list it in spec.customresourcedefinitions.owned, or remove it".into());
        }
    }
}

/// ServiceAccount manifests named like a deployment's service account (api bundle row 4).
fn service_accounts(cx: &mut Ctx<'_>) {
    let b = cx.bundle;
    let Some((_, csv)) = b.csv() else {
        return;
    };
    let used: BTreeSet<&str> = list_at(csv, &["spec", "install", "spec", "deployments"])
        .iter()
        .filter_map(|d| str_at(d, &["spec", "template", "spec", "serviceAccountName"]))
        .collect();
    for (path, doc) in b.first_docs() {
        if kind_of(doc) != Some("ServiceAccount") {
            continue;
        }
        if let Some(n) = str_at(doc, &["metadata", "name"])
            && used.contains(n)
        {
            cx.push(
                &SHADOWED_SERVICE_ACCOUNT,
                format!("ServiceAccount {n} is also the service account of a CSV deployment; OLM creates it from the CSV"),
                path,
                doc.pos,
                Some("metadata.name"),
            )
            .help = Some("remove this manifest, or rename the account in the manifest or the CSV".into());
        }
    }
}
