//! The operator's metrics (`/metrics`): decisions by result and code, approvals, reconcile
//! durations (a histogram), errors and conflicts by kind. Kept and written by `prometheus-client`
//! in the OpenMetrics text format ([`CONTENT_TYPE`]), which Prometheus reads: each counter's
//! family (`# HELP`/`# TYPE`) is named without its samples' `_total` suffix, the histogram's
//! unit is declared, and the exposition ends with `# EOF`.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// The media type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 9] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

/// The labels of `olmctl_gate_decisions_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: String,
    code: String,
}

/// The label of `olmctl_gate_errors_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    kind: String,
}

/// The counters; shared by the controller and the HTTP server.
pub struct Metrics {
    registry: Registry,
    decisions: Family<DecisionLabels, Counter>,
    approvals: Counter,
    errors: Family<ErrorLabels, Counter>,
    durations: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        let decisions = Family::<DecisionLabels, Counter>::default();
        let approvals = Counter::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let durations = Histogram::new(BUCKETS);
        // prometheus-client ends each HELP text with a period itself.
        let mut registry = Registry::with_prefix("olmctl_gate");
        registry.register(
            "decisions",
            "Decisions made or changed, by result and by the GATE code behind them",
            decisions.clone(),
        );
        registry.register("approvals", "InstallPlans approved", approvals.clone());
        registry.register("errors", "Reconcile errors by kind", errors.clone());
        registry.register_with_unit(
            "reconcile_duration",
            "Reconcile durations",
            Unit::Seconds,
            durations.clone(),
        );
        Metrics {
            registry,
            decisions,
            approvals,
            errors,
            durations,
        }
    }
}

impl Metrics {
    /// A new or changed decision (`approve`, `hold`, `wait`), once per reason code that made
    /// it (`none` when no reason did).
    pub fn decision(&self, decision: &str, codes: &[&str]) {
        let count = |code: &str| {
            self.decisions
                .get_or_create(&DecisionLabels {
                    decision: decision.into(),
                    code: code.into(),
                })
                .inc();
        };
        if codes.is_empty() {
            count("none");
        }
        codes.iter().for_each(|c| count(c));
    }

    /// An InstallPlan approved.
    pub fn approved(&self) {
        self.approvals.inc();
    }

    /// An error of `kind` (e.g. `api`, `conflict`, `policy`).
    pub fn error(&self, kind: &str) {
        self.errors
            .get_or_create(&ErrorLabels { kind: kind.into() })
            .inc();
    }

    /// One reconcile took `d`.
    pub fn reconciled(&self, d: Duration) {
        self.durations.observe(d.as_secs_f64());
    }

    /// How many decisions with `decision` and `code` were recorded.
    pub fn decisions(&self, decision: &str, code: &str) -> u64 {
        self.decisions
            .get(&DecisionLabels {
                decision: decision.into(),
                code: code.into(),
            })
            .map_or(0, |c| c.get())
    }

    /// The OpenMetrics text exposition ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut s = String::new();
        encode(&mut s, &self.registry).expect("writing to a String does not fail");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_parse::{LineInfo, SampleType, Scrape, Value};
    use std::collections::BTreeMap;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.decision("hold", &["GATE007", "GATE011"]);
        m.decision("approve", &[]);
        m.approved();
        m.error("conflict");
        m.reconciled(Duration::from_millis(20));
        let t = m.render();
        assert!(t.contains("olmctl_gate_decisions_total{decision=\"hold\",code=\"GATE007\"} 1\n"));
        assert!(t.contains("olmctl_gate_decisions_total{decision=\"approve\",code=\"none\"} 1\n"));
        assert!(t.contains("olmctl_gate_approvals_total 1\n"));
        assert!(t.contains("olmctl_gate_errors_total{kind=\"conflict\"} 1\n"));
        assert!(t.contains("olmctl_gate_reconcile_duration_seconds_bucket{le=\"0.01\"} 0\n"));
        assert!(t.contains("olmctl_gate_reconcile_duration_seconds_bucket{le=\"0.025\"} 1\n"));
        assert!(t.contains("olmctl_gate_reconcile_duration_seconds_count 1\n"));
        assert_eq!(m.decisions("hold", "GATE011"), 1);
        assert_eq!(m.decisions("hold", "GATE012"), 0);
    }

    /// A scrape read back by a Prometheus text parser: every line is a HELP, TYPE or sample
    /// line (or OpenMetrics' UNIT and EOF), with exactly the families, types and values meant.
    #[test]
    fn a_scrape_parses_as_prometheus_text() {
        let m = Metrics::default();
        m.decision("hold", &["GATE007", "GATE011"]);
        m.decision("hold", &["GATE007"]);
        m.decision("approve", &[]);
        m.approved();
        m.error("conflict");
        m.error("api");
        m.error("conflict");
        m.reconciled(Duration::from_millis(250));
        m.reconciled(Duration::from_secs(2));
        let text = m.render();
        assert!(text.ends_with("\n# EOF\n"), "{text}");

        let (mut docs, mut types) = (BTreeMap::new(), BTreeMap::new());
        for line in text.lines() {
            match LineInfo::parse(line) {
                LineInfo::Doc { metric_name, doc } => {
                    docs.insert(metric_name.to_string(), doc.to_string());
                }
                LineInfo::Type {
                    metric_name,
                    sample_type,
                    ..
                } => {
                    types.insert(metric_name, sample_type);
                }
                LineInfo::Sample { .. } => {}
                _ => assert!(
                    line == "# EOF"
                        || line == "# UNIT olmctl_gate_reconcile_duration_seconds seconds",
                    "not Prometheus text: {line:?}"
                ),
            }
        }
        let owned = |v: &[(&str, &str)]| {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(
            docs,
            owned(&[
                ("olmctl_gate_approvals", "InstallPlans approved."),
                (
                    "olmctl_gate_decisions",
                    "Decisions made or changed, by result and by the GATE code behind them."
                ),
                ("olmctl_gate_errors", "Reconcile errors by kind."),
                (
                    "olmctl_gate_reconcile_duration_seconds",
                    "Reconcile durations."
                ),
            ])
        );
        // The parser keys a histogram's type by its `_bucket` samples.
        assert_eq!(
            types.into_iter().collect::<Vec<_>>(),
            [
                ("olmctl_gate_approvals".to_string(), SampleType::Counter),
                ("olmctl_gate_decisions".to_string(), SampleType::Counter),
                ("olmctl_gate_errors".to_string(), SampleType::Counter),
                (
                    "olmctl_gate_reconcile_duration_seconds_bucket".to_string(),
                    SampleType::Histogram
                ),
            ]
        );

        let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("parses");
        let mut samples: Vec<_> = scrape
            .samples
            .iter()
            .map(|s| {
                let labels: BTreeMap<_, _> = s.labels.iter().collect();
                let value = match &s.value {
                    Value::Histogram(h) => h
                        .iter()
                        .map(|b| format!("{}:{}", b.less_than, b.count))
                        .collect::<Vec<_>>()
                        .join(" "),
                    // A counter's samples end in `_total`, its family does not: untyped here.
                    Value::Untyped(v) => v.to_string(),
                    other => panic!("unexpected {other:?}"),
                };
                (s.metric.clone(), format!("{labels:?}"), value)
            })
            .collect();
        samples.sort();
        let want = |m: &str, l: &str, v: &str| (m.to_string(), l.to_string(), v.to_string());
        assert_eq!(
            samples,
            [
                want("olmctl_gate_approvals_total", "{}", "1"),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "GATE007", "decision": "hold"}"#,
                    "2"
                ),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "GATE011", "decision": "hold"}"#,
                    "1"
                ),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "none", "decision": "approve"}"#,
                    "1"
                ),
                want("olmctl_gate_errors_total", r#"{"kind": "api"}"#, "1"),
                want("olmctl_gate_errors_total", r#"{"kind": "conflict"}"#, "2"),
                want(
                    "olmctl_gate_reconcile_duration_seconds",
                    "{}",
                    "0.005:0 0.01:0 0.025:0 0.05:0 0.1:0 0.25:1 0.5:1 1:1 5:2 inf:2"
                ),
                want("olmctl_gate_reconcile_duration_seconds_count", "{}", "2"),
                want("olmctl_gate_reconcile_duration_seconds_sum", "{}", "2.25"),
            ]
        );
    }
}
