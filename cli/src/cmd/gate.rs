//! `olmctl gate ...`: the upgrade gate offline, over objects given as YAML.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use jiff::Timestamp;

use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, error, out};
use olmctl::gate::decide::{Context, Decision, Reason, Verdict, evaluate};
use olmctl::gate::extension::{ExtContext, ExtVerdict, ExtensionDecision};
use olmctl::gate::objects::Objects;
use olmctl::text::esc;

/// `olmctl gate` subcommands.
#[derive(Debug, Subcommand)]
pub enum GateCmd {
    /// Decide, as the operator would, for every pending InstallPlan an UpgradePolicy covers:
    /// approve, hold or wait, with reasons; and for every OLM v1 ClusterExtension it selects
    /// (spec.clusterExtensionSelector): where its version pin goes (move, current, wait or
    /// hold). Exit 0 when every pending plan would be approved and no ClusterExtension is held
    /// or waiting, 1 otherwise, 2 on bad input.
    Evaluate {
        /// The UpgradePolicy document (olmctl.dev/v1, or the deprecated v1alpha1).
        #[arg(long, value_name = "FILE")]
        policy: PathBuf,
        /// Cluster objects: YAML or JSON files (`kubectl get -o yaml` dumps or multi-document
        /// files of Subscriptions, InstallPlans, CSVs, CRDs, ConfigMaps, ClusterExtensions and
        /// ClusterCatalogs; other kinds are ignored), or directories of such files.
        #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// The catalog content ClusterExtensions resolve from: an FBC directory or file (CRD
        /// safety needs its bundles' olm.bundle.object manifests).
        #[arg(long, value_name = "DIR")]
        catalog: Option<PathBuf>,
        /// The clock, as RFC 3339 (e.g. 2026-09-20T10:00:00Z); default: now.
        #[arg(long)]
        now: Option<String>,
        /// The cluster's Kubernetes version (e.g. 1.30); without it minKubeVersion is not
        /// checked.
        #[arg(long, value_name = "X.Y")]
        kube_version: Option<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

/// Runs a `gate` subcommand.
pub fn run(cmd: GateCmd) -> u8 {
    match cmd {
        GateCmd::Evaluate {
            policy,
            files,
            catalog,
            now,
            kube_version,
            output,
        } => match evaluate_files(
            &policy,
            &files,
            catalog.as_deref(),
            now.as_deref(),
            kube_version.as_deref(),
        ) {
            Ok((decisions, extensions)) => {
                match output {
                    Output::Text => {
                        let mut s = text(&decisions);
                        if catalog.is_some() || !extensions.is_empty() {
                            s.push_str(&extensions_text(&extensions));
                        }
                        out(&s)
                    }
                    Output::Json => {
                        let mut all = json(&decisions);
                        if let serde_json::Value::Array(a) = &mut all {
                            a.extend(extensions.iter().map(extension_json));
                        }
                        out(&format!(
                            "{}\n",
                            serde_json::to_string_pretty(&all).unwrap_or_default()
                        ))
                    }
                }
                if decisions.iter().all(|d| d.decision == Verdict::Approve)
                    && extensions
                        .iter()
                        .all(|d| matches!(d.decision, ExtVerdict::Move | ExtVerdict::Current))
                {
                    EXIT_OK
                } else {
                    EXIT_FINDINGS
                }
            }
            Err(e) => {
                error(e);
                EXIT_USAGE
            }
        },
    }
}

/// The decisions for InstallPlans and for ClusterExtensions.
pub type Decisions = (Vec<Decision>, Vec<ExtensionDecision>);

/// Reads the policy, the objects and the catalog, and decides; errors name the file (and
/// line).
pub fn evaluate_files(
    policy: &Path,
    files: &[PathBuf],
    catalog: Option<&Path>,
    now: Option<&str>,
    kube: Option<&str>,
) -> Result<Decisions, String> {
    let text =
        olmctl::input::read_text(policy).map_err(|e| format!("{}: {e}", policy.display()))?;
    let p = olmctl::gate::policy::parse(&text).map_err(|e| {
        format!(
            "{}:{}:{}: {}",
            policy.display(),
            e.pos.line,
            e.pos.col,
            e.message
        )
    })?;
    let mut objects = Objects::default();
    for f in crate::inputs::object_files(files)? {
        let text = olmctl::input::read_text(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        objects.add_text(&f, &text).map_err(|e| e.to_string())?;
    }
    let now = match now {
        Some(s) => s
            .parse::<Timestamp>()
            .map_err(|e| format!("--now {s:?} is not an RFC 3339 time ({e})"))?,
        None => Timestamp::now(),
    };
    let kube = match kube {
        Some(k) => Some(
            olmctl::checks::bundle::apis::parse_kube_version_strict(k)
                .ok_or_else(|| format!("--kube-version {k:?} is not a version (e.g. 1.30)"))?,
        ),
        None => None,
    };
    let cfg = match catalog {
        Some(c) => crate::inputs::catalog_cfg(c)?,
        None => Default::default(),
    };
    let plans = evaluate(&Context {
        policies: std::slice::from_ref(&p),
        objects: &objects,
        now,
        kube: kube.as_ref(),
    });
    let extensions = olmctl::gate::extension::evaluate(&ExtContext {
        policies: std::slice::from_ref(&p),
        objects: &objects,
        catalog: &cfg,
        // One content, given with --catalog: nothing to resolve across catalogs.
        contents: &Default::default(),
        now,
        kube: kube.as_ref(),
    });
    Ok((plans, extensions))
}

fn reasons_json(reasons: &[Reason]) -> Vec<serde_json::Value> {
    reasons
        .iter()
        .map(|r| {
            serde_json::json!({
                "code": r.code,
                "effect": r.effect.as_str(),
                "message": r.message,
            })
        })
        .collect()
}

fn reasons_text(s: &mut String, reasons: &[Reason], requeue: Option<Timestamp>) {
    for r in reasons {
        s.push_str(&format!(
            "  {:<4}  {}  {}\n",
            r.effect.as_str(),
            r.code,
            esc(&r.message)
        ));
    }
    if let Some(t) = requeue {
        s.push_str(&format!("  look again at {t}\n"));
    }
}

/// One ClusterExtension decision as JSON (beside the InstallPlans' entries, told apart by the
/// `clusterExtension` key).
pub fn extension_json(d: &ExtensionDecision) -> serde_json::Value {
    serde_json::json!({
        "clusterExtension": d.name,
        "package": d.package,
        "resourceVersion": d.resource_version,
        "installedBundle": d.installed_bundle,
        "installed": d.installed,
        "version": d.version,
        "next": d.next.as_ref().map(|s| serde_json::json!({
            "bundle": s.bundle,
            "version": s.version.to_string(),
            "channel": s.channel,
            "edge": s.edge.map(|e| e.as_str()),
        })),
        "pin": d.pin,
        "decision": d.decision.as_str(),
        "reasons": reasons_json(&d.reasons),
        "requeueAt": d.requeue_at.map(|t| t.to_string()),
    })
}

/// The ClusterExtension decisions for people.
pub fn extensions_text(decisions: &[ExtensionDecision]) -> String {
    let mut s = String::new();
    let mut counts = [0usize; 4];
    for d in decisions {
        counts[d.decision as usize] += 1;
        let pin = match (&d.pin, d.changes_pin()) {
            (Some(p), true) => format!("pin {:?} -> {}", d.version, esc(p)),
            (Some(p), false) => format!("pin {} (kept)", esc(p)),
            (None, _) => format!("pin {:?} (left as it is)", d.version),
        };
        s.push_str(&format!(
            "clusterextension/{}: {}\n  {} installed {}; {pin}\n",
            esc(&d.name),
            d.decision.as_str(),
            esc(&d.package),
            esc(d.installed.as_deref().unwrap_or("nothing")),
        ));
        if let Some(n) = &d.next {
            s.push_str(&format!(
                "  next step {} ({}, {} in channel {})\n",
                esc(&n.bundle),
                n.version,
                n.edge.map_or("SelfCertified", |e| e.as_str()),
                esc(&n.channel)
            ));
        }
        reasons_text(&mut s, &d.reasons, d.requeue_at);
    }
    s.push_str(&format!(
        "{} ClusterExtension(s): {} move, {} current, {} wait, {} hold\n",
        decisions.len(),
        counts[ExtVerdict::Move as usize],
        counts[ExtVerdict::Current as usize],
        counts[ExtVerdict::Wait as usize],
        counts[ExtVerdict::Hold as usize],
    ));
    s
}

/// The decisions as JSON: one entry per InstallPlan.
pub fn json(decisions: &[Decision]) -> serde_json::Value {
    serde_json::Value::Array(
        decisions
            .iter()
            .map(|d| {
                serde_json::json!({
                    "installPlan": d.install_plan,
                    "namespace": d.namespace,
                    "resourceVersion": d.resource_version,
                    "subscriptions": d.subscriptions,
                    "from": d.from,
                    "to": d.to,
                    "decision": d.decision.as_str(),
                    "reasons": reasons_json(&d.reasons),
                    "requeueAt": d.requeue_at.map(|t| t.to_string()),
                })
            })
            .collect(),
    )
}

/// The decisions for people.
pub fn text(decisions: &[Decision]) -> String {
    let mut s = String::new();
    let mut counts = [0usize; 3];
    for d in decisions {
        counts[d.decision as usize] += 1;
        s.push_str(&format!(
            "{}/{}: {}\n  {} -> {}\n  subscriptions: {}\n",
            esc(&d.namespace),
            esc(&d.install_plan),
            d.decision.as_str(),
            if d.from.is_empty() {
                "(new install)".to_string()
            } else {
                esc(d.from.join(", ")).to_string()
            },
            esc(d.to.join(", ")),
            esc(d.subscriptions.join(", ")),
        ));
        reasons_text(&mut s, &d.reasons, d.requeue_at);
    }
    s.push_str(&format!(
        "{} pending plan(s): {} approve, {} wait, {} hold\n",
        decisions.len(),
        counts[Verdict::Approve as usize],
        counts[Verdict::Wait as usize],
        counts[Verdict::Hold as usize],
    ));
    s
}
