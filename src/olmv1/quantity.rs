//! A Kubernetes quantity (`resources.limits.cpu: 500m`) as `resource.Quantity` reads and writes
//! it (`k8s.io/apimachinery/pkg/api/resource/quantity.go`, v0.36: `ParseQuantity`, then
//! `MarshalJSON`, which is the string it kept when parsing or `CanonicalizeBytes`).
//!
//! Values are held as an `i128` mantissa and a power of ten; a quantity past that range (more
//! than 38 digits, or `Ei` of a large number) is kept as written.

/// `ErrFormatWrong`.
pub const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrSuffix`.
pub const SUFFIX: &str = "unable to parse quantity's suffix";
/// `ErrNumeric`.
pub const NUMERIC: &str = "unable to parse numeric part of quantity";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// `parseQuantityString`: sign, the value's text, the integer and fraction digits (leading
/// zeros of the integer dropped) and the suffix.
fn split(s: &str) -> Result<(bool, &str, &str, &str, &str), &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    if pos < end {
        match b[0] {
            b'-' => {
                positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok((positive, s, "0", "", ""));
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Ok((positive, s, &s[start..], "", ""));
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let d = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[d..pos];
        if pos >= end {
            return Ok((positive, s, num, denom, ""));
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(FORMAT_WRONG);
    }
    Ok((positive, value, num, denom, &s[suffix_start..]))
}

/// `quantitySuffixer.interpret`: base, exponent and format.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = [
        ("n", -9),
        ("u", -6),
        ("m", -3),
        ("", 0),
        ("k", 3),
        ("M", 6),
        ("G", 9),
        ("T", 12),
        ("P", 15),
        ("E", 18),
    ];
    let bin = [
        ("Ki", 10),
        ("Mi", 20),
        ("Gi", 30),
        ("Ti", 40),
        ("Pi", 50),
        ("Ei", 60),
    ];
    if let Some((_, e)) = dec.iter().find(|(s, _)| *s == suffix) {
        return Some((10, *e, Format::DecimalSI));
    }
    if let Some((_, e)) = bin.iter().find(|(s, _)| *s == suffix) {
        return Some((2, *e, Format::BinarySI));
    }
    if suffix.len() > 1 && (suffix.starts_with('e') || suffix.starts_with('E')) {
        let e: i64 = suffix[1..].parse().ok()?;
        return Some((10, e as i32, Format::DecimalExponent));
    }
    None
}

/// `strings.HasSuffix`, `shifted[0] != '0'` and friends of `ParseQuantity`'s fast path: whether
/// it keeps the text as written (then `MarshalJSON` writes it back unchanged).
fn keeps_text(format: Format, exponent: i32, scale: i32, shifted: &str, value: i64) -> bool {
    match format {
        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    }
}

/// What `MarshalJSON` writes for the quantity `s` (`ParseQuantity` then its cached text or
/// `CanonicalizeBytes`), or `ParseQuantity`'s error.
pub fn marshal(s: &str) -> Result<String, &'static str> {
    if s.is_empty() {
        return Err(FORMAT_WRONG);
    }
    if s == "0" {
        return Ok(s.into());
    }
    let (positive, _value, num, denom, suf) = split(s)?;
    let (base, exponent, mut format) = interpret(suf).ok_or(SUFFIX)?;
    let shifted = format!("{num}{denom}");
    let Ok(digits) = shifted.parse::<i128>() else {
        return Ok(s.into());
    };
    // ParseQuantity's int64 fast path, where it keeps the text.
    let precision = match format {
        Format::DecimalExponent | Format::DecimalSI => 18 - (num.len() + denom.len()) as i32,
        Format::BinarySI if exponent >= 0 && denom.is_empty() => {
            15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1
        }
        Format::BinarySI => -1,
    };
    let scale0 = if format == Format::BinarySI {
        0
    } else {
        exponent
    };
    if precision >= 0 {
        let scale = scale0 - denom.len() as i32;
        if scale >= -9
            && let Ok(v) = i64::try_from(digits)
            && keeps_text(format, exponent, scale, &shifted, v)
        {
            let mantissa: i64 = if format == Format::BinarySI {
                1i64 << exponent
            } else {
                1
            };
            if v.checked_mul(mantissa).is_some() {
                return Ok(s.into());
            }
        }
    }
    // The value as mantissa * 10^scale.
    let mut mantissa = digits;
    let mut scale = -(denom.len() as i32);
    if base == 10 {
        scale += exponent;
    } else {
        let Some(m) = 1i128
            .checked_shl(exponent as u32)
            .and_then(|f| mantissa.checked_mul(f))
        else {
            return Ok(s.into());
        };
        mantissa = m;
    }
    // Rounded up (away from zero) to nano.
    if scale < -9 {
        let Some(div) = 10i128.checked_pow((-9 - scale) as u32) else {
            return Ok(if mantissa == 0 { "0" } else { "1n" }.into());
        };
        let q = mantissa / div;
        mantissa = if mantissa % div != 0 { q + 1 } else { q };
        scale = -9;
    }
    if !positive {
        mantissa = -mantissa;
    }
    if mantissa == 0 {
        return Ok("0".into());
    }
    // CanonicalizeBytes.
    if format == Format::BinarySI {
        let whole = if scale >= 0 {
            10i128
                .checked_pow(scale as u32)
                .and_then(|p| mantissa.checked_mul(p))
        } else {
            let p = 10i128.pow((-scale) as u32);
            (mantissa % p == 0).then(|| mantissa / p)
        };
        match whole {
            Some(w) if !(-1024 < w && w < 1024) => {
                let (mut n, mut e) = (w, 0usize);
                while n % 1024 == 0 {
                    n /= 1024;
                    e += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                    .get(e)
                    .copied()
                    .unwrap_or_default();
                return Ok(format!("{n}{suffix}"));
            }
            _ => format = Format::DecimalSI,
        }
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        scale += 1;
    }
    match scale % 3 {
        1 | -2 => {
            mantissa *= 10;
            scale -= 1;
        }
        2 | -1 => {
            mantissa *= 100;
            scale -= 2;
        }
        _ => {}
    }
    let suffix = match format {
        Format::DecimalExponent if scale == 0 => String::new(),
        Format::DecimalExponent => format!("e{scale}"),
        _ => match scale {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            // No suffix for it: Go writes the number alone.
            _ => "",
        }
        .to_string(),
    };
    Ok(format!("{mantissa}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases of quantity_test.go's `TestQuantityParse` and `TestQuantityString` that fit
    /// an i128, as `MarshalJSON` writes them.
    #[test]
    fn quantities_are_written_as_go_writes_them() {
        for (input, want) in [
            ("0", "0"),
            ("0m", "0"),
            ("0Ki", "0"),
            ("1", "1"),
            ("+1", "+1"),
            ("01", "01"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5", "500m"),
            ("0.1", "100m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("100M", "100M"),
            ("1Ki", "1Ki"),
            ("1024Ki", "1Mi"),
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("1000Ki", "1000Ki"),
            ("0.5Ki", "512"),
            ("1e3", "1e3"),
            ("1E3", "1E3"),
            ("1000e0", "1e3"),
            ("1.5e3", "1500"),
            ("0.0000000001", "1n"),
            ("1n", "1n"),
            ("1.000001m", "1.000001m"),
            ("-1", "-1"),
            ("-1500m", "-1500m"),
            ("-0.5", "-500m"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("129M", "129M"),
            ("123Mi", "123Mi"),
            ("250m", "250m"),
            ("1G", "1G"),
        ] {
            assert_eq!(marshal(input).as_deref(), Ok(want), "{input}");
        }
        assert_eq!(marshal(""), Err(FORMAT_WRONG));
        assert_eq!(marshal("1 "), Err(FORMAT_WRONG));
        assert_eq!(marshal("1x"), Err(FORMAT_WRONG));
        assert_eq!(marshal("1K"), Err(SUFFIX));
        assert_eq!(marshal("1Kib"), Err(FORMAT_WRONG));
        assert_eq!(marshal("1Kix"), Err(FORMAT_WRONG));
        assert_eq!(marshal("1iK"), Err(SUFFIX));
    }
}
