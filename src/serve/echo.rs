//! Request values echoed in gRPC status messages, cut to a short prefix. A status message
//! travels as the `grpc-message` header: a 100 KB package name echoed in full makes clients
//! refuse the answer as oversized metadata (grpc-go's default limit is 16 KiB of headers), and
//! the error names nothing useful anyway. Short values are echoed as opm echoes them.

/// Bytes of a request value echoed at most.
pub const MAX_ECHO: usize = 128;

/// The longest prefix of `v` of at most [`MAX_ECHO`] bytes that ends on a character boundary,
/// and whether it was cut.
fn prefix(v: &str) -> (&str, bool) {
    if v.len() <= MAX_ECHO {
        return (v, false);
    }
    let mut end = MAX_ECHO;
    while !v.is_char_boundary(end) {
        end -= 1;
    }
    (&v[..end], true)
}

/// `v` as Go's `%q` would quote it (Rust's `{:?}`), or its prefix and its length.
pub fn quoted(v: &str) -> String {
    match prefix(v) {
        (p, false) => format!("{p:?}"),
        (p, true) => format!("{p:?}... ({} bytes)", v.len()),
    }
}

/// `v` as it is (opm's `%s`), or its prefix and its length.
pub fn plain(v: &str) -> String {
    match prefix(v) {
        (p, false) => p.to_string(),
        (p, true) => format!("{p}... ({} bytes)", v.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_echoed_as_they_are_and_long_ones_cut() {
        assert_eq!(quoted("etcd"), "\"etcd\"");
        assert_eq!(plain("etcd"), "etcd");
        let long = "é".repeat(50_000);
        let q = quoted(&long);
        assert!(q.len() < MAX_ECHO + 32, "{}", q.len());
        assert!(q.ends_with("... (100000 bytes)"), "{q}");
        assert!(plain(&long).starts_with("éé"));
        assert!(plain(&long).len() <= MAX_ECHO + 20);
    }
}
