//! `olmctl bundle generate`: a registry+v1 bundle from plain manifests and a base CSV, with no
//! kustomize and no container tool.
//!
//! What the CSV gets follows `operator-sdk generate bundle` (see each submodule), with three
//! deliberate differences users of operator-sdk asked for: nothing is silently dropped (a kind
//! a bundle cannot carry is an error naming the file), what the base CSV says is kept
//! (relatedImages, alm-examples and webhook definitions are only replaced when the input
//! describes them), and `createdAt` is written only when asked, so the same input always gives
//! the same bytes. A fourth is about the CRDs: those the CSV's ConversionWebhook definitions
//! name are written without `spec.conversion` (see [`generate`]).

pub mod collect;
pub mod crds;
pub mod images;
pub mod metadata;
pub mod rbac;
pub mod webhooks;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use collect::{Inputs, Obj};

use crate::bundle::load::{BundleError, err, field, keys, list_at, str_at};
use crate::bundle::tree::{
    ensure_obj, get_mut, is_blank, items_mut, obj, remove, s, seq, set, strip_pos,
};
use crate::fbc::node::{Node, Pos};

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Manifest files or directories.
    pub manifests: Vec<PathBuf>,
    /// The base CSV (UI metadata, install modes, ...). When absent, the one CSV among the
    /// manifests is the base.
    pub csv_base: Option<PathBuf>,
    /// Package name.
    pub package: String,
    /// Bundle version (strict semver).
    pub version: String,
    /// Channels the bundle is in.
    pub channels: Vec<String>,
    /// The package's default channel, if set.
    pub default_channel: Option<String>,
    /// `spec.replaces` (overrides the base).
    pub replaces: Option<String>,
    /// `olm.skipRange` (overrides the base).
    pub skip_range: Option<String>,
    /// `createdAt` annotation value, when asked for.
    pub created_at: Option<String>,
    /// Service accounts that get permissions besides the deployments' own.
    pub extra_service_accounts: Vec<String>,
    /// Kinds to leave out of the bundle on purpose (e.g. Namespace).
    pub ignore_kinds: Vec<String>,
    /// Roles (by name) that stay namespaced: the Role and the RoleBindings to it are written
    /// as bundle manifests, each owned by the CSV, instead of becoming CSV `permissions`.
    pub namespaced_rbac: Vec<String>,
    /// More bundle annotations (`KEY`, `VALUE`), written into `metadata/annotations.yaml`
    /// and as `LABEL`s of `bundle.Dockerfile`; a key given again replaces a kept value.
    pub annotations: Vec<(String, String)>,
    /// An earlier bundle (the output directory): the annotations and labels of its metadata
    /// that the generator does not own are kept ([`metadata::kept`]), and so is its
    /// `tests/scorecard/config.yaml` (with the test annotations).
    pub existing: Option<PathBuf>,
}

/// A generated bundle: files relative to the output directory, and notes about what was
/// changed on the way (for the user, not errors).
#[derive(Debug, Clone)]
pub struct Generated {
    /// `(relative path, content)`, sorted by path.
    pub files: Vec<(PathBuf, String)>,
    /// Things worth telling the user.
    pub notes: Vec<String>,
}

pub(crate) fn usage(message: impl Into<String>) -> BundleError {
    err(Path::new("<arguments>"), Pos::default(), message)
}

/// Generates the bundle in memory.
pub fn generate(opts: &Options) -> Result<Generated, BundleError> {
    let version = semver::Version::parse(&opts.version).map_err(|e| {
        usage(format!(
            "--version {}: not a semantic version ({e}); use e.g. 1.2.3",
            opts.version
        ))
    })?;
    if !crate::bundle::name_problems(&opts.package).is_empty() || opts.package.contains('.') {
        return Err(usage(format!(
            "--package {}: must be a lowercase DNS-1123 label (letters, digits and '-')",
            opts.package
        )));
    }
    if opts.channels.is_empty() || opts.channels.iter().any(|c| c.trim().is_empty()) {
        return Err(usage(
            "--channels: give at least one non-empty channel name",
        ));
    }
    // A channel is a value in annotations.yaml and a LABEL of bundle.Dockerfile: a line break
    // or a control character has no place in either (and no channel of the fixtures has one).
    for (flag, c) in opts.channels.iter().map(|c| ("--channels", c)).chain(
        opts.default_channel
            .iter()
            .map(|c| ("--default-channel", c)),
    ) {
        if c.chars().any(crate::text::needs_escape) {
            return Err(usage(format!(
                "{flag} {}: a channel name may not contain line breaks, control characters or bidirectional marks",
                crate::range::go_quote(c)
            )));
        }
    }
    for (flag, names, rule) in [
        (
            "--extra-service-accounts",
            &opts.extra_service_accounts,
            crate::names::Rule::Subdomain,
        ),
        (
            "--namespaced-rbac",
            &opts.namespaced_rbac,
            crate::names::Rule::PathSegment,
        ),
    ] {
        for n in names {
            crate::names::check(rule, flag, n).map_err(|e| usage(e.to_string()))?;
        }
    }
    if let Some(r) = &opts.replaces {
        crate::names::check(crate::names::Rule::Subdomain, "--replaces", r)
            .map_err(|e| usage(e.to_string()))?;
    }
    if let Some(d) = &opts.default_channel
        && !opts.channels.contains(d)
    {
        return Err(usage(format!(
            "--default-channel {d} is not one of --channels {}",
            opts.channels.join(",")
        )));
    }
    if let Some(r) = &opts.skip_range {
        crate::range::Range::parse(r).map_err(|e| usage(format!("--skip-range {r}: {e}")))?;
    }
    for (k, v) in &opts.annotations {
        if let Some(flag) = metadata::owner_flag(k) {
            return Err(usage(format!(
                "--annotation {k}: olmctl writes this annotation itself {flag}"
            )));
        }
        if let Some(p) = metadata::problem(k, v) {
            return Err(usage(format!("--annotation: {p}")));
        }
    }
    let mut extra = match &opts.existing {
        Some(d) => metadata::kept(d)?,
        None => Vec::new(),
    };
    for (k, v) in &opts.annotations {
        match extra.iter_mut().find(|(ek, _)| ek == k) {
            Some(slot) => slot.1 = v.clone(),
            None => extra.push((k.clone(), v.clone())),
        }
    }
    let objs = collect::read_objects(&opts.manifests)?;
    let mut inputs = collect::classify(objs, &opts.ignore_kinds)?;
    let base = match &opts.csv_base {
        Some(p) => {
            let docs = crate::bundle::load::parse_file(p)?;
            let Some(doc) = docs.into_iter().next() else {
                return Err(err(p, Pos::default(), "the base CSV file is empty"));
            };
            let o = Obj {
                path: p.as_path().into(),
                doc,
            };
            if o.kind() != "ClusterServiceVersion" {
                return Err(o.error(format!(
                    "the base CSV must be a ClusterServiceVersion, not {}",
                    if o.kind().is_empty() {
                        "an untyped document"
                    } else {
                        o.kind()
                    }
                )));
            }
            if let Some(c) = inputs.csvs.first() {
                return Err(c.error(
                    "a ClusterServiceVersion is among the manifests and --csv-base is given; \
                     keep only one base",
                ));
            }
            o
        }
        None => match inputs.csvs.len() {
            1 => inputs.csvs.remove(0),
            0 => {
                return Err(usage(
                    "no base CSV: pass --csv-base FILE (a ClusterServiceVersion with the \
                     display name, description, icon, install modes, ...)",
                ));
            }
            _ => {
                return Err(inputs.csvs[1].error(
                    "several ClusterServiceVersions among the manifests; pass the base with \
                     --csv-base",
                ));
            }
        },
    };
    if inputs.deployments.is_empty() {
        return Err(usage(
            "no Deployment among the manifests: the CSV must install the operator's deployment",
        ));
    }
    let mut notes = Vec::new();
    let csv = build_csv(opts, &version, &base, &inputs, &mut notes)?;
    let accounts = service_accounts(&inputs, opts);
    let rbac = {
        let keep: BTreeSet<String> = opts.namespaced_rbac.iter().cloned().collect();
        rbac::build(&inputs, &accounts, &keep)?
    };
    let csv = with_rbac(csv, &rbac);
    // The CRDs a ConversionWebhook of the CSV names go into the bundle without spec.conversion.
    // The input needs the stanza (it says where the webhook is served, and a plain `kubectl
    // apply` of the same manifests uses it), but in a bundle it is at best ignored: OLM's
    // catalog operator applies the bundle's CRD as it is, replacing the whole CRD on an
    // upgrade, and only later, once the deployment is up, the OLM operator replaces
    // spec.conversion wholesale with its own (service `<deployment>-service`, OLM's CA), from
    // the CSV's definition (operator-lifecycle-manager install/webhook.go ::
    // createOrUpdateConversionWebhook). In between the input's stanza is live, typically a
    // Service in the input's namespace that OLM never creates and no caBundle, so conversions
    // fail; and a Webhook strategy in the new CRD makes OLM's CRD step only warn when existing
    // objects fail the new schema (catalog/step.go :: NewCRDV1Step). operator-sdk writes the
    // collected CRDs as kustomize gave them, stanza included (bundles.md §7.2: the CRDs are
    // written, conversion webhooks are only read from them), which is why all 37 fixture
    // bundles with a ConversionWebhook ship it (OLM014). Doing it here, rather than in one
    // operator's release CRDs, fixes it for every user of `bundle generate`, and the input
    // keeps the stanza the webhook definition is derived from. The CSV is final here: these
    // are exactly the CRDs whose stanza OLM would overwrite, including those of a base CSV's
    // definition the input does not describe.
    let converted: BTreeSet<String> = crate::bundle::crd::csv_conversion_crds(&csv)
        .into_iter()
        .map(String::from)
        .collect();
    for c in &inputs.crds {
        if converted.contains(c.name()) && field(&c.doc, &["spec", "conversion"]).is_some() {
            notes.push(format!(
                "CRD \"{}\" ({}): spec.conversion left out of the bundle; OLM writes it from \
                 the CSV's ConversionWebhook definition",
                c.name(),
                c.at()
            ));
        }
    }

    let mut files: Vec<(PathBuf, String)> = Vec::new();
    files.push((
        PathBuf::from(format!(
            "manifests/{}.clusterserviceversion.yaml",
            opts.package
        )),
        yaml(&csv),
    ));
    let mut names: BTreeSet<String> = BTreeSet::new();
    let csv_name = str_at(&csv, &["metadata", "name"])
        .unwrap_or_default()
        .to_string();
    let mut add = |o: &Obj, files: &mut Vec<(PathBuf, String)>| {
        let mut doc = strip_pos(&o.doc);
        if let Some(m) = get_mut(&mut doc, "metadata") {
            remove(m, "namespace");
        }
        // A namespaced Role kept out of the CSV (--namespaced-rbac) and its RoleBindings: OLM
        // installs them as they are in the install namespace, and never lifts them to cluster
        // scope (only owner-labelled Roles are, under an AllNamespaces OperatorGroup:
        // operatorgroup.go :: ensureRBACInTargetNamespace). An owner reference to the CSV by
        // name makes the garbage collector remove them with it: OLM fills in the CSV's uid
        // (catalog operator.go :: ExecutePlan, getUpdatedOwnerReferences).
        if rbac::kept(o, &opts.namespaced_rbac)
            && let Some(m) = get_mut(&mut doc, "metadata")
        {
            crate::bundle::tree::set(
                m,
                "ownerReferences",
                seq(vec![obj(vec![
                    ("apiVersion", s("operators.coreos.com/v1alpha1")),
                    ("kind", s("ClusterServiceVersion")),
                    ("name", s(&csv_name)),
                    ("uid", s("")),
                ])]),
            );
            rbac::unqualify_subjects(&mut doc, &accounts);
        }
        if o.kind() == "CustomResourceDefinition"
            && converted.contains(o.name())
            && let Some(spec) = get_mut(&mut doc, "spec")
        {
            remove(spec, "conversion");
        }
        let base = file_name(&doc);
        let mut name = base.clone();
        let mut n = 0;
        while !names.insert(name.clone()) {
            n += 1;
            name = format!("dup{n}_{base}");
        }
        files.push((PathBuf::from(format!("manifests/{name}")), yaml(&doc)));
    };
    for o in inputs
        .crds
        .iter()
        .chain(&inputs.services)
        .chain(&rbac.leftovers)
        .chain(&inputs.others)
    {
        add(o, &mut files);
    }
    // The scorecard config: from the input, else the one an earlier run left in the output.
    let scorecard = match &inputs.scorecard {
        Some(o) => {
            files.push((
                PathBuf::from(metadata::SCORECARD_CONFIG),
                yaml(&strip_pos(&o.doc)),
            ));
            true
        }
        None => opts.existing.as_ref().is_some_and(|d| {
            std::fs::symlink_metadata(d.join(metadata::SCORECARD_CONFIG)).is_ok_and(|m| m.is_file())
        }),
    };
    let all = all_annotations(opts, &extra, scorecard);
    files.push((
        PathBuf::from("metadata/annotations.yaml"),
        annotations_yaml(&all),
    ));
    files.push((
        PathBuf::from("bundle.Dockerfile"),
        dockerfile(&all, scorecard),
    ));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Generated { files, notes })
}

/// The accounts whose RBAC goes into the CSV.
fn service_accounts(inputs: &Inputs, opts: &Options) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = inputs
        .deployments
        .iter()
        .map(rbac::deployment_service_account)
        .collect();
    out.extend(opts.extra_service_accounts.iter().cloned());
    out
}

/// The deployment as an install-strategy entry; `WATCH_NAMESPACE` follows the OperatorGroup's
/// target namespaces, as operator-sdk sets it.
fn install_deployment(d: &Obj) -> Node {
    let mut spec = field(&d.doc, &["spec"])
        .map(strip_pos)
        .unwrap_or_else(crate::bundle::tree::empty);
    let target = "metadata.annotations['olm.targetNamespaces']";
    if let Some(pod) = get_mut(&mut spec, "template").and_then(|t| get_mut(t, "spec")) {
        for list in ["initContainers", "containers"] {
            for c in items_mut(pod, list) {
                // A literal value is replaced; a valueFrom the author wrote (say
                // metadata.namespace for an own-namespace operator) is kept.
                for e in items_mut(c, "env").filter(|e| {
                    str_at(e, &["name"]) == Some("WATCH_NAMESPACE")
                        && field(e, &["valueFrom"]).is_none()
                }) {
                    remove(e, "value");
                    let field_ref = obj(vec![("fieldPath", s(target))]);
                    set(e, "valueFrom", obj(vec![("fieldRef", field_ref)]));
                }
            }
        }
    }
    let mut fields = vec![("name", s(d.name())), ("spec", spec)];
    if let Some(l) = field(&d.doc, &["metadata", "labels"]).filter(|l| !is_blank(l)) {
        fields.push(("label", strip_pos(l)));
    }
    obj(fields)
}

fn build_csv(
    opts: &Options,
    version: &semver::Version,
    base: &Obj,
    inputs: &Inputs,
    notes: &mut Vec<String>,
) -> Result<Node, BundleError> {
    let mut csv = strip_pos(&base.doc);
    set(&mut csv, "apiVersion", s("operators.coreos.com/v1alpha1"));
    let meta = ensure_obj(&mut csv, &["metadata"]);
    set(meta, "name", s(&format!("{}.v{version}", opts.package)));
    if let Some(r) = &opts.skip_range {
        set(ensure_obj(meta, &["annotations"]), "olm.skipRange", s(r));
    }
    if let Some(t) = &opts.created_at {
        set(ensure_obj(meta, &["annotations"]), "createdAt", s(t));
    }
    if !inputs.samples.is_empty() {
        let mut text = String::new();
        let list = seq(inputs.samples.iter().map(|o| strip_pos(&o.doc)).collect());
        crate::fbc::write::write_json_indent_by(&list, 0, "  ", &mut text);
        set(ensure_obj(meta, &["annotations"]), "alm-examples", s(&text));
    }
    let spec = ensure_obj(&mut csv, &["spec"]);
    set(spec, "version", s(&version.to_string()));
    if let Some(r) = &opts.replaces {
        set(spec, "replaces", s(r));
    }
    let deployments: Vec<Node> = inputs.deployments.iter().map(install_deployment).collect();
    set(
        spec,
        "install",
        obj(vec![
            ("strategy", s("deployment")),
            ("spec", obj(vec![("deployments", seq(deployments))])),
        ]),
    );
    let base_owned = list_at(spec, &["customresourcedefinitions", "owned"]).to_vec();
    let had_descs = field(spec, &["customresourcedefinitions"]).is_some();
    let owned = crds::owned(&inputs.crds, &base_owned);
    let crd_descs = ensure_obj(spec, &["customresourcedefinitions"]);
    if owned.is_empty() {
        remove(crd_descs, "owned");
        if !base_owned.is_empty() {
            notes.push(format!(
                "the base CSV owns {} CRD version(s) but the input has no CRD; owned CRDs removed",
                base_owned.len()
            ));
        }
    } else {
        set(crd_descs, "owned", seq(owned));
    }
    if is_blank(crd_descs) && !had_descs {
        remove(spec, "customresourcedefinitions");
    }
    let base_hooks = list_at(spec, &["webhookdefinitions"]).to_vec();
    let hooks = webhooks::build(inputs, &base_hooks, notes)?;
    if !hooks.is_empty() {
        set(spec, "webhookdefinitions", seq(hooks));
    }
    let base_images = list_at(spec, &["relatedImages"]).to_vec();
    let images = images::build(&base_images, &inputs.deployments)?;
    if !images.is_empty() {
        set(spec, "relatedImages", seq(images));
    }
    Ok(csv)
}

fn with_rbac(mut csv: Node, rbac: &rbac::Rbac) -> Node {
    if let Some(spec) = get_mut(&mut csv, "spec")
        .and_then(|s| get_mut(s, "install"))
        .and_then(|i| get_mut(i, "spec"))
    {
        if !rbac.cluster_permissions.is_empty() {
            set(
                spec,
                "clusterPermissions",
                seq(rbac.cluster_permissions.clone()),
            );
        }
        if !rbac.permissions.is_empty() {
            set(spec, "permissions", seq(rbac.permissions.clone()));
        }
    }
    csv
}

/// operator-sdk's manifest file names: `<group>_<plural>.yaml` for CRDs,
/// `<name>_<group>_<version>_<kind>.yaml` otherwise (`<name>_<version>_<kind>.yaml` for the core
/// group), kind lower-cased. Characters other than letters, digits, `.`, `-` and `_` become `-`.
pub fn file_name(doc: &Node) -> String {
    let kind = str_at(doc, &["kind"]).unwrap_or("");
    let api = str_at(doc, &["apiVersion"]).unwrap_or("");
    let name = if kind == "CustomResourceDefinition" {
        format!(
            "{}_{}",
            str_at(doc, &["spec", "group"]).unwrap_or(""),
            str_at(doc, &["spec", "names", "plural"]).unwrap_or("")
        )
    } else {
        let n = str_at(doc, &["metadata", "name"]).unwrap_or("");
        let gv = api.replace('/', "_");
        format!("{n}_{gv}_{}", kind.to_lowercase())
    };
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{clean}.yaml")
}

fn yaml(n: &Node) -> String {
    let mut out = String::new();
    crate::fbc::emit_yaml::write_yaml(n, &mut out);
    out
}

/// The bundle annotations, in a fixed order.
pub fn annotations(opts: &Options) -> Vec<(&'static str, String)> {
    let mut v = vec![
        (keys::MEDIATYPE, "registry+v1".to_string()),
        (keys::MANIFESTS, "manifests/".to_string()),
        (keys::METADATA, "metadata/".to_string()),
        (keys::PACKAGE, opts.package.clone()),
        (keys::CHANNELS, opts.channels.join(",")),
    ];
    if let Some(d) = &opts.default_channel {
        v.push((keys::DEFAULT_CHANNEL, d.clone()));
    }
    v
}

/// Every annotation of the bundle in the order written: [`annotations`], the kept and
/// `--annotation` ones (`extra`), then the scorecard's when it has a config (operator-sdk's
/// template order).
fn all_annotations(
    opts: &Options,
    extra: &[(String, String)],
    scorecard: bool,
) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = annotations(opts)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    all.extend(extra.iter().cloned());
    if scorecard {
        all.push((metadata::TEST_MEDIATYPE.into(), "scorecard+v1".into()));
        all.push((metadata::TEST_CONFIG.into(), metadata::SCORECARD_DIR.into()));
    }
    all
}

fn annotations_yaml(all: &[(String, String)]) -> String {
    let mut out = String::from("annotations:\n");
    for (k, v) in all {
        let mut line = String::new();
        crate::fbc::emit_yaml::write_yaml(&s(v), &mut line);
        out.push_str(&format!("  {k}: {line}"));
    }
    out
}

/// A LABEL value as the Dockerfile parser reads it back (moby/buildkit
/// `frontend/dockerfile/shell/lex.go :: processDoubleQuote`): as it is when it holds only
/// characters with no meaning to the parser, else double-quoted with `\\`, `"` and `$` (which
/// the parser expands even inside quotes) escaped. Values never hold a line break or a control
/// character ([`generate`] refuses them).
fn label_value(v: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._,/+:@-".contains(c);
    if !v.is_empty() && v.chars().all(plain) {
        return v.to_string();
    }
    let mut q = String::from("\"");
    for c in v.chars() {
        if matches!(c, '\\' | '"' | '$') {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

fn dockerfile(all: &[(String, String)], scorecard: bool) -> String {
    let mut out = String::from("FROM scratch\n\n");
    for (k, v) in all {
        out.push_str(&format!("LABEL {k}={}\n", label_value(v)));
    }
    out.push_str("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n");
    if scorecard {
        out.push_str("COPY tests/scorecard /tests/scorecard/\n");
    }
    out
}

/// Writes a generated bundle below `out`. Top-level regular files of `out/manifests` that the
/// generator did not write are removed (they would be stale objects of an earlier run); other
/// files of `metadata/` (properties.yaml, dependencies.yaml) and subdirectories are kept.
///
/// Nothing is written through a symlink below `out` (see [`crate::outdir`]): a linked
/// `manifests/` or `metadata/`, a linked file where a generated file goes, or any link in
/// `manifests/` is refused before anything is changed. `out` itself may be a link.
pub fn write(out: &Path, g: &Generated) -> Result<(), BundleError> {
    let fail = |e: crate::outdir::OutError| err(&e.path, Pos::default(), e.message);
    let manifests = Path::new("manifests");
    for rel in [manifests, Path::new("metadata")]
        .into_iter()
        .chain(g.files.iter().map(|(p, _)| p.as_path()))
    {
        crate::outdir::check(out, rel).map_err(fail)?;
    }
    let keep: BTreeSet<&Path> = g.files.iter().map(|(p, _)| p.as_path()).collect();
    let mut stale = Vec::new();
    for (name, kind) in crate::outdir::entries(out, manifests).map_err(fail)? {
        let rel = manifests.join(&name);
        if kind == crate::outdir::Kind::Link {
            return Err(fail(crate::outdir::link_refused(out, &out.join(&rel))));
        }
        if kind == crate::outdir::Kind::File && !keep.contains(rel.as_path()) {
            stale.push(rel);
        }
    }
    for rel in stale {
        crate::outdir::remove_file(out, &rel).map_err(fail)?;
    }
    for (rel, text) in &g.files {
        crate::outdir::write(out, rel, text.as_bytes()).map_err(fail)?;
    }
    Ok(())
}
