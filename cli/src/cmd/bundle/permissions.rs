//! `olmctl bundle permissions BUNDLE [--olmv1 --install-namespace NS] [--diff OLD]`: every right
//! the bundle's RBAC grants, as OLM v1 ([`olmctl::olmv1::render::for_install`]) or OLM v0
//! ([`olmctl::rbac::v0::objects`]) creates it, flagged where it matters
//! ([`olmctl::rbac::review`]); with `--diff`, what an upgrade adds and removes.

use clap::{Args, ValueEnum};
use olmctl::bundle::load::BundleDir;
use olmctl::diag::{Finding, Severity};
use olmctl::rbac::grants::{Granted, granted, sources};
use olmctl::rbac::review::{Context, review};
use olmctl::rbac::rights;
use olmctl::text::esc;
use serde_json::json;

use crate::args::{PullArgs, RegistryArgs, V1RenderArgs};
use crate::term::{EXIT_FINDINGS, EXIT_OK, Report, out};

/// `bundle permissions` arguments.
#[derive(Debug, Args)]
pub struct PermissionsArgs {
    /// The bundle: a directory (holding manifests/ and metadata/) or a bundle image.
    bundle: String,
    /// Review the RBAC as OLM v1 (operator-controller) creates it; default: as OLM v0 does
    /// (an AllNamespaces OperatorGroup when the CSV supports it).
    #[arg(long)]
    olmv1: bool,
    /// The install namespace (the ClusterExtension's spec.namespace, or the Subscription's
    /// namespace under OLM v0).
    #[arg(long, value_name = "NS", default_value = "operators")]
    install_namespace: String,
    #[command(flatten)]
    render: V1RenderArgs,
    /// The installed bundle (directory or image): show what upgrading from it adds and removes,
    /// and review only the added rights.
    #[arg(long, value_name = "OLD")]
    diff: Option<String>,
    /// Exit 1 when a finding is at this level or above.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Output format: text (the rights, then the findings), json (both), or sarif, github,
    /// codeclimate (the findings).
    #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
    output: Report,
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    pull: PullArgs,
}

/// `--fail-on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Error-level findings fail.
    Error,
    /// Warnings and errors fail.
    Warning,
    /// Any finding fails.
    Info,
    /// Never fail on findings.
    None,
}

/// The RBAC objects of `bundle` (its manifests as JSON: `all`) as the chosen OLM creates them,
/// or why OLM v1 refuses it.
fn objects(
    bundle: &BundleDir,
    all: &[serde_json::Value],
    a: &PermissionsArgs,
) -> Result<Vec<serde_json::Value>, String> {
    if a.olmv1 {
        let opts = a.render.options(&a.install_namespace, "1.11");
        olmctl::olmv1::render::for_install(bundle, &opts)
            .map_err(|r| format!("operator-controller would not install this bundle: {r}"))
    } else {
        Ok(olmctl::rbac::v0::objects(all, &a.install_namespace))
    }
}

fn load(arg: &str, a: &PermissionsArgs) -> Result<(Granted, Context), u8> {
    let (bundle, _scratch) = crate::inputs::bundle(arg, &a.registry, &a.pull)?;
    let all = olmctl::rbac::v0::bundle_objects(&bundle);
    let objs = objects(&bundle, &all, a).map_err(|e| {
        crate::term::error(format_args!("{}: {e}", esc(arg)));
        EXIT_FINDINGS
    })?;
    let g = granted(&objs, &sources(&bundle));
    Ok((g, Context::of_bundle(&bundle, &all, &a.install_namespace)))
}

fn rule_text(r: &olmctl::rbac::rule::Rule) -> String {
    let mut s = if r.non_resource_urls.is_empty() {
        let groups: Vec<&str> = r
            .api_groups
            .iter()
            .map(|g| if g.is_empty() { "core" } else { g.as_str() })
            .collect();
        format!("{} {}", groups.join(","), r.resources.join(", "))
    } else {
        r.non_resource_urls.join(", ")
    };
    if !r.resource_names.is_empty() {
        s.push_str(&format!(" [{}]", r.resource_names.join(", ")));
    }
    format!("{s}: {}", r.verbs.join(", "))
}

/// The rights as text: per subject, per binding, its rules.
fn grants_text(g: &Granted) -> String {
    let mut s = String::new();
    let mut order: Vec<&olmctl::rbac::grants::Grant> = g.grants.iter().collect();
    order.sort_by(|a, b| {
        (&a.subject, &a.scope, &a.binding).cmp(&(&b.subject, &b.scope, &b.binding))
    });
    let mut last: Option<(String, String)> = None;
    for gr in order {
        let who = gr.subject.describe();
        let through = format!(
            "{}, {} through {}",
            gr.scope.describe(),
            gr.role.describe(),
            gr.binding
        );
        if last.as_ref().map(|(w, _)| w) != Some(&who) {
            s.push_str(&format!("{}\n", esc(&who)));
        }
        if last.as_ref() != Some(&(who.clone(), through.clone())) {
            s.push_str(&format!("  {}\n", esc(&through)));
        }
        s.push_str(&format!("    {}\n", esc(&rule_text(&gr.rule))));
        last = Some((who, through));
    }
    for e in &g.external {
        let who: Vec<String> = e.subjects.iter().map(|s| s.describe()).collect();
        s.push_str(&format!(
            "{} binds the existing {} to {} {}\n",
            esc(&e.binding),
            esc(&e.role.describe()),
            esc(&who.join(", ")),
            e.scope.describe()
        ));
    }
    s
}

fn level(f: FailOn) -> Option<Severity> {
    match f {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::None => None,
    }
}

/// Runs `bundle permissions`.
pub fn run(a: PermissionsArgs) -> u8 {
    if let Err(e) = a.render.check(&a.install_namespace) {
        crate::term::error(e);
        return crate::term::EXIT_USAGE;
    }
    let (new, cx) = match load(&a.bundle, &a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let mut doc = json!({
        "bundle": cx.subject.bundle,
        "olm": if a.olmv1 { "v1" } else { "v0" },
        "installNamespace": a.install_namespace,
    });
    let mut text = String::new();
    // Rights one by one are made only where they are listed (JSON) or compared (--diff), and
    // bounded there (rights::MAX_RIGHTS); the text lists the rules as written.
    let too_many = |e: Box<rights::TooMany>| {
        crate::term::error(format_args!("{}: {e}", esc(&a.bundle)));
        crate::term::EXIT_USAGE
    };
    let findings: Vec<Finding> = match &a.diff {
        None => {
            text.push_str(&grants_text(&new));
            if a.output == Report::Json {
                match rights::of(&new) {
                    Ok(r) => doc["rights"] = json!(rights::lines(&r)),
                    Err(e) => return too_many(e),
                }
            }
            doc["existingRoles"] = json!(
                new.external
                    .iter()
                    .map(|e| json!({"binding": e.binding, "role": e.role, "scope": e.scope, "subjects": e.subjects}))
                    .collect::<Vec<_>>()
            );
            review(&new, &cx, &|_| true, &|_| true)
        }
        Some(old_arg) => {
            let (old, _) = match load(old_arg, &a) {
                Ok(x) => x,
                Err(code) => return code,
            };
            let old_rights = match rights::of(&old) {
                Ok(r) => r,
                Err(e) => {
                    crate::term::error(format_args!("{}: {e}", esc(old_arg)));
                    return crate::term::EXIT_USAGE;
                }
            };
            let new_rights = match rights::of(&new) {
                Ok(r) => r,
                Err(e) => return too_many(e),
            };
            let d = rights::diff(&old_rights, &new_rights);
            let show = |sign: char, set: &std::collections::BTreeSet<rights::Right>| {
                let mut s = String::new();
                for l in rights::lines(set) {
                    s.push_str(&format!(
                        "{sign} {} {}: {}\n",
                        esc(&l.subject.describe()),
                        l.scope.describe(),
                        esc(&l.describe())
                    ));
                }
                s
            };
            text.push_str(&format!(
                "upgrade from {}: {} rights added, {} removed\n",
                esc(old_arg),
                d.added.len(),
                d.removed.len()
            ));
            text.push_str(&show('+', &d.added));
            text.push_str(&show('-', &d.removed));
            doc["added"] = json!(rights::lines(&d.added));
            doc["removed"] = json!(rights::lines(&d.removed));
            let old_bindings: std::collections::BTreeSet<(String, String)> = old
                .external
                .iter()
                .flat_map(|e| e.subjects.iter().map(|s| (s.describe(), e.role.describe())))
                .collect();
            review(
                &new,
                &cx,
                &|g| rights::of_grant(g).iter().any(|r| d.added.contains(r)),
                // A binding of an existing role: new unless the old bundle bound it too.
                &|e| {
                    e.subjects
                        .iter()
                        .any(|s| !old_bindings.contains(&(s.describe(), e.role.describe())))
                },
            )
        }
    };
    let what = cx
        .subject
        .bundle
        .clone()
        .unwrap_or_else(|| a.bundle.clone());
    match a.output {
        Report::Json => {
            let report: serde_json::Value =
                serde_json::from_str(&olmctl::diag::render_json(&findings))
                    .unwrap_or(serde_json::Value::Null);
            for key in ["passed", "summary", "findings"] {
                doc[key] = report[key].clone();
            }
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Report::Text => {
            out(&text);
            if !text.is_empty() {
                out("\n");
            }
            crate::report::findings_of(&findings, &what, Report::Text, false);
        }
        other => {
            crate::report::findings_of(&findings, &what, other, false);
        }
    }
    let failing = level(a.fail_on).is_some_and(|l| findings.iter().any(|f| f.severity >= l));
    if failing { EXIT_FINDINGS } else { EXIT_OK }
}
