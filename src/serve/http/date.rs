//! HTTP dates as Go's `net/http` writes and reads them: `http.TimeFormat` (`Mon, 02 Jan 2006
//! 15:04:05 GMT`) for `Last-Modified`, and `http.ParseTime`, which tries that layout, then
//! `time.RFC850` and `time.ANSIC`, with `time.Parse`'s rules (names matched without regard to
//! case and not checked against the date, a space in the layout matching one or more spaces,
//! an hour of one or two digits, fractional seconds accepted after the seconds, the day checked
//! against the month). Times are whole seconds since the Unix epoch.

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01: (year, month 1-12, day 1-31).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `t.UTC().Format(http.TimeFormat)`.
pub fn format(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    let wd = (secs.div_euclid(86_400) + 4).rem_euclid(7) as usize;
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        &DAYS[wd][..3],
        d,
        MONTHS[(m - 1) as usize],
        y,
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

#[derive(Clone, Copy)]
enum Tok {
    WeekShort,
    WeekLong,
    Lit(&'static str),
    Day2,
    DayUnder,
    Month,
    Year4,
    Year2,
    Hour,
    Min,
    Sec,
    Zone,
}

use Tok::*;

const LAYOUTS: [&[Tok]; 3] = [
    // http.TimeFormat
    &[
        WeekShort,
        Lit(", "),
        Day2,
        Lit(" "),
        Month,
        Lit(" "),
        Year4,
        Lit(" "),
        Hour,
        Lit(":"),
        Min,
        Lit(":"),
        Sec,
        Lit(" GMT"),
    ],
    // time.RFC850
    &[
        WeekLong,
        Lit(", "),
        Day2,
        Lit("-"),
        Month,
        Lit("-"),
        Year2,
        Lit(" "),
        Hour,
        Lit(":"),
        Min,
        Lit(":"),
        Sec,
        Lit(" "),
        Zone,
    ],
    // time.ANSIC
    &[
        WeekShort,
        Lit(" "),
        Month,
        Lit(" "),
        DayUnder,
        Lit(" "),
        Hour,
        Lit(":"),
        Min,
        Lit(":"),
        Sec,
        Lit(" "),
        Year4,
    ],
];

/// `http.ParseTime`: seconds since the epoch, or `None`.
pub fn parse(text: &str) -> Option<i64> {
    LAYOUTS
        .iter()
        .find_map(|l| parse_layout(text.as_bytes(), l))
}

/// `time.skip`: a space matches one or more spaces; other bytes match exactly.
fn skip<'a>(mut v: &'a [u8], mut lit: &[u8]) -> Option<&'a [u8]> {
    while let Some(&c) = lit.first() {
        if c == b' ' {
            if v.first().is_some_and(|&b| b != b' ') {
                return None;
            }
            while lit.first() == Some(&b' ') {
                lit = &lit[1..];
            }
            while v.first() == Some(&b' ') {
                v = &v[1..];
            }
            continue;
        }
        if v.first() != Some(&c) {
            return None;
        }
        v = &v[1..];
        lit = &lit[1..];
    }
    Some(v)
}

/// `time.getnum`: one or two digits (exactly two when `fixed`).
fn num(v: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let d = |i: usize| {
        v.get(i)
            .filter(|b| b.is_ascii_digit())
            .map(|b| i64::from(b - b'0'))
    };
    let a = d(0)?;
    match d(1) {
        Some(b) => Some((a * 10 + b, &v[2..])),
        None if fixed => None,
        None => Some((a, &v[1..])),
    }
}

/// `time.lookup`: the name among `names` that prefixes `v`, ASCII case ignored.
fn lookup(v: &[u8], names: impl Iterator<Item = &'static str>) -> Option<(usize, &[u8])> {
    names.enumerate().find_map(|(i, n)| {
        let n = n.as_bytes();
        (v.len() >= n.len() && v[..n.len()].eq_ignore_ascii_case(n)).then(|| (i, &v[n.len()..]))
    })
}

fn parse_layout(mut v: &[u8], layout: &[Tok]) -> Option<i64> {
    let (mut year, mut month, mut day, mut hour, mut min, mut sec) = (0i64, 0i64, 0i64, 0, 0, 0);
    for tok in layout {
        match *tok {
            WeekShort => v = lookup(v, DAYS.iter().map(|d| &d[..3]))?.1,
            WeekLong => v = lookup(v, DAYS.iter().copied())?.1,
            Lit(l) => v = skip(v, l.as_bytes())?,
            Day2 | DayUnder => {
                if matches!(tok, DayUnder) && v.first() == Some(&b' ') {
                    v = &v[1..];
                }
                (day, v) = num(v, matches!(tok, Day2))?;
            }
            Month => {
                let (i, rest) = lookup(v, MONTHS.iter().copied())?;
                (month, v) = (i as i64 + 1, rest);
            }
            Year4 => {
                let y = v.get(..4).filter(|y| y.iter().all(u8::is_ascii_digit))?;
                year = std::str::from_utf8(y).ok()?.parse().ok()?;
                v = &v[4..];
            }
            Year2 => {
                let (y, rest) = num(v, true)?;
                year = if y >= 69 { 1900 + y } else { 2000 + y };
                v = rest;
            }
            Hour => {
                (hour, v) = num(v, false)?;
                if hour > 23 {
                    return None;
                }
            }
            Min => {
                (min, v) = num(v, true)?;
                if min > 59 {
                    return None;
                }
            }
            Sec => {
                (sec, v) = num(v, true)?;
                if sec > 59 {
                    return None;
                }
                // Fractional seconds are read even when the layout has none.
                if v.len() >= 2 && matches!(v[0], b'.' | b',') && v[1].is_ascii_digit() {
                    v = &v[1..];
                    while v.first().is_some_and(u8::is_ascii_digit) {
                        v = &v[1..];
                    }
                }
            }
            Zone => {
                // An abbreviation (`MST`): read at zero offset, as `time.Parse` records an
                // abbreviation it does not know in UTC.
                if v.starts_with(b"UTC") {
                    v = &v[3..];
                } else {
                    let n = v.iter().take_while(|b| b.is_ascii_uppercase()).count();
                    if !(3..=5).contains(&n) {
                        return None;
                    }
                    v = &v[n..];
                }
            }
        }
    }
    if !v.is_empty() || day < 1 || day > days_in(month, year) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_http_time_format() {
        assert_eq!(format(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(format(1_136_214_245), "Mon, 02 Jan 2006 15:04:05 GMT");
        assert_eq!(format(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }

    #[test]
    fn parses_the_three_layouts_as_go_does() {
        let t = 1_136_214_245;
        assert_eq!(parse("Mon, 02 Jan 2006 15:04:05 GMT"), Some(t));
        assert_eq!(parse("Monday, 02-Jan-06 15:04:05 GMT"), Some(t));
        assert_eq!(parse("Mon Jan  2 15:04:05 2006"), Some(t));
        assert_eq!(parse("Mon Jan 2 15:04:05 2006"), Some(t));
        // Names without regard to case and unchecked; several spaces; fractions; 1-digit hour.
        assert_eq!(parse("sun, 02 JAN 2006   15:04:05.999 GMT"), Some(t));
        assert_eq!(parse("Mon, 02 Jan 2006 5:04:05 GMT"), Some(t - 36_000));
        assert_eq!(parse("Friday, 02-Jan-70 00:00:00 XYZ"), Some(86_400));
        for bad in [
            "",
            "Mon, 2 Jan 2006 15:04:05 GMT",
            "Mon, 02 Jan 2006 15:04:05 UTC",
            "Mon, 02 Jan 2006 15:04:05 GMT x",
            "Mon, 30 Feb 2006 15:04:05 GMT",
            "Mon, 02 Jan 2006 24:00:00 GMT",
            "Mon, 02 Jan 2006 15:4:05 GMT",
            "2006-01-02T15:04:05Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips() {
        for t in [0, 1, 86_399, 1_700_000_000, 4_102_444_800] {
            assert_eq!(parse(&format(t)), Some(t));
        }
    }
}
