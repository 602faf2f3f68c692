//! Strict decimal text for 64-bit IDs: exactly the text `to_string` prints, so every value has
//! one spelling.
//!
//! Shared by [`SnowflakeId`](crate::SnowflakeId), [`Id<T>`](crate::Id) and
//! [`serde_string`](crate::serde_string): ASCII digits only, no sign (a `-` only in front of a
//! negative `i64`), no leading zero, no whitespace, no `_`, no fraction or exponent, and no
//! value above the type's limit. Each rejection has its own reason, for error messages.

/// The largest value a text may hold, named in the error for a larger one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// `0..=i64::MAX`: every ID type.
    I64Max,
    /// `0..=u64::MAX`: a plain `u64`.
    U64Max,
}

impl Limit {
    fn max(self) -> u64 {
        match self {
            Limit::I64Max => i64::MAX as u64,
            Limit::U64Max => u64::MAX,
        }
    }

    fn too_large(self) -> &'static str {
        match self {
            Limit::I64Max => "the value is larger than 9223372036854775807 (i64::MAX)",
            Limit::U64Max => "the value is larger than 18446744073709551615 (u64::MAX)",
        }
    }
}

/// Why a text is not canonical decimal (the reason part of an error message).
pub(crate) type Reason = &'static str;

/// Parses unsigned canonical decimal digits up to `limit`.
pub(crate) fn parse_unsigned(s: &str, limit: Limit) -> Result<u64, Reason> {
    if s.is_empty() {
        return Err("the text is empty");
    }
    if let Some(b) = s.bytes().find(|b| !b.is_ascii_digit()) {
        return Err(match b {
            b'+' | b'-' => "a sign is not allowed; an ID is unsigned decimal digits",
            b' ' | b'\t' | b'\n' | b'\r' => "whitespace is not allowed",
            b'.' | b'e' | b'E' => "an ID is an integer, not a decimal fraction or exponent",
            _ => "only the decimal digits 0-9 are allowed",
        });
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err("a leading zero is not allowed (each value has one spelling)");
    }
    let mut value: u64 = 0;
    for b in s.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .filter(|&v| v <= limit.max())
            .ok_or(limit.too_large())?;
    }
    Ok(value)
}

/// Parses the canonical text of any `i64`: [`parse_unsigned`]'s rules, plus one `-` in front of
/// a negative value (`-0` is not canonical: it is written `0`).
pub(crate) fn parse_i64(s: &str) -> Result<i64, Reason> {
    let Some(magnitude) = s.strip_prefix('-') else {
        return parse_unsigned(s, Limit::I64Max).map(|v| v as i64);
    };
    if magnitude.starts_with(['-', '+']) {
        return Err("only one sign is allowed");
    }
    let value = parse_unsigned(magnitude, Limit::U64Max).map_err(|reason| match reason {
        "the text is empty" => "a sign alone is not a number",
        other => other,
    })?;
    match value {
        0 => Err("-0 is not allowed; zero is written 0"),
        v if v <= 1 << 63 => Ok((v as i64).wrapping_neg()),
        _ => Err("the value is smaller than -9223372036854775808 (i64::MIN)"),
    }
}

/// Cuts a rejected input for an error message.
pub(crate) fn excerpt(input: &str) -> String {
    input.chars().take(64).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Texts every 64-bit ID type accepts, with their value. Shared with the schema tests, so
    /// the published patterns and the parser are checked on the same inputs.
    pub(crate) const ACCEPTED: &[(&str, u64)] = &[
        ("0", 0),
        ("1", 1),
        ("7", 7),
        ("10", 10),
        ("112719806108546862", 112_719_806_108_546_862),
        ("999999999999999999", 999_999_999_999_999_999),
        ("1000000000000000000", 1_000_000_000_000_000_000),
        ("9223372036854775799", 9_223_372_036_854_775_799),
        ("9223372036854775807", i64::MAX as u64),
    ];

    /// Texts every 64-bit ID type rejects, with a part of the reason.
    pub(crate) const REJECTED: &[(&str, &str)] = &[
        ("", "empty"),
        ("-1", "sign"),
        ("+1", "sign"),
        ("-0", "sign"),
        (" 1", "whitespace"),
        ("1 ", "whitespace"),
        ("1\n", "whitespace"),
        ("1.5", "fraction"),
        ("1e3", "fraction"),
        ("7e0", "fraction"),
        ("12a", "digits"),
        ("0x10", "digits"),
        ("1_000", "digits"),
        ("١", "digits"),
        ("00", "leading zero"),
        ("007", "leading zero"),
        ("09223372036854775807", "leading zero"),
        ("9223372036854775808", "i64::MAX"),
        ("9223372036854775810", "i64::MAX"),
        ("10000000000000000000", "i64::MAX"),
        ("99999999999999999999999", "i64::MAX"),
    ];

    #[test]
    fn accepts_canonical_digits_up_to_the_limit() {
        for &(text, value) in ACCEPTED {
            assert_eq!(parse_unsigned(text, Limit::I64Max), Ok(value), "{text:?}");
            assert_eq!(value.to_string(), text, "{text:?} is not canonical");
        }
        assert_eq!(
            parse_unsigned("18446744073709551615", Limit::U64Max),
            Ok(u64::MAX)
        );
        assert!(
            parse_unsigned("18446744073709551616", Limit::U64Max)
                .unwrap_err()
                .contains("u64::MAX")
        );
    }

    #[test]
    fn rejects_each_other_text_with_its_reason() {
        for &(text, reason) in REJECTED {
            let err = parse_unsigned(text, Limit::I64Max).unwrap_err();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }

    #[test]
    fn signed_text_is_canonical_too() {
        assert_eq!(parse_i64("-1"), Ok(-1));
        assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64("9223372036854775807"), Ok(i64::MAX));
        for (text, reason) in [
            ("-0", "-0 is not allowed"),
            ("-", "a sign alone"),
            ("--1", "one sign"),
            ("-+1", "one sign"),
            ("+1", "sign"),
            ("-01", "leading zero"),
            ("- 1", "whitespace"),
            ("-9223372036854775809", "i64::MIN"),
        ] {
            let err = parse_i64(text).unwrap_err();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }

    proptest::proptest! {
        /// Exactly the texts `to_string` prints parse, each to its value.
        #[test]
        fn agrees_with_to_string(v: i64) {
            proptest::prop_assert_eq!(parse_i64(&v.to_string()), Ok(v));
            if v >= 0 {
                proptest::prop_assert_eq!(parse_unsigned(&v.to_string(), Limit::I64Max), Ok(v as u64));
            }
        }

        #[test]
        fn a_digit_string_parses_iff_std_parses_it_and_it_is_canonical(s in "[0-9]{1,25}") {
            let std = s.parse::<u64>().ok().filter(|v| v.to_string() == s);
            proptest::prop_assert_eq!(parse_unsigned(&s, Limit::U64Max).ok(), std);
        }

        #[test]
        fn arbitrary_text_parses_only_when_canonical(s in "\\PC{0,30}") {
            if let Ok(v) = parse_i64(&s) {
                proptest::prop_assert_eq!(v.to_string(), s);
            }
        }
    }
}
