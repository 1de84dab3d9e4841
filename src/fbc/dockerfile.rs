//! The Dockerfile `opm generate dockerfile` writes for a catalog directory, byte for byte:
//! operator-registry alpha/action/generate_dockerfile.go (`GenerateDockerfile.Run` and its
//! `dockerfileTmpl`, text/template's `{{-` trimming applied by hand, labels in key order as
//! `range` over a Go map gives them) and cmd/opm/generate/cmd.go (`<fbcRootDir>.Dockerfile`
//! beside the directory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// opm's default base and builder image (`containertools.DefaultBinarySourceImage`).
pub const DEFAULT_IMAGE: &str = "quay.io/operator-framework/opm:latest";

/// The label naming the catalog's directory in the image (`containertools.ConfigsLocationLabel`).
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";

/// Why no Dockerfile is generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DockerfileError {
    /// opm's `base image is unset`.
    NoBaseImage,
    /// opm's `index directory is unset`.
    NoIndexDir,
    /// opm refuses `scratch` as the builder: it must run `opm serve` to build the cache.
    ScratchBuilder,
    /// A value that would break the Dockerfile's line (opm writes it as is).
    LineBreak {
        /// What it is (`label`, `base image`, ...).
        what: &'static str,
        /// The value.
        value: String,
    },
}

impl std::fmt::Display for DockerfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DockerfileError::NoBaseImage => f.write_str("base image is unset"),
            DockerfileError::NoIndexDir => f.write_str("index directory is unset"),
            DockerfileError::ScratchBuilder => {
                f.write_str("invalid builder image: \"scratch\" (the builder runs /bin/opm serve)")
            }
            DockerfileError::LineBreak { what, value } => write!(
                f,
                "{what} {value:?} holds a line break, which would end the Dockerfile instruction"
            ),
        }
    }
}

impl std::error::Error for DockerfileError {}

/// What the Dockerfile is made of.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    /// The final stage's image (`scratch` for a binary-less catalog).
    pub base_image: &'a str,
    /// The build stage's image (runs `opm serve --cache-only`).
    pub builder_image: &'a str,
    /// The catalog directory's name, relative to the build context.
    pub index_dir: &'a str,
    /// Extra labels, in key order.
    pub extra_labels: &'a BTreeMap<String, String>,
}

fn no_break(what: &'static str, value: &str) -> Result<(), DockerfileError> {
    if value.contains(['\n', '\r']) {
        return Err(DockerfileError::LineBreak {
            what,
            value: value.to_string(),
        });
    }
    Ok(())
}

/// The Dockerfile opm's template gives for `spec`.
pub fn render(spec: &Spec<'_>) -> Result<String, DockerfileError> {
    if spec.base_image.is_empty() {
        return Err(DockerfileError::NoBaseImage);
    }
    if spec.index_dir.is_empty() {
        return Err(DockerfileError::NoIndexDir);
    }
    if spec.builder_image == "scratch" {
        return Err(DockerfileError::ScratchBuilder);
    }
    no_break("base image", spec.base_image)?;
    no_break("builder image", spec.builder_image)?;
    no_break("directory", spec.index_dir)?;
    for (k, v) in spec.extra_labels {
        no_break("label", k)?;
        no_break("label", v)?;
    }
    let mut s = format!(
        "# The builder image is expected to contain\n\
         # /bin/opm (with serve subcommand)\n\
         FROM {} as builder\n\
         \n\
         # Copy FBC root into image at /configs and pre-populate serve cache\n\
         ADD {} /configs\n\
         RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\
         \n\
         FROM {}",
        spec.builder_image, spec.index_dir, spec.base_image
    );
    if spec.base_image != "scratch" {
        s.push_str(
            "\n# The base image is expected to contain\n\
             # /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\
             \n\
             # Configure the entrypoint and command\n\
             ENTRYPOINT [\"/bin/opm\"]\n\
             CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]",
        );
    } else {
        s.push_str(
            "\n# OLMv0 CatalogSources that use binary-less images must set:\n\
             # spec:\n\
             #   grpcPodConfig:\n\
             #     extractContent:\n\
             #       catalogDir: /configs\n\
             #       cacheDir: /tmp/cache",
        );
    }
    s.push_str(&format!(
        "\n\nCOPY --from=builder /configs /configs\n\
         COPY --from=builder /tmp/cache /tmp/cache\n\
         \n\
         # Set FBC-specific label for the location of the FBC root directory\n\
         # in the image\n\
         LABEL {CONFIGS_LABEL}=/configs"
    ));
    if !spec.extra_labels.is_empty() {
        s.push_str("\n\n# Set other custom labels");
        for (k, v) in spec.extra_labels {
            s.push_str(&format!("\nLABEL \"{k}\"=\"{v}\""));
        }
    }
    s.push('\n');
    Ok(s)
}

/// Where `opm generate dockerfile DIR` writes: `<parent>/<name>.Dockerfile` for the cleaned
/// path (trailing slashes dropped, as `filepath.Clean`), and the name the `ADD` line uses.
pub fn path_for(dir: &str) -> (PathBuf, String) {
    let trimmed = dir.trim_end_matches('/');
    let trimmed = if trimmed.is_empty() && dir.starts_with('/') {
        "/"
    } else {
        trimmed
    };
    let (parent, name) = match trimmed.rfind('/') {
        Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
        None => ("", trimmed),
    };
    (
        Path::new(parent).join(format!("{name}.Dockerfile")),
        name.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// upstream's TestGenerateDockerfile cases (alpha/action/generate_dockerfile_test.go).
    #[test]
    fn upstream_cases() {
        let none = labels(&[]);
        let spec = |base, labels| Spec {
            base_image: base,
            builder_image: "foo",
            index_dir: "bar",
            extra_labels: labels,
        };
        let head = "# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\nFROM foo as builder\n\n# Copy FBC root into image at /configs and pre-populate serve cache\nADD bar /configs\nRUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n";
        let tail = "\n\nCOPY --from=builder /configs /configs\nCOPY --from=builder /tmp/cache /tmp/cache\n\n# Set FBC-specific label for the location of the FBC root directory\n# in the image\nLABEL operators.operatorframework.io.index.configs.v1=/configs";
        let with_binary = "FROM foo\n# The base image is expected to contain\n# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n# Configure the entrypoint and command\nENTRYPOINT [\"/bin/opm\"]\nCMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]";
        assert_eq!(
            render(&spec("foo", &none)).unwrap(),
            format!("{head}{with_binary}{tail}\n")
        );
        let two = labels(&[("key2", "value2"), ("key1", "value1")]);
        assert_eq!(
            render(&spec("foo", &two)).unwrap(),
            format!(
                "{head}{with_binary}{tail}\n\n# Set other custom labels\nLABEL \"key1\"=\"value1\"\nLABEL \"key2\"=\"value2\"\n"
            )
        );
        let scratch = "FROM scratch\n# OLMv0 CatalogSources that use binary-less images must set:\n# spec:\n#   grpcPodConfig:\n#     extractContent:\n#       catalogDir: /configs\n#       cacheDir: /tmp/cache";
        assert_eq!(
            render(&spec("scratch", &none)).unwrap(),
            format!("{head}{scratch}{tail}\n")
        );
        assert_eq!(render(&spec("", &none)), Err(DockerfileError::NoBaseImage));
        let mut s = spec("foo", &none);
        s.index_dir = "";
        assert_eq!(render(&s), Err(DockerfileError::NoIndexDir));
        s.index_dir = "bar";
        s.builder_image = "scratch";
        assert_eq!(render(&s), Err(DockerfileError::ScratchBuilder));
        let broken = labels(&[("a", "b\nRUN x")]);
        assert!(matches!(
            render(&spec("foo", &broken)),
            Err(DockerfileError::LineBreak { .. })
        ));
    }

    #[test]
    fn the_file_goes_beside_the_directory() {
        assert_eq!(
            path_for("catalog"),
            (PathBuf::from("catalog.Dockerfile"), "catalog".into())
        );
        assert_eq!(
            path_for("a/b/catalog/"),
            (PathBuf::from("a/b/catalog.Dockerfile"), "catalog".into())
        );
        assert_eq!(
            path_for("/tmp/x"),
            (PathBuf::from("/tmp/x.Dockerfile"), "x".into())
        );
    }
}
