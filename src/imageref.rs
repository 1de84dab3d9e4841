//! Container image references, checked the way opm checks bundle and related images
//! (`reference.ParseNormalizedNamed` from distribution/reference, plus go-digest validation):
//! `[domain[:port]/]path[:tag][@algorithm:hex]`, lowercase repository, registered digest
//! algorithms with the right hex length.

/// Why a reference is invalid.
pub type RefError = String;

fn is_alnum_lower(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// One path component: `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`.
fn path_component_ok(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !is_alnum_lower(b[0]) || !is_alnum_lower(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if is_alnum_lower(b[i]) {
            i += 1;
            continue;
        }
        // A separator run: `.`, `_`, `__` or one or more `-`.
        let start = i;
        while i < b.len() && !is_alnum_lower(b[i]) {
            i += 1;
        }
        let sep = &s[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// A domain component: `[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`.
fn domain_component_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn domain_ok(d: &str) -> bool {
    let (host, port) = if let Some(rest) = d.strip_prefix('[') {
        // IPv6 literal.
        let Some((addr, after)) = rest.split_once(']') else {
            return false;
        };
        if addr.is_empty() || !addr.bytes().all(|c| c.is_ascii_hexdigit() || c == b':') {
            return false;
        }
        match after.strip_prefix(':') {
            Some(p) => ("", Some(p)),
            None if after.is_empty() => ("", None),
            None => return false,
        }
    } else {
        match d.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (d, None),
        }
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    d.starts_with('[') || host.split('.').all(domain_component_ok)
}

fn tag_ok(t: &str) -> bool {
    let b = t.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

fn digest_ok(d: &str) -> Result<(), RefError> {
    let Some((alg, hex)) = d.split_once(':') else {
        return Err("invalid reference format".into());
    };
    let alg_ok = !alg.is_empty()
        && alg.split(['-', '_', '+', '.']).all(|p| {
            let b = p.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphabetic()
                && b.iter().all(|c| c.is_ascii_alphanumeric())
        });
    if !alg_ok || hex.len() < 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err("invalid reference format".into());
    }
    let want = match alg {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm".into()),
    };
    if hex.len() != want || hex.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err("invalid checksum digest format".into());
    }
    Ok(())
}

/// Checks `s` as `reference.ParseNormalizedNamed` followed by digest validation would.
pub fn validate(s: &str) -> Result<(), RefError> {
    if s.is_empty() {
        return Err("repository name must have at least one component".into());
    }
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (s, None),
    };
    if let Some(d) = digest {
        digest_ok(d)?;
    }
    // A tag is after the last ':' that follows the last '/'.
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag
        && !tag_ok(t)
    {
        return Err("invalid reference format".into());
    }
    if name.len() > 255 {
        return Err("repository name must not be more than 255 characters".into());
    }
    // ParseNormalizedNamed's domain split: the first component is a domain when it contains
    // '.' or ':', is `localhost`, or has upper-case letters.
    let (domain, path) = match name.split_once('/') {
        Some((d, p)) if d.contains(['.', ':']) || d == "localhost" || d.to_lowercase() != d => {
            (Some(d), p)
        }
        _ => (None, name),
    };
    if path.len() == 64 && path.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!(
            "invalid repository name ({path}), cannot specify 64-byte hexadecimal strings"
        ));
    }
    if let Some(d) = domain
        && !domain_ok(d)
    {
        return Err("invalid reference format".into());
    }
    if path.bytes().any(|c| c.is_ascii_uppercase()) {
        return Err("invalid reference format: repository name must be lowercase".into());
    }
    if !path.split('/').all(path_component_ok) {
        return Err("invalid reference format".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_real_references() {
        for r in [
            "quay.io/openshift-community-operators/kube-green@sha256:21e3c746595aff170a790207f4607def2102b5410d999bc48eed4458e7fc5b2d",
            "quay.io/foo/bar:v1.0.0",
            "busybox",
            "localhost:5000/a/b:latest",
            "registry.example.com:443/ns/img_x__y-z.w:1.0-rc_1",
            "[::1]:5000/foo",
            "docker.io/library/nginx:1.25",
        ] {
            assert_eq!(validate(r), Ok(()), "{r}");
        }
    }

    #[test]
    fn rejects_bad_references() {
        for (r, why) in [
            ("quay.io/foo/bar@ssha256:abc", "bad algorithm"),
            (
                "quay.io/foo/bar@md5:d41d8cd98f00b204e9800998ecf8427e",
                "unsupported",
            ),
            ("quay.io/foo/bar@sha256:abc", "short"),
            ("quay.io/Foo/bar:v1", "uppercase"),
            ("quay.io/foo/bar:", "empty tag"),
            ("quay.io/foo//bar", "empty component"),
            ("", "empty"),
            ("foo bar", "space"),
            ("quay.io/foo/bar:v1:v2", "two tags"),
        ] {
            assert!(validate(r).is_err(), "{r} should fail: {why}");
        }
    }
}
