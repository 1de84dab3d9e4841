//! `olmctl image ...`: images of binaries, daemonless.

use std::path::PathBuf;

use clap::Subcommand;

use olmctl::build::BinarySpec;
use olmctl::oci::deliver::Dest;

use crate::term::Output;

/// `olmctl image` subcommands.
#[derive(Debug, Subcommand)]
pub enum ImageCmd {
    /// Append a layer holding a binary to a base image and make the binary its entrypoint, as
    /// ko does for Go (the base's layers are mounted, not copied; same binary and base, same
    /// digest), optionally above layers made of directory trees (--layer). Prints the pushed
    /// reference with its digest.
    Build {
        /// The base image (e.g. gcr.io/distroless/cc-debian12:nonroot); with an index, the image
        /// of --platform is used. `scratch`: no base (for static binaries).
        #[arg(long, value_name = "IMAGE")]
        base_image: String,
        /// The binary, and where it goes in the image (default /usr/local/bin/<name>).
        #[arg(long, value_name = "PATH[:DEST]")]
        binary: String,
        /// A directory tree to add as a layer, as the image's root file system (repeatable;
        /// layers in the order given, between the base and the binary). Modes and symlinks are
        /// kept (absolute targets made relative); owners and times are not; hard links and
        /// special files are refused.
        #[arg(long, value_name = "DIR")]
        layer: Vec<PathBuf>,
        /// The user the image runs as, numeric UID[:GID] (e.g. 65532 for a pod with
        /// runAsNonRoot); default: the base's.
        #[arg(long, value_name = "UID[:GID]")]
        user: Option<String>,
        /// The working directory the image runs in, absolute (e.g. /src); default: the base's.
        #[arg(long, value_name = "DIR")]
        workdir: Option<String>,
        /// An environment variable of the image, KEY=VALUE (repeatable), e.g.
        /// PATH=/usr/local/bin:/bin.
        #[arg(long, value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// Image reference to push as (and the image's name in an OCI layout).
        #[arg(long, short = 't')]
        tag: String,
        /// Push to the registry (the default unless --oci-layout is given).
        #[arg(long)]
        push: bool,
        /// Write the image into this OCI layout directory.
        #[arg(long, value_name = "DIR")]
        oci_layout: Option<PathBuf>,
        /// The platform the binary is built for, os/arch[/variant] (default: this machine's).
        #[arg(long)]
        platform: Option<String>,
        /// Image label KEY=VALUE (repeatable).
        #[arg(long, short = 'l', value_name = "KEY=VALUE")]
        label: Vec<String>,
        #[command(flatten)]
        registry: crate::args::RegistryArgs,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

/// Runs an `image` subcommand.
pub fn run(cmd: ImageCmd) -> u8 {
    match cmd {
        ImageCmd::Build {
            base_image,
            binary,
            layer,
            user,
            workdir,
            env,
            tag,
            push,
            oci_layout,
            platform,
            label,
            registry,
            output,
        } => {
            let prepared = (|| -> Result<_, String> {
                let spec = BinarySpec {
                    base_image,
                    binary,
                    layers: layer,
                    user,
                    workdir,
                    env,
                    platform: crate::args::platform(&platform)
                        .map_err(|e| format!("--platform: {e}"))?,
                    labels: crate::args::parse_labels(&label)?,
                };
                Ok((spec, crate::args::registry_options(&registry, u64::MAX)?))
            })();
            let (spec, opts) = match crate::term::or_usage(prepared) {
                Ok(x) => x,
                Err(c) => return c,
            };
            let dest = Dest {
                push: push || oci_layout.is_none(),
                tag,
                layout: oci_layout,
            };
            let events = crate::report::stderr_events();
            crate::build::run(
                olmctl::build::binary(&spec, &dest, &opts, events.as_ref()),
                output,
                |b| {
                    let extra = serde_json::json!({
                        "layer": b.layers.last(),
                        "layers": b.layers,
                        "baseImage": spec.base_image,
                        "entrypoint": [b.entrypoint],
                        "user": b.user,
                        "workdir": spec.workdir,
                        "env": spec.env,
                        "platform": b.platform.to_string(),
                    });
                    (&b.delivered, extra)
                },
            )
        }
    }
}
