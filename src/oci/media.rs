//! Media types of the OCI image spec and their Docker schema 2 twins.

/// OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// OCI image config.
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// OCI gzipped tar layer.
pub const OCI_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// OCI uncompressed tar layer.
pub const OCI_LAYER_TAR: &str = "application/vnd.oci.image.layer.v1.tar";
/// OCI zstd tar layer (recognised, not unpacked).
pub const OCI_LAYER_ZSTD: &str = "application/vnd.oci.image.layer.v1.tar+zstd";
/// Docker schema 2 manifest.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list.
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// Docker image config.
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
/// Docker gzipped tar layer.
pub const DOCKER_LAYER_GZIP: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";

/// Every manifest type a pull accepts, images and indexes.
pub const ACCEPTED_MANIFESTS: &[&str] = &[OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST];

/// True for an index (OCI index or Docker manifest list).
pub fn is_index(mt: &str) -> bool {
    mt == OCI_INDEX || mt == DOCKER_LIST
}

/// True for a single-image manifest.
pub fn is_manifest(mt: &str) -> bool {
    mt == OCI_MANIFEST || mt == DOCKER_MANIFEST
}

/// The layer type matching a manifest type: a layer appended to a Docker schema 2 image must
/// use the Docker layer type, as `crane append` does.
pub fn gzip_layer_for(manifest_type: &str) -> &'static str {
    if manifest_type == DOCKER_MANIFEST {
        DOCKER_LAYER_GZIP
    } else {
        OCI_LAYER_GZIP
    }
}
