//! CRD safety of an InstallPlan against the live cluster: the SCH, CRV and API checks of
//! `olmctl check upgrade`, with the cluster as the old side (the installed CSV and the CRDs the
//! cluster really has, their `status.storedVersions` included) and the plan's objects as the
//! new side.
//!
//! Only what the upgrade introduces counts: the same checks run on the live side against
//! itself, and a finding the live CRDs already have (same code, same message) is pre-existing,
//! reported for information and never a reason to hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use semver::Version;

use super::objects::Object;
use crate::bundle::load::{BundleDir, Manifest, list_at, str_at};
use crate::checks::safety::{self, Facts, History, K8sRange};
use crate::diag::{Finding, Severity};
use crate::fbc::node::Node;

/// The checks' answer, split by what the upgrade is responsible for.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Errors the upgrade introduces.
    pub errors: Vec<Finding>,
    /// Warnings the upgrade introduces.
    pub warnings: Vec<Finding>,
    /// Findings the live side already has against itself (whether the upgrade keeps or
    /// fixes them).
    pub preexisting: Vec<Finding>,
}

/// Code families of `check upgrade` that are about CRDs and API removals.
fn counted(f: &Finding) -> bool {
    ["SCH", "CRV", "API"].iter().any(|p| f.code.starts_with(p))
}

fn bundle(dir: &str, docs: Vec<(String, Node)>) -> BundleDir {
    BundleDir {
        dir: dir.into(),
        manifests: docs
            .into_iter()
            .map(|(path, doc)| Manifest {
                path: Arc::from(Path::new(&path)),
                docs: vec![doc],
            })
            .collect(),
        skipped: Vec::new(),
        annotations: None,
        dependencies: None,
        properties: None,
        problems: Vec::new(),
    }
}

/// The live side of one CSV's upgrade and the new side, as the checks read them.
pub struct Upgrade<'a> {
    /// The namespace and name of the plan (names the synthetic files of the findings).
    pub plan: String,
    /// The installed CSV, when there is one.
    pub installed: Option<&'a Object>,
    /// The live CRDs the upgrade touches: those the plan applies and those the installed CSV
    /// owns.
    pub live: Vec<&'a Object>,
    /// The new CSV.
    pub csv: Node,
    /// The CRDs the plan applies.
    pub crds: Vec<Node>,
    /// Judge as OLM v1's CRD upgrade-safety preflight does (`preflight: olmv1` of `check
    /// upgrade`: SCH014 is an error and crdify's parent reports are added), for a
    /// ClusterExtension's step; false for OLM v0's InstallPlans.
    pub preflight_olmv1: bool,
}

impl Upgrade<'_> {
    /// Runs the checks; `kube` is the cluster's version (API removals are judged against it).
    pub fn check(&self, kube: Option<&Version>) -> Outcome {
        let name = |n: &Node| str_at(n, &["metadata", "name"]).unwrap_or("?").to_string();
        let mut old_docs = Vec::new();
        if let Some(csv) = self.installed {
            old_docs.push((format!("cluster/csv/{}", csv.name()), (*csv.node).clone()));
        }
        for c in &self.live {
            old_docs.push((format!("cluster/crd/{}", c.name()), (*c.node).clone()));
        }
        let mut new_docs = vec![(
            format!("{}/csv/{}", self.plan, name(&self.csv)),
            self.csv.clone(),
        )];
        for c in &self.crds {
            new_docs.push((format!("{}/crd/{}", self.plan, name(c)), c.clone()));
        }
        let old = bundle("cluster", old_docs);
        let new = bundle(&self.plan, new_docs);
        let (of, nf) = (Facts::of(&old), Facts::of(&new));
        let mut hist = History::own(&of);
        let live_stored: BTreeMap<String, BTreeMap<String, String>> = self
            .live
            .iter()
            .map(|c| {
                let vs = list_at(&c.node, &["status", "storedVersions"])
                    .iter()
                    .filter_map(Node::as_str)
                    .map(|v| (v.to_string(), "the cluster's status.storedVersions".into()))
                    .collect();
                (c.name().to_string(), vs)
            })
            .collect();
        hist.union_stored(&live_stored);
        let opts = safety::Options {
            policy: safety::Policy {
                preflight_olmv1: self.preflight_olmv1,
                ..safety::Policy::default()
            },
            target: kube.and_then(|v| K8sRange::parse(&format!("{}.{}", v.major, v.minor)).ok()),
            target_from: None,
        };
        let mut found = safety::check_edge(&of, &nf, &hist, &opts);
        found.extend(safety::check_bundle(&nf, &opts));
        let mut before = safety::check_edge(&of, &of, &hist, &opts);
        before.extend(safety::check_bundle(&of, &opts));
        let known: BTreeSet<(&str, &str)> = before
            .iter()
            .filter(|f| counted(f))
            .map(|f| (f.code, f.message.as_str()))
            .collect();
        let mut out = Outcome::default();
        for f in found.into_iter().filter(counted) {
            if known.contains(&(f.code, f.message.as_str())) {
                continue;
            } else if f.severity == Severity::Error {
                out.errors.push(f);
            } else if f.severity == Severity::Warning {
                out.warnings.push(f);
            }
        }
        out.preexisting = before.into_iter().filter(counted).collect();
        for v in [&mut out.errors, &mut out.warnings, &mut out.preexisting] {
            crate::diag::sort_findings(v);
            v.dedup_by(|a, b| a.code == b.code && a.message == b.message);
        }
        out
    }
}
