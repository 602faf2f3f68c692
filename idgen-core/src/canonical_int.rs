//! Strict decimal text for 64-bit IDs: exactly the text `to_string` prints, so every value has
//! one spelling.
//!
//! Shared by [`SnowflakeId`](crate::snowflake::SnowflakeId), [`Id<T>`](crate::typed_id::Id) and
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

/// A regular expression (ECMA-262 and Rust `regex` alike) matching exactly the texts
/// [`parse_unsigned`] accepts under `limit`: `0`, or digits without a leading zero up to the
/// limit, the limit's own length spelled out digit by digit. For JSON Schema and OpenAPI.
#[cfg_attr(not(any(feature = "schemars", feature = "utoipa")), allow(dead_code))]
pub(crate) fn pattern(limit: Limit) -> String {
    let max = limit.max().to_string();
    let digits = max.as_bytes();
    let n = digits.len();
    let mut alternatives = vec!["0".to_owned(), format!("[1-9][0-9]{{0,{}}}", n - 2)];
    // Numbers as long as the limit: the limit's first `i` digits, then a smaller digit at `i`
    // (not 0 in front), then any digits.
    for i in 0..n {
        let lowest = if i == 0 { b'1' } else { b'0' };
        let digit = digits[i];
        if digit > lowest {
            let range = if digit - 1 == lowest {
                format!("{}", char::from(lowest))
            } else {
                format!("[{}-{}]", char::from(lowest), char::from(digit - 1))
            };
            let rest = match n - i - 1 {
                0 => String::new(),
                k => format!("[0-9]{{{k}}}"),
            };
            alternatives.push(format!("{}{range}{rest}", &max[..i]));
        }
    }
    alternatives.push(max);
    format!("^({})$", alternatives.join("|"))
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

    /// `parse` refuses each text of `cases` with an error that contains the text's part (its
    /// reason, or what the error must name).
    pub(crate) fn assert_each_refused<T: std::fmt::Debug, E: std::fmt::Display>(
        parse: impl Fn(&str) -> Result<T, E>,
        cases: &[(&str, &str)],
    ) {
        for &(text, part) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(part), "{text:?}: {err}");
        }
    }

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
        assert_each_refused(|text| parse_unsigned(text, Limit::I64Max), REJECTED);
    }

    #[test]
    fn signed_text_is_canonical_too() {
        assert_eq!(parse_i64("-1"), Ok(-1));
        assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64("9223372036854775807"), Ok(i64::MAX));
        assert_each_refused(
            parse_i64,
            &[
                ("-0", "-0 is not allowed"),
                ("-", "a sign alone"),
                ("--1", "one sign"),
                ("-+1", "one sign"),
                ("+1", "sign"),
                ("-01", "leading zero"),
                ("- 1", "whitespace"),
                ("-9223372036854775809", "i64::MIN"),
            ],
        );
    }

    #[test]
    fn the_pattern_matches_exactly_what_the_parser_accepts() {
        for limit in [Limit::I64Max, Limit::U64Max] {
            let re = regex::Regex::new(&pattern(limit)).unwrap();
            for &(text, _) in ACCEPTED {
                assert!(re.is_match(text), "{text:?} under {limit:?}");
            }
            for &(text, _) in REJECTED {
                let parsed = parse_unsigned(text, limit).is_ok();
                assert_eq!(re.is_match(text), parsed, "{text:?} under {limit:?}");
            }
            // Around the limit, digit by digit.
            let max = limit.max();
            for v in [max, max - 1, max - 9, max - 10, max / 10, max / 10 + 1] {
                assert!(re.is_match(&v.to_string()), "{v}");
            }
            let over = format!("{}0", max / 10 + 1); // one digit more than the limit's first part
            assert_eq!(
                re.is_match(&over),
                parse_unsigned(&over, limit).is_ok(),
                "{over}"
            );
        }
        assert_eq!(
            pattern(Limit::I64Max),
            concat!(
                "^(0|[1-9][0-9]{0,17}|[1-8][0-9]{18}|9[0-1][0-9]{17}|92[0-1][0-9]{16}|",
                "922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[0-1][0-9]{12}|",
                "92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|",
                "92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|",
                "92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|",
                "9223372036854775[0-7][0-9]{2}|922337203685477580[0-6]|9223372036854775807)$"
            )
        );
    }

    proptest::proptest! {
        /// The pattern and the parser agree on every digit string and on near misses.
        #[test]
        fn the_pattern_agrees_with_the_parser(s in "[-+ 0]?[0-9]{1,21}[a ]?") {
            for limit in [Limit::I64Max, Limit::U64Max] {
                let re = regex::Regex::new(&pattern(limit)).unwrap();
                proptest::prop_assert_eq!(re.is_match(&s), parse_unsigned(&s, limit).is_ok(), "{}", s);
            }
        }

        /// Around each limit, where the pattern spells the limit out digit by digit.
        #[test]
        fn the_pattern_agrees_with_the_parser_near_the_limits(
            below in 0u64..2_000_000,
            s in "[0-9]{17,19}",
        ) {
            for (limit, v) in [
                (Limit::I64Max, (i64::MAX as u64 - 1_000_000).saturating_add(below)),
                (Limit::U64Max, u64::MAX - below),
            ] {
                let re = regex::Regex::new(&pattern(limit)).unwrap();
                let text = v.to_string();
                proptest::prop_assert_eq!(re.is_match(&text), parse_unsigned(&text, limit).is_ok(), "{}", text);
                let spliced = format!("{}{}", &text[..text.len().min(s.len()) / 2], s);
                proptest::prop_assert_eq!(
                    re.is_match(&spliced),
                    parse_unsigned(&spliced, limit).is_ok(),
                    "{}", spliced
                );
            }
        }

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
