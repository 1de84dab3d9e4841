//! `api.Bundle` as the server sends it: a reference to the served bundle, encoded straight into
//! the response buffer (protobuf wire format, fields in tag order, proto3 defaults left out, as
//! prost encodes the generated `api::Bundle`). No per-call copy of the CSV, the manifests or the
//! properties is made; the generated servers (`gen/server.rs`) take this type for `api.Bundle`.

use bytes::{Buf, BufMut};
use prost::encoding::{
    DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint, key_len, skip_field,
};

use super::catalog::ServedEntry;
use super::rope::Rope;

/// How a bundle is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Shape {
    /// The single-bundle RPCs: `replaces` and `skips` cleared (opm's `getTrimmedBundle`).
    #[default]
    Trimmed,
    /// `ListBundles`: edges kept; `csvJson` and `object` cleared when `bundlePath` is set.
    Listed,
}

/// One bundle of one channel, as an answer.
#[derive(Debug, Clone, Default)]
pub struct BundleReply {
    /// The package.
    pub package: String,
    /// The channel.
    pub channel: String,
    /// The bundle (CSV) name.
    pub name: String,
    /// Its entry in the channel, with its data.
    pub entry: Option<std::sync::Arc<ServedEntry>>,
    /// Trimmed or listed.
    pub shape: Shape,
}

fn str_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        key_len(tag) + encoded_len_varint(s.len() as u64) + s.len()
    }
}

fn put_str(tag: u32, s: &str, buf: &mut impl BufMut) {
    if !s.is_empty() {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(s.len() as u64, buf);
        buf.put_slice(s.as_bytes());
    }
}

/// A repeated string element: written even when empty.
fn item_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn put_rope(tag: u32, r: &Rope, always: bool, buf: &mut impl BufMut) {
    let len = r.len();
    if len == 0 && !always {
        return;
    }
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
    for p in r.pieces() {
        buf.put_slice(p.as_bytes());
    }
}

/// A nested message's fields: (tag, string) pairs.
fn msg_inner_len(fields: &[(u32, &str)]) -> usize {
    fields.iter().map(|(t, s)| str_len(*t, s)).sum()
}

fn msg_len(tag: u32, fields: &[(u32, &str)]) -> usize {
    item_len(tag, msg_inner_len(fields))
}

fn put_msg(tag: u32, fields: &[(u32, &str)], buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(msg_inner_len(fields) as u64, buf);
    for (t, s) in fields {
        put_str(*t, s, buf);
    }
}

fn gvk(g: &[String; 3]) -> [(u32, &str); 3] {
    [(1, &g[0]), (2, &g[1]), (3, &g[2])]
}

impl BundleReply {
    /// Whether `csvJson` and `object` are left out (listed with an image).
    fn cleared(&self, e: &ServedEntry) -> bool {
        self.shape == Shape::Listed && !e.data.image.is_empty()
    }

    fn edges<'a>(&self, e: &'a ServedEntry) -> (&'a str, &'a [String]) {
        match self.shape {
            Shape::Trimmed => ("", &[]),
            Shape::Listed => (&e.replaces, &e.skips),
        }
    }
}

impl prost::Message for BundleReply {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        let Some(e) = &self.entry else {
            return;
        };
        let d = &e.data;
        put_str(1, &self.name, buf);
        put_str(2, &self.package, buf);
        put_str(3, &self.channel, buf);
        if !self.cleared(e) {
            put_rope(4, &d.csv_json, false, buf);
            for o in &d.objects {
                put_rope(5, o, true, buf);
            }
        }
        put_str(6, &d.image, buf);
        for g in &d.provided {
            put_msg(7, &gvk(g), buf);
        }
        for g in &d.required {
            put_msg(8, &gvk(g), buf);
        }
        put_str(9, &d.version, buf);
        put_str(10, &e.skip_range, buf);
        for (t, v) in &d.dependencies {
            put_msg(11, &[(1, t), (2, v)], buf);
        }
        for (t, v) in &d.properties {
            put_msg(12, &[(1, t), (2, v)], buf);
        }
        let (replaces, skips) = self.edges(e);
        put_str(13, replaces, buf);
        for s in skips {
            encode_key(14, WireType::LengthDelimited, buf);
            encode_varint(s.len() as u64, buf);
            buf.put_slice(s.as_bytes());
        }
        if let Some(m) = &d.deprecation {
            put_msg(15, &[(1, m)], buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        // Only ever sent; a client decodes it as api::Bundle.
        skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        let Some(e) = &self.entry else {
            return 0;
        };
        let d = &e.data;
        let mut n = str_len(1, &self.name) + str_len(2, &self.package) + str_len(3, &self.channel);
        if !self.cleared(e) {
            let csv = d.csv_json.len();
            if csv > 0 {
                n += item_len(4, csv);
            }
            n += d
                .objects
                .iter()
                .map(|o| item_len(5, o.len()))
                .sum::<usize>();
        }
        n += str_len(6, &d.image);
        n += d
            .provided
            .iter()
            .map(|g| msg_len(7, &gvk(g)))
            .sum::<usize>();
        n += d
            .required
            .iter()
            .map(|g| msg_len(8, &gvk(g)))
            .sum::<usize>();
        n += str_len(9, &d.version) + str_len(10, &e.skip_range);
        n += d
            .dependencies
            .iter()
            .map(|(t, v)| msg_len(11, &[(1, t), (2, v)]))
            .sum::<usize>();
        n += d
            .properties
            .iter()
            .map(|(t, v)| msg_len(12, &[(1, t), (2, v)]))
            .sum::<usize>();
        let (replaces, skips) = self.edges(e);
        n += str_len(13, replaces);
        n += skips.iter().map(|s| item_len(14, s.len())).sum::<usize>();
        if let Some(m) = &d.deprecation {
            n += msg_len(15, &[(1, m)]);
        }
        n
    }

    fn clear(&mut self) {
        *self = BundleReply::default();
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use prost::Message;

    use super::*;
    use crate::serve::api;
    use crate::serve::catalog::ServedCatalog;

    /// The generated message built field by field from the same entry: the oracle.
    fn message(r: &BundleReply) -> api::Bundle {
        let e = r.entry.as_ref().unwrap();
        let d = &e.data;
        let cleared = r.cleared(e);
        let (replaces, skips) = r.edges(e);
        let gvks = |l: &[[String; 3]]| {
            l.iter()
                .map(|[g, v, k]| api::GroupVersionKind {
                    group: g.clone(),
                    version: v.clone(),
                    kind: k.clone(),
                    plural: String::new(),
                })
                .collect()
        };
        api::Bundle {
            csv_name: r.name.clone(),
            package_name: r.package.clone(),
            channel_name: r.channel.clone(),
            csv_json: if cleared {
                String::new()
            } else {
                d.csv_json.to_string()
            },
            object: if cleared {
                Vec::new()
            } else {
                d.objects.iter().map(Rope::to_string).collect()
            },
            bundle_path: d.image.clone(),
            provided_apis: gvks(&d.provided),
            required_apis: gvks(&d.required),
            version: d.version.clone(),
            skip_range: e.skip_range.clone(),
            dependencies: d
                .dependencies
                .iter()
                .map(|(t, v)| api::Dependency {
                    r#type: t.clone(),
                    value: v.clone(),
                })
                .collect(),
            properties: d
                .properties
                .iter()
                .map(|(t, v)| api::Property {
                    r#type: t.clone(),
                    value: v.clone(),
                })
                .collect(),
            replaces: replaces.to_string(),
            skips: skips.to_vec(),
            deprecation: d
                .deprecation
                .as_ref()
                .map(|m| api::Deprecation { message: m.clone() }),
        }
    }

    const CATALOG: &str = r#"---
schema: olm.package
name: p
defaultChannel: stable
---
schema: olm.channel
package: p
name: stable
entries:
- {name: p.v1.0.0}
- {name: p.v1.1.0, replaces: p.v1.0.0, skips: [p.v0.9.0, ""], skipRange: "<1.1.0"}
- {name: p.v1.2.0, replaces: p.v1.1.0}
---
schema: olm.bundle
package: p
name: p.v1.0.0
image: ""
properties:
- {type: olm.package, value: {packageName: p, version: 1.0.0}}
- {type: olm.csv.metadata, value: {displayName: P, description: "x"}}
---
schema: olm.bundle
package: p
name: p.v1.1.0
image: quay.io/p/b:1.1
properties:
- {type: olm.package, value: {packageName: p, version: 1.1.0}}
- {type: olm.gvk, value: {group: p.io, version: v1, kind: P}}
- {type: olm.gvk.required, value: {group: q.io, version: v1, kind: Q}}
- {type: olm.package.required, value: {packageName: q, versionRange: ">=1.0.0"}}
- {type: olm.bundle.object, value: {data: e30=}}
---
schema: olm.bundle
package: p
name: p.v1.2.0
image: quay.io/p/b:1.2
properties:
- {type: olm.package, value: {packageName: p, version: 1.2.0}}
---
schema: olm.deprecations
package: p
entries:
- {reference: {schema: olm.bundle, name: p.v1.2.0}, message: "use 2.x"}
"#;

    /// Byte for byte what prost writes for the generated message, for every bundle in both
    /// shapes: empty strings and fields left out, an empty skip and an empty object kept.
    #[test]
    fn encodes_as_the_generated_message_does() {
        let mut cfg = crate::fbc::decl::DeclarativeConfig::default();
        let problems =
            crate::fbc::load::parse_text(CATALOG, &Arc::from(Path::new("c.yaml")), &mut cfg);
        assert!(problems.is_empty(), "{problems:?}");
        let c = ServedCatalog::new(&cfg);
        let mut checked = 0;
        for (name, e) in &c.packages["p"].channels["stable"].entries {
            for shape in [Shape::Trimmed, Shape::Listed] {
                let r = BundleReply {
                    package: "p".into(),
                    channel: "stable".into(),
                    name: name.clone(),
                    entry: Some(e.clone()),
                    shape,
                };
                let want = message(&r).encode_to_vec();
                assert_eq!(r.encoded_len(), want.len(), "{name} {shape:?}");
                assert_eq!(r.encode_to_vec(), want, "{name} {shape:?}");
                assert_eq!(api::Bundle::decode(want.as_slice()).unwrap(), message(&r));
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
        assert!(BundleReply::default().encode_to_vec().is_empty());
    }
}
