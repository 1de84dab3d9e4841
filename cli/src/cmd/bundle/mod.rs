//! `olmctl bundle ...`.

pub mod installer_rbac;
pub mod permissions;
pub mod render;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use olmctl::oci::deliver::{Dest, Want};

use crate::term::{EXIT_USAGE, Output, Report};
use olmctl::checks::bundle::Options;
use olmctl::text::esc;

#[derive(Debug, Subcommand)]
pub enum BundleCmd {
    /// Generate a registry+v1 bundle (CSV, manifests, metadata/annotations.yaml and
    /// bundle.Dockerfile) from plain manifests and a base CSV, then validate it. Same input,
    /// same bytes. Exit 0 when the bundle validates, 1 on error-level findings, 2 when the
    /// input cannot be used.
    #[command(disable_version_flag = true)]
    Generate(Box<GenerateArgs>),
    /// Build a bundle image without a container daemon: one reproducible layer with
    /// /manifests and /metadata, labels from metadata/annotations.yaml. Prints
    /// `<repository>@<digest>`. The bundle is validated first; error-level findings stop the
    /// build unless --force.
    Build(Box<BuildArgs>),
    /// Print the Kubernetes objects OLM v1 (operator-controller) applies for a bundle:
    /// ServiceAccounts, RBAC with v1's generated names, CRDs, the bundle's other objects,
    /// Deployments, webhook configurations, Services and certificates, as its registry+v1
    /// renderer makes them; or its reason to refuse the bundle (exit 1). For the bundle's
    /// catalog entry (the olm.bundle blob `opm render` writes), see `catalog render`.
    #[command(disable_version_flag = true)]
    Render(Box<render::RenderArgs>),
    /// Review every right the bundle's RBAC grants (as OLM v0 creates it, or OLM v1 with
    /// --olmv1), flagged where it matters: cluster-wide rights, secrets, wildcards,
    /// escalate/bind/impersonate, RBAC, webhooks, other CRDs, existing roles bound. With --diff
    /// OLD, what an upgrade adds and removes. Exit 1 on findings at --fail-on's level.
    #[command(disable_version_flag = true)]
    Permissions(Box<permissions::PermissionsArgs>),
    /// Print the installer ServiceAccount, ClusterRoles, Roles and bindings that
    /// operator-controller v1.10 and earlier needs (spec.serviceAccount) to install, upgrade
    /// and delete exactly this bundle: v1.10's RBAC preflight checks, Kubernetes' escalation
    /// check, names scoped by resourceNames, nothing more.
    #[command(disable_version_flag = true, name = "installer-rbac")]
    InstallerRbac(Box<installer_rbac::InstallerRbacArgs>),
    /// Pull a bundle image and extract it into DIR (new or empty), checking every digest and
    /// refusing unsafe archive entries.
    Unpack {
        /// The bundle image (a registry reference, or oci:PATH[:TAG] for an OCI layout).
        image: String,
        /// Target directory (created when missing; must be empty).
        dir: PathBuf,
        #[command(flatten)]
        registry: crate::args::RegistryArgs,
        #[command(flatten)]
        pull: crate::args::PullArgs,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Validate bundle directories: the registry+v1 format, owned/bundled CRDs, the CSV, and
    /// what OLM only finds at runtime. Exit 0 when no error-level finding (1 with --strict and
    /// warnings), 1 on errors, 2 when a directory cannot be read.
    Validate {
        /// Bundles: directories (holding manifests/ and metadata/, or a bundle/ subdirectory)
        /// or bundle images (a registry reference, or oci:PATH[:TAG] for an OCI layout).
        #[arg(required = true, value_name = "BUNDLE")]
        dirs: Vec<String>,
        /// Treat warnings as errors for the exit status.
        #[arg(long)]
        strict: bool,
        /// Kubernetes version the bundle must run on (e.g. 1.29): APIs removed at or before
        /// it are errors, later removals warnings.
        #[arg(long, value_name = "X.Y")]
        k8s_version: Option<String>,
        /// OpenShift version the bundle must run on (e.g. 4.21), as the Kubernetes version it
        /// ships (4.21 is 1.34). Without either flag, the bundle's com.redhat.openshift.versions
        /// annotation (v4.12, =v4.14, v4.12-v4.16) gives the range, else spec.minKubeVersion.
        #[arg(long, value_name = "X.Y", conflicts_with = "k8s_version")]
        openshift_version: Option<String>,
        /// Run only these suites or codes (comma-separated or repeated): bundle, csv, crd,
        /// deprecated-apis, operatorhub, good-practices, olm, all, or codes such as CSV005;
        /// `!CODE` leaves a code (or the codes it starts) out, as --ignore does.
        #[arg(long, value_delimiter = ',', value_name = "SUITE|CODE")]
        select: Vec<String>,
        /// Optional suites (or codes) to run besides the selection: objects, community, or
        /// operator-sdk's selectors (name=community, suite=operatorframework, ...).
        #[arg(long, value_delimiter = ',', value_name = "SUITE|SELECTOR")]
        select_optional: Vec<String>,
        /// Values for the optional suites, as operator-sdk takes them: index-path=FILE (the
        /// bundle Dockerfile the community suite reads), k8s-version=X.Y (as --k8s-version),
        /// container-tools=... (accepted and unused: images are read from the registry).
        #[arg(long, value_delimiter = ',', value_name = "KEY=VALUE")]
        optional_values: Vec<String>,
        #[command(flatten)]
        registry: crate::args::RegistryArgs,
        #[command(flatten)]
        pull: crate::args::PullArgs,
        /// Custom OperatorHub categories, a JSON file {"categories": [...]} that replaces the
        /// standard set (default: the file named by $OPERATOR_BUNDLE_CATEGORIES, as
        /// operator-framework/api reads it).
        #[arg(long, value_name = "FILE")]
        categories_file: Option<PathBuf>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
        output: Report,
        #[command(flatten)]
        findings: crate::report::FindingArgs,
    },
}

/// Arguments of `bundle generate`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// Manifest files or directories (multi-document YAML, JSON, `kind: List`): CRDs,
    /// Deployments, ServiceAccounts, RBAC, Services, webhook configurations, sample CRs
    /// and the other kinds a bundle may carry.
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    manifests: Vec<PathBuf>,
    /// The base ClusterServiceVersion (display name, description, icon, install modes,
    /// ...); everything it sets is kept. Optional when one CSV is among the manifests.
    #[arg(long, value_name = "FILE")]
    csv_base: Option<PathBuf>,
    /// Package name.
    #[arg(long)]
    package: String,
    /// Bundle version (semver); the CSV is named <package>.v<version>.
    #[arg(long)]
    version: String,
    /// Channels (comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    channels: Vec<String>,
    /// The package's default channel.
    #[arg(long)]
    default_channel: Option<String>,
    /// spec.replaces: the CSV this one replaces.
    #[arg(long, value_name = "CSV")]
    replaces: Option<String>,
    /// The olm.skipRange annotation, e.g. '>=1.0.0 <1.2.0'.
    #[arg(long, value_name = "RANGE")]
    skip_range: Option<String>,
    /// Set the createdAt annotation (to TIME, or to now in UTC when no value is given).
    #[arg(long, value_name = "TIME", num_args = 0..=1, default_missing_value = "now")]
    created_at: Option<String>,
    /// More service accounts whose Roles and ClusterRoles go into the CSV.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    extra_service_accounts: Vec<String>,
    /// Leave objects of this kind out on purpose (e.g. Namespace); other kinds a bundle
    /// cannot carry are an error.
    #[arg(long, value_name = "KIND")]
    ignore_kind: Vec<String>,
    /// Keep this Role and the RoleBindings to it namespaced: written as bundle manifests owned
    /// by the CSV, not CSV permissions (which OLM lifts to cluster scope under an
    /// AllNamespaces OperatorGroup). For rights the operator needs in its own namespace only,
    /// such as its leader-election Lease.
    #[arg(long, value_name = "ROLE")]
    namespaced_rbac: Vec<String>,
    /// Another bundle annotation, written into metadata/annotations.yaml and as a LABEL of
    /// bundle.Dockerfile (repeatable), e.g. com.redhat.openshift.versions=v4.14-v4.21. KEY
    /// must be a valid Kubernetes annotation key; the bundle's own annotations (package,
    /// channels, ...) are set by their flags.
    #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
    annotation: Vec<(String, String)>,
    /// Output directory (gets manifests/, metadata/ and bundle.Dockerfile). When it holds an
    /// earlier bundle, the annotations of its metadata/annotations.yaml and the LABELs of its
    /// bundle.Dockerfile that olmctl does not set are kept, in their order, in both files; so is
    /// its tests/scorecard/config.yaml (a scorecard Configuration among --manifests replaces it),
    /// with the scorecard test annotations and COPY.
    #[arg(long, short = 'O', value_name = "DIR")]
    output: PathBuf,
}

/// `KEY=VALUE` (the value may be empty, the key may not).
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// `bundle build` flags.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The bundle directory (holding manifests/ and metadata/, or a bundle/ subdirectory).
    dir: PathBuf,
    /// Image reference to build (and push) as.
    #[arg(long, short = 't')]
    tag: String,
    /// Push the image to the registry.
    #[arg(long)]
    push: bool,
    /// Also write the image into this OCI layout directory (usable offline and by skopeo as
    /// oci:DIR:TAG).
    #[arg(long, value_name = "DIR")]
    oci_layout: Option<PathBuf>,
    /// Build even when validation reports error-level findings.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    registry: crate::args::RegistryArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
    output: Output,
}

pub fn run(cmd: BundleCmd) -> u8 {
    match cmd {
        BundleCmd::Build(a) => build(*a),
        BundleCmd::Render(a) => render::run(*a),
        BundleCmd::Permissions(a) => permissions::run(*a),
        BundleCmd::InstallerRbac(a) => installer_rbac::run(*a),
        BundleCmd::Unpack {
            image,
            dir,
            registry,
            pull,
            output,
        } => crate::inputs::pull_to_dir(&image, &dir, &registry, &pull, output, Want::Bundle),
        BundleCmd::Generate(args) => {
            let a = *args;
            let opts = olmctl::bundle::generate::Options {
                manifests: a.manifests,
                csv_base: a.csv_base,
                package: a.package,
                version: a.version,
                channels: a.channels,
                default_channel: a.default_channel,
                replaces: a.replaces,
                skip_range: a.skip_range,
                created_at: a
                    .created_at
                    .map(|t| if t == "now" { now_rfc3339() } else { t }),
                extra_service_accounts: a.extra_service_accounts,
                namespaced_rbac: a.namespaced_rbac,
                ignore_kinds: a.ignore_kind,
                annotations: a.annotation,
                existing: Some(a.output.clone()),
            };
            generate(&opts, &a.output)
        }
        BundleCmd::Validate {
            dirs,
            strict,
            k8s_version,
            openshift_version,
            select,
            select_optional,
            optional_values,
            categories_file,
            registry,
            pull,
            output,
            mut findings,
        } => {
            // `--select '!CODE'`: a code left out, as --ignore.
            let (negated, select): (Vec<String>, Vec<String>) =
                select.into_iter().partition(|s| s.trim().starts_with('!'));
            findings.ignore.extend(negated);
            let mut k8s_version = k8s_version;
            let mut index_file = None;
            for kv in &optional_values {
                match kv.split_once('=') {
                    Some(("k8s-version", v)) => {
                        k8s_version.get_or_insert_with(|| v.to_string());
                    }
                    Some(("index-path", f)) => {
                        let f = PathBuf::from(f);
                        match olmctl::input::read_text(&f) {
                            Ok(t) => index_file = Some((f, t)),
                            Err(e) => {
                                crate::term::error(format_args!(
                                    "--optional-values index-path={}: {e}",
                                    f.display()
                                ));
                                return EXIT_USAGE;
                            }
                        }
                    }
                    Some(("container-tools", _)) => {}
                    _ => {
                        crate::term::error(format_args!(
                            "--optional-values {kv}: use index-path=FILE, k8s-version=X.Y or container-tools=NAME"
                        ));
                        return EXIT_USAGE;
                    }
                }
            }
            let k8s_version = match k8s_version.as_deref().map(parse_k8s_version).transpose() {
                Ok(v) => v,
                Err(e) => {
                    crate::term::error(e);
                    return EXIT_USAGE;
                }
            };
            let (k8s_version, k8s_version_from) = match openshift_version {
                None => (k8s_version, None),
                Some(os) => match olmctl::openshift::kubernetes_range(&os) {
                    Ok((k, hi)) if k == hi => (
                        Some(semver::Version::new(k.0, k.1, 0)),
                        Some(format!(
                            "the Kubernetes release of --openshift-version {}",
                            os.trim()
                        )),
                    ),
                    Ok(_) => {
                        crate::term::error(format_args!(
                            "--openshift-version {}: give one release (e.g. 4.21); ranges are for the check commands",
                            esc(os.trim())
                        ));
                        return EXIT_USAGE;
                    }
                    Err(e) => {
                        crate::term::error(format_args!("--openshift-version: {e}"));
                        return EXIT_USAGE;
                    }
                },
            };
            // An empty OPERATOR_BUNDLE_CATEGORIES means the standard set, as upstream.
            let categories_file = categories_file.or_else(|| {
                std::env::var_os("OPERATOR_BUNDLE_CATEGORIES")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            });
            let categories = match categories_file {
                Some(f) => match olmctl::checks::bundle::hub::CustomCategories::read(&f) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        crate::term::error(e);
                        return EXIT_USAGE;
                    }
                },
                None => None,
            };
            let mut opts = Options {
                k8s_version,
                k8s_version_from,
                select,
                optional: select_optional,
                categories,
                index_file,
                image_platforms: None,
            };
            if let Err(e) = opts.check_select() {
                crate::term::error(e);
                return EXIT_USAGE;
            }
            // Images are pulled (each into a scratch directory kept until the end); local
            // paths are read as they are. An input that is not there is an image only when it
            // reads as one that names its registry (`oci:`, a host with a dot or a port, a tag
            // or a digest): a missing directory stays a missing directory, reported with the
            // others checked.
            let image_like = |s: &str| {
                !std::path::Path::new(s).exists()
                    && (s.starts_with("oci:")
                        || s.contains(['@', ':'])
                        || s.split('/').next().is_some_and(|h| h.contains('.')))
                    && !s.starts_with(['/', '.'])
            };
            let images: Vec<bool> = dirs.iter().map(|d| image_like(d)).collect();
            let inputs: Vec<&str> = dirs
                .iter()
                .zip(&images)
                .filter_map(|(d, &image)| image.then_some(d.as_str()))
                .collect();
            let (pulled, _scratch) = match crate::inputs::pulled(
                &inputs,
                &registry,
                &pull,
                olmctl::oci::deliver::Want::Bundle,
            ) {
                Ok(p) => p,
                Err(e) => {
                    crate::term::error(e);
                    return EXIT_USAGE;
                }
            };
            let names: Vec<String> = dirs.clone();
            let mut pulled = pulled.into_iter();
            let dirs: Vec<PathBuf> = dirs
                .iter()
                .zip(images)
                .map(|(given, image)| {
                    image
                        .then(|| pulled.next().flatten().map(|(_, d)| d))
                        .flatten()
                        .unwrap_or_else(|| PathBuf::from(given))
                })
                .collect();
            validate(
                &dirs,
                Some(&names),
                opts,
                Some(&registry),
                strict,
                output,
                &findings,
            )
        }
    }
}

fn generate(opts: &olmctl::bundle::generate::Options, out: &std::path::Path) -> u8 {
    let g = match olmctl::bundle::generate::generate(opts) {
        Ok(g) => g,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    for n in &g.notes {
        eprintln!("note: {}", esc(n));
    }
    if let Err(e) = olmctl::bundle::generate::write(out, &g) {
        crate::term::error(e);
        return EXIT_USAGE;
    }
    eprintln!("wrote {} files to {}", g.files.len(), esc(out.display()));
    validate(
        &[out.to_path_buf()],
        None,
        Options::default(),
        None,
        false,
        Report::Text,
        &crate::report::FindingArgs::default(),
    )
}

/// The current time as RFC 3339 UTC (`2026-11-23T10:00:00Z`).
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    olmctl::oci::image::rfc3339(secs)
}

/// Reads `--k8s-version` (`1.29`, `v1.29`, `1.29.0`); trailing text is an error.
pub fn parse_k8s_version(s: &str) -> Result<semver::Version, String> {
    olmctl::checks::bundle::apis::parse_kube_version_strict(s).ok_or_else(|| {
        format!("--k8s-version {s}: expected a Kubernetes version such as 1.29 or 1.29.0")
    })
}

/// `bundle validate`: one library operation ([`olmctl::validate::each`]), each bundle's
/// findings printed as it is checked, in the order given; a directory that cannot be read is
/// an error on stderr (exit status 2) and the others are still checked.
/// Each bundle is shown as `names` gives it (else as its directory): an image pulled into a
/// scratch directory is named by its reference, its files as `REFERENCE/manifests/...`.
fn validate(
    dirs: &[PathBuf],
    names: Option<&[String]>,
    opts: Options,
    registry: Option<&crate::args::RegistryArgs>,
    strict: bool,
    output: Report,
    args: &crate::report::FindingArgs,
) -> u8 {
    let name = |i: usize| {
        names
            .and_then(|n| n.get(i).cloned())
            .unwrap_or_else(|| dirs[i].display().to_string())
    };
    // The registries are asked (and --password-stdin read) only when ARC checks run.
    let reg = match registry
        .filter(|_| opts.runs("ARC"))
        .map(|r| crate::args::registry_options(r, 64 << 20))
        .transpose()
    {
        Ok(r) => r,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let rt = match crate::term::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let mut stream = match crate::report::Stream::new(output, strict, dirs.len(), "bundle", args) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if !dirs.is_empty() {
        stream.checking(&name(0));
    }
    rt.block_on(olmctl::validate::each(dirs, opts, reg.as_ref(), |i, r| {
        match r {
            Ok(mut findings) => {
                let shown = name(i);
                if shown != dirs[i].display().to_string() {
                    for l in findings.iter_mut().filter_map(|f| f.location.as_mut()) {
                        if let Ok(rel) = l.file.strip_prefix(&dirs[i]) {
                            l.file = PathBuf::from(format!("{shown}/{}", rel.display())).into();
                        }
                    }
                }
                stream.done(&shown, findings)
            }
            Err(e) => stream.unread(e),
        }
        if i + 1 < dirs.len() {
            stream.checking(&name(i + 1));
        }
    }));
    let what = format!(
        "{} bundle{}",
        dirs.len(),
        if dirs.len() == 1 { "" } else { "s" }
    );
    stream.finish(&what)
}

/// `bundle build`: one library operation ([`olmctl::build::bundle`]), printed.
fn build(a: BuildArgs) -> u8 {
    let opts = match crate::term::or_usage(crate::args::registry_options(&a.registry, u64::MAX)) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let dest = Dest {
        tag: a.tag.clone(),
        push: a.push,
        layout: a.oci_layout.clone(),
    };
    let events = crate::report::stderr_events();
    crate::build::run(
        olmctl::build::bundle(&a.dir, &dest, a.force, &opts, events.as_ref()),
        a.output,
        |b| (&b.delivered, serde_json::json!({"labels": b.labels})),
    )
}
