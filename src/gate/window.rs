//! Maintenance windows and soak time of an `UpgradePolicy`:
//!
//! ```yaml
//! maintenanceWindows:
//! - days: [Sat, Sun]      # the local day a window starts; empty: every day
//!   start: "02:00"        # local wall-clock time
//!   duration: 4h          # 90m, 4h, 1h30m
//!   timeZone: Europe/Berlin
//! minAge: 24h
//! ```
//!
//! A window may cross midnight (and run past the next start). A start that falls into a DST gap
//! begins at the first valid instant after it; a start repeated by a DST fold begins at the
//! first of the two. The gate asks two things of a window list: is `now` inside one (no windows
//! means any time), and when does the next one open (the operator requeues for that instant
//! instead of polling).

use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

/// One maintenance window.
#[derive(Debug, Clone)]
pub struct Window {
    /// The local days a window starts on; empty: every day.
    pub days: Vec<Weekday>,
    /// Local start (hour, minute).
    pub start: (i8, i8),
    /// How long it stays open.
    pub duration: SignedDuration,
    /// Its time zone (UTC by default).
    pub tz: TimeZone,
}

/// The longest window accepted: a week (a longer one is always open).
pub const MAX_WINDOW: SignedDuration = SignedDuration::from_secs(7 * 24 * 3600);

/// Parses a duration as the policy writes it: whole numbers with `h`, `m` or `s` units, in
/// that order, e.g. `90m`, `4h`, `1h30m`, `45s`. Zero and negative durations are refused.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    let bad = || {
        format!("invalid duration {s:?}: use whole hours, minutes or seconds, e.g. 90m, 4h, 1h30m")
    };
    let mut secs: i64 = 0;
    let mut rest = s;
    let mut last_unit = 0;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        let n: i64 = rest[..digits].parse().map_err(|_| bad())?;
        let (unit, order) = match rest[digits..].chars().next() {
            Some('h') => (3600, 1),
            Some('m') => (60, 2),
            Some('s') => (1, 3),
            _ => return Err(bad()),
        };
        if order <= last_unit {
            return Err(bad());
        }
        last_unit = order;
        secs = secs
            .checked_add(n.checked_mul(unit).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        rest = &rest[digits + 1..];
    }
    if secs == 0 {
        return Err(format!("invalid duration {s:?}: must be longer than zero"));
    }
    Ok(SignedDuration::from_secs(secs))
}

/// Parses `HH:MM` (24-hour).
pub fn parse_clock(s: &str) -> Result<(i8, i8), String> {
    let bad = || format!("invalid start {s:?}: use HH:MM, 24-hour (e.g. \"02:00\")");
    let (h, m) = s.split_once(':').ok_or_else(bad)?;
    if h.len() != 2 || m.len() != 2 {
        return Err(bad());
    }
    let h: i8 = h.parse().map_err(|_| bad())?;
    let m: i8 = m.parse().map_err(|_| bad())?;
    if !(0..24).contains(&h) || !(0..60).contains(&m) {
        return Err(bad());
    }
    Ok((h, m))
}

/// Parses a day name: `Mon` ... `Sun` (case-insensitive, full names too).
pub fn parse_day(s: &str) -> Result<Weekday, String> {
    let d = match s.to_ascii_lowercase().as_str() {
        "mon" | "monday" => Weekday::Monday,
        "tue" | "tuesday" => Weekday::Tuesday,
        "wed" | "wednesday" => Weekday::Wednesday,
        "thu" | "thursday" => Weekday::Thursday,
        "fri" | "friday" => Weekday::Friday,
        "sat" | "saturday" => Weekday::Saturday,
        "sun" | "sunday" => Weekday::Sunday,
        _ => {
            return Err(format!(
                "invalid day {s:?}: use Mon, Tue, Wed, Thu, Fri, Sat or Sun"
            ));
        }
    };
    Ok(d)
}

/// Parses an IANA time zone name (`UTC` when empty).
pub fn parse_tz(s: &str) -> Result<TimeZone, String> {
    if s.is_empty() {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(s)
        .map_err(|_| format!("unknown time zone {s:?}: use an IANA name such as Europe/Berlin"))
}

impl Window {
    /// A window from its policy fields.
    pub fn parse(days: &[&str], start: &str, duration: &str, tz: &str) -> Result<Window, String> {
        let duration = parse_duration(duration)?;
        if duration > MAX_WINDOW {
            return Err(format!("window duration {duration} is longer than a week"));
        }
        Ok(Window {
            days: days
                .iter()
                .map(|d| parse_day(d))
                .collect::<Result<_, _>>()?,
            start: parse_clock(start)?,
            duration,
            tz: parse_tz(tz)?,
        })
    }

    /// The instant the window starting on local `date` opens, if it starts that day.
    fn opening(&self, date: Date) -> Option<Timestamp> {
        if !self.days.is_empty() && !self.days.contains(&date.weekday()) {
            return None;
        }
        let dt = date.at(self.start.0, self.start.1, 0, 0);
        let amb = self.tz.to_ambiguous_timestamp(dt);
        match amb.offset() {
            // A start inside a DST gap opens at the end of the gap: the transition itself,
            // the last one before the instant the pre-gap offset gives.
            jiff::tz::AmbiguousOffset::Gap { .. } => {
                let shifted = amb.compatible().ok()?;
                self.tz.preceding(shifted).next().map(|t| t.timestamp())
            }
            // Unambiguous, or a fold: the first of the two instants.
            _ => amb.earlier().ok(),
        }
    }

    /// The window containing `now`, as (opened, closes), if any.
    pub fn containing(&self, now: Timestamp) -> Option<(Timestamp, Timestamp)> {
        let today = self.tz.to_datetime(now).date();
        // Windows that opened up to a week (plus a day for time zone shifts) ago may still be open.
        let mut date = today;
        for _ in 0..=8 {
            if let Some(open) = self.opening(date) {
                let close = open.checked_add(self.duration).ok()?;
                if open <= now && now < close {
                    return Some((open, close));
                }
            }
            date = date.yesterday().ok()?;
        }
        None
    }

    /// The first opening at or after `now`.
    pub fn next_opening(&self, now: Timestamp) -> Option<Timestamp> {
        let mut date = self.tz.to_datetime(now).date().yesterday().ok()?;
        for _ in 0..=9 {
            if let Some(open) = self.opening(date)
                && open >= now
            {
                return Some(open);
            }
            date = date.tomorrow().ok()?;
        }
        None
    }
}

/// A duration as the policy writes it: `24h`, `1h30m`, `90s`, `0s`.
pub fn format_duration(d: SignedDuration) -> String {
    let secs = d.as_secs().unsigned_abs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::from(if d.is_negative() { "-" } else { "" });
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if secs == 0 {
        out.push_str("0s");
    }
    out
}

/// Whether `now` is in one of `windows` (no windows: always).
pub fn open(windows: &[Window], now: Timestamp) -> bool {
    windows.is_empty() || windows.iter().any(|w| w.containing(now).is_some())
}

/// When the next of `windows` opens after `now` (none when a window is open now or there are
/// none): the instant the operator requeues for.
pub fn next_open(windows: &[Window], now: Timestamp) -> Option<Timestamp> {
    if open(windows, now) {
        return None;
    }
    windows.iter().filter_map(|w| w.next_opening(now)).min()
}

/// The next instant after `now` at which one of `windows` opens or closes (none when there are
/// no windows): a decision that depends on the windows holds until then.
pub fn next_edge(windows: &[Window], now: Timestamp) -> Option<Timestamp> {
    windows
        .iter()
        .flat_map(|w| {
            let close = w.containing(now).map(|(_, close)| close);
            // The next opening strictly after now (one at `now` has opened already).
            let open = now
                .checked_add(SignedDuration::from_secs(1))
                .ok()
                .and_then(|t| w.next_opening(t));
            [close, open]
        })
        .flatten()
        .min()
}

/// The soak time: `None` when an object created at `created` is at least `min_age` old at
/// `now`, else the instant it will be.
pub fn soaked_at(created: Timestamp, min_age: SignedDuration, now: Timestamp) -> Option<Timestamp> {
    let ready = created.checked_add(min_age).ok()?;
    (ready > now).then_some(ready)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().expect("timestamp")
    }

    #[test]
    fn durations_clocks_days_zones() {
        assert_eq!(parse_duration("90m"), Ok(SignedDuration::from_secs(5400)));
        assert_eq!(parse_duration("4h"), Ok(SignedDuration::from_secs(14400)));
        assert_eq!(parse_duration("1h30m"), Ok(SignedDuration::from_secs(5400)));
        assert_eq!(
            parse_duration("1h0m30s"),
            Ok(SignedDuration::from_secs(3630))
        );
        for bad in [
            "",
            "4",
            "h",
            "30m1h",
            "1h1h",
            "-1h",
            "1.5h",
            "0m",
            "4d",
            "1h 30m",
            "9999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_clock("02:00"), Ok((2, 0)));
        assert_eq!(parse_clock("23:59"), Ok((23, 59)));
        for bad in ["2:00", "24:00", "12:60", "1200", "ab:cd"] {
            assert!(parse_clock(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_day("sat"), Ok(Weekday::Saturday));
        assert_eq!(parse_day("Sunday"), Ok(Weekday::Sunday));
        assert!(parse_day("Sa").is_err());
        assert!(parse_tz("Europe/Berlin").is_ok());
        assert!(parse_tz("Mars/Olympus").is_err());
        assert!(
            Window::parse(&[], "02:00", "169h", "").is_err(),
            "longer than a week"
        );
    }

    /// Sat+Sun 02:00 for 4h in Berlin (CET, UTC+1 in January).
    #[test]
    fn weekend_window_in_a_time_zone() {
        let w = Window::parse(&["Sat", "Sun"], "02:00", "4h", "Europe/Berlin").expect("window");
        // Saturday 2026-01-10 02:00 Berlin = 01:00 UTC.
        assert!(w.containing(ts("2026-01-10T01:00:00Z")).is_some());
        assert!(w.containing(ts("2026-01-10T04:59:59Z")).is_some());
        assert!(
            w.containing(ts("2026-01-10T05:00:00Z")).is_none(),
            "closes after 4h"
        );
        assert!(
            w.containing(ts("2026-01-10T00:59:59Z")).is_none(),
            "not yet"
        );
        assert!(w.containing(ts("2026-01-09T01:30:00Z")).is_none(), "Friday");
        // From Friday noon the next opening is Saturday 01:00 UTC.
        assert_eq!(
            w.next_opening(ts("2026-01-09T12:00:00Z")),
            Some(ts("2026-01-10T01:00:00Z"))
        );
        // From Sunday 06:00 UTC (after Sunday's window) the next one is next Saturday.
        assert_eq!(
            w.next_opening(ts("2026-01-11T06:00:00Z")),
            Some(ts("2026-01-17T01:00:00Z"))
        );
    }

    /// `days` is the day a window starts: Friday 22:00 for 6h is open early on Saturday.
    #[test]
    fn windows_cross_midnight() {
        let w = Window::parse(&["Fri"], "22:00", "6h", "").expect("window");
        assert!(w.containing(ts("2026-01-09T22:00:00Z")).is_some());
        assert!(
            w.containing(ts("2026-01-10T03:59:00Z")).is_some(),
            "Saturday morning"
        );
        assert!(w.containing(ts("2026-01-10T04:00:00Z")).is_none());
        assert!(
            w.containing(ts("2026-01-10T22:30:00Z")).is_none(),
            "Saturday evening"
        );
        // A long window started two days ago is still open.
        let long = Window::parse(&["Mon"], "00:00", "72h", "").expect("window");
        assert!(
            long.containing(ts("2026-01-14T23:00:00Z")).is_some(),
            "Wednesday night"
        );
        assert!(long.containing(ts("2026-01-15T00:00:00Z")).is_none());
    }

    /// Berlin springs forward on 2026-03-29 at 02:00 (to 03:00): a 02:30 start begins at
    /// 03:00 CEST (01:00 UTC). It falls back on 2026-10-25 at 03:00 (to 02:00): a 02:30 start
    /// begins at the first 02:30 (00:30 UTC).
    #[test]
    fn dst_gaps_and_folds() {
        let w = Window::parse(&["Sun"], "02:30", "1h", "Europe/Berlin").expect("window");
        assert_eq!(
            w.next_opening(ts("2026-03-28T12:00:00Z")),
            Some(ts("2026-03-29T01:00:00Z"))
        );
        assert!(w.containing(ts("2026-03-29T01:59:59Z")).is_some());
        assert!(w.containing(ts("2026-03-29T02:00:00Z")).is_none());
        assert_eq!(
            w.next_opening(ts("2026-10-24T12:00:00Z")),
            Some(ts("2026-10-25T00:30:00Z"))
        );
        assert!(w.containing(ts("2026-10-25T01:29:59Z")).is_some());
        assert!(
            w.containing(ts("2026-10-25T01:30:00Z")).is_none(),
            "one hour, not two"
        );
        // New York's gap is at a different instant than Berlin's.
        let ny = Window::parse(&[], "02:15", "30m", "America/New_York").expect("window");
        assert_eq!(
            ny.next_opening(ts("2026-03-08T05:00:00Z")),
            Some(ts("2026-03-08T07:00:00Z")),
            "03:00 EDT"
        );
    }

    #[test]
    fn the_next_edge_is_the_nearest_opening_or_closing() {
        let w = Window::parse(&["Sat"], "02:00", "4h", "Europe/Berlin").expect("w");
        let two = [
            w.clone(),
            Window::parse(&[], "12:00", "1h", "UTC").expect("w"),
        ];
        // Sunday 10:00 UTC: the daily one opens at 12:00.
        assert_eq!(
            next_edge(&two, ts("2026-09-20T10:00:00Z")),
            Some(ts("2026-09-20T12:00:00Z"))
        );
        // Inside it: it closes at 13:00.
        assert_eq!(
            next_edge(&two, ts("2026-09-20T12:00:00Z")),
            Some(ts("2026-09-20T13:00:00Z"))
        );
        // Saturday 02:00 Berlin is 00:00 UTC; it closes at 04:00 UTC.
        assert_eq!(
            next_edge(std::slice::from_ref(&w), ts("2026-09-25T23:00:00Z")),
            Some(ts("2026-09-26T00:00:00Z"))
        );
        assert_eq!(
            next_edge(std::slice::from_ref(&w), ts("2026-09-26T01:00:00Z")),
            Some(ts("2026-09-26T04:00:00Z"))
        );
        assert_eq!(next_edge(&[], ts("2026-09-26T01:00:00Z")), None);
    }

    #[test]
    fn window_lists_and_soak() {
        let now = ts("2026-01-07T12:00:00Z"); // a Wednesday
        assert!(open(&[], now), "no windows: any time");
        assert_eq!(next_open(&[], now), None);
        let sat = Window::parse(&["Sat"], "02:00", "2h", "").expect("window");
        let wed = Window::parse(&["Wed"], "18:00", "1h", "").expect("window");
        let both = [sat, wed];
        assert!(!open(&both, now));
        assert_eq!(
            next_open(&both, now),
            Some(ts("2026-01-07T18:00:00Z")),
            "the earliest"
        );
        assert!(open(&both, ts("2026-01-07T18:30:00Z")));
        assert_eq!(next_open(&both, ts("2026-01-07T18:30:00Z")), None);
        let created = ts("2026-01-06T13:00:00Z");
        let day = parse_duration("24h").expect("d");
        assert_eq!(
            soaked_at(created, day, now),
            Some(ts("2026-01-07T13:00:00Z"))
        );
        assert_eq!(soaked_at(created, day, ts("2026-01-07T13:00:00Z")), None);
    }

    use proptest::prelude::*;

    const ZONES: &[&str] = &[
        "",
        "Europe/Berlin",
        "America/New_York",
        "Australia/Lord_Howe",
        "Asia/Kolkata",
    ];
    const DAYS: &[&str] = &["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Windows only open at openings: when closed, every instant up to the next opening is
        /// closed, the opening itself is open, and an open instant lies in a window that opened
        /// at or before it and closes after it.
        #[test]
        fn closed_until_the_next_opening(
            days in proptest::collection::vec(0usize..7, 0..3),
            h in 0i8..24, m in 0i8..60,
            mins in 1i64..3000,
            zone in 0usize..ZONES.len(),
            at in 1_767_225_600i64..1_798_761_600i64,   // 2026
            probes in proptest::collection::vec(0.0f64..1.0, 8),
        ) {
            let names: Vec<&str> = days.iter().map(|d| DAYS[*d]).collect();
            let w = Window::parse(&names, &format!("{h:02}:{m:02}"), &format!("{mins}m"), ZONES[zone]).expect("window");
            let now = Timestamp::from_second(at).expect("ts");
            let ws = [w];
            match ws[0].containing(now) {
                Some((o, c)) => {
                    prop_assert!(o <= now && now < c);
                    prop_assert_eq!(c.duration_since(o), ws[0].duration);
                    prop_assert_eq!(next_open(&ws, now), None);
                }
                None => {
                    let next = next_open(&ws, now).expect("a window opens within a week");
                    prop_assert!(next > now);
                    prop_assert!(open(&ws, next));
                    let span = next.duration_since(now).as_secs();
                    for p in probes {
                        let t = Timestamp::from_second(at + (span as f64 * p) as i64).expect("ts");
                        if t < next {
                            prop_assert!(!open(&ws, t), "open at {t} before the next opening {next}");
                        }
                    }
                }
            }
        }
    }
}
