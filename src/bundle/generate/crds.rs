//! `spec.customresourcedefinitions.owned` from the CRDs of the input: one entry per served
//! version (as `operator-sdk generate bundle` does). Entries the base CSV already has for the
//! same name, version and kind keep everything they say (display name, description,
//! descriptors, resources) and their order; new entries follow in input order, with the
//! display name taken from the base's entry for the same CRD or derived from the kind
//! (`RedisCluster` → `Redis Cluster`) and the description from the version's schema.

use super::collect::Obj;
use crate::bundle::load::{field, list_at, str_at};
use crate::bundle::tree::{obj, s, set};
use crate::fbc::node::{Node, Value};

/// (name, version, kind, schema description) of every served CRD version.
fn served(crds: &[Obj]) -> Vec<(String, String, String, Option<String>)> {
    let mut out = Vec::new();
    for c in crds {
        let name = c.name().to_string();
        let kind = str_at(&c.doc, &["spec", "names", "kind"])
            .unwrap_or("")
            .to_string();
        let top_desc = str_at(
            &c.doc,
            &["spec", "validation", "openAPIV3Schema", "description"],
        );
        let versions = list_at(&c.doc, &["spec", "versions"]);
        if versions.is_empty() {
            if let Some(v) = str_at(&c.doc, &["spec", "version"]) {
                out.push((
                    name.clone(),
                    v.to_string(),
                    kind.clone(),
                    top_desc.map(String::from),
                ));
            }
            continue;
        }
        for v in versions {
            let served = !matches!(
                field(v, &["served"]).map(|n| &n.value),
                Some(Value::Bool(false))
            );
            if !served {
                continue;
            }
            let desc = str_at(v, &["schema", "openAPIV3Schema", "description"]).or(top_desc);
            out.push((
                name.clone(),
                str_at(v, &["name"]).unwrap_or("").to_string(),
                kind.clone(),
                desc.map(String::from),
            ));
        }
    }
    out
}

/// Splits a kind into words: `RedisCluster` → `Redis Cluster`, `HTTPRoute` → `HTTP Route`.
pub fn display_name(kind: &str) -> String {
    let chars: Vec<char> = kind.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

/// The owned list for `crds`, given the base CSV's owned entries.
pub fn owned(crds: &[Obj], base: &[Node]) -> Vec<Node> {
    let derived = served(crds);
    let key = |n: &Node| {
        (
            str_at(n, &["name"]).unwrap_or("").to_string(),
            str_at(n, &["version"]).unwrap_or("").to_string(),
            str_at(n, &["kind"]).unwrap_or("").to_string(),
        )
    };
    let mut out: Vec<Node> = Vec::new();
    let mut done = Vec::new();
    for b in base {
        let k = key(b);
        if let Some(d) = derived
            .iter()
            .find(|d| (d.0.clone(), d.1.clone(), d.2.clone()) == k)
        {
            let mut n = b.clone();
            if str_at(&n, &["displayName"]).is_none_or(str::is_empty) {
                set(&mut n, "displayName", s(&display_name(&d.2)));
            }
            if str_at(&n, &["description"]).is_none_or(str::is_empty)
                && let Some(desc) = &d.3
            {
                set(&mut n, "description", s(desc));
            }
            out.push(n);
            done.push(k);
        }
    }
    for (name, version, kind, desc) in &derived {
        let k = (name.clone(), version.clone(), kind.clone());
        if done.contains(&k) {
            continue;
        }
        let same_crd = base
            .iter()
            .find(|b| str_at(b, &["name"]) == Some(name.as_str()));
        let display = same_crd
            .and_then(|b| str_at(b, &["displayName"]))
            .filter(|d| !d.is_empty())
            .map(String::from)
            .unwrap_or_else(|| display_name(kind));
        let description = desc.clone().or_else(|| {
            same_crd
                .and_then(|b| str_at(b, &["description"]))
                .filter(|d| !d.is_empty())
                .map(String::from)
        });
        let mut fields = vec![
            ("name", s(name)),
            ("version", s(version)),
            ("kind", s(kind)),
            ("displayName", s(&display)),
        ];
        if let Some(d) = &description {
            fields.push(("description", s(d)));
        }
        out.push(obj(fields));
        done.push(k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names() {
        assert_eq!(display_name("RedisCluster"), "Redis Cluster");
        assert_eq!(display_name("HTTPRoute"), "HTTP Route");
        assert_eq!(display_name("Widget"), "Widget");
        assert_eq!(display_name("S3Bucket"), "S3 Bucket");
    }
}
