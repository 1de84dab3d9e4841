//! The `UpgradePolicy` document (`olmctl.dev/v1`), as `olmctl gate evaluate --policy` reads it
//! and as the operator's CRD stores it:
//!
//! ```yaml
//! apiVersion: olmctl.dev/v1
//! kind: UpgradePolicy
//! metadata: {name: default, namespace: acme-system}
//! spec:
//!   selector: {matchLabels: {}}   # Subscriptions of this namespace; empty selects all
//!   clusterExtensionSelector:     # OLM v1 ClusterExtensions installing into this namespace
//!     matchLabels: {}             # (absent: none; empty: all)
//!   maxVersionJump: minor         # patch | minor | major (default major: no limit)
//!   crdSafety: Enforce            # Enforce (default) | Warn | Ignore
//!   newDependencies: Allow        # Allow (default) | Hold: a plan that installs a package
//!                                 # the namespace did not have (OLM pulled it in)
//!   maintenanceWindows:           # empty: any time
//!   - days: [Sat, Sun]
//!     start: "02:00"
//!     duration: 4h
//!     timeZone: Europe/Berlin
//!   minAge: 24h
//!   paused: false
//! ```
//!
//! Keys are matched exactly and unknown keys are errors (a misspelt `maintenanceWindow` must not
//! silently mean "any time"); every error names the line and column.

use std::collections::BTreeMap;

use jiff::SignedDuration;

use super::convert::{RENAMED, V1, V1ALPHA1, parse_alpha_window};
use super::jump::Jump;
use super::window::{Window, parse_duration};
use crate::fbc::node::{Node, Pos, Value};

/// What to do with CRD safety findings the upgrade introduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrdSafety {
    /// Hold the plan.
    Enforce,
    /// Approve, reporting the findings.
    Warn,
    /// Do not check.
    Ignore,
}

/// What to do with a plan that installs a package the namespace did not have: a dependency
/// OLM's resolver pulled in, for which the plan's Subscription step creates a Subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewDependencies {
    /// Approve, reporting the dependency (GATE022).
    Allow,
    /// Hold the plan (GATE021).
    Hold,
}

/// A label selector requirement (`matchExpressions[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values (`In`, `NotIn`).
    pub values: Vec<String>,
}

/// A Kubernetes label selector; empty selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// `matchLabels`.
    pub match_labels: BTreeMap<String, String>,
    /// `matchExpressions`.
    pub match_expressions: Vec<Requirement>,
}

impl Selector {
    /// Whether `labels` match.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let v = labels.get(&r.key);
                match r.operator.as_str() {
                    "In" => v.is_some_and(|v| r.values.contains(v)),
                    "NotIn" => v.is_none_or(|v| !r.values.contains(v)),
                    "Exists" => v.is_some(),
                    _ => v.is_none(),
                }
            })
    }
}

/// A parsed policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `spec.selector`.
    pub selector: Selector,
    /// `spec.clusterExtensionSelector`: the OLM v1 ClusterExtensions the policy governs
    /// (`None`: none; an empty selector: every ClusterExtension installing into the policy's
    /// namespace).
    pub cluster_extension_selector: Option<Selector>,
    /// `spec.maxVersionJump`.
    pub max_version_jump: Jump,
    /// `spec.crdSafety`.
    pub crd_safety: CrdSafety,
    /// `spec.newDependencies`.
    pub new_dependencies: NewDependencies,
    /// `spec.maintenanceWindows`.
    pub windows: Vec<Window>,
    /// `spec.minAge`.
    pub min_age: Option<SignedDuration>,
    /// `spec.paused`.
    pub paused: bool,
}

/// A policy error at a place of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

fn err(pos: Pos, message: impl Into<String>) -> PolicyError {
    PolicyError {
        pos,
        message: message.into(),
    }
}

/// The entries of a map node, refusing keys outside `allowed` (path names the map).
fn map<'a>(
    n: &'a Node,
    path: &str,
    allowed: &[&str],
) -> Result<BTreeMap<&'a str, &'a Node>, PolicyError> {
    let Value::Map(entries) = &n.value else {
        return Err(err(
            n.pos,
            format!("{path} must be a mapping, found {}", n.kind()),
        ));
    };
    let mut out = BTreeMap::new();
    for e in entries {
        if !allowed.contains(&e.key.as_str()) {
            return Err(err(
                e.key_pos,
                format!(
                    "unknown field {path}.{} (known: {})",
                    e.key,
                    allowed.join(", ")
                ),
            ));
        }
        if out.insert(e.key.as_str(), &e.value).is_some() {
            return Err(err(e.key_pos, format!("{path}.{} is set twice", e.key)));
        }
    }
    Ok(out)
}

fn string<'a>(n: &'a Node, path: &str) -> Result<&'a str, PolicyError> {
    match &n.value {
        Value::Str(s) => Ok(s),
        _ => Err(err(
            n.pos,
            format!("{path} must be a string, found {}", n.kind()),
        )),
    }
}

fn list<'a>(n: &'a Node, path: &str) -> Result<&'a [Node], PolicyError> {
    match &n.value {
        Value::Seq(items) => Ok(items),
        Value::Null => Ok(&[]),
        _ => Err(err(
            n.pos,
            format!("{path} must be a list, found {}", n.kind()),
        )),
    }
}

/// Reads the label selector at `path` (`spec.selector`, `spec.clusterExtensionSelector`, or a
/// ClusterExtension's `spec.source.catalog.selector`).
pub fn selector(n: &Node, path: &str) -> Result<Selector, PolicyError> {
    let m = map(n, path, &["matchLabels", "matchExpressions"])?;
    let mut s = Selector::default();
    if let Some(l) = m.get("matchLabels").filter(|l| l.value != Value::Null) {
        for (k, v) in map_any(l, &format!("{path}.matchLabels"))? {
            s.match_labels.insert(
                k.to_string(),
                string(v, &format!("{path}.matchLabels.{k}"))?.to_string(),
            );
        }
    }
    if let Some(x) = m.get("matchExpressions") {
        for (i, r) in list(x, &format!("{path}.matchExpressions"))?
            .iter()
            .enumerate()
        {
            let path = format!("{path}.matchExpressions[{i}]");
            let rm = map(r, &path, &["key", "operator", "values"])?;
            let key = rm
                .get("key")
                .ok_or_else(|| err(r.pos, format!("{path}.key is required")))?;
            let op = rm
                .get("operator")
                .ok_or_else(|| err(r.pos, format!("{path}.operator is required")))?;
            let operator = string(op, &format!("{path}.operator"))?.to_string();
            if !["In", "NotIn", "Exists", "DoesNotExist"].contains(&operator.as_str()) {
                return Err(err(
                    op.pos,
                    format!("{path}.operator must be In, NotIn, Exists or DoesNotExist"),
                ));
            }
            let values = match rm.get("values") {
                Some(v) => list(v, &format!("{path}.values"))?
                    .iter()
                    .map(|x| string(x, &format!("{path}.values[]")).map(str::to_string))
                    .collect::<Result<_, _>>()?,
                None => Vec::new(),
            };
            s.match_expressions.push(Requirement {
                key: string(key, &format!("{path}.key"))?.to_string(),
                operator,
                values,
            });
        }
    }
    Ok(s)
}

/// A map with any keys.
fn map_any<'a>(n: &'a Node, path: &str) -> Result<Vec<(&'a str, &'a Node)>, PolicyError> {
    match &n.value {
        Value::Map(entries) => Ok(entries.iter().map(|e| (e.key.as_str(), &e.value)).collect()),
        _ => Err(err(
            n.pos,
            format!("{path} must be a mapping, found {}", n.kind()),
        )),
    }
}

/// Reads an `olmctl.dev/v1` (or the deprecated `olmctl.dev/v1alpha1`) UpgradePolicy document.
pub fn from_node(doc: &Node) -> Result<Policy, PolicyError> {
    let top = map(
        doc,
        "UpgradePolicy",
        &["apiVersion", "kind", "metadata", "spec", "status"],
    )?;
    let api = top
        .get("apiVersion")
        .ok_or_else(|| err(doc.pos, "apiVersion is required (olmctl.dev/v1)"))?;
    let alpha = match string(api, "apiVersion")? {
        V1 => false,
        V1ALPHA1 => true,
        _ => {
            return Err(err(
                api.pos,
                "apiVersion must be olmctl.dev/v1 (or the deprecated olmctl.dev/v1alpha1)",
            ));
        }
    };
    let kind = top
        .get("kind")
        .ok_or_else(|| err(doc.pos, "kind is required (UpgradePolicy)"))?;
    if string(kind, "kind")? != "UpgradePolicy" {
        return Err(err(kind.pos, "kind must be UpgradePolicy"));
    }
    let (mut name, mut namespace) = (String::new(), String::new());
    if let Some(md) = top.get("metadata") {
        for (k, v) in map_any(md, "metadata")? {
            match k {
                "name" => name = string(v, "metadata.name")?.to_string(),
                "namespace" => namespace = string(v, "metadata.namespace")?.to_string(),
                _ => {}
            }
        }
    }
    let p = Policy {
        name,
        namespace,
        selector: Selector::default(),
        cluster_extension_selector: None,
        max_version_jump: Jump::Major,
        crd_safety: CrdSafety::Enforce,
        new_dependencies: NewDependencies::Allow,
        windows: Vec::new(),
        min_age: None,
        paused: false,
    };
    let Some(spec) = top.get("spec") else {
        return Ok(p);
    };
    if alpha {
        // Read as the v1 spec it converts to; messages name the v1alpha1 fields.
        let v1 = alpha_spec(spec)?;
        return read_spec(&v1, p).map_err(|mut e| {
            for (a, b) in RENAMED {
                e.message = e
                    .message
                    .replace(&format!("spec.{a}"), &format!("spec.{b}"));
                e.message = e.message.replace(&format!(" {a},"), &format!(" {b},"));
                e.message = e.message.replace(&format!(" {a})"), &format!(" {b})"));
            }
            e
        });
    }
    read_spec(spec, p)
}

/// The v1 spec a v1alpha1 spec converts to ([`super::convert`]), positions kept.
fn alpha_spec(spec: &Node) -> Result<Node, PolicyError> {
    let Value::Map(entries) = &spec.value else {
        return Ok(spec.clone());
    };
    let mut out = Vec::new();
    for e in entries {
        let mut e = e.clone();
        if RENAMED.iter().any(|(v1, _)| *v1 == e.key) {
            return Err(err(
                e.key_pos,
                format!(
                    "unknown field spec.{} (known: subscriptionSelector, clusterExtensionSelector, maxUpgrade, crdChecks, newDependencies, maintenanceWindows, soak, paused); it is the v1 name, write apiVersion: olmctl.dev/v1 to use it",
                    e.key
                ),
            ));
        }
        if let Some((v1, _)) = RENAMED.iter().find(|(_, a)| *a == e.key) {
            e.key = v1.to_string();
        }
        if e.key == "maintenanceWindows"
            && let Value::Seq(items) = &e.value.value
        {
            let mut ws = Vec::new();
            for (i, w) in items.iter().enumerate() {
                let text = string(w, &format!("spec.maintenanceWindows[{i}]"))?;
                let f = parse_alpha_window(text)
                    .map_err(|m| err(w.pos, format!("spec.maintenanceWindows[{i}]: {m}")))?;
                let at = |v: Value| Node::new(w.pos, v);
                let entry = |k: &str, v: Value| crate::fbc::node::Entry {
                    key: k.into(),
                    key_pos: w.pos,
                    value: at(v),
                };
                let mut m = vec![
                    entry("start", Value::Str(f.start)),
                    entry("duration", Value::Str(f.duration)),
                ];
                if !f.days.is_empty() {
                    let days = f.days.into_iter().map(|d| at(Value::Str(d))).collect();
                    m.push(entry("days", Value::Seq(days)));
                }
                if let Some(z) = f.time_zone {
                    m.push(entry("timeZone", Value::Str(z)));
                }
                ws.push(at(Value::Map(m)));
            }
            e.value = Node::new(e.value.pos, Value::Seq(ws));
        }
        out.push(e);
    }
    Ok(Node::new(spec.pos, Value::Map(out)))
}

/// Reads a v1 `spec` into `p`.
fn read_spec(spec: &Node, mut p: Policy) -> Result<Policy, PolicyError> {
    let s = map(
        spec,
        "spec",
        &[
            "selector",
            "clusterExtensionSelector",
            "maxVersionJump",
            "crdSafety",
            "newDependencies",
            "maintenanceWindows",
            "minAge",
            "paused",
        ],
    )?;
    if let Some(n) = s.get("selector") {
        p.selector = selector(n, "spec.selector")?;
    }
    if let Some(n) = s.get("clusterExtensionSelector") {
        p.cluster_extension_selector = Some(selector(n, "spec.clusterExtensionSelector")?);
    }
    if let Some(n) = s.get("maxVersionJump") {
        p.max_version_jump =
            Jump::parse(string(n, "spec.maxVersionJump")?).map_err(|e| err(n.pos, e))?;
    }
    if let Some(n) = s.get("crdSafety") {
        p.crd_safety = match string(n, "spec.crdSafety")? {
            "Enforce" => CrdSafety::Enforce,
            "Warn" => CrdSafety::Warn,
            "Ignore" => CrdSafety::Ignore,
            other => {
                return Err(err(
                    n.pos,
                    format!("invalid crdSafety {other:?}: use Enforce, Warn or Ignore"),
                ));
            }
        };
    }
    if let Some(n) = s.get("newDependencies") {
        p.new_dependencies = match string(n, "spec.newDependencies")? {
            "Allow" => NewDependencies::Allow,
            "Hold" => NewDependencies::Hold,
            other => {
                return Err(err(
                    n.pos,
                    format!("invalid newDependencies {other:?}: use Allow or Hold"),
                ));
            }
        };
    }
    if let Some(n) = s.get("maintenanceWindows") {
        for (i, w) in list(n, "spec.maintenanceWindows")?.iter().enumerate() {
            let path = format!("spec.maintenanceWindows[{i}]");
            let wm = map(w, &path, &["days", "start", "duration", "timeZone"])?;
            let need = |k: &str| {
                wm.get(k)
                    .copied()
                    .ok_or_else(|| err(w.pos, format!("{path}.{k} is required")))
            };
            let days: Vec<&str> = match wm.get("days") {
                Some(d) => list(d, &format!("{path}.days"))?
                    .iter()
                    .map(|x| string(x, &format!("{path}.days[]")))
                    .collect::<Result<_, _>>()?,
                None => Vec::new(),
            };
            let start = need("start")?;
            let duration = need("duration")?;
            let tz = match wm.get("timeZone") {
                Some(t) => string(t, &format!("{path}.timeZone"))?,
                None => "",
            };
            let win = Window::parse(
                &days,
                string(start, &format!("{path}.start"))?,
                string(duration, &format!("{path}.duration"))?,
                tz,
            )
            .map_err(|e| {
                // Point at the field the message is about.
                let at = if e.contains("day") {
                    wm.get("days").map_or(w.pos, |d| d.pos)
                } else if e.contains("start") {
                    start.pos
                } else if e.contains("time zone") {
                    wm.get("timeZone").map_or(w.pos, |t| t.pos)
                } else {
                    duration.pos
                };
                err(at, format!("{path}: {e}"))
            })?;
            p.windows.push(win);
        }
    }
    if let Some(n) = s.get("minAge") {
        p.min_age = Some(parse_duration(string(n, "spec.minAge")?).map_err(|e| err(n.pos, e))?);
    }
    if let Some(n) = s.get("paused") {
        p.paused = match &n.value {
            Value::Bool(b) => *b,
            _ => {
                return Err(err(
                    n.pos,
                    format!("spec.paused must be true or false, found {}", n.kind()),
                ));
            }
        };
    }
    Ok(p)
}

/// Reads the first document of `text` as a policy.
pub fn parse(text: &str) -> Result<Policy, PolicyError> {
    let doc = crate::fbc::yaml::first_document(text)
        .map_err(|e| err(Pos::new(e.line, e.column), e.message))?
        .ok_or_else(|| err(Pos::new(1, 1), "empty policy document"))?;
    from_node(&doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: default, namespace: acme-system}\nspec:\n  selector: {matchLabels: {}}\n  maxVersionJump: minor\n  crdSafety: Enforce\n  maintenanceWindows:\n  - days: [Sat, Sun]\n    start: \"02:00\"\n    duration: 4h\n    timeZone: Europe/Berlin\n  minAge: 24h\n  paused: false\n";

    #[test]
    fn the_documented_example() {
        let p = parse(EXAMPLE).expect("policy");
        assert_eq!(
            (p.name.as_str(), p.namespace.as_str()),
            ("default", "acme-system")
        );
        assert_eq!(p.max_version_jump, Jump::Minor);
        assert_eq!(p.crd_safety, CrdSafety::Enforce);
        assert_eq!(p.windows.len(), 1);
        assert_eq!(p.min_age, Some(SignedDuration::from_secs(86400)));
        assert!(!p.paused);
        assert!(p.selector.matches(&BTreeMap::new()), "empty selects all");
        // Defaults.
        let p = parse("apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\n").expect("policy");
        assert_eq!(
            (p.max_version_jump, p.crd_safety, p.paused),
            (Jump::Major, CrdSafety::Enforce, false)
        );
        assert!(p.windows.is_empty() && p.min_age.is_none());
    }

    #[test]
    fn errors_name_the_place() {
        let cases = [
            (
                EXAMPLE.replace("  minAge: 24h\n", "  maintenanceWindow: []\n"),
                (13, 3),
                "unknown field spec.maintenanceWindow",
            ),
            (
                EXAMPLE.replace("duration: 4h", "duration: 4d"),
                (11, 15),
                "invalid duration",
            ),
            (
                EXAMPLE.replace("\"02:00\"", "\"2am\""),
                (10, 12),
                "invalid start",
            ),
            (
                EXAMPLE.replace("[Sat, Sun]", "[Sat, Sunday2]"),
                (9, 11),
                "invalid day",
            ),
            (
                EXAMPLE.replace("Europe/Berlin", "Europe/Nowhere"),
                (12, 15),
                "unknown time zone",
            ),
            (
                EXAMPLE.replace("maxVersionJump: minor", "maxVersionJump: huge"),
                (6, 19),
                "invalid maxVersionJump",
            ),
            (
                EXAMPLE.replace("crdSafety: Enforce", "crdSafety: enforce"),
                (7, 14),
                "invalid crdSafety",
            ),
            (
                EXAMPLE.replace("paused: false", "paused: \"no\""),
                (14, 11),
                "spec.paused must be true or false",
            ),
            (
                EXAMPLE.replace("olmctl.dev/v1\n", "olmctl.dev/v2\n"),
                (1, 13),
                "apiVersion must be",
            ),
            (
                EXAMPLE.replace(
                    "    timeZone: Europe/Berlin\n",
                    "    timeZone: Europe/Berlin\n    end: \"06:00\"\n",
                ),
                (13, 5),
                "unknown field spec.maintenanceWindows[0].end",
            ),
            ("spec: [\n".to_string(), (2, 1), ""),
        ];
        for (text, (line, col), needle) in cases {
            let e = parse(&text).expect_err(needle);
            assert_eq!(
                (e.pos.line, e.pos.col),
                (line, col),
                "{needle}: {}",
                e.message
            );
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
    }

    #[test]
    fn selectors() {
        let text = EXAMPLE.replace(
            "selector: {matchLabels: {}}",
            "selector: {matchLabels: {team: a}, matchExpressions: [{key: tier, operator: In, values: [gold]}, {key: legacy, operator: DoesNotExist}]}",
        );
        let s = parse(&text).expect("policy").selector;
        let l = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(s.matches(&l(&[("team", "a"), ("tier", "gold")])));
        assert!(!s.matches(&l(&[("team", "a"), ("tier", "silver")])));
        assert!(!s.matches(&l(&[("team", "a"), ("tier", "gold"), ("legacy", "y")])));
        assert!(!s.matches(&l(&[("tier", "gold")])));
    }

    #[test]
    fn cluster_extension_selector_in_both_versions() {
        // Absent: the policy governs no ClusterExtension (v0 policies are unchanged).
        assert_eq!(
            parse(EXAMPLE).expect("policy").cluster_extension_selector,
            None
        );
        let text = EXAMPLE.replace(
            "  maxVersionJump",
            "  clusterExtensionSelector: {matchLabels: {team: db}}\n  maxVersionJump",
        );
        let s = parse(&text)
            .expect("v1")
            .cluster_extension_selector
            .expect("set");
        assert_eq!(s.match_labels.get("team").map(String::as_str), Some("db"));
        // Empty selects every ClusterExtension.
        let empty = EXAMPLE.replace(
            "  maxVersionJump",
            "  clusterExtensionSelector: {}\n  maxVersionJump",
        );
        let s = parse(&empty)
            .expect("v1")
            .cluster_extension_selector
            .expect("set");
        assert!(s.matches(&BTreeMap::new()));
        // v1alpha1 has the same field under the same name (convert keeps fields it does not
        // rename).
        let alpha = "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nmetadata: {name: a}\nspec:\n  clusterExtensionSelector: {matchExpressions: [{key: tier, operator: In, values: [gold]}]}\n  maxUpgrade: patch\n";
        let p = parse(alpha).expect("v1alpha1");
        assert_eq!(
            p.cluster_extension_selector.expect("set").match_expressions[0].key,
            "tier"
        );
        // Errors name the field and the place.
        for (bad, line, col, needle) in [
            (
                "clusterExtensionSelector: [a]",
                6,
                29,
                "spec.clusterExtensionSelector must be a mapping",
            ),
            (
                "clusterExtensionSelector: {matchLabel: {}}",
                6,
                30,
                "unknown field spec.clusterExtensionSelector.matchLabel",
            ),
            (
                "clusterExtensionSelector: {matchExpressions: [{key: a, operator: Is}]}",
                6,
                68,
                "spec.clusterExtensionSelector.matchExpressions[0].operator must be In",
            ),
            (
                "clusterExtensionSelector: {matchLabels: {a: [1]}}",
                6,
                47,
                "spec.clusterExtensionSelector.matchLabels.a must be a string",
            ),
        ] {
            let text = EXAMPLE.replace("  maxVersionJump", &format!("  {bad}\n  maxVersionJump"));
            let e = parse(&text).expect_err(bad);
            assert!(e.message.contains(needle), "{bad}: {}", e.message);
            assert_eq!((e.pos.line, e.pos.col), (line, col), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn new_dependencies_in_both_versions() {
        assert_eq!(
            parse(EXAMPLE).expect("policy").new_dependencies,
            NewDependencies::Allow,
            "the default keeps what the gate did before the field"
        );
        let hold = EXAMPLE.replace("  paused", "  newDependencies: Hold\n  paused");
        assert_eq!(
            parse(&hold).expect("v1").new_dependencies,
            NewDependencies::Hold
        );
        let alpha = "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nmetadata: {name: a}\nspec:\n  newDependencies: Hold\n  crdChecks: Warn\n";
        let p = parse(alpha).expect("v1alpha1");
        assert_eq!(
            (p.new_dependencies, p.crd_safety),
            (NewDependencies::Hold, CrdSafety::Warn)
        );
        let bad = EXAMPLE.replace("  paused", "  newDependencies: Deny\n  paused");
        let e = parse(&bad).expect_err("Deny");
        assert_eq!(
            (e.message.as_str(), e.pos.line, e.pos.col),
            (
                "invalid newDependencies \"Deny\": use Allow or Hold",
                14,
                20
            )
        );
    }

    proptest::proptest! {
        /// The policy reader reads a v1 policy and its v1alpha1 form ([`super::super::convert`])
        /// as the same policy.
        #[test]
        fn both_versions_read_as_the_same_policy(v1 in super::super::convert::tests::v1_policy()) {
            let alpha = super::super::convert::convert(&v1, V1ALPHA1).expect("to v1alpha1");
            let a = parse(&v1.to_string()).expect("v1 reads");
            let b = parse(&alpha.to_string()).expect("v1alpha1 reads");
            proptest::prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }
}
