//! The FBC codes. Codes are never renumbered; retired codes are not reused.

use crate::checks::Code;
use crate::diag::Severity::{Error, Warning};

macro_rules! codes {
    ($($name:ident = $code:literal, $sev:expr, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $name: Code = Code { code: $code, severity: $sev, summary: $summary };
        )*
        /// Every FBC code.
        pub static CODES: &[&Code] = &[$(&$name),*];
    };
}

codes! {
    SYNTAX = "FBC001", Error, "A file is not valid YAML or JSON; opm fails to load the whole catalog.";
    ENVELOPE = "FBC002", Error, "A blob is not an object, has no `schema`, or repeats `schema`/`package`/`name` under different case.";
    FIELD_TYPE = "FBC003", Error, "A field has the wrong type (e.g. a number where a string is needed); opm fails to load the catalog.";
    UNKNOWN_FIELD = "FBC004", Warning, "A field opm does not know; it is dropped silently (a typo such as `replace:` loses an upgrade edge).";
    MISCASED_FIELD = "FBC005", Warning, "A field whose name matches only case-insensitively; opm accepts it, other tools may not.";
    BAD_BASE64 = "FBC006", Error, "`icon.base64data` or `olm.bundle.object` data is not valid base64; opm fails to load it.";
    PACKAGE_NO_NAME = "FBC010", Error, "An `olm.package` blob has no name.";
    DUPLICATE_PACKAGE = "FBC011", Error, "Two `olm.package` blobs have the same name.";
    PACKAGE_NAME = "FBC012", Error, "A package name is not a DNS-1123 label.";
    NO_DEFAULT_CHANNEL = "FBC013", Error, "A package has no `defaultChannel`.";
    DEFAULT_CHANNEL_MISSING = "FBC014", Error, "A package's `defaultChannel` names a channel that does not exist.";
    NO_CHANNELS = "FBC015", Error, "A package has no channels.";
    ICON = "FBC016", Warning, "A package icon has no data, no media type, or a media type that is not an image.";
    CHANNEL_UNKNOWN_PACKAGE = "FBC020", Error, "A channel names a package that has no `olm.package` blob.";
    CHANNEL_NO_NAME = "FBC021", Error, "A channel has no name.";
    DUPLICATE_CHANNEL = "FBC022", Error, "Two channels of a package have the same name.";
    DUPLICATE_ENTRY = "FBC023", Error, "A channel lists the same bundle twice.";
    EMPTY_CHANNEL = "FBC024", Error, "A channel has no entries.";
    ENTRY_NO_BUNDLE = "FBC025", Error, "A channel entry names a bundle that has no `olm.bundle` blob in the package.";
    NO_HEAD = "FBC026", Error, "A channel has no head: every entry is replaced or skipped by another (a cycle).";
    MULTIPLE_HEADS = "FBC027", Error, "A channel has several heads (entries no other entry replaces or skips).";
    CYCLE = "FBC028", Error, "The replaces chain of a channel has a cycle.";
    STRANDED = "FBC029", Error, "Channel entries that are neither on the replaces chain from the head nor skipped: OLM v0 cannot upgrade them.";
    EMPTY_SKIP = "FBC030", Error, "A channel entry has an empty string in `skips`.";
    BAD_SKIP_RANGE = "FBC031", Error, "A `skipRange` does not parse as a blang/semver range (OLM v0 silently ignores it).";
    ENTRY_NO_NAME = "FBC032", Error, "A channel entry has no name.";
    BUNDLE_NO_PACKAGE = "FBC040", Error, "A bundle has no `package`.";
    BUNDLE_UNKNOWN_PACKAGE = "FBC041", Error, "A bundle names a package that has no `olm.package` blob.";
    DUPLICATE_BUNDLE = "FBC042", Error, "Two bundles of a package have the same name.";
    BAD_PROPERTY = "FBC043", Error, "A property of a known type has a value of the wrong shape; opm fails to parse it.";
    PACKAGE_PROPERTY_COUNT = "FBC044", Error, "A bundle does not have exactly one `olm.package` property.";
    PACKAGE_PROPERTY_MISMATCH = "FBC045", Error, "A bundle's `olm.package` property names another package than the bundle's `package`.";
    BAD_IMAGE = "FBC046", Error, "A bundle image is not a valid image reference.";
    BAD_RELATED_IMAGE = "FBC047", Error, "A related image is not a valid image reference.";
    BAD_VERSION = "FBC048", Error, "A bundle version is not strict semver.";
    BAD_RELEASE = "FBC049", Error, "A bundle release is not valid (dot-separated pre-release identifiers, at most 20 characters).";
    BUNDLE_NOT_IN_CHANNEL = "FBC050", Error, "A bundle is in no channel.";
    RELEASE_NAME = "FBC051", Error, "A bundle with a release is not named `<package>-v<version>-<release>`.";
    BUILD_METADATA_WITH_RELEASE = "FBC052", Error, "A bundle version with build metadata also has a release.";
    NO_IMAGE = "FBC053", Error, "A bundle has neither an image nor `olm.bundle.object` properties.";
    DUPLICATE_VERSION = "FBC054", Error, "Several bundles of a package have the same version (and release).";
    DUPLICATE_CSV_METADATA = "FBC055", Error, "A bundle has more than one `olm.csv.metadata` property; `opm serve` refuses the catalog.";
    MAX_OCP_VERSION = "FBC056", Warning, "`olm.maxOpenShiftVersion` is not a `major.minor` string (YAML turns 4.10 into 4.1).";
    PACKAGE_REQUIRED_RANGE = "FBC057", Warning, "An `olm.package.required` `versionRange` does not parse; OLM cannot resolve the dependency.";
    EMPTY_GVK = "FBC058", Warning, "An `olm.gvk` or `olm.gvk.required` property has an empty kind or version.";
    EMPTY_RELATED_IMAGE = "FBC059", Warning, "A related image has an empty `image` (opm accepts it; mirroring tools fail).";
    DEPRECATION_NO_PACKAGE = "FBC060", Error, "An `olm.deprecations` blob has no package.";
    DEPRECATION_UNKNOWN_PACKAGE = "FBC061", Error, "An `olm.deprecations` blob names a package that does not exist.";
    DUPLICATE_DEPRECATIONS = "FBC062", Error, "A package has more than one `olm.deprecations` blob.";
    DEPRECATION_NO_SCHEMA = "FBC063", Error, "A deprecation entry has no `reference.schema`.";
    DUPLICATE_DEPRECATION_ENTRY = "FBC064", Error, "Two deprecation entries reference the same object.";
    DEPRECATION_BAD_REFERENCE = "FBC065", Error, "A deprecation entry references a missing channel or bundle, an unknown schema, or names the package.";
    DEPRECATION_NO_MESSAGE = "FBC066", Error, "A deprecation entry has no message.";
    CUSTOM_SCHEMA_NAME = "FBC070", Error, "A custom schema (or its package) is not `^[a-zA-Z0-9][a-zA-Z0-9._-]*$`; `opm serve` fails to build its cache.";
    DUPLICATE_CUSTOM = "FBC071", Warning, "Two custom-schema blobs share schema, package and name (documented as forbidden, not enforced by opm).";
}
