//! The AGE column of kubectl's tables, which kubectl-operator's tables print too
//! (`duration.HumanDuration(time.Since(creationTimestamp))`).

use std::time::Duration;

/// apimachinery `pkg/util/duration/duration.go :: HumanDuration`: `d` as kubectl shows an age
/// (`45s`, `3m12s`, `5h20m`, `12d`, `3y40d`).
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        return match secs % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            dy => format!("{}y{dy}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The age of an object created at `created` (RFC 3339), at `now`: [`human_duration`], `0s`
/// for a time up to 1 s ahead, `<invalid>` further ahead (clock skew), and `<unknown>` without a
/// readable timestamp (kubectl's `translateTimestampSince`).
pub fn age(created: &str, now: jiff::Timestamp) -> String {
    let Ok(t) = created.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let d = now.duration_since(t);
    if d.as_secs() < -1 {
        return "<invalid>".into();
    }
    human_duration(Duration::from_secs(d.as_secs().max(0).unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let cases = [
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (192, "3m12s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (5 * 3600 + 20 * 60, "5h20m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (50 * 3600, "2d2h"),
            (8 * 86400, "8d"),
            (3 * 365 * 86400 + 40 * 86400, "3y40d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(Duration::from_secs(secs)), want, "{secs}");
        }
    }

    #[test]
    fn an_age_from_a_timestamp() {
        let now: jiff::Timestamp = "2026-09-14T08:00:00Z".parse().expect("time");
        assert_eq!(age("2026-09-14T07:55:00Z", now), "5m");
        assert_eq!(age("2026-09-14T08:00:01Z", now), "0s");
        assert_eq!(age("2026-09-14T08:05:00Z", now), "<invalid>");
        assert_eq!(age("", now), "<unknown>");
    }
}
