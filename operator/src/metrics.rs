//! The operator's metrics in Prometheus text format (`/metrics`): decisions by result and
//! code, approvals, reconcile durations (a histogram), errors and conflicts by kind.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the reconcile duration histogram, in seconds.
const BUCKETS: [f64; 9] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

#[derive(Default)]
struct Inner {
    decisions: BTreeMap<(String, String), u64>,
    approvals: u64,
    errors: BTreeMap<String, u64>,
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The counters; shared by the controller and the HTTP server.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// A new or changed decision (`approve`, `hold`, `wait`), once per reason code that made
    /// it (`none` when no reason did).
    pub fn decision(&self, decision: &str, codes: &[&str]) {
        self.with(|m| {
            if codes.is_empty() {
                *m.decisions
                    .entry((decision.into(), "none".into()))
                    .or_default() += 1;
            }
            for c in codes {
                *m.decisions
                    .entry((decision.into(), c.to_string()))
                    .or_default() += 1;
            }
        });
    }

    /// An InstallPlan approved.
    pub fn approved(&self) {
        self.with(|m| m.approvals += 1);
    }

    /// An error of `kind` (e.g. `api`, `conflict`, `policy`).
    pub fn error(&self, kind: &str) {
        self.with(|m| *m.errors.entry(kind.into()).or_default() += 1);
    }

    /// One reconcile took `d`.
    pub fn reconciled(&self, d: Duration) {
        let s = d.as_secs_f64();
        self.with(|m| {
            m.count += 1;
            m.sum += s;
            for (i, b) in BUCKETS.iter().enumerate() {
                if s <= *b {
                    m.buckets[i] += 1;
                }
            }
        });
    }

    /// How many decisions with `decision` and `code` were recorded.
    pub fn decisions(&self, decision: &str, code: &str) -> u64 {
        self.with(|m| {
            m.decisions
                .get(&(decision.to_string(), code.to_string()))
                .copied()
                .unwrap_or(0)
        })
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        self.with(|m| {
            let mut s = String::new();
            s.push_str("# HELP olmctl_gate_decisions_total Decisions made or changed, by result and by the GATE code behind them.\n# TYPE olmctl_gate_decisions_total counter\n");
            for ((d, c), n) in &m.decisions {
                s.push_str(&format!(
                    "olmctl_gate_decisions_total{{decision=\"{d}\",code=\"{c}\"}} {n}\n"
                ));
            }
            s.push_str("# HELP olmctl_gate_approvals_total InstallPlans approved.\n# TYPE olmctl_gate_approvals_total counter\n");
            s.push_str(&format!("olmctl_gate_approvals_total {}\n", m.approvals));
            s.push_str("# HELP olmctl_gate_errors_total Reconcile errors by kind.\n# TYPE olmctl_gate_errors_total counter\n");
            for (k, n) in &m.errors {
                s.push_str(&format!("olmctl_gate_errors_total{{kind=\"{k}\"}} {n}\n"));
            }
            s.push_str("# HELP olmctl_gate_reconcile_duration_seconds Reconcile durations.\n# TYPE olmctl_gate_reconcile_duration_seconds histogram\n");
            for (i, b) in BUCKETS.iter().enumerate() {
                s.push_str(&format!(
                    "olmctl_gate_reconcile_duration_seconds_bucket{{le=\"{b}\"}} {}\n",
                    m.buckets[i]
                ));
            }
            s.push_str(&format!(
                "olmctl_gate_reconcile_duration_seconds_bucket{{le=\"+Inf\"}} {}\nolmctl_gate_reconcile_duration_seconds_sum {}\nolmctl_gate_reconcile_duration_seconds_count {}\n",
                m.count, m.sum, m.count
            ));
            s
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
