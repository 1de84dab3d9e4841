//! The operator's `apiextensions.k8s.io/v1` ConversionReview: read into typed fields, as the
//! API server's types declare them (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1
//! types.go :: ConversionRequest: `uid` is a `types.UID`, a string; `desiredAPIVersion` a
//! string; `objects` raw objects), and answered one object at a time
//! ([`convert_raw`](super::convert::convert_raw)). Nothing of the review is held but its text
//! and the answer being written, which has a bound ([`max_answer`]): what the review costs is
//! a small multiple of its size, whatever it holds.
//!
//! A body that is not a review is refused as controller-runtime's conversion webhook refuses
//! it (pkg/webhook/conversion/conversion.go :: webhook.ServeHTTP: a body its JSON decoder
//! cannot read into a ConversionReview, or one without `request`, is a 400). A conversion that
//! fails is a `Failure` result naming the object (HTTP 200), as the API server expects
//! (types.go :: ConversionResponse).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::convert::convert_raw;
use super::rawjson::{Out, Step, deeper_than, elements, members, string_member};

/// The deepest nesting read: Go's `encoding/json` refuses deeper text (encoding/json
/// scanner.go :: maxNestingDepth), so the API server never sends it and controller-runtime's
/// decoder would refuse it.
pub const MAX_DEPTH: usize = 10_000;

/// The largest answer to a review of `len` bytes: twice its size and 4 KiB. A converted
/// object is about the size of the original (a few renamed keys; v1 windows are objects where
/// v1alpha1's are strings); a review whose answer would be larger is a `Failure`.
pub const fn max_answer(len: usize) -> usize {
    len.saturating_mul(2).saturating_add(4 << 10)
}

/// A review that is refused (HTTP 400): what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAReview(pub String);

impl std::fmt::Display for NotAReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a ConversionReview: {}", self.0)
    }
}

impl std::error::Error for NotAReview {}

fn string_or_null<'de, D: serde::Deserializer<'de>>(
    d: D,
    field: &'static str,
) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d).map_err(|_| {
        serde::de::Error::custom(format!(
            "request.{field} is not a string (the API server sends a string)"
        ))
    })
}

#[derive(Deserialize)]
struct Review<'a> {
    #[serde(borrow)]
    request: Option<Request<'a>>,
}

/// A missing or `null` string is empty, as Go's decoder leaves it.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(default, deserialize_with = "uid")]
    uid: Option<String>,
    #[serde(rename = "desiredAPIVersion", default, deserialize_with = "desired")]
    desired: Option<String>,
    #[serde(borrow, default)]
    objects: Option<&'a RawValue>,
}

fn uid<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string_or_null(d, "uid")
}

fn desired<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    string_or_null(d, "desiredAPIVersion")
}

/// `namespace/name` of an object, for a message.
fn name_of(obj: &RawValue) -> String {
    let mut meta = None;
    let _ = members(obj, |k, v| {
        if k == "metadata" {
            meta = Some(v);
        }
        Ok(())
    });
    let get = |k| meta.and_then(|m| string_member(m, k));
    format!(
        "{}/{}",
        get("namespace").unwrap_or_default(),
        get("name").unwrap_or_else(|| "?".into())
    )
}

/// Answers the ConversionReview `body`: every object of its request converted to its
/// `desiredAPIVersion`, the response's `uid` the request's. A conversion that fails, or an
/// answer that would pass [`max_answer`], is a `Failure` result naming the object.
pub fn answer(body: &[u8]) -> Result<Vec<u8>, NotAReview> {
    let text = std::str::from_utf8(body).map_err(|e| NotAReview(format!("not UTF-8: {e}")))?;
    if deeper_than(body, MAX_DEPTH) {
        return Err(NotAReview(format!(
            "nested more than {MAX_DEPTH} levels deep (Go's encoding/json reads no deeper)"
        )));
    }
    let review: Review = serde_json::from_str(text).map_err(|e| NotAReview(e.to_string()))?;
    let request = review
        .request
        .ok_or_else(|| NotAReview("it has no request".into()))?;
    let mut out = Out::new(max_answer(body.len()), body.len() + 256);
    let head = |out: &mut Out| -> Step {
        out.push(
            br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":"#,
        )?;
        out.push_str(request.uid.as_deref().unwrap_or_default())?;
        out.push(br#","convertedObjects":["#)
    };
    let desired = request.desired.as_deref().unwrap_or_default();
    let converted = head(&mut out).and_then(|()| {
        let mut first = true;
        let objects = request
            .objects
            .ok_or("the ConversionReview has no request.objects")?;
        let listed = elements(objects, |o| {
            if !std::mem::take(&mut first) {
                out.push(b",")?;
            }
            convert_raw(o, desired, &mut out)
                .map_err(|e| format!("UpgradePolicy {}: {e}", name_of(o)))
        })?;
        if !listed {
            return Err("the ConversionReview has no request.objects".into());
        }
        out.push(br#"],"result":{"status":"Success"}}}"#)
    });
    if let Err(message) = converted {
        // Without objects; about the size of the uid and the message, both parts of the review.
        drop(out);
        let mut failure = Out::new(usize::MAX, 0);
        let _ = head(&mut failure);
        failure.push_unbounded(br#"],"result":{"status":"Failure","message":"#);
        let _ = failure.push_str(&message);
        failure.push_unbounded(b"}}}");
        return Ok(failure.into_inner());
    }
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::super::convert::{V1, V1ALPHA1};
    use super::*;
    use serde_json::{Value, json};

    fn answered(req: &Value) -> Value {
        let body = serde_json::to_vec(req).expect("json");
        serde_json::from_slice(&answer(&body).expect("answered")).expect("json")
    }

    #[test]
    fn reviews_answer_with_the_request_uid() {
        let req = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "705ab4f5", "desiredAPIVersion": V1, "objects": [
                {"apiVersion": V1ALPHA1, "kind": "UpgradePolicy", "metadata": {"name": "a"},
                 "spec": {"maxUpgrade": "patch"}},
                {"apiVersion": V1, "kind": "UpgradePolicy", "metadata": {"name": "b"}}
            ]}
        });
        let resp = answered(&req);
        assert_eq!(resp["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(resp["kind"], "ConversionReview");
        assert_eq!(resp["response"]["uid"], "705ab4f5");
        assert_eq!(resp["response"]["result"]["status"], "Success");
        assert_eq!(
            resp["response"]["convertedObjects"][0]["spec"],
            json!({"maxVersionJump": "patch"})
        );
        assert_eq!(
            resp["response"]["convertedObjects"][1],
            req["request"]["objects"][1]
        );
        let mut bad = req.clone();
        bad["request"]["objects"][0]["spec"]["maintenanceWindows"] = json!(["nope"]);
        let resp = answered(&bad);
        assert_eq!(resp["response"]["result"]["status"], "Failure");
        assert_eq!(resp["response"]["uid"], "705ab4f5");
        assert_eq!(resp["response"]["convertedObjects"], json!([]));
        assert!(
            resp["response"]["result"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("UpgradePolicy /a"))
        );
        let mut none = req.clone();
        none["request"]
            .as_object_mut()
            .expect("object")
            .remove("objects");
        assert_eq!(
            answered(&none)["response"]["result"]["message"],
            "the ConversionReview has no request.objects"
        );
    }

    #[test]
    fn a_uid_that_is_not_a_string_and_deep_nesting_are_refused() {
        let uid = format!(
            r#"{{"request":{{"uid":[{}[]],"desiredAPIVersion":"olmctl.dev/v1","objects":[]}}}}"#,
            "[],".repeat(1000)
        );
        let e = answer(uid.as_bytes()).expect_err("refused");
        assert!(e.to_string().contains("request.uid is not a string"), "{e}");
        for uid in ["0", "{}", "true"] {
            let body = format!(r#"{{"request":{{"uid":{uid},"objects":[]}}}}"#);
            assert!(answer(body.as_bytes()).is_err(), "{uid}");
        }
        let body = br#"{"request":{"uid":null,"objects":[]}}"#;
        let resp: Value =
            serde_json::from_slice(&answer(body).expect("null is empty")).expect("json");
        assert_eq!(resp["response"]["uid"], "");
        let deep = format!(
            r#"{{"request":{{"uid":"u","objects":[{}{}]}}}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        assert!(
            answer(deep.as_bytes())
                .expect_err("deep")
                .to_string()
                .contains("10000 levels")
        );
        assert!(answer(br#"{"kind":"ConversionReview"}"#).is_err());
        assert!(answer(b"{not json").is_err());
    }

    #[test]
    fn the_answer_stays_within_twice_the_review() {
        let objects = vec![
            json!({"apiVersion": V1ALPHA1, "metadata": {"name": "w", "namespace": "n"}, "spec": {"maintenanceWindows": vec!["* 0+0"; 1000]}}),
        ];
        let req = json!({"request": {"uid": "u", "desiredAPIVersion": V1, "objects": objects}});
        let body = serde_json::to_vec(&req).expect("json");
        let got = answer(&body).expect("answered");
        assert!(got.len() <= max_answer(body.len()));
        let resp: Value = serde_json::from_slice(&got).expect("json");
        assert_eq!(resp["response"]["result"]["status"], "Failure");
        let m = resp["response"]["result"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            m.starts_with("UpgradePolicy n/w: the answer would be more than"),
            "{m}"
        );
        // Many objects at the desired version come back as they are.
        let objects = vec![json!({"apiVersion": V1}); 10_000];
        let req = json!({"request": {"uid": "u", "desiredAPIVersion": V1, "objects": objects}});
        let resp = answered(&req);
        assert_eq!(resp["response"]["convertedObjects"], json!(objects));
    }
}
