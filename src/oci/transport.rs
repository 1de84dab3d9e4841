//! The `oci:PATH[:REFERENCE]` transport of containers-transports(5) (skopeo, podman, buildah):
//! an image read from an OCI image layout directory instead of a registry. Parsed as
//! containers/image does (`oci/internal/oci_util.go`, `ParseReferenceIntoElements`): the path
//! ends at the first `:` (so it holds none), the rest is the image's
//! `org.opencontainers.image.ref.name` (validated by `ValidateImageName`'s pattern) or `@N`,
//! the N-th entry of `index.json`; without one, the layout's only image.

use std::path::PathBuf;

use super::layout_read::Pick;

/// The transport's prefix.
pub const PREFIX: &str = "oci:";

/// An `oci:` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutRef {
    /// The layout directory.
    pub dir: PathBuf,
    /// The image's `ref.name` (e.g. a tag such as `1.30.0`).
    pub name: Option<String>,
    /// `@N`: the N-th entry of `index.json`.
    pub index: Option<usize>,
}

impl LayoutRef {
    /// Which image of the layout it names.
    pub fn pick(&self) -> Pick<'_> {
        match (&self.name, self.index) {
            (Some(n), _) => Pick::Name(n),
            (None, Some(i)) => Pick::Index(i),
            (None, None) => Pick::Only,
        }
    }
}

/// `ValidateImageName`'s pattern: components of alphanumerics joined by one of `-._:@+` (or
/// `--`), separated by `/`.
fn name_ok(name: &str) -> bool {
    name.split('/').all(|c| {
        let b = c.as_bytes();
        if b.is_empty() || !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric()
        {
            return false;
        }
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let sep = if b[i..].starts_with(b"--") { 2 } else { 1 };
            if sep == 1 && !b"-._:@+".contains(&b[i]) {
                return false;
            }
            i += sep;
            // A separator is followed by an alphanumeric.
            if !b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
                return false;
            }
        }
        true
    })
}

/// `s` as an `oci:` reference: `None` when it does not start with `oci:`, else the parsed
/// reference or why it is invalid.
pub fn parse(s: &str) -> Option<Result<LayoutRef, String>> {
    let rest = s.strip_prefix(PREFIX)?;
    let (path, image) = rest.split_once(':').unwrap_or((rest, ""));
    Some((|| {
        if path.is_empty() {
            return Err("no layout directory (oci:PATH[:REFERENCE])".to_string());
        }
        let (name, index) = if let Some(n) = image.strip_prefix('@') {
            let i = n
                .parse::<usize>()
                .map_err(|_| format!("invalid source index @{n}: not a non-negative integer"))?;
            (None, Some(i))
        } else if image.is_empty() {
            (None, None)
        } else if name_ok(image) {
            (Some(image.to_string()), None)
        } else {
            return Err(format!(
                "invalid image name {image:?} in the OCI layout reference"
            ));
        };
        Ok(LayoutRef {
            dir: PathBuf::from(path),
            name,
            index,
        })
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> LayoutRef {
        parse(s).expect("oci:").expect("valid")
    }

    #[test]
    fn path_name_and_index_as_containers_image_splits_them() {
        assert_eq!(
            ok("oci:/tmp/layout:1.30.0"),
            LayoutRef {
                dir: "/tmp/layout".into(),
                name: Some("1.30.0".into()),
                index: None
            }
        );
        // Everything after the first colon is the name (it may hold colons itself).
        let r = ok("oci:rel/dir:quay.io/x/y:v1");
        assert_eq!(r.dir, PathBuf::from("rel/dir"));
        assert_eq!(r.name.as_deref(), Some("quay.io/x/y:v1"));
        assert_eq!(ok("oci:dir").pick(), Pick::Only);
        assert_eq!(ok("oci:dir:").pick(), Pick::Only);
        assert_eq!(ok("oci:dir:@2").pick(), Pick::Index(2));
        assert_eq!(ok("oci:dir:a--b_c").pick(), Pick::Name("a--b_c"));
    }

    #[test]
    fn invalid_references_and_other_strings() {
        assert!(parse("quay.io/foo/bar:1").is_none());
        assert!(parse("/tmp/oci:x").is_none());
        for bad in [
            "oci:",
            "oci::tag",
            "oci:d:@-1",
            "oci:d:@x",
            "oci:d:-a",
            "oci:d:a b",
            "oci:d:a/",
        ] {
            assert!(parse(bad).expect("oci:").is_err(), "{bad}");
        }
    }
}
