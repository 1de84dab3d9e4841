//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded to JSON for the
//! few kinds that clients send that way in the tests.
//!
//! kubectl's typed clients (`kubectl create namespace`, `kubectl auth can-i`, which posts a
//! `SelfSubjectAccessReview` or, with `--list`, a `SelfSubjectRulesReview`) send protobuf
//! bodies (`Content-Type: application/vnd.kubernetes.protobuf`) and accept JSON answers
//! (`Accept: application/vnd.kubernetes.protobuf,application/json`: the API answers JSON).
//! client-go falls back from a 415 only for CBOR (`rest/client.go ::
//! requestClientContentConfigProvider.UnsupportedMediaType`), so a server must read them.
//!
//! The envelope is apimachinery's (`runtime/serializer/protobuf/protobuf.go ::
//! Serializer.Decode`): the magic `k8s\0`, then a `runtime.Unknown` {1: typeMeta {1:
//! apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}; `raw` is the kind's
//! message, with the field numbers of k8s.io/api `generated.proto`. Only the kinds of
//! [`schema_of`] are decoded, and of their messages only the fields listed; any other kind is
//! refused with 415, naming the double's limit (a real apiserver reads protobuf for every
//! built-in kind; custom resources have no protobuf and get the same 415 there,
//! `negotiation.NegotiateInputSerializer`).

use serde_json::{Map, Value, json};

/// The protobuf media type.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// `protoEncodingPrefix`.
const MAGIC: &[u8] = b"k8s\x00";

/// How a field is read.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    StrList,
    StrMap,
    Msg(&'static [F]),
}

/// A field: number, JSON name, type.
type F = (u64, &'static str, Ty);

/// `meta/v1 ObjectMeta` (the fields a client sets).
const OBJECT_META: &[F] = &[
    (1, "name", Ty::Str),
    (2, "generateName", Ty::Str),
    (3, "namespace", Ty::Str),
    (6, "resourceVersion", Ty::Str),
    (11, "labels", Ty::StrMap),
    (12, "annotations", Ty::StrMap),
    (14, "finalizers", Ty::StrList),
];

/// `authorization/v1 ResourceAttributes` (without the field and label selector attributes).
const RESOURCE_ATTRIBUTES: &[F] = &[
    (1, "namespace", Ty::Str),
    (2, "verb", Ty::Str),
    (3, "group", Ty::Str),
    (4, "version", Ty::Str),
    (5, "resource", Ty::Str),
    (6, "subresource", Ty::Str),
    (7, "name", Ty::Str),
];

const NON_RESOURCE_ATTRIBUTES: &[F] = &[(1, "path", Ty::Str), (2, "verb", Ty::Str)];

const SSAR_SPEC: &[F] = &[
    (1, "resourceAttributes", Ty::Msg(RESOURCE_ATTRIBUTES)),
    (2, "nonResourceAttributes", Ty::Msg(NON_RESOURCE_ATTRIBUTES)),
];

const SSAR: &[F] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "spec", Ty::Msg(SSAR_SPEC)),
];

const SSRR: &[F] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "spec", Ty::Msg(&[(1, "namespace", Ty::Str)])),
];

const NAMESPACE: &[F] = &[
    (1, "metadata", Ty::Msg(OBJECT_META)),
    (2, "spec", Ty::Msg(&[(1, "finalizers", Ty::StrList)])),
];

/// The message of a kind this double decodes.
fn schema_of(api_version: &str, kind: &str) -> Option<&'static [F]> {
    match (api_version, kind) {
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => Some(SSAR),
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => Some(SSRR),
        ("v1", "Namespace") => Some(NAMESPACE),
        _ => None,
    }
}

/// Whether a `Content-Type` is protobuf (parameters ignored).
pub fn is_protobuf(content_type: &str) -> bool {
    content_type.split(';').next().unwrap_or_default().trim() == CONTENT_TYPE
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.at).ok_or("truncated varint")?;
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.b.len());
        let end = end.ok_or("truncated field")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next field: number and value (the bytes of a length-delimited one; numbers are
    /// skipped: no field read here is a number).
    fn field(&mut self) -> Result<Option<(u64, Wire<'a>)>, String> {
        if self.at >= self.b.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let v = match key & 7 {
            0 => {
                self.varint()?;
                Wire::Varint
            }
            1 => {
                self.bytes(8)?;
                Wire::Fixed
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|e| e.to_string())?;
                Wire::Len(self.bytes(n)?)
            }
            5 => {
                self.bytes(4)?;
                Wire::Fixed
            }
            t => return Err(format!("unsupported wire type {t}")),
        };
        Ok(Some((key >> 3, v)))
    }
}

enum Wire<'a> {
    Varint,
    Fixed,
    Len(&'a [u8]),
}

fn text(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|e| e.to_string())
}

/// A message as JSON, Go's `omitempty` way: empty strings, lists, maps and messages left out.
fn message(b: &[u8], fields: &[F]) -> Result<Value, String> {
    let mut out = Map::new();
    let mut r = Reader { b, at: 0 };
    while let Some((num, w)) = r.field()? {
        let Some((_, name, ty)) = fields.iter().find(|f| f.0 == num) else {
            continue;
        };
        let name = name.to_string();
        match (ty, w) {
            (Ty::Str, Wire::Len(b)) => {
                let s = text(b)?;
                if !s.is_empty() {
                    out.insert(name, json!(s));
                }
            }
            (Ty::StrList, Wire::Len(b)) => {
                let l = out.entry(name).or_insert_with(|| json!([]));
                if let Some(a) = l.as_array_mut() {
                    a.push(json!(text(b)?));
                }
            }
            (Ty::StrMap, Wire::Len(b)) => {
                let e = message(b, &[(1, "k", Ty::Str), (2, "v", Ty::Str)])?;
                let m = out.entry(name).or_insert_with(|| json!({}));
                m[e["k"].as_str().unwrap_or_default()] = json!(e["v"].as_str().unwrap_or_default());
            }
            (Ty::Msg(sub), Wire::Len(b)) => {
                let v = message(b, sub)?;
                if v.as_object().is_some_and(|m| !m.is_empty()) {
                    out.insert(name, v);
                }
            }
            _ => return Err(format!("field {num} ({name}) has an unexpected wire type")),
        }
    }
    Ok(Value::Object(out))
}

/// A decode failure: `Err(message)` for a 400, or the kind is not modelled (415).
#[derive(Debug)]
pub enum Error {
    /// The bytes are not a protobuf object (400 `BadRequest`).
    Malformed(String),
    /// A kind this double does not decode (415).
    Unsupported(String),
}

/// A protobuf body (`k8s\0` + `runtime.Unknown`) as the JSON object it encodes.
pub fn decode(body: &[u8]) -> Result<Value, Error> {
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| Error::Malformed("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]".into()))?;
    let unknown = message_raw(rest).map_err(Error::Malformed)?;
    let (api_version, kind, raw) = unknown;
    if api_version.is_empty() || kind.is_empty() {
        return Err(Error::Malformed(
            "Object 'Kind' is missing in protobuf body".into(),
        ));
    }
    let schema = schema_of(&api_version, &kind).ok_or_else(|| {
        Error::Unsupported(format!(
            "{kind} in version \"{api_version}\" as protobuf (the API double decodes protobuf only for Namespace, SelfSubjectAccessReview and SelfSubjectRulesReview)"
        ))
    })?;
    let mut v = message(&raw, schema).map_err(Error::Malformed)?;
    v["apiVersion"] = json!(api_version);
    v["kind"] = json!(kind);
    Ok(v)
}

/// `runtime.Unknown`: apiVersion, kind, raw.
fn message_raw(b: &[u8]) -> Result<(String, String, Vec<u8>), String> {
    let mut r = Reader { b, at: 0 };
    let (mut av, mut kind, mut raw) = (String::new(), String::new(), Vec::new());
    while let Some((num, w)) = r.field()? {
        match (num, w) {
            (1, Wire::Len(tm)) => {
                let t = message(tm, &[(1, "apiVersion", Ty::Str), (2, "kind", Ty::Str)])?;
                av = t["apiVersion"].as_str().unwrap_or_default().to_string();
                kind = t["kind"].as_str().unwrap_or_default().to_string();
            }
            (2, Wire::Len(b)) => raw = b.to_vec(),
            (3, Wire::Len(e)) if !e.is_empty() => {
                return Err(format!("unsupported contentEncoding {}", text(e)?));
            }
            _ => {}
        }
    }
    Ok((av, kind, raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_auth_can_i_body_decodes() {
        // `kubectl auth can-i get pods` (kubectl 1.32.5, -v=9).
        let body: &[u8] = &[
            0x6b, 0x38, 0x73, 0x00, 0x0a, 0x32, 0x0a, 0x17, 0x61, 0x75, 0x74, 0x68, 0x6f, 0x72,
            0x69, 0x7a, 0x61, 0x74, 0x69, 0x6f, 0x6e, 0x2e, 0x6b, 0x38, 0x73, 0x2e, 0x69, 0x6f,
            0x2f, 0x76, 0x31, 0x12, 0x17, 0x53, 0x65, 0x6c, 0x66, 0x53, 0x75, 0x62, 0x6a, 0x65,
            0x63, 0x74, 0x41, 0x63, 0x63, 0x65, 0x73, 0x73, 0x52, 0x65, 0x76, 0x69, 0x65, 0x77,
            0x12, 0x3c, 0x0a, 0x10, 0x0a, 0x00, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00,
            0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x1e, 0x0a, 0x1c, 0x0a, 0x07, 0x64, 0x65,
            0x66, 0x61, 0x75, 0x6c, 0x74, 0x12, 0x03, 0x67, 0x65, 0x74, 0x1a, 0x00, 0x22, 0x00,
            0x2a, 0x04, 0x70, 0x6f, 0x64, 0x73, 0x32, 0x00, 0x3a, 0x00, 0x1a, 0x08, 0x08, 0x00,
            0x12, 0x00, 0x1a, 0x00, 0x20, 0x00, 0x1a, 0x00, 0x22, 0x00,
        ];
        let v = decode(body).expect("decodes");
        assert_eq!(
            v,
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                   "spec": {"resourceAttributes": {"namespace": "default", "verb": "get",
                                                   "resource": "pods"}}})
        );
        assert!(matches!(
            decode(b"{\"kind\":\"x\"}"),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn other_kinds_are_refused() {
        // An Unknown with typeMeta {apiVersion: "v1", kind: "Pod"} and an empty raw.
        let mut b = b"k8s\x00".to_vec();
        b.extend_from_slice(&[
            0x0a, 0x09, 0x0a, 0x02, b'v', b'1', 0x12, 0x03, b'P', b'o', b'd',
        ]);
        assert!(matches!(decode(&b), Err(Error::Unsupported(_))));
    }
}
