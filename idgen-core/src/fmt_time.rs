//! RFC 3339 text for instants in error messages, `Debug` output and
//! [`Decomposed`](crate::snowflake::Decomposed)'s `Display`, without a date-time crate.

use std::fmt;

/// Milliseconds since the Unix epoch, displayed as `2026-11-08T01:08:16.009Z`: RFC 3339 in
/// UTC, always with three fraction digits.
///
/// RFC 3339 writes years 0000 to 9999 only. Outside them (a custom layout's far epoch or end)
/// the year is written as ISO 8601's expanded form, a sign and six or more digits
/// (`+010000-01-01T00:00:00.000Z`, `-000001-12-31T23:59:59.999Z`), as jiff and JavaScript's
/// `Date.prototype.toISOString` do, so the text stays unambiguous and sorts within its sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UnixMs(pub(crate) i64);

impl fmt::Display for UnixMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        if (0..=9999).contains(&y) {
            write!(f, "{y:04}")?;
        } else {
            let sign = if y < 0 { '-' } else { '+' };
            write!(f, "{sign}{:06}", y.unsigned_abs())?;
        }
        write!(
            f,
            "-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            sod / 3600,
            sod / 60 % 60,
            sod % 60
        )
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
///
/// Howard Hinnant's `civil_from_days` (public domain), exact for every `i64` day count that a
/// millisecond `i64` can produce.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The first millisecond of the UTC calendar year that holds `unix_ms`
/// (`2026-07-01T…` → `2026-01-01T00:00:00.000Z`), for a default epoch.
pub(crate) fn start_of_utc_year(unix_ms: i64) -> i64 {
    let days = unix_ms.div_euclid(86_400_000);
    let (year, _, _) = civil_from_days(days);
    days_from_civil(year, 1, 1).saturating_mul(86_400_000)
}

/// A proleptic Gregorian (year, month, day) to days since 1970-01-01: the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`, public domain).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 }; // [0, 11]
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::UnixMs;

    /// Each instant's text.
    fn assert_formats(cases: &[(i64, &str)]) {
        for &(ms, text) in cases {
            assert_eq!(UnixMs(ms).to_string(), text, "{ms}");
        }
    }

    #[test]
    fn formats_known_instants() {
        assert_formats(&[
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (1_288_834_974_657, "2010-11-04T01:42:54.657Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        ]);
    }

    #[test]
    fn years_outside_rfc3339_are_written_expanded() {
        assert_formats(&[
            // 0000-01-01T00:00:00Z is -62167219200 s.
            (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
            (-62_167_219_200_001, "-000001-12-31T23:59:59.999Z"),
            // 10000-01-01T00:00:00Z is 253402300800 s.
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (253_402_300_800_000, "+010000-01-01T00:00:00.000Z"),
            (i64::MAX, "+292278994-08-17T07:12:55.807Z"),
            (i64::MIN, "-292275055-05-16T16:47:04.192Z"),
        ]);
    }

    #[test]
    fn start_of_year() {
        use super::start_of_utc_year;
        assert_eq!(start_of_utc_year(1_793_448_000_000), 1_767_225_600_000); // 2026
        assert_eq!(start_of_utc_year(1_767_225_600_000), 1_767_225_600_000);
        assert_eq!(start_of_utc_year(1_767_225_599_999), 1_735_689_600_000); // 2025
        assert_eq!(start_of_utc_year(951_782_400_000), 946_684_800_000); // 2000
        assert_eq!(start_of_utc_year(-1), -31_536_000_000); // 1969
        assert_eq!(start_of_utc_year(0), 0);
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_jiff(ms in -62_135_596_800_000i64..253_402_300_799_999) {
            let ts = jiff::Timestamp::from_millisecond(ms).unwrap();
            let jiff_text = format!("{:.3}", ts);
            proptest::prop_assert_eq!(UnixMs(ms).to_string(), jiff_text);
        }
    }
}
