//! `olmctl.dev/v1alpha1` UpgradePolicies and their conversion to and from `v1` (the storage
//! version), for the operator's conversion webhook and for `gate evaluate --policy`.
//!
//! v1alpha1 is the first, deprecated shape:
//!
//! ```yaml
//! apiVersion: olmctl.dev/v1alpha1
//! kind: UpgradePolicy
//! spec:
//!   subscriptionSelector: {matchLabels: {}}   # v1 selector
//!   maxUpgrade: minor                         # v1 maxVersionJump
//!   crdChecks: Enforce                        # v1 crdSafety
//!   maintenanceWindows:                       # one string per window: DAYS START+DURATION [ZONE]
//!   - "Sat,Sun 02:00+4h Europe/Berlin"        # DAYS is `*` for every day
//!   soak: 24h                                 # v1 minAge
//!   paused: false
//! ```
//!
//! Both shapes hold the same information, so conversion is lossless both ways: v1 → v1alpha1 →
//! v1 and v1alpha1 → v1 → v1alpha1 give back the object (property-tested). Fields either shape
//! does not know are kept as they are (the API server prunes them by schema anyway), and
//! `metadata` and `status` are copied.

use serde_json::{Map, Value};

/// The group.
pub const GROUP: &str = "olmctl.dev";
/// `apiVersion` of the storage version.
pub const V1: &str = "olmctl.dev/v1";
/// `apiVersion` of the deprecated version.
pub const V1ALPHA1: &str = "olmctl.dev/v1alpha1";

/// Spec keys renamed between the versions: (v1, v1alpha1).
pub(crate) const RENAMED: [(&str, &str); 4] = [
    ("selector", "subscriptionSelector"),
    ("maxVersionJump", "maxUpgrade"),
    ("crdSafety", "crdChecks"),
    ("minAge", "soak"),
];

/// One v1 window, as its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowFields {
    /// `days` (empty: every day).
    pub days: Vec<String>,
    /// `start`, `HH:MM`.
    pub start: String,
    /// `duration`.
    pub duration: String,
    /// `timeZone`, when set.
    pub time_zone: Option<String>,
}

/// Parses a v1alpha1 window string `DAYS START+DURATION [ZONE]` (the values are checked later,
/// by the v1 reader).
pub fn parse_alpha_window(s: &str) -> Result<WindowFields, String> {
    let bad = || {
        format!(
            "invalid maintenance window {s:?}: write DAYS START+DURATION [ZONE], e.g. \"Sat,Sun 02:00+4h Europe/Berlin\" or \"* 22:00+90m\""
        )
    };
    let parts: Vec<&str> = s.split_whitespace().collect();
    let (days, when, zone) = match parts.as_slice() {
        [d, w] => (*d, *w, None),
        [d, w, z] => (*d, *w, Some(z.to_string())),
        _ => return Err(bad()),
    };
    let (start, duration) = when.split_once('+').ok_or_else(bad)?;
    if start.is_empty() || duration.is_empty() {
        return Err(bad());
    }
    let days = if days == "*" {
        Vec::new()
    } else {
        days.split(',').map(str::to_string).collect()
    };
    if days.iter().any(String::is_empty) {
        return Err(bad());
    }
    Ok(WindowFields {
        days,
        start: start.into(),
        duration: duration.into(),
        time_zone: zone,
    })
}

/// The v1alpha1 string of a window.
pub fn format_alpha_window(w: &WindowFields) -> String {
    let days = if w.days.is_empty() {
        "*".to_string()
    } else {
        w.days.join(",")
    };
    let mut s = format!("{days} {}+{}", w.start, w.duration);
    if let Some(z) = &w.time_zone {
        s.push(' ');
        s.push_str(z);
    }
    s
}

fn window_to_alpha(w: &Value) -> Result<Value, String> {
    let str_of = |k: &str| w.get(k).and_then(Value::as_str).map(str::to_string);
    let days = match w.get("days") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(d)) => d
            .iter()
            .map(|x| x.as_str().map(str::to_string).ok_or("days must be strings"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("maintenanceWindows[].days must be a list".into()),
    };
    let f = WindowFields {
        days,
        start: str_of("start").ok_or("maintenanceWindows[].start is required")?,
        duration: str_of("duration").ok_or("maintenanceWindows[].duration is required")?,
        time_zone: str_of("timeZone"),
    };
    // A value the string form cannot carry would not come back: refuse it.
    let text = format_alpha_window(&f);
    if parse_alpha_window(&text).as_ref() != Ok(&f) {
        return Err(format!(
            "maintenance window {text:?} cannot be written in v1alpha1 (values with spaces, commas or '+')"
        ));
    }
    Ok(Value::String(text))
}

fn window_to_v1(w: &Value) -> Result<Value, String> {
    let s = w
        .as_str()
        .ok_or("v1alpha1 maintenanceWindows must be strings")?;
    let f = parse_alpha_window(s)?;
    let mut m = Map::new();
    if !f.days.is_empty() {
        m.insert(
            "days".into(),
            Value::Array(f.days.into_iter().map(Value::String).collect()),
        );
    }
    m.insert("start".into(), Value::String(f.start));
    m.insert("duration".into(), Value::String(f.duration));
    if let Some(z) = f.time_zone {
        m.insert("timeZone".into(), Value::String(z));
    }
    Ok(Value::Object(m))
}

fn convert_spec(spec: &Map<String, Value>, to_v1: bool) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (k, v) in spec {
        let key = RENAMED
            .iter()
            .find_map(|(a, b)| {
                if to_v1 {
                    (k == b).then_some(*a)
                } else {
                    (k == a).then_some(*b)
                }
            })
            .unwrap_or(k);
        let value = if k == "maintenanceWindows" {
            match v {
                Value::Array(ws) => Value::Array(
                    ws.iter()
                        .map(|w| {
                            if to_v1 {
                                window_to_v1(w)
                            } else {
                                window_to_alpha(w)
                            }
                        })
                        .collect::<Result<_, _>>()?,
                ),
                other => other.clone(),
            }
        } else {
            v.clone()
        };
        out.insert(key.to_string(), value);
    }
    Ok(out)
}

/// Converts an UpgradePolicy object (JSON) to `desired` (`olmctl.dev/v1` or
/// `olmctl.dev/v1alpha1`); an object already at `desired` comes back unchanged.
pub fn convert(obj: &Value, desired: &str) -> Result<Value, String> {
    let from = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or("the object has no apiVersion")?;
    for v in [from, desired] {
        if v != V1 && v != V1ALPHA1 {
            return Err(format!(
                "unknown UpgradePolicy version {v:?} (known: {V1}, {V1ALPHA1})"
            ));
        }
    }
    let mut out = obj.clone();
    if from == desired {
        return Ok(out);
    }
    if let Some(Value::Object(spec)) = obj.get("spec") {
        out["spec"] = Value::Object(convert_spec(spec, desired == V1)?);
    }
    out["apiVersion"] = Value::String(desired.into());
    Ok(out)
}

/// Answers a `apiextensions.k8s.io/v1` ConversionReview: converts every object of the request
/// to `desiredAPIVersion`. A failure is a `Failure` result naming the object; the response's
/// `uid` is the request's.
pub fn review(req: &Value) -> Value {
    let r = &req["request"];
    let uid = r["uid"].clone();
    let desired = r["desiredAPIVersion"].as_str().unwrap_or_default();
    let converted: Result<Vec<Value>, String> = match r["objects"].as_array() {
        Some(objs) => objs
            .iter()
            .map(|o| {
                convert(o, desired).map_err(|e| {
                    let name = o["metadata"]["name"].as_str().unwrap_or("?");
                    let ns = o["metadata"]["namespace"].as_str().unwrap_or_default();
                    format!("UpgradePolicy {ns}/{name}: {e}")
                })
            })
            .collect(),
        None => Err("the ConversionReview has no request.objects".into()),
    };
    let response = match converted {
        Ok(objects) => serde_json::json!({
            "uid": uid,
            "convertedObjects": objects,
            "result": {"status": "Success"},
        }),
        Err(message) => serde_json::json!({
            "uid": uid,
            "convertedObjects": [],
            "result": {"status": "Failure", "message": message},
        }),
    };
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": response,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_example_converts_both_ways() {
        let v1 = json!({
            "apiVersion": V1, "kind": "UpgradePolicy",
            "metadata": {"name": "default", "namespace": "acme-system"},
            "spec": {
                "selector": {"matchLabels": {}},
                "maxVersionJump": "minor",
                "crdSafety": "Enforce",
                "maintenanceWindows": [
                    {"days": ["Sat", "Sun"], "start": "02:00", "duration": "4h", "timeZone": "Europe/Berlin"},
                    {"start": "22:00", "duration": "90m"}
                ],
                "minAge": "24h",
                "paused": false
            },
            "status": {"conditions": []}
        });
        let alpha = convert(&v1, V1ALPHA1).expect("to v1alpha1");
        assert_eq!(
            alpha,
            json!({
                "apiVersion": V1ALPHA1, "kind": "UpgradePolicy",
                "metadata": {"name": "default", "namespace": "acme-system"},
                "spec": {
                    "subscriptionSelector": {"matchLabels": {}},
                    "maxUpgrade": "minor",
                    "crdChecks": "Enforce",
                    "maintenanceWindows": ["Sat,Sun 02:00+4h Europe/Berlin", "* 22:00+90m"],
                    "soak": "24h",
                    "paused": false
                },
                "status": {"conditions": []}
            })
        );
        assert_eq!(convert(&alpha, V1).expect("back"), v1);
        assert_eq!(convert(&v1, V1).expect("same"), v1);
        assert!(convert(&v1, "olmctl.dev/v2").is_err());
        let bad = json!({"apiVersion": V1ALPHA1, "spec": {"maintenanceWindows": ["Sat 02:00"]}});
        assert!(
            convert(&bad, V1)
                .expect_err("no duration")
                .contains("DAYS START+DURATION")
        );
    }

    #[test]
    fn reviews_answer_with_the_request_uid() {
        let req = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "705ab4f5", "desiredAPIVersion": V1, "objects": [
                {"apiVersion": V1ALPHA1, "kind": "UpgradePolicy", "metadata": {"name": "a"},
                 "spec": {"maxUpgrade": "patch"}}
            ]}
        });
        let resp = review(&req);
        assert_eq!(resp["response"]["uid"], "705ab4f5");
        assert_eq!(resp["response"]["result"]["status"], "Success");
        assert_eq!(
            resp["response"]["convertedObjects"][0]["spec"],
            json!({"maxVersionJump": "patch"})
        );
        let mut bad = req.clone();
        bad["request"]["objects"][0]["spec"]["maintenanceWindows"] = json!(["nope"]);
        let resp = review(&bad);
        assert_eq!(resp["response"]["result"]["status"], "Failure");
        assert!(
            resp["response"]["result"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("UpgradePolicy /a"))
        );
    }

    fn window() -> impl Strategy<Value = Value> {
        let day = prop::sample::select(vec!["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
        (
            prop::collection::vec(day, 0..4),
            (0u8..24, 0u8..60),
            prop::sample::select(vec!["30m", "4h", "1h30m", "90s"]),
            prop::option::of(prop::sample::select(vec![
                "UTC",
                "Europe/Berlin",
                "America/New_York",
            ])),
        )
            .prop_map(|(days, (h, m), d, tz)| {
                let mut w = json!({"start": format!("{h:02}:{m:02}"), "duration": d});
                if !days.is_empty() {
                    w["days"] = json!(days);
                }
                if let Some(tz) = tz {
                    w["timeZone"] = json!(tz);
                }
                w
            })
    }

    /// v1 UpgradePolicies with any of the spec fields set.
    pub(in crate::gate) fn v1_policy() -> impl Strategy<Value = Value> {
        (
            prop::option::of(prop::sample::select(vec!["patch", "minor", "major"])),
            prop::option::of(prop::sample::select(vec!["Enforce", "Warn", "Ignore"])),
            prop::option::of(prop::collection::vec(window(), 0..3)),
            prop::option::of(prop::sample::select(vec!["1s", "24h", "1h30m"])),
            prop::option::of(any::<bool>()),
            prop::option::of(prop::collection::btree_map(
                "[a-z]{1,5}",
                "[a-z0-9]{0,5}",
                0..3,
            )),
        )
            .prop_map(|(jump, crd, windows, age, paused, labels)| {
                let mut spec = Map::new();
                if let Some(l) = labels {
                    spec.insert("selector".into(), json!({"matchLabels": l}));
                }
                if let Some(j) = jump {
                    spec.insert("maxVersionJump".into(), json!(j));
                }
                if let Some(c) = crd {
                    spec.insert("crdSafety".into(), json!(c));
                }
                if let Some(w) = windows {
                    spec.insert("maintenanceWindows".into(), json!(w));
                }
                if let Some(a) = age {
                    spec.insert("minAge".into(), json!(a));
                }
                if let Some(p) = paused {
                    spec.insert("paused".into(), json!(p));
                }
                json!({"apiVersion": V1, "kind": "UpgradePolicy",
                       "metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
            })
    }

    proptest! {
        /// v1 -> v1alpha1 -> v1 and v1alpha1 -> v1 -> v1alpha1 give the object back (the policy
        /// reader reads both forms as the same policy: `policy::tests`).
        #[test]
        fn conversion_round_trips(v1 in v1_policy()) {
            let alpha = convert(&v1, V1ALPHA1).expect("to v1alpha1");
            prop_assert_eq!(alpha["apiVersion"].as_str(), Some(V1ALPHA1));
            let back = convert(&alpha, V1).expect("to v1");
            prop_assert_eq!(&back, &v1);
            let again = convert(&back, V1ALPHA1).expect("to v1alpha1 again");
            prop_assert_eq!(&again, &alpha);
        }
    }
}
