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
//!   newDependencies: Hold                     # the same in v1
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

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::rawjson::{Out, Step, elements, is_array, is_object, members, string_member};

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

/// The longest maintenance window converted (its JSON text): a window is a few dozen bytes,
/// and one is read into a tree, which a long one would make many times its size.
pub const MAX_WINDOW: usize = 4096;

fn convert_window(w: &RawValue, to_v1: bool) -> Result<Value, String> {
    let text = w.get();
    if text.len() > MAX_WINDOW {
        return Err(format!(
            "a maintenance window of {} bytes is longer than {MAX_WINDOW} bytes",
            text.len()
        ));
    }
    let w: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if to_v1 {
        window_to_v1(&w)
    } else {
        window_to_alpha(&w)
    }
}

/// Writes `spec` (an object) in the other version: renamed keys, windows in the other form,
/// everything else as it is.
fn convert_spec(spec: &RawValue, to_v1: bool, out: &mut Out) -> Step {
    out.push(b"{")?;
    let mut first = true;
    members(spec, |k, v| {
        if !std::mem::take(&mut first) {
            out.push(b",")?;
        }
        let key = RENAMED
            .iter()
            .find_map(|(a, b)| {
                if to_v1 {
                    (k == *b).then_some(*a)
                } else {
                    (k == *a).then_some(*b)
                }
            })
            .unwrap_or(k);
        out.push_str(key)?;
        out.push(b":")?;
        if k != "maintenanceWindows" || !is_array(v) {
            return out.push(v.get().as_bytes());
        }
        out.push(b"[")?;
        let mut first = true;
        elements(v, |w| {
            if !std::mem::take(&mut first) {
                out.push(b",")?;
            }
            out.push_json(&convert_window(w, to_v1)?)
        })?;
        out.push(b"]")
    })?;
    out.push(b"}")
}

/// Writes the UpgradePolicy `obj` (JSON text) converted to `desired` (`olmctl.dev/v1` or
/// `olmctl.dev/v1alpha1`) into `out`, reading it one member at a time and keeping nothing but
/// the window being converted: members are copied as they are, except `apiVersion` and `spec`.
/// An object already at `desired` is copied unchanged.
pub fn convert_raw(obj: &RawValue, desired: &str, out: &mut Out) -> Step {
    let from = string_member(obj, "apiVersion").ok_or("the object has no apiVersion")?;
    for v in [from.as_str(), desired] {
        if v != V1 && v != V1ALPHA1 {
            return Err(format!(
                "unknown UpgradePolicy version {v:?} (known: {V1}, {V1ALPHA1})"
            ));
        }
    }
    if from == desired {
        return out.push(obj.get().as_bytes());
    }
    out.push(b"{")?;
    let mut first = true;
    members(obj, |k, v| {
        if !std::mem::take(&mut first) {
            out.push(b",")?;
        }
        out.push_str(k)?;
        out.push(b":")?;
        match k {
            "apiVersion" => out.push_str(desired),
            "spec" if is_object(v) => convert_spec(v, desired == V1, out),
            _ => out.push(v.get().as_bytes()),
        }
    })?;
    out.push(b"}")
}

/// Converts an UpgradePolicy object (JSON) to `desired` (`olmctl.dev/v1` or
/// `olmctl.dev/v1alpha1`); an object already at `desired` comes back unchanged.
pub fn convert(obj: &Value, desired: &str) -> Result<Value, String> {
    let text = serde_json::value::to_raw_value(obj).map_err(|e| e.to_string())?;
    let mut out = Out::new(usize::MAX, text.get().len());
    convert_raw(&text, desired, &mut out)?;
    serde_json::from_slice(&out.into_inner()).map_err(|e| e.to_string())
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
    fn members_are_copied_as_they_are_and_windows_are_bounded() {
        let obj: &RawValue = serde_json::from_str(
            r#"{"kind":"UpgradePolicy","x":[[], {"deep": [[[0]]]}, 1e400],"apiVersion":"olmctl.dev/v1alpha1","spec":{"soak":"1h","y":  [ 0 ]}}"#,
        )
        .expect("json");
        let mut out = Out::new(1 << 10, 0);
        convert_raw(obj, V1, &mut out).expect("converts");
        assert_eq!(
            String::from_utf8(out.into_inner()).expect("utf-8"),
            r#"{"kind":"UpgradePolicy","x":[[], {"deep": [[[0]]]}, 1e400],"apiVersion":"olmctl.dev/v1","spec":{"minAge":"1h","y":[ 0 ]}}"#
        );
        let long = format!("* 02:00+4h {}", "Z".repeat(MAX_WINDOW));
        let bad = json!({"apiVersion": V1ALPHA1, "spec": {"maintenanceWindows": [long]}});
        assert!(
            convert(&bad, V1)
                .expect_err("too long")
                .contains("longer than 4096 bytes")
        );
        // The answer's bound holds inside an object too.
        let windows =
            json!({"apiVersion": V1ALPHA1, "spec": {"maintenanceWindows": vec!["* 0+0"; 100]}});
        let text = serde_json::value::to_raw_value(&windows).expect("raw");
        let mut out = Out::new(2 * text.get().len(), 0);
        assert!(
            convert_raw(&text, V1, &mut out)
                .expect_err("grows")
                .contains("more than")
        );
        assert!(out.len() <= 2 * text.get().len());
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
            prop::option::of(prop::sample::select(vec!["Allow", "Hold"])),
            prop::option::of(prop::collection::vec(window(), 0..3)),
            prop::option::of(prop::sample::select(vec!["1s", "24h", "1h30m"])),
            prop::option::of(any::<bool>()),
            prop::option::of(prop::collection::btree_map(
                "[a-z]{1,5}",
                "[a-z0-9]{0,5}",
                0..3,
            )),
        )
            .prop_map(|(jump, crd, deps, windows, age, paused, labels)| {
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
                if let Some(d) = deps {
                    spec.insert("newDependencies".into(), json!(d));
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
