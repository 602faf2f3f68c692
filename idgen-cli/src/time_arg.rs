//! Instants on the command line (`--time`, a custom layout's `epoch`) and in the output.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// Parses an RFC 3339 instant (`2026-10-31T12:00:00Z`, `2026-10-31T13:00:00+01:00`) or an
/// integer of milliseconds since the Unix epoch (`1793448000000`, may be negative) into
/// milliseconds since the Unix epoch. Fractions of a millisecond round down (towards the past),
/// as a layout rounds an instant down to its tick.
pub(crate) fn parse_unix_ms(text: &str) -> Result<i64, String> {
    let is_integer = {
        let digits = text.strip_prefix('-').unwrap_or(text);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if is_integer {
        return text
            .parse::<i64>()
            .map_err(|_| format!("{text:?} is too large for milliseconds since the Unix epoch"));
    }
    let ts: Timestamp = text.parse().map_err(|e| {
        format!(
            "{text:?} is neither an RFC 3339 time (like 2026-10-31T12:00:00Z) \
             nor milliseconds since the Unix epoch (like 1793448000000): {e}"
        )
    })?;
    let ms = ts.as_millisecond();
    // as_millisecond truncates towards 0; before 1970 a fraction must round towards the past.
    Ok(if ts.subsec_nanosecond() % 1_000_000 < 0 {
        ms - 1
    } else {
        ms
    })
}

/// The instant as RFC 3339 in UTC, always with three millisecond digits
/// (`2026-10-31T12:00:00.000Z`, `2064-12-23T01:42:43.350Z`), so every time has the same width
/// and sorts as text; `None` outside the years -9999..=9999.
pub(crate) fn utc(unix_ms: i64) -> Option<String> {
    Timestamp::from_millisecond(unix_ms)
        .ok()
        .map(|ts| format!("{ts:.3}"))
}

/// The instant as short RFC 3339 in UTC (`2026-01-01T00:00:00Z`, a fraction only when there is
/// one), for a layout spec that is read back; `None` outside the years -9999..=9999.
pub(crate) fn utc_compact(unix_ms: i64) -> Option<String> {
    Timestamp::from_millisecond(unix_ms)
        .ok()
        .map(|ts| ts.to_string())
}

/// The instant in the system time zone (the `TZ` variable, else `/etc/localtime`, else UTC), as
/// RFC 9557 with three millisecond digits (`2026-10-31T13:00:00.000+01:00[Europe/Berlin]`), or
/// `None` outside the years -9999..=9999.
pub(crate) fn local(unix_ms: i64) -> Option<String> {
    let ts = Timestamp::from_millisecond(unix_ms).ok()?;
    // system() falls back to UTC (named Etc/Unknown) when the zone cannot be found.
    Some(format!("{:.3}", ts.to_zoned(TimeZone::system())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339_and_unix_ms() {
        assert_eq!(parse_unix_ms("2026-10-31T12:00:00Z"), Ok(1_793_448_000_000));
        assert_eq!(
            parse_unix_ms("2026-10-31T13:00:00+01:00"),
            Ok(1_793_448_000_000)
        );
        assert_eq!(
            parse_unix_ms("2026-10-31T12:00:00.0019Z"),
            Ok(1_793_448_000_001)
        );
        assert_eq!(parse_unix_ms("1793448000000"), Ok(1_793_448_000_000));
        assert_eq!(parse_unix_ms("-5"), Ok(-5));
        assert_eq!(parse_unix_ms("1969-12-31T23:59:59.9995Z"), Ok(-1));
    }

    #[test]
    fn rejects_other_text_naming_it() {
        for bad in [
            "",
            "-",
            "tomorrow",
            "2026-10-31",
            "2026-10-31T12:00:00",
            "99999999999999999999",
        ] {
            let err = parse_unix_ms(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn formats_utc_and_refuses_what_rfc3339_cannot_write() {
        assert_eq!(
            utc(1_288_834_974_657).as_deref(),
            Some("2010-11-04T01:42:54.657Z")
        );
        assert_eq!(
            utc(1_793_448_000_000).as_deref(),
            Some("2026-10-31T12:00:00.000Z")
        );
        // Trailing zeros are kept: always three digits.
        assert_eq!(
            utc(2_996_185_363_350).as_deref(),
            Some("2064-12-11T01:42:43.350Z")
        );
        assert_eq!(utc(-1).as_deref(), Some("1969-12-31T23:59:59.999Z"));
        assert_eq!(utc(i64::MAX), None);
        assert_eq!(local(i64::MIN), None);
    }
}
