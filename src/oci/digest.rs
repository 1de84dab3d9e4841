//! Content digests: `sha256:<64 lowercase hex>` as OCI descriptors carry them.

use sha2::{Digest as _, Sha256};

/// The algorithm prefix olmctl writes and verifies.
pub const SHA256: &str = "sha256";

/// Lowercase hex of `bytes`. (sha2 0.11 digests no longer implement `LowerHex`.)
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// The `sha256:<hex>` digest of `data`.
pub fn sha256(data: &[u8]) -> String {
    format!("{SHA256}:{}", hex(&Sha256::digest(data)))
}

/// An incremental sha256 digest, for data read in pieces (uncompressed layers).
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Adds bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    /// The `sha256:<hex>` digest of everything added.
    pub fn finish(self) -> String {
        format!("{SHA256}:{}", hex(&self.0.finalize()))
    }
}

/// Checks that `digest` is a well-formed sha256 digest; returns the hex part.
///
/// Other algorithms (sha512) are refused with a message, since every digest olmctl checks
/// is computed here with sha256.
pub fn parse(digest: &str) -> Result<&str, String> {
    let Some((alg, hex)) = digest.split_once(':') else {
        return Err(format!("digest {digest:?} has no algorithm prefix"));
    };
    if alg != SHA256 {
        return Err(format!(
            "digest {digest:?} uses algorithm {alg:?}; only sha256 is supported"
        ));
    }
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "digest {digest:?} is not 64 lowercase hex characters"
        ));
    }
    Ok(hex)
}

/// Verifies that `data` has `expected` digest.
pub fn verify(data: &[u8], expected: &str) -> Result<(), String> {
    parse(expected)?;
    let actual = sha256(data);
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "digest mismatch: expected {expected}, got {actual}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_empty_and_abc() {
        assert_eq!(
            sha256(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let mut h = Hasher::default();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(
            h.finish(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn parse_refuses_bad_digests() {
        assert!(parse("sha256:abc").is_err());
        assert!(parse("md5:00").is_err());
        assert!(parse("e3b0").is_err());
        assert!(parse(&sha256(b"x").to_uppercase().replace("SHA256", "sha256")).is_err());
        assert!(parse(&sha256(b"x")).is_ok());
        assert!(
            verify(b"x", &sha256(b"y"))
                .unwrap_err()
                .contains("mismatch")
        );
        assert!(verify(b"x", &sha256(b"x")).is_ok());
    }
}
