//! The base64 dialects olmctl reads and writes, all on the standard alphabet (`+/`, never the
//! URL-safe `-_`) and all on the `base64` crate's engines:
//!
//! - [`base64`] writes it with padding, as Go's `base64.StdEncoding` does (bundle objects of a
//!   rendered catalog, icons served by the registry API);
//! - [`decode_forgiving`] reads it as a browser's `atob` (WHATWG forgiving-base64) reads the
//!   `data:` URL OperatorHub builds from a CSV icon: ASCII whitespace ignored, padding optional
//!   but complete when present, stray bits of the last symbol ignored. Icons, unpacked-bundle
//!   ConfigMaps, `olm.bundle.object` data and the `auth` fields of registry credentials are read
//!   this way;
//! - [`check_go_std`] tells whether Go's `base64.StdEncoding` decodes a `[]byte` JSON field
//!   (`\r` and `\n` ignored, padding required, stray bits ignored), as opm does with a
//!   catalog's icons and bundle objects.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::{DecodePaddingMode, Engine};

/// Padding required, stray bits of the last symbol ignored (Go's `StdEncoding` when decoding).
const PADDED: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// Padding not required (the input has none), stray bits ignored.
const UNPADDED: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Standard base64 with padding (Go's `base64.StdEncoding`).
pub fn base64(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// `data` without the bytes `skip` accepts, and the offset in `data` of each byte kept.
fn strip(data: &str, skip: impl Fn(u8) -> bool) -> (Vec<u8>, Vec<usize>) {
    data.bytes()
        .enumerate()
        .filter(|&(_, b)| !skip(b))
        .map(|(i, b)| (b, i))
        .unzip()
}

/// Decodes `s` (already stripped) with padding required when it ends in `=`.
fn decode(s: &[u8]) -> Result<Vec<u8>, base64::DecodeError> {
    let engine = if s.last() == Some(&b'=') {
        &PADDED
    } else {
        &UNPADDED
    };
    engine.decode(s)
}

/// The first byte of `s` (stripped) out of place: not of the alphabet (`Ok`), or data after
/// padding (`Err`). The crate reports a wrong length before a wrong byte further on; the
/// messages name the first wrong byte, as Go and browsers do.
fn misplaced(s: &[u8]) -> Option<Result<usize, usize>> {
    let symbol = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
    let p = s.iter().position(|b| !symbol(b))?;
    if s[p] != b'=' {
        return Some(Ok(p));
    }
    s[p..].iter().position(|&b| b != b'=').map(|j| Err(p + j))
}

/// Decodes `data` as forgiving-base64 (see the module documentation); the error says why it
/// does not decode, with byte offsets into `data`.
pub fn decode_forgiving(data: &str) -> Result<Vec<u8>, String> {
    let (s, at) = strip(data, |b| {
        matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
    });
    decode(&s).map_err(|_| match misplaced(&s) {
        Some(Ok(i)) => format!("invalid character {:?} at byte {}", s[i] as char, at[i]),
        Some(Err(i)) => format!("data after padding at byte {}", at[i]),
        None if s.last() == Some(&b'=') => "bad padding".into(),
        None => format!("truncated ({} base64 characters)", s.len()),
    })
}

/// Whether Go's `base64.StdEncoding` decodes `s`; the error is the byte offset in `s` of the
/// first byte that is not base64 (or of the data after padding), else of the last byte when
/// the length or padding is wrong.
pub fn check_go_std(s: &str) -> Result<(), usize> {
    let (t, at) = strip(s, |b| matches!(b, b'\r' | b'\n'));
    match PADDED.decode(&t) {
        Ok(_) => Ok(()),
        Err(_) => Err(match misplaced(&t) {
            Some(Ok(i) | Err(i)) => at[i],
            None => at.last().copied().unwrap_or(0),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_standard_alphabet_with_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn forgiving_accepts_whitespace_and_optional_padding() {
        for (text, bytes) in [
            ("", &b""[..]),
            ("QQ==", b"A"),
            ("QQ", b"A"),
            ("QUI=", b"AB"),
            ("QUI", b"AB"),
            ("TWFu", b"Man"),
            (" T W\tF\nu\r\x0c", b"Man"),
            ("QQ=\n=", b"A"),
            ("iVBO\n Rw0K\tGgo=", b"\x89PNG\r\n\x1a\n"),
            // Stray bits in the last symbol are dropped, as atob does.
            ("QR==", b"A"),
            ("QUJ", b"AB"),
            ("+/8=", &[0xfb, 0xff]),
        ] {
            assert_eq!(decode_forgiving(text).as_deref(), Ok(bytes), "{text:?}");
        }
    }

    #[test]
    fn forgiving_refuses_with_the_reason() {
        for (text, why) in [
            ("Q", "truncated (1 base64 characters)"),
            ("QUJDR", "truncated (5 base64 characters)"),
            ("QQ=A", "data after padding at byte 3"),
            ("QQ= \nA", "data after padding at byte 5"),
            ("QQ-_", "invalid character '-' at byte 2"),
            (" Q!==", "invalid character '!' at byte 2"),
            (
                "data:image/png;base64,QQ==",
                "invalid character ':' at byte 4",
            ),
            ("QQ=", "bad padding"),
            ("Q===", "bad padding"),
            ("QUI==", "bad padding"),
            ("iVBORw0KGgo===", "bad padding"),
            ("====", "bad padding"),
            ("=", "bad padding"),
        ] {
            assert_eq!(decode_forgiving(text), Err(why.to_string()), "{text:?}");
        }
    }

    #[test]
    fn go_std_requires_padding_and_ignores_only_newlines() {
        for ok in [
            "",
            "aGVsbG8=",
            "aGVs\nbG8=",
            "aGVs\r\nbG8=\n",
            "QQ==",
            "QR==",
            "TWFu",
            "\n\n",
        ] {
            assert_eq!(check_go_std(ok), Ok(()), "{ok:?}");
        }
        for (bad, at) in [
            ("aGVsbG8", 6),
            ("aGV$bG8=", 3),
            ("aGVs bG8=", 4),
            ("QQ", 1),
            ("QQ=", 2),
            ("QQ=A", 3),
            ("Q===", 3),
            ("QQ==\nQQ==", 5),
            ("QQ-_", 2),
        ] {
            assert_eq!(check_go_std(bad), Err(at), "{bad:?}");
        }
    }
}
