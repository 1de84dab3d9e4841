//! `olmctl catalog ...`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};
use serde::Serialize;

mod cluster;
mod diff;
mod graph;
mod template;

use olmctl::build::CatalogSpec;
use olmctl::oci::deliver::{Dest, Want};
use olmctl::serve::run::NotServed;

use crate::args::{
    DiffOutput, FmtFormat, GraphFormat, MigrateArg, PullArgs, RegistryArgs, SemanticsArg,
};
use crate::term::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, Report, out};
use olmctl::diag::render_text;
use olmctl::fbc::load::{Loaded, list_files};
use olmctl::fbc::write::{Format, canonical, write_blobs};
use olmctl::model::Index;
use olmctl::model::chain::{Head, heads};
use olmctl::text::esc;

#[derive(Debug, Subcommand)]
pub enum CatalogCmd {
    /// Validate catalogs: every opm rule plus the serve-time and runtime failures opm misses.
    /// Exit 0 when clean, 1 when error-level findings exist, 2 when input cannot be read.
    Validate {
        /// Catalog directories (or files); several are composed like one catalog.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Only this package's blobs (exit 2 when the catalog has none).
        #[arg(long, short = 'p')]
        package: Option<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
        output: Report,
        #[command(flatten)]
        findings: crate::report::FindingArgs,
    },
    /// Serve OLM's registry gRPC API (api.Registry, health, reflection) from a catalog, as
    /// `opm serve` does in a CatalogSource pod, and/or catalogd's HTTP API (OLM v1) with
    /// --http. A catalog with errors is refused (exit 2).
    Serve {
        /// The catalog directory (e.g. /configs), or a catalog image (pulled first).
        catalog: String,
        /// The gRPC port (every interface).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// Also serve catalogd's HTTP API on this port: GET /catalogs/NAME/api/v1/all and
        /// /api/v1/metas?schema=&package=&name= (OLM v1's ClusterCatalog content).
        #[arg(long, value_name = "PORT")]
        http: Option<u16>,
        /// The catalog's name in the HTTP API's URLs (a DNS-1123 subdomain, as a
        /// ClusterCatalog's name).
        #[arg(
            long,
            value_name = "NAME",
            default_value = "catalog",
            requires = "http"
        )]
        catalog_name: String,
        /// Serve only the HTTP API (no gRPC port, no gRPC index).
        #[arg(long, requires = "http")]
        no_grpc: bool,
        /// Accepted for compatibility with `opm serve` (no cache is needed: the index is built
        /// at start).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        #[command(flatten)]
        limits: ServeLimitArgs,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
    },
    /// Rewrite a catalog in opm's canonical form: one directory per package, each package in
    /// the directory it is in, whatever its name (opm reads any layout); a package leaving a
    /// directory another package keeps is said on stderr.
    Fmt {
        /// The catalog directory.
        dir: PathBuf,
        /// Encoding of the written files.
        #[arg(long, value_enum, default_value_t = FmtFormat::Yaml)]
        format: FmtFormat,
        /// Write the formatted catalog to this directory instead of rewriting DIR in place.
        #[arg(long, conflicts_with = "check")]
        out: Option<PathBuf>,
        /// Write nothing; exit 1 if DIR is not already in canonical form.
        #[arg(long)]
        check: bool,
    },
    /// List packages, default channels and channels with their head and entry count; with
    /// --channels or --bundles, the tables of `opm alpha list channels|bundles`.
    Ls {
        /// Catalog directories (or files).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Only this package (exit 2 when the catalog has none).
        #[arg(long, short = 'p')]
        package: Option<String>,
        /// One row per channel, as `opm alpha list channels`: PACKAGE, CHANNEL, HEAD (sorted by
        /// package and channel).
        #[arg(long, conflicts_with = "bundles")]
        channels: bool,
        /// One row per channel entry, as `opm alpha list bundles`: PACKAGE, CHANNEL, BUNDLE,
        /// REPLACES, SKIPS, SKIP RANGE, IMAGE (sorted by package, channel and bundle).
        #[arg(long)]
        bundles: bool,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// The upgrade path a subscription follows from an installed bundle, one resolution per hop.
    /// Exit 0 when it ends at the channel head (or --to), 1 when users get stuck earlier or
    /// the path passes --to by (OLM v0 never upgrades to a skipped entry), 2 for a package or
    /// --from the catalog does not have.
    Path {
        /// The catalog directory.
        dir: PathBuf,
        /// Package name.
        #[arg(long, short = 'p')]
        package: String,
        /// Installed bundle: a CSV name or a version (need not be in the catalog; a name that is
        /// neither an entry of the package nor carries a version is refused).
        #[arg(long)]
        from: String,
        /// Channel (default: the package's default channel).
        #[arg(long, short = 'c')]
        channel: Option<String>,
        /// Stop at this bundle (CSV name or version).
        #[arg(long)]
        to: Option<String>,
        /// Resolution rules.
        #[arg(long, value_enum, default_value_t = SemanticsArg::V0)]
        semantics: SemanticsArg,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Lint upgrade graphs for what strands users under OLM v0 or v1 (cycles, several heads,
    /// stranded or unreachable entries, downgrade edges, skipRanges above the bundle, ...),
    /// and dependencies as OLM's resolver sees them (requirements nothing provides, ones OLM
    /// cannot read, channel heads OLM cannot install). Exit 0 when no error-level finding, 1
    /// otherwise, 2 when input cannot be read.
    Lint {
        /// Catalog directories (or files).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Another catalog (an FBC directory) whose bundles may satisfy the requirements, as a
        /// second CatalogSource users have (repeatable).
        #[arg(long = "with", value_name = "DIR")]
        with: Vec<PathBuf>,
        /// Only this package's graphs (exit 2 when the catalog has none).
        #[arg(long, short = 'p')]
        package: Option<String>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
        output: Report,
        #[command(flatten)]
        findings: crate::report::FindingArgs,
    },
    /// What changed between two catalogs (directories or images), per package: bundles,
    /// channels, upgrade edges (replaces, skips, the entries a skipRange covers), head moves,
    /// the default channel, deprecations; with the check-upgrades verdict beside. Exit 0 when
    /// identical, 1 when different, 2 on error.
    Diff {
        /// The old catalog (e.g. the target branch).
        old: String,
        /// The new catalog.
        new: String,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = DiffOutput::Text)]
        output: DiffOutput,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
    },
    /// Compare a catalog with its base (e.g. the target branch): every user of a base bundle
    /// must still reach the channel head under OLM v0 and v1, heads may not move backwards,
    /// bundles, channels and packages may not vanish without an upgrade path. Exit 1 on any
    /// regression.
    CheckUpgrades {
        /// The base catalog (what users may have installed from).
        #[arg(long)]
        base: PathBuf,
        /// The new catalog.
        dir: PathBuf,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
        output: Report,
        #[command(flatten)]
        findings: crate::report::FindingArgs,
    },
    /// Render bundle directories and images as the `olm.bundle` blobs `opm render` writes for
    /// them (properties in opm's order and encoding, relatedImages), and catalog images as
    /// their FBC. Exit 2 when an input cannot be read or rendered. For the Kubernetes objects
    /// OLM v1 installs from a bundle, see `bundle render`.
    Render {
        /// Bundle directories (holding manifests/ and metadata/, or a bundle/ subdirectory),
        /// catalog (FBC) directories (passed through as `opm render DIR` writes them), bundle
        /// images or catalog images. An argument that is not an existing path is an
        /// image reference: a registry's, or `oci:PATH[:TAG]` for an OCI image layout (as
        /// skopeo names them; what `--oci-layout` writes).
        #[arg(required = true)]
        bundles: Vec<String>,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
        /// The image each bundle is pushed as, in the order of the arguments (an image
        /// argument defaults to itself).
        #[arg(long)]
        image: Vec<String>,
        /// Carry the CSV as `olm.csv.metadata` (the default when --image is given).
        #[arg(long, conflicts_with = "bundle_objects")]
        csv_metadata: bool,
        /// Carry every manifest as an `olm.bundle.object` (the default without --image).
        #[arg(long)]
        bundle_objects: bool,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = FmtFormat::Json)]
        output: FmtFormat,
    },
    /// Build a catalog image without a container daemon and push it: the catalog is
    /// validated (errors stop the push unless --force), written in canonical form under
    /// /configs with the label operators.operatorframework.io.index.configs.v1=/configs.
    /// With --base-image (e.g. an opm image) the layer is appended to every platform of the
    /// base, with opm's entrypoint and serve command; with --serve-with olmctl, to a base
    /// built by `olmctl image build --binary .../olmctl`, which then runs `olmctl catalog serve
    /// /configs`. Prints `<repository>@<digest>`.
    Push(Box<PushArgs>),
    /// Pull a catalog image and extract its FBC (the configs directory) into DIR.
    Pull {
        /// The catalog image (a registry reference, or oci:PATH[:TAG] for an OCI layout).
        image: String,
        /// Target directory (created when missing; must be empty).
        dir: PathBuf,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Render a catalog template (olm.template.basic, olm.semver or olm.template.substitutes,
    /// from the first document's schema) to FBC on stdout, as `opm alpha render-template` does, in canonical form (what
    /// `catalog fmt` writes). Bundle images come from --bundles first, then from the
    /// registry. Exit 2 on any template or bundle error, naming the file and line.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Template {
        #[command(subcommand)]
        sub: Option<TemplateSub>,
        /// The template file.
        #[arg(required = true)]
        file: Option<PathBuf>,
        /// A YAML map from bundle image (exactly as the template writes it) to a bundle
        /// directory or an OCI image layout directory (the image picked by the reference's
        /// digest, else its tag, else the only one), relative to the map file.
        #[arg(long, value_name = "MAP.yaml")]
        bundles: Option<PathBuf>,
        /// Where pulled bundles are cached by digest (default: $XDG_CACHE_HOME/olmctl/bundles,
        /// else ~/.cache/olmctl/bundles).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// How rendered bundles carry their manifests (opm's --migrate-level).
        #[arg(long, value_enum, default_value_t = MigrateArg::None)]
        migrate_level: MigrateArg,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = FmtFormat::Yaml)]
        output: FmtFormat,
    },
    /// The whole publishing step of a community-operators package directory: every
    /// template/catalog pair of ci.yaml's fbc.catalog_mapping rendered to
    /// <catalogs-dir>/<catalog>/<operator-dir>/catalog.yaml (under the operator directory's
    /// name, as the pipeline writes it, whatever the package's name; bundle-object-to-csv-metadata from v4.17
    /// on, as the community pipeline does), then validated and linted. With --check nothing is
    /// written and exit 1 means a committed catalog is missing or differs from its template.
    Build {
        /// The package directory (holding ci.yaml and catalog-templates/).
        dir: PathBuf,
        /// Where the catalogs are (default: <dir>/../../catalogs).
        #[arg(long, value_name = "DIR")]
        catalogs_dir: Option<PathBuf>,
        /// A YAML map from bundle image to bundle directory or OCI image layout directory (see
        /// `catalog template`).
        #[arg(long, value_name = "MAP.yaml")]
        bundles: Option<PathBuf>,
        /// Where pulled bundles are cached by digest (default: $XDG_CACHE_HOME/olmctl/bundles,
        /// else ~/.cache/olmctl/bundles).
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Only compare: exit 1 when a committed catalog is missing or differs from what its
        /// template renders (the difference printed on stdout as a unified diff, as `git
        /// diff`).
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        registry: RegistryArgs,
        #[command(flatten)]
        pull: PullArgs,
        /// Output format of the findings.
        #[arg(long, short = 'o', value_enum, default_value_t = Report::Text)]
        output: Report,
    },
    /// Generate artifacts for a catalog, as `opm generate` does.
    Generate {
        #[command(subcommand)]
        what: GenerateCmd,
    },
    /// Draw upgrade graphs.
    Graph {
        /// Catalog directories (or files).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Only this package.
        #[arg(long, short = 'p')]
        package: Option<String>,
        /// Only this channel.
        #[arg(long, short = 'c')]
        channel: Option<String>,
        /// Output format (`--format` is accepted too).
        #[arg(
            long = "output",
            short = 'o',
            visible_alias = "format",
            value_enum,
            default_value_t = GraphFormat::Text
        )]
        format: GraphFormat,
        /// Mermaid: mark entries OLM v0 never upgrades to (skipped by a newer entry) and draw
        /// the edges v0 cannot take dashed red, as `opm alpha render-graph --draw-v0-semantics`.
        #[arg(long)]
        draw_v0_semantics: bool,
        /// Write to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Add a CatalogSource for an index image to the cluster and wait for it to be READY
    /// (kubectl operator catalog add).
    Add(cluster::AddArgs),
    /// List the cluster's CatalogSources: NAME, DISPLAY, TYPE, PUBLISHER, AGE (kubectl operator
    /// catalog list; `catalog ls` lists a File-Based Catalog on disk).
    List(cluster::ListArgs),
    /// Remove a CatalogSource from the cluster and wait until it is gone (kubectl operator
    /// catalog remove).
    Remove(cluster::RemoveArgs),
}

/// `catalog push` flags.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The catalog directory.
    dir: PathBuf,
    /// Image reference to push as.
    #[arg(long, short = 't')]
    tag: String,
    /// Base image to append the configs layer to (e.g. quay.io/operator-framework/opm:latest);
    /// without it the image holds only /configs.
    #[arg(long, value_name = "IMAGE")]
    base_image: Option<String>,
    /// What serves the catalog in the image: opm (`opm serve /configs`, the base is an opm
    /// image) or olmctl (`olmctl catalog serve /configs`, the base's entrypoint is olmctl).
    #[arg(long, value_enum, default_value_t = ServeWith::Opm, requires = "base_image")]
    serve_with: ServeWith,
    /// Write the image into this OCI layout directory instead of pushing.
    #[arg(long, value_name = "DIR")]
    oci_layout: Option<PathBuf>,
    /// Push even when validation reports error-level findings (never when files do not load).
    #[arg(long)]
    force: bool,
    /// Extra image label KEY=VALUE (repeatable; the last of a key wins).
    #[arg(long, short = 'l', value_name = "KEY=VALUE")]
    label: Vec<String>,
    /// Encoding of the FBC files in the image.
    #[arg(long, value_enum, default_value_t = FmtFormat::Yaml)]
    format: FmtFormat,
    #[command(flatten)]
    registry: RegistryArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
    output: Output,
}

/// `catalog generate` subcommands.
#[derive(Debug, Subcommand)]
pub enum GenerateCmd {
    /// Write the Dockerfile `opm generate dockerfile` writes for a catalog directory, byte for
    /// byte, beside it as <DIR>.Dockerfile (refused when that file exists), for pipelines that
    /// build catalog images with a Dockerfile (`catalog push` builds one without).
    Dockerfile {
        /// The catalog (FBC root) directory.
        dir: String,
        /// Image base to use to build catalog (`scratch` for a binary-less image).
        #[arg(long, short = 'i', value_name = "IMAGE", default_value = olmctl::fbc::dockerfile::DEFAULT_IMAGE, conflicts_with = "binary_image")]
        base_image: String,
        /// Deprecated in opm for --base-image: the base image, and the builder image unless
        /// --builder-image is given.
        #[arg(long, value_name = "IMAGE")]
        binary_image: Option<String>,
        /// Image to use as a build stage (runs opm serve to fill the cache; not `scratch`).
        #[arg(long, short = 'b', value_name = "IMAGE")]
        builder_image: Option<String>,
        /// Extra labels KEY=VALUE (repeatable, or comma-separated; the last value of a key
        /// wins).
        #[arg(long, short = 'l', value_name = "KEY=VALUE", value_delimiter = ',')]
        extra_labels: Vec<String>,
    },
}

/// `catalog template` subcommands.
#[derive(Debug, Subcommand)]
pub enum TemplateSub {
    /// Convert FBC to a basic template (bundles reduced to schema and image), as `opm alpha
    /// convert-template basic` does.
    Convert {
        /// Catalog directories (or files).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = FmtFormat::Yaml)]
        output: FmtFormat,
    },
}

/// `catalog push --serve-with`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServeWith {
    /// opm's entrypoint and `serve /configs`.
    Opm,
    /// The base's olmctl and `catalog serve /configs`.
    Olmctl,
}

/// `catalog serve`'s bounds against slow and greedy clients (README, Limits).
#[derive(Debug, Clone, clap::Args)]
pub struct ServeLimitArgs {
    /// Open connections at most (never more than half the descriptors `ulimit -n` leaves
    /// after 64); more wait in the listen backlog.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    max_connections: usize,
    /// HTTP/2 streams in flight per connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, default_value_t = 256, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    max_concurrent_streams: u32,
    /// Close a connection that has not sent the HTTP/2 preface and first frame by then.
    #[arg(long, default_value = "10s", value_parser = crate::args::parse_duration, value_name = "DURATION")]
    handshake_timeout: std::time::Duration,
    /// Close a connection with no call in flight for this long.
    #[arg(long, default_value = "5m", value_parser = crate::args::parse_duration, value_name = "DURATION")]
    idle_timeout: std::time::Duration,
    /// Send an HTTP/2 PING this often ...
    #[arg(long, default_value = "60s", value_parser = crate::args::parse_duration, value_name = "DURATION")]
    keepalive_interval: std::time::Duration,
    /// ... and close the connection when its answer takes longer than this.
    #[arg(long, default_value = "20s", value_parser = crate::args::parse_duration, value_name = "DURATION")]
    keepalive_timeout: std::time::Duration,
}

impl From<ServeLimitArgs> for olmctl::serve::server::Limits {
    fn from(a: ServeLimitArgs) -> Self {
        olmctl::serve::server::Limits {
            max_connections: a.max_connections,
            max_concurrent_streams: a.max_concurrent_streams,
            handshake_timeout: a.handshake_timeout,
            idle_timeout: a.idle_timeout,
            keepalive_interval: a.keepalive_interval,
            keepalive_timeout: a.keepalive_timeout,
        }
    }
}

pub fn run(cmd: CatalogCmd) -> u8 {
    match cmd {
        CatalogCmd::Validate {
            dirs,
            package,
            output,
            findings,
        } => validate(&dirs, package.as_deref(), output, &findings),
        CatalogCmd::Serve {
            catalog,
            port,
            http,
            catalog_name,
            no_grpc,
            limits,
            registry,
            pull,
            ..
        } => {
            let limits: olmctl::serve::server::Limits = limits.into();
            let serving = olmctl::serve::run::Serving {
                grpc: (!no_grpc).then_some(port),
                http: http.map(|port| olmctl::serve::run::HttpServing {
                    port,
                    catalog: catalog_name,
                    limits: olmctl::serve::http::server::HttpLimits {
                        max_connections: limits.max_connections,
                        ..Default::default()
                    },
                }),
            };
            // Refused before an image is pulled.
            if let Some(e) = serving.http.as_ref().and_then(|h| {
                olmctl::serve::http::handlers::catalog_name_error(h.catalog.as_bytes())
            }) {
                crate::term::error(format_args!("--catalog-name: {e}"));
                return EXIT_USAGE;
            }
            // An image is pulled into a scratch directory that lives as long as the server.
            let pulled =
                match crate::inputs::pulled(&[catalog.as_str()], &registry, &pull, Want::Catalog) {
                    Ok(p) => p,
                    Err(e) => {
                        crate::term::error(e);
                        return EXIT_USAGE;
                    }
                };
            let dir = match &pulled.0[0] {
                Some((_, dir)) => dir.clone(),
                None => PathBuf::from(&catalog),
            };
            serve(&dir, &serving, limits)
        }
        CatalogCmd::Fmt {
            dir,
            format,
            out,
            check,
        } => fmt(&dir, format, out.as_deref(), check),
        CatalogCmd::Ls {
            dirs,
            package,
            channels,
            bundles,
            output,
        } => {
            let table = match (channels, bundles) {
                (true, _) => Some(LsTable::Channels),
                (_, true) => Some(LsTable::Bundles),
                _ => None,
            };
            ls(&dirs, package.as_deref(), table, output)
        }
        CatalogCmd::Path {
            dir,
            package,
            from,
            channel,
            to,
            semantics,
            output,
        } => graph::path(
            dir,
            &package,
            &from,
            channel.as_deref(),
            to.as_deref(),
            semantics,
            output,
        ),
        CatalogCmd::Lint {
            dirs,
            with,
            package,
            output,
            findings,
        } => graph::lint(&dirs, &with, package.as_deref(), output, &findings),
        CatalogCmd::Build {
            dir,
            catalogs_dir,
            bundles,
            cache_dir,
            check,
            registry,
            pull,
            output,
        } => template::build(
            &dir,
            catalogs_dir.as_deref(),
            bundles.as_deref(),
            cache_dir.as_deref(),
            check,
            &registry,
            &pull,
            output,
        ),
        CatalogCmd::Template {
            sub: Some(TemplateSub::Convert { dirs, output }),
            ..
        } => template::convert(&dirs, output),
        CatalogCmd::Template {
            sub: None,
            file: None,
            ..
        } => {
            crate::term::error(
                "catalog template needs a template FILE (or the convert subcommand)",
            );
            EXIT_USAGE
        }
        CatalogCmd::Template {
            sub: None,
            file: Some(file),
            bundles,
            cache_dir,
            migrate_level,
            registry,
            pull,
            output,
        } => template::run(
            &file,
            bundles.as_deref(),
            cache_dir.as_deref(),
            migrate_level,
            output,
            &registry,
            &pull,
        ),
        CatalogCmd::Diff {
            old,
            new,
            output,
            registry,
            pull,
        } => diff::diff(&old, &new, output, &registry, &pull),
        CatalogCmd::CheckUpgrades {
            base,
            dir,
            output,
            findings,
        } => graph::check_upgrades(base, dir, output, &findings),
        CatalogCmd::Render {
            bundles,
            registry,
            pull,
            image,
            csv_metadata,
            bundle_objects,
            output,
        } => render(
            &bundles,
            &image,
            csv_metadata,
            bundle_objects,
            output,
            &registry,
            &pull,
        ),
        CatalogCmd::Push(a) => push(*a),
        CatalogCmd::Add(a) => cluster::add(a),
        CatalogCmd::List(a) => cluster::list(a),
        CatalogCmd::Remove(a) => cluster::remove(a),
        CatalogCmd::Pull {
            image,
            dir,
            registry,
            pull,
            output,
        } => crate::inputs::pull_to_dir(&image, &dir, &registry, &pull, output, Want::Catalog),
        CatalogCmd::Generate {
            what:
                GenerateCmd::Dockerfile {
                    dir,
                    base_image,
                    binary_image,
                    builder_image,
                    extra_labels,
                },
        } => generate_dockerfile(
            &dir,
            binary_image.as_deref().unwrap_or(&base_image),
            builder_image
                .as_deref()
                .or(binary_image.as_deref())
                .unwrap_or(olmctl::fbc::dockerfile::DEFAULT_IMAGE),
            &extra_labels,
        ),
        CatalogCmd::Graph {
            dirs,
            package,
            channel,
            format,
            draw_v0_semantics,
            out,
        } => graph::graph(
            &dirs,
            package.as_deref(),
            channel.as_deref(),
            format,
            draw_v0_semantics,
            out.as_deref(),
        ),
    }
}

/// `catalog serve`: one library operation ([`olmctl::serve::run::serve_dir`]), its refusal
/// printed.
fn serve(
    dir: &std::path::Path,
    serving: &olmctl::serve::run::Serving,
    limits: olmctl::serve::server::Limits,
) -> u8 {
    let events = crate::report::stderr_events();
    match olmctl::serve::run::serve_dir(dir, serving, limits, events.as_ref()) {
        Ok(()) => EXIT_OK,
        Err(NotServed::Failed(e)) => {
            crate::term::error(e);
            EXIT_USAGE
        }
        Err(NotServed::Invalid { findings, what }) => {
            crate::report::findings_of(&findings, &what, Report::Text, false);
            crate::term::error(format_args!(
                "{}: the catalog does not validate; not serving it",
                esc(dir.display())
            ));
            EXIT_USAGE
        }
    }
}

fn validate(
    dirs: &[PathBuf],
    package: Option<&str>,
    output: Report,
    args: &crate::report::FindingArgs,
) -> u8 {
    let loaded = match crate::inputs::narrowed(crate::inputs::catalog(dirs), package) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let findings = olmctl::checks::fbc::validate(&loaded);
    crate::report::findings_with(&findings, None, args, &loaded.summary(), output, false)
}

fn fmt(dir: &Path, format: FmtFormat, out_dir: Option<&Path>, check: bool) -> u8 {
    let format = Format::from(format);
    let loaded = match crate::inputs::catalog(&[dir.to_path_buf()]) {
        Ok(l) => l,
        Err(c) => return c,
    };
    if !loaded.problems.is_empty() {
        let findings = olmctl::checks::fbc::validate(&loaded);
        let blocking: Vec<_> = findings
            .into_iter()
            .filter(|f| f.code == "FBC001" || f.code == "FBC002" || f.code == "FBC003")
            .collect();
        if !blocking.is_empty() {
            eprint!("{}", render_text(&blocking, false));
            crate::term::error("not formatting a catalog that does not load; fix the errors above");
            return EXIT_FINDINGS;
        }
    }
    // Each package stays in the directory it lives in, whatever its name (opm reads any
    // layout); a package leaving a directory it shares is said, never done silently.
    let layout = olmctl::fbc::layout::layout(&loaded.cfg, dir);
    for m in &layout.moves {
        eprintln!(
            "note: package {} moves from {}/ to {}/ (one directory per package{})",
            esc(&m.package),
            esc(&m.from),
            esc(&m.to),
            m.kept_by
                .as_deref()
                .map(|k| format!("; {}/ holds package {}", esc(&m.from), esc(k)))
                .unwrap_or_default()
        );
    }
    let files = olmctl::fbc::write::canonical_files_in(&loaded.cfg, format, &layout);
    for (rel, _) in &files {
        if rel.components().count() > 2
            || rel
                .parent()
                .is_some_and(|p| p.as_os_str() == ".." || p.as_os_str() == ".")
        {
            crate::term::error(format_args!(
                "package name {} is not a valid single path element",
                rel.display()
            ));
            return EXIT_USAGE;
        }
    }
    if check {
        let existing: BTreeSet<PathBuf> = match list_files(dir) {
            Ok(f) => f.into_iter().collect(),
            Err(e) => {
                crate::term::error(e);
                return EXIT_USAGE;
            }
        };
        let wanted: BTreeSet<PathBuf> = files.iter().map(|(r, _)| dir.join(r)).collect();
        let mut differ = Vec::new();
        for (rel, text) in &files {
            // Read as every input, and as the write would go (through no link).
            match olmctl::input::committed::read_committed(dir, rel) {
                Ok(c) if c.as_deref() == Some(text.as_bytes()) => {}
                Ok(None) => differ.push(format!("would create: {}", dir.join(rel).display())),
                Ok(Some(_)) => differ.push(format!("would reformat: {}", dir.join(rel).display())),
                Err(e) => {
                    crate::term::error(format_args!(
                        "{e}; --check compares the catalog with the regular file `olmctl \
                         catalog fmt {}` writes there",
                        dir.display()
                    ));
                    return EXIT_USAGE;
                }
            }
        }
        differ.extend(
            existing
                .difference(&wanted)
                .map(|p| format!("would remove: {} (not a canonical file)", p.display())),
        );
        if differ.is_empty() {
            return EXIT_OK;
        }
        for d in differ {
            eprintln!("{}", esc(d));
        }
        return EXIT_FINDINGS;
    }
    let target = out_dir.unwrap_or(dir);
    let old = if out_dir.is_none() {
        list_files(dir).unwrap_or_default()
    } else {
        Vec::new()
    };
    // Nothing is written through a symlink below the target (checked before any write); old
    // files that are links are removed as links.
    for (rel, _) in &files {
        if let Err(e) = olmctl::outdir::check(target, rel) {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    }
    for (rel, text) in &files {
        if let Err(e) = olmctl::outdir::write(target, rel, text.as_bytes()) {
            crate::term::error(format_args!("cannot write {e}"));
            return EXIT_USAGE;
        }
    }
    // In place: remove the catalog files whose content now lives in the canonical files.
    let written: BTreeSet<PathBuf> = files.iter().map(|(r, _)| target.join(r)).collect();
    for f in old {
        if !written.contains(&f) {
            // Relative to the catalog, removed through no link (a link itself, not its target).
            let rel = f.strip_prefix(dir).unwrap_or(&f);
            if let Err(e) = olmctl::outdir::remove_file(dir, rel) {
                crate::term::error(format_args!("cannot remove {e}"));
                return EXIT_USAGE;
            }
            if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                let _ = olmctl::outdir::remove_empty_dir(dir, parent); // only when empty
            }
        }
    }
    EXIT_OK
}

#[derive(Serialize)]
struct LsChannel {
    name: String,
    head: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    heads: Vec<String>,
    entries: usize,
}

#[derive(Serialize)]
struct LsPackage {
    name: String,
    #[serde(rename = "defaultChannel")]
    default_channel: String,
    bundles: usize,
    channels: Vec<LsChannel>,
}

/// The `ls` listing of a loaded catalog.
fn listing(loaded: &Loaded) -> Vec<LsPackage> {
    let idx = Index::new(&loaded.cfg);
    idx.packages
        .iter()
        .map(|(name, view)| LsPackage {
            name: name.to_string(),
            default_channel: view
                .package()
                .map(|p| p.default_channel.clone())
                .unwrap_or_default(),
            bundles: view.bundles.len(),
            channels: view
                .channels
                .iter()
                .map(|(cname, cs)| {
                    let (head, hs) = match heads(&cs[0].entries) {
                        Head::One(h) => (Some(h.to_string()), Vec::new()),
                        Head::None => (None, Vec::new()),
                        Head::Many(v) => (None, v.iter().map(|s| s.to_string()).collect()),
                    };
                    LsChannel {
                        name: cname.to_string(),
                        head,
                        heads: hs,
                        entries: cs[0].entries.len(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// `ls --channels` / `ls --bundles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LsTable {
    Channels,
    Bundles,
}

/// The rows of `opm alpha list channels|bundles` (operator-registry alpha/action/list.go,
/// `ListChannels.Run`/`ListBundles.Run` and their `WriteColumns`): channels sorted by package
/// and channel, bundles (one per channel entry) by package, channel and name; a channel's head
/// by the model's `Channel.Head` (or its error text).
fn list_table(loaded: &Loaded, table: LsTable) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let idx = Index::new(&loaded.cfg);
    let mut rows = Vec::new();
    for (pkg, view) in &idx.packages {
        for (cname, cs) in &view.channels {
            let entries = &cs[0].entries;
            match table {
                LsTable::Channels => {
                    let head = match heads(entries) {
                        Head::One(h) => h.to_string(),
                        Head::None => "ERROR: no channel head found in graph".to_string(),
                        Head::Many(v) => {
                            format!(
                                "ERROR: multiple channel heads found in graph: {}",
                                v.join(", ")
                            )
                        }
                    };
                    rows.push(vec![pkg.to_string(), cname.to_string(), head]);
                }
                LsTable::Bundles => {
                    let mut es: Vec<_> = entries.iter().collect();
                    es.sort_by(|a, b| a.name.cmp(&b.name));
                    for e in es {
                        let image = view
                            .bundles
                            .get(e.name.as_str())
                            .and_then(|b| b.first())
                            .map(|b| b.image.clone())
                            .unwrap_or_default();
                        rows.push(vec![
                            pkg.to_string(),
                            cname.to_string(),
                            e.name.clone(),
                            e.replaces.clone(),
                            e.skips.join(","),
                            e.skip_range.clone(),
                            image,
                        ]);
                    }
                }
            }
        }
    }
    let header = match table {
        LsTable::Channels => vec!["PACKAGE", "CHANNEL", "HEAD"],
        LsTable::Bundles => vec![
            "PACKAGE",
            "CHANNEL",
            "BUNDLE",
            "REPLACES",
            "SKIPS",
            "SKIP RANGE",
            "IMAGE",
        ],
    };
    (header, rows)
}

fn ls(dirs: &[PathBuf], package: Option<&str>, table: Option<LsTable>, output: Output) -> u8 {
    let loaded = match crate::inputs::narrowed(crate::inputs::whole_catalog(dirs), package) {
        Ok(l) => l,
        Err(c) => return c,
    };
    if let Some(table) = table {
        let (header, rows) = list_table(&loaded, table);
        match output {
            Output::Json => {
                // Keys: the column names in camelCase.
                let keys: Vec<String> = header
                    .iter()
                    .map(|h| {
                        let mut k = String::new();
                        for (i, w) in h.split(' ').enumerate() {
                            let w = w.to_lowercase();
                            if i == 0 {
                                k.push_str(&w);
                            } else {
                                k.push_str(&w[..1].to_uppercase());
                                k.push_str(&w[1..]);
                            }
                        }
                        k
                    })
                    .collect();
                let items: Vec<serde_json::Value> = rows
                    .iter()
                    .map(|r| {
                        serde_json::Value::Object(
                            keys.iter()
                                .cloned()
                                .zip(r.iter().map(|c| serde_json::Value::from(c.as_str())))
                                .collect(),
                        )
                    })
                    .collect();
                let name = if table == LsTable::Channels {
                    "channels"
                } else {
                    "bundles"
                };
                let v = serde_json::json!({ name: items });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&v).unwrap_or_default()
                ));
            }
            Output::Text => {
                let mut lines = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
                lines.extend(
                    rows.iter()
                        .map(|r| r.iter().map(|c| esc(c).to_string()).collect()),
                );
                // opm's tabwriter: minwidth 0, padding 2.
                out(&crate::term::tabwrite(&lines, 0, 2));
            }
        }
        return EXIT_OK;
    }
    let pkgs = listing(&loaded);
    match output {
        Output::Json => {
            let v = serde_json::json!({ "packages": pkgs });
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            ));
        }
        Output::Text => {
            let mut s = String::new();
            for p in &pkgs {
                s.push_str(&format!(
                    "{}  (default channel: {}, {} bundles)\n",
                    esc(&p.name),
                    esc(&p.default_channel),
                    p.bundles
                ));
                for c in &p.channels {
                    let head = match (&c.head, c.heads.is_empty()) {
                        (Some(h), _) => esc(h).to_string(),
                        (None, true) => "<no head>".into(),
                        (None, false) => format!("<several heads: {}>", esc(c.heads.join(", "))),
                    };
                    let mark = if c.name == p.default_channel {
                        "*"
                    } else {
                        " "
                    };
                    s.push_str(&format!(
                        "  {mark} {:<24} head {:<48} {} entries\n",
                        esc(&c.name),
                        head,
                        c.entries
                    ));
                }
            }
            out(&s);
        }
    }
    EXIT_OK
}

#[allow(clippy::too_many_arguments)]
fn render(
    inputs: &[String],
    images: &[String],
    csv_metadata: bool,
    bundle_objects: bool,
    output: FmtFormat,
    registry: &RegistryArgs,
    pull: &PullArgs,
) -> u8 {
    use olmctl::bundle::render::{ObjectMode, render_dir};
    use olmctl::oci::pull::Kind;
    if !images.is_empty() && images.len() != inputs.len() {
        crate::term::error(format_args!(
            "{} --image values for {} inputs: give one image per input, in order",
            images.len(),
            inputs.len()
        ));
        return EXIT_USAGE;
    }
    // A registry image names itself; a bundle read from an oci: layout has no registry name.
    let registry_image =
        |s: &str| olmctl::oci::deliver::is_image(s) && olmctl::oci::transport::parse(s).is_none();
    let any_image = inputs.iter().any(|s| registry_image(s));
    if csv_metadata && images.is_empty() && !any_image {
        crate::term::error(
            "--csv-metadata needs --image (a bundle without an image must carry its manifests as olm.bundle.object)",
        );
        return EXIT_USAGE;
    }
    for img in images {
        if let Err(e) = olmctl::imageref::validate(img) {
            crate::term::error(format_args!("--image {img}: {e}"));
            return EXIT_USAGE;
        }
    }
    let format = Format::from(output);
    // Images are pulled first, each into its own scratch directory.
    let input_refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let (pulled, scratch) = match crate::inputs::pulled(&input_refs, registry, pull, Want::Any) {
        Ok(p) => p,
        Err(e) => {
            crate::term::error(e);
            return EXIT_USAGE;
        }
    };
    let mut blobs = Vec::new();
    // A catalog (an image's configs, or a directory that is no bundle) passes through as
    // opm render writes it (alpha/action/render.go: declcfg.LoadFS, then Render.Run's
    // reordering, then WriteJSON/WriteYAML's canonical order).
    let catalog = |dir: &Path, blobs: &mut Vec<_>| -> Result<(), u8> {
        let mut loaded = crate::inputs::whole_catalog(&[dir.to_path_buf()])?;
        olmctl::catalog::as_opm_renders(&mut loaded.cfg);
        for (_, nodes) in canonical(&loaded.cfg) {
            blobs.extend(nodes);
        }
        Ok(())
    };
    for (i, input) in inputs.iter().enumerate() {
        let fbc_dir = pulled[i].is_none()
            && Path::new(input).is_dir()
            && olmctl::bundle::load::bundle_root(Path::new(input)).is_none();
        if fbc_dir {
            if let Err(c) = catalog(Path::new(input), &mut blobs) {
                return c;
            }
            continue;
        }
        let (dir, default_image) = match &pulled[i] {
            Some((Kind::Catalog(_), dir)) => {
                if let Err(c) = catalog(dir, &mut blobs) {
                    return c;
                }
                continue;
            }
            Some((Kind::Bundle, dir)) if registry_image(input) => (dir.clone(), input.as_str()),
            Some((Kind::Bundle, dir)) => (dir.clone(), ""),
            None => (PathBuf::from(input), ""),
        };
        let image = images.get(i).map(String::as_str).unwrap_or(default_image);
        // A bundle with an image carries olm.csv.metadata unless --bundle-objects is given.
        let mode = if bundle_objects || image.is_empty() {
            ObjectMode::BundleObjects
        } else {
            ObjectMode::CsvMetadata
        };
        match render_dir(&dir, image, mode) {
            Ok(r) => blobs.push(r.blob),
            Err(e) => {
                crate::term::error(format_args!("{input}: {e}"));
                return EXIT_USAGE;
            }
        }
    }
    drop(scratch);
    let mut text = String::new();
    write_blobs(&blobs, format, &mut text);
    out(&text);
    EXIT_OK
}

/// `catalog generate dockerfile` (opm's cmd/opm/generate/cmd.go `newDockerfileCmd`): the
/// directory must exist, `<DIR>.Dockerfile` must not; labels parsed as opm's `parseLabels`.
fn generate_dockerfile(dir: &str, base: &str, builder: &str, labels: &[String]) -> u8 {
    use olmctl::fbc::dockerfile::{Spec, path_for, render};
    let mut extra = std::collections::BTreeMap::new();
    for l in labels {
        let Some((k, v)) = l.split_once('=') else {
            crate::term::error(format_args!(
                "invalid label {:?}: expected KEY=VALUE",
                esc(l)
            ));
            return EXIT_USAGE;
        };
        extra.insert(k.to_string(), v.to_string());
    }
    let (file, name) = path_for(dir);
    if std::fs::symlink_metadata(&file).is_ok() {
        crate::term::error(format_args!(
            "{}: file exists (remove it to generate it again)",
            esc(file.display())
        ));
        return EXIT_USAGE;
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            crate::term::error(format_args!(
                "provided root path {:?} is not a directory",
                esc(dir)
            ));
            return EXIT_USAGE;
        }
        Err(e) => {
            crate::term::error(format_args!("{}: {e}", esc(dir)));
            return EXIT_USAGE;
        }
    }
    let text = match render(&Spec {
        base_image: base,
        builder_image: builder,
        index_dir: &name,
        extra_labels: &extra,
    }) {
        Ok(t) => t,
        Err(e) => {
            crate::term::error(esc(e));
            return EXIT_USAGE;
        }
    };
    // Created exclusively: never through a link, never over a file.
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if let Err(e) = written {
        crate::term::error(format_args!("cannot write {}: {e}", esc(file.display())));
        return EXIT_USAGE;
    }
    eprintln!("wrote {}", esc(file.display()));
    EXIT_OK
}

/// `catalog push`: one library operation ([`olmctl::build::catalog`]), printed.
fn push(a: PushArgs) -> u8 {
    let prepared = (|| -> Result<_, String> {
        let spec = CatalogSpec {
            dir: a.dir.clone(),
            base_image: a.base_image.clone(),
            force: a.force,
            labels: crate::args::parse_labels(&a.label)?,
            format: a.format.into(),
            server: match a.serve_with {
                ServeWith::Opm => olmctl::oci::catalog_image::Server::Opm,
                ServeWith::Olmctl => olmctl::oci::catalog_image::Server::Olmctl,
            },
        };
        Ok((spec, crate::args::registry_options(&a.registry, u64::MAX)?))
    })();
    let (spec, opts) = match crate::term::or_usage(prepared) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let dest = Dest {
        tag: a.tag.clone(),
        push: a.oci_layout.is_none(),
        layout: a.oci_layout.clone(),
    };
    let events = crate::report::stderr_events();
    crate::build::run(
        olmctl::build::catalog(&spec, &dest, &opts, events.as_ref()),
        a.output,
        |b| {
            let extra = serde_json::json!({
                "layer": b.layer, "files": b.files, "baseImage": spec.base_image,
            });
            (&b.delivered, extra)
        },
    )
}
