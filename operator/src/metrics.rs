//! The operator's metrics (`/metrics`): decisions by result and code, approvals, errors and
//! conflicts by kind, and reconcile durations (a histogram). Kept by the `prometheus` crate and
//! written in the Prometheus text format 0.0.4 ([`CONTENT_TYPE`]) as the hand-written exposition
//! it replaces wrote them: a counter's HELP and TYPE lines name its `_total` series, the families
//! come in the order decisions, approvals, errors, durations, a decision's labels read `decision`
//! then `code`, and a family's series are sorted by their label values. One difference: a family
//! with no series yet (no decision or no error so far) is left out, HELP and TYPE lines too.

use std::time::Duration;

use prometheus::core::Collector;
use prometheus::proto::{Metric, MetricFamily};
use prometheus::{
    Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The media type of [`Metrics::render`]'s text: `text/plain; version=0.0.4`.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// Upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 9] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

/// A metric family: its name, its HELP text, and its labels in the order its series write them.
struct Family {
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
}

const DECISIONS: Family = Family {
    name: "olmctl_gate_decisions_total",
    help: "Decisions made or changed, by result and by the GATE code behind them.",
    labels: &["decision", "code"],
};
const APPROVALS: Family = Family {
    name: "olmctl_gate_approvals_total",
    help: "InstallPlans approved.",
    labels: &[],
};
const ERRORS: Family = Family {
    name: "olmctl_gate_errors_total",
    help: "Reconcile errors by kind.",
    labels: &["kind"],
};
const DURATIONS: Family = Family {
    name: "olmctl_gate_reconcile_duration_seconds",
    help: "Reconcile durations.",
    labels: &[],
};

/// The families in the order the exposition writes them.
const FAMILIES: [Family; 4] = [DECISIONS, APPROVALS, ERRORS, DURATIONS];

/// The counters; shared by the controller and the HTTP server.
pub struct Metrics {
    registry: Registry,
    decisions: IntCounterVec,
    approvals: IntCounter,
    errors: IntCounterVec,
    durations: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        const VALID: &str = "metric names, labels and buckets are valid";
        let counters =
            |f: &Family| IntCounterVec::new(Opts::new(f.name, f.help), f.labels).expect(VALID);
        let decisions = counters(&DECISIONS);
        let errors = counters(&ERRORS);
        let approvals = IntCounter::new(APPROVALS.name, APPROVALS.help).expect(VALID);
        let durations = Histogram::with_opts(
            HistogramOpts::new(DURATIONS.name, DURATIONS.help).buckets(BUCKETS.to_vec()),
        )
        .expect(VALID);
        let registry = Registry::new();
        let collectors: [Box<dyn Collector>; 4] = [
            Box::new(decisions.clone()),
            Box::new(approvals.clone()),
            Box::new(errors.clone()),
            Box::new(durations.clone()),
        ];
        for c in collectors {
            registry.register(c).expect("metric names are distinct");
        }
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
        let count = |code: &str| self.decisions.with_label_values(&[decision, code]).inc();
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
        self.errors.with_label_values(&[kind]).inc();
    }

    /// One reconcile took `d`.
    pub fn reconciled(&self, d: Duration) {
        self.durations.observe(d.as_secs_f64());
    }

    /// How many decisions with `decision` and `code` were recorded (read without creating the
    /// series, as `with_label_values` would).
    pub fn decisions(&self, decision: &str, code: &str) -> u64 {
        let has = |m: &Metric, name: &str, value: &str| {
            m.get_label()
                .iter()
                .any(|p| p.name() == name && p.value() == value)
        };
        self.decisions
            .collect()
            .iter()
            .flat_map(|mf| mf.get_metric())
            .find(|m| has(m, "decision", decision) && has(m, "code", code))
            .map_or(0, |m| m.get_counter().get_value() as u64)
    }

    /// The Prometheus text exposition ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut families = self.registry.gather();
        in_exposition_order(&mut families);
        TextEncoder::new()
            .encode_to_string(&families)
            .expect("gathered families have a name and a series")
    }
}

/// Puts gathered families in the exposition's order. The registry sorts families by name, a
/// series' labels by name and a family's series by those labels' values; the exposition has
/// always listed the families as [`FAMILIES`] does, a series' labels in its family's order
/// (`decision` before `code`), and the series sorted by their values in that order.
fn in_exposition_order(families: &mut [MetricFamily]) {
    let family = |mf: &MetricFamily| FAMILIES.iter().position(|f| f.name == mf.name());
    families.sort_by_key(|mf| family(mf).unwrap_or(FAMILIES.len()));
    for mf in families {
        let Some(i) = family(mf) else { continue };
        let labels = FAMILIES[i].labels;
        let series = mf.mut_metric();
        for m in series.iter_mut() {
            let mut pairs = m.take_label();
            pairs.sort_by_key(|p| labels.iter().position(|l| *l == p.name()));
            m.set_label(pairs);
        }
        fn values(m: &Metric) -> impl Iterator<Item = &str> {
            m.get_label().iter().map(|p| p.value())
        }
        series.sort_by(|a, b| values(a).cmp(values(b)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_parse::{LineInfo, SampleType, Scrape, Value};
    use std::collections::BTreeMap;

    /// The HELP and TYPE lines of the hand-written exposition (`git show
    /// 89229ad^:operator/src/metrics.rs`), family by family.
    const OLD_HEADERS: [&str; 8] = [
        "# HELP olmctl_gate_decisions_total Decisions made or changed, by result and by the GATE code behind them.",
        "# TYPE olmctl_gate_decisions_total counter",
        "# HELP olmctl_gate_approvals_total InstallPlans approved.",
        "# TYPE olmctl_gate_approvals_total counter",
        "# HELP olmctl_gate_errors_total Reconcile errors by kind.",
        "# TYPE olmctl_gate_errors_total counter",
        "# HELP olmctl_gate_reconcile_duration_seconds Reconcile durations.",
        "# TYPE olmctl_gate_reconcile_duration_seconds histogram",
    ];

    /// What the hand-written exposition wrote after [`record`].
    const OLD_EXPOSITION: &str = r#"# HELP olmctl_gate_decisions_total Decisions made or changed, by result and by the GATE code behind them.
# TYPE olmctl_gate_decisions_total counter
olmctl_gate_decisions_total{decision="approve",code="none"} 1
olmctl_gate_decisions_total{decision="hold",code="GATE007"} 2
olmctl_gate_decisions_total{decision="hold",code="GATE011"} 1
olmctl_gate_decisions_total{decision="wait",code="GATE003"} 1
# HELP olmctl_gate_approvals_total InstallPlans approved.
# TYPE olmctl_gate_approvals_total counter
olmctl_gate_approvals_total 1
# HELP olmctl_gate_errors_total Reconcile errors by kind.
# TYPE olmctl_gate_errors_total counter
olmctl_gate_errors_total{kind="api"} 1
olmctl_gate_errors_total{kind="conflict"} 2
# HELP olmctl_gate_reconcile_duration_seconds Reconcile durations.
# TYPE olmctl_gate_reconcile_duration_seconds histogram
olmctl_gate_reconcile_duration_seconds_bucket{le="0.005"} 1
olmctl_gate_reconcile_duration_seconds_bucket{le="0.01"} 1
olmctl_gate_reconcile_duration_seconds_bucket{le="0.025"} 1
olmctl_gate_reconcile_duration_seconds_bucket{le="0.05"} 1
olmctl_gate_reconcile_duration_seconds_bucket{le="0.1"} 1
olmctl_gate_reconcile_duration_seconds_bucket{le="0.25"} 2
olmctl_gate_reconcile_duration_seconds_bucket{le="0.5"} 2
olmctl_gate_reconcile_duration_seconds_bucket{le="1"} 2
olmctl_gate_reconcile_duration_seconds_bucket{le="5"} 3
olmctl_gate_reconcile_duration_seconds_bucket{le="+Inf"} 3
olmctl_gate_reconcile_duration_seconds_sum 2.253
olmctl_gate_reconcile_duration_seconds_count 3
"#;

    /// Decisions, approvals, errors and reconciles in an order the exposition does not keep.
    fn record(m: &Metrics) {
        m.decision("hold", &["GATE007", "GATE011"]);
        m.decision("hold", &["GATE007"]);
        m.decision("approve", &[]);
        m.decision("wait", &["GATE003"]);
        m.approved();
        m.error("conflict");
        m.error("api");
        m.error("conflict");
        m.reconciled(Duration::from_millis(250));
        m.reconciled(Duration::from_secs(2));
        m.reconciled(Duration::from_millis(3));
    }

    fn headers(text: &str) -> Vec<&str> {
        text.lines().filter(|l| l.starts_with('#')).collect()
    }

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
        assert_eq!(CONTENT_TYPE, "text/plain; version=0.0.4");
    }

    /// Once every family has a series, the exposition is byte for byte the hand-written one:
    /// HELP and TYPE lines, family order, label order, series order and number formats.
    #[test]
    fn the_exposition_is_the_hand_written_one() {
        let m = Metrics::default();
        record(&m);
        let text = m.render();
        assert_eq!(headers(&text), OLD_HEADERS);
        assert_eq!(text, OLD_EXPOSITION);
        // Reading a count creates no series.
        assert_eq!(m.decisions("approve", "GATE003"), 0);
        assert_eq!(m.render(), OLD_EXPOSITION);
    }

    /// The one difference: before any decision or error, their families are left out
    /// entirely, where the hand-written exposition wrote their HELP and TYPE lines alone.
    #[test]
    fn a_family_without_series_is_left_out() {
        let text = Metrics::default().render();
        assert_eq!(
            headers(&text),
            [&OLD_HEADERS[2..4], &OLD_HEADERS[6..8]].concat()
        );
        assert!(text.starts_with(
            "# HELP olmctl_gate_approvals_total InstallPlans approved.\n\
             # TYPE olmctl_gate_approvals_total counter\n\
             olmctl_gate_approvals_total 0\n"
        ));
        assert!(text.ends_with(
            "olmctl_gate_reconcile_duration_seconds_bucket{le=\"+Inf\"} 0\n\
             olmctl_gate_reconcile_duration_seconds_sum 0\n\
             olmctl_gate_reconcile_duration_seconds_count 0\n"
        ));
    }

    /// A scrape read back by a Prometheus text parser: every line is a HELP, TYPE or sample
    /// line, with exactly the families, types, labels and values meant.
    #[test]
    fn a_scrape_parses_as_prometheus_text() {
        let m = Metrics::default();
        record(&m);
        let text = m.render();

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
                _ => panic!("not Prometheus text: {line:?}"),
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
                ("olmctl_gate_approvals_total", "InstallPlans approved."),
                (
                    "olmctl_gate_decisions_total",
                    "Decisions made or changed, by result and by the GATE code behind them."
                ),
                ("olmctl_gate_errors_total", "Reconcile errors by kind."),
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
                (
                    "olmctl_gate_approvals_total".to_string(),
                    SampleType::Counter
                ),
                (
                    "olmctl_gate_decisions_total".to_string(),
                    SampleType::Counter
                ),
                ("olmctl_gate_errors_total".to_string(), SampleType::Counter),
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
                    Value::Counter(v) => format!("counter {v}"),
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
                want("olmctl_gate_approvals_total", "{}", "counter 1"),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "GATE003", "decision": "wait"}"#,
                    "counter 1"
                ),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "GATE007", "decision": "hold"}"#,
                    "counter 2"
                ),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "GATE011", "decision": "hold"}"#,
                    "counter 1"
                ),
                want(
                    "olmctl_gate_decisions_total",
                    r#"{"code": "none", "decision": "approve"}"#,
                    "counter 1"
                ),
                want(
                    "olmctl_gate_errors_total",
                    r#"{"kind": "api"}"#,
                    "counter 1"
                ),
                want(
                    "olmctl_gate_errors_total",
                    r#"{"kind": "conflict"}"#,
                    "counter 2"
                ),
                want(
                    "olmctl_gate_reconcile_duration_seconds",
                    "{}",
                    "0.005:1 0.01:1 0.025:1 0.05:1 0.1:1 0.25:2 0.5:2 1:2 5:3 inf:3"
                ),
                want("olmctl_gate_reconcile_duration_seconds_count", "{}", "3"),
                want("olmctl_gate_reconcile_duration_seconds_sum", "{}", "2.253"),
            ]
        );
    }
}
