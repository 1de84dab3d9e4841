//! Flags and values shared by several commands: registry and pull flags, sizes, durations,
//! labels, platforms, and the value enums of output formats and semantics.

use std::io::Read;
use std::time::Duration;

use clap::{Args, ValueEnum};
use olmctl::fbc::write::Format;
use olmctl::graph::path::Semantics;
use olmctl::oci::auth::Credential;
use olmctl::oci::deliver::PullOptions;
use olmctl::oci::image::Platform;
use olmctl::oci::registry::Options;

/// Flags for talking to registries.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Use plain HTTP instead of HTTPS (loopback registries always use plain HTTP).
    #[arg(long)]
    pub plain_http: bool,
    /// Do not verify TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// User name for the target registry (with --password-stdin). Without it, credentials come
    /// from REGISTRY_AUTH_FILE, containers auth.json or ~/.docker/config.json.
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the password (or token) for --username from stdin.
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Retries for transient registry failures (5xx, 429, dropped connections, timeouts).
    #[arg(long, default_value_t = 4)]
    pub retries: u32,
    /// Longest time one attempt of one registry operation may take: authenticating, sending
    /// the request and reading the whole answer (a blob download or upload included). A
    /// registry that stays silent is given up on sooner: after 30 s when connecting, after
    /// 60 s without any data (or after --timeout when that is shorter). A timed-out attempt
    /// is retried like a dropped connection, so one operation takes at most
    /// (--retries + 1) x --timeout plus the backoff between attempts (250 ms, doubling, at
    /// most 30 s). Units ms, s, m, h (a bare number is seconds).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

impl RegistryArgs {
    /// The flags' defaults, with `timeout`: for commands that read images without offering
    /// the registry flags (or offering some of them).
    pub fn defaults(timeout: Duration) -> RegistryArgs {
        RegistryArgs {
            plain_http: false,
            insecure: false,
            username: None,
            password_stdin: false,
            retries: 4,
            timeout,
        }
    }
}

/// Flags for pulling.
#[derive(Debug, Clone, Args)]
pub struct PullArgs {
    /// Platform to pick from a multi-platform index (default: this machine's, else
    /// linux/amd64).
    #[arg(long)]
    pub platform: Option<String>,
    /// Cap on the uncompressed size of all layers, in bytes (suffixes K, M, G allowed).
    #[arg(long, default_value = "2G", value_parser = parse_size)]
    pub max_size: u64,
}

/// Parses `123`, `10K`, `5M`, `2G` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{s:?} is not a size like 512M or 2G"))
}

/// Parses `500ms`, `30s`, `10m`, `1h`, `1h30m` or a bare number of seconds; zero is refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration like 30s, 10m, 1h30m or 500ms");
    let mut total = Duration::ZERO;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ms: u64 = match &rest[..unit_len] {
            "ms" => 1,
            // A bare number is seconds.
            "" | "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        let part = n.checked_mul(ms).ok_or_else(bad)?;
        total = total.saturating_add(Duration::from_millis(part));
        rest = &rest[unit_len..];
    }
    if total.is_zero() {
        return Err(bad());
    }
    Ok(total)
}

/// The registry options of `args`, reading the password from stdin when asked; `max_blob` is
/// the largest blob a pull accepts. Events (retries, upload progress) go to stderr.
pub fn registry_options(args: &RegistryArgs, max_blob: u64) -> Result<Options, String> {
    let credentials = match (&args.username, args.password_stdin) {
        (Some(u), true) => {
            let mut p = String::new();
            std::io::stdin()
                .read_to_string(&mut p)
                .map_err(|e| format!("cannot read the password from stdin: {e}"))?;
            let p = p.trim_end_matches(['\n', '\r']).to_string();
            if p.is_empty() {
                return Err("--password-stdin: stdin was empty".into());
            }
            Some(Credential::Basic {
                username: u.clone(),
                password: p,
            })
        }
        _ => None,
    };
    let opts = Options {
        plain_http: args.plain_http,
        insecure: args.insecure,
        credentials,
        retries: args.retries,
        timeout: args.timeout,
        max_blob,
        events: crate::report::stderr_events(),
        ..Options::default()
    };
    Ok(opts)
}

/// The pull options of `pull`.
pub fn pull_options(pull: &PullArgs) -> Result<PullOptions, String> {
    Ok(PullOptions {
        platform: platform(&pull.platform).map_err(|e| format!("--platform: {e}"))?,
        max_size: pull.max_size,
    })
}

/// `--platform`, else this machine's.
pub fn platform(p: &Option<String>) -> Result<Platform, String> {
    match p {
        Some(s) => Platform::parse(s),
        None => Ok(Platform::host()),
    }
}

/// `--label KEY=VALUE` arguments (the last of a key wins).
pub fn parse_labels(args: &[String]) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut labels = std::collections::BTreeMap::new();
    for l in args {
        match l.split_once('=') {
            Some((k, v)) if !k.is_empty() => {
                labels.insert(k.to_string(), v.to_string());
            }
            _ => return Err(format!("--label {l:?} is not KEY=VALUE")),
        }
    }
    Ok(labels)
}

/// The encoding of FBC files written (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FmtFormat {
    /// YAML documents (`catalog.yaml`).
    Yaml,
    /// A JSON stream (`catalog.json`).
    Json,
}

impl From<FmtFormat> for Format {
    fn from(f: FmtFormat) -> Format {
        match f {
            FmtFormat::Yaml => Format::Yaml,
            FmtFormat::Json => Format::Json,
        }
    }
}

/// `--semantics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SemanticsArg {
    /// OLM v0: closest to the channel head among direct successors; skipped entries never.
    V0,
    /// OLM v1: highest version among direct successors; skipped entries allowed.
    V1,
}

impl From<SemanticsArg> for Semantics {
    fn from(s: SemanticsArg) -> Self {
        match s {
            SemanticsArg::V0 => Semantics::V0,
            SemanticsArg::V1 => Semantics::V1,
        }
    }
}

/// `--format` of `catalog graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Markdown with mermaid diagrams (one per package; per channel for very large packages).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// Indented text.
    Text,
    /// Nodes, typed edges and heads as JSON.
    Json,
    /// One self-contained HTML page: pick a package, search, click a version for its
    /// properties and its OLM v0 and v1 paths to the head (deep links:
    /// #package=P&channel=C&q=TEXT&click=NAME&lane=C, see the README).
    Html,
}

/// `--migrate-level`, as opm names the levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MigrateArg {
    /// Bundles carry every manifest as `olm.bundle.object` (opm's default).
    None,
    /// Bundles carry the CSV as `olm.csv.metadata` (what catalogs for OpenShift 4.17 and later
    /// carry).
    BundleObjectToCsvMetadata,
}

/// `catalog diff --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffOutput {
    /// For a terminal.
    Text,
    /// One JSON document.
    Json,
    /// A pull-request comment.
    Markdown,
    /// One self-contained page: both catalogs' upgrade graphs in one, what was added in green,
    /// what was removed in red, each package's changes beside.
    Html,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration(" 1h "), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        for bad in [
            "",
            "0",
            "0s",
            "s",
            "1.5s",
            "-1s",
            "5x",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}

/// How to reach the cluster, with kubectl's flags (install, uninstall, status).
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster service
    /// account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl From<ClusterArgs> for crate::cluster::Connection {
    fn from(a: ClusterArgs) -> Self {
        crate::cluster::Connection {
            kubeconfig: a.kubeconfig,
            context: a.context,
        }
    }
}

/// How OLM v1 renders a bundle: the flags `bundle render --olmv1`, `bundle permissions
/// --olmv1` and `bundle installer-rbac` share (besides the install namespace).
#[derive(Debug, Clone, Args)]
pub struct V1RenderArgs {
    /// The watch namespace (spec.config.inline.watchNamespace); default: all namespaces when
    /// the bundle supports AllNamespaces.
    #[arg(long, value_name = "NS")]
    pub watch_namespace: Option<String>,
    /// Who provides webhook certificates: cert-manager (operator-controller's first choice),
    /// OpenShift's service CA, or none (the renderer alone, as upstream's regression tests run it).
    #[arg(long, value_enum, default_value_t = CertProviderArg::CertManager)]
    pub cert_provider: CertProviderArg,
    /// operator-controller runs with the SingleOwnNamespaceInstallSupport gate (Alpha): bundles
    /// without AllNamespaces are accepted.
    #[arg(long)]
    pub single_own_namespace: bool,
}

/// `--cert-provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CertProviderArg {
    /// cert-manager: an Issuer and a Certificate per webhook service.
    CertManager,
    /// OpenShift's service CA: annotations only.
    OpenshiftServiceCa,
    /// None.
    None,
}

impl V1RenderArgs {
    /// Checks the install namespace (the ClusterExtension's `spec.namespace`) as the API server
    /// checks a namespace name (a DNS-1123 label). The watch namespace is checked by the
    /// renderer, as operator-controller checks its configuration.
    pub fn check(&self, install_namespace: &str) -> Result<(), olmctl::names::InvalidName> {
        olmctl::names::check(
            olmctl::names::Rule::Label,
            "--install-namespace",
            install_namespace,
        )
    }

    /// The renderer's options for `install_namespace`, as operator-controller `line` (1.10 or
    /// 1.11) renders.
    pub fn options(&self, install_namespace: &str, line: &str) -> olmctl::olmv1::render::Options {
        use olmctl::olmv1::render::CertProvider;
        olmctl::olmv1::render::Options {
            install_namespace: install_namespace.to_string(),
            watch_namespace: self.watch_namespace.clone(),
            cert_provider: match self.cert_provider {
                CertProviderArg::CertManager => CertProvider::CertManager,
                CertProviderArg::OpenshiftServiceCa => CertProvider::OpenshiftServiceCa,
                CertProviderArg::None => CertProvider::None,
            },
            operator_namespace_annotation: line != "1.10",
            single_own_namespace: self.single_own_namespace,
            deployment_config: None,
        }
    }
}

/// `-o` of commands that print Kubernetes objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ManifestFormat {
    /// A multi-document YAML stream.
    Yaml,
    /// One JSON document: a list of the objects.
    Json,
}

impl ManifestFormat {
    /// The objects in this format.
    pub fn render(self, objects: &[serde_json::Value]) -> String {
        match self {
            ManifestFormat::Yaml => olmctl::olmv1::render::to_yaml(objects),
            ManifestFormat::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(objects).unwrap_or_default()
            ),
        }
    }
}

/// Where kubectl-operator's commands look: the namespace and the cluster.
#[derive(Debug, Args)]
pub struct ScopeArgs {
    /// The namespace (default: the kubeconfig context's namespace, else `default`, as kubectl).
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

impl ScopeArgs {
    /// The scope, with `timeout`.
    pub fn scope(self, timeout: std::time::Duration) -> crate::cluster::manage::Scope {
        crate::cluster::manage::Scope {
            connection: self.cluster.into(),
            namespace: self.namespace,
            timeout,
        }
    }
}

/// A read of kubectl-operator's commands: output format, where, and how long.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = crate::term::Output::Text)]
    pub output: crate::term::Output,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Give up after this long (e.g. 30s, 2m).
    #[arg(long, default_value = "1m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
}
