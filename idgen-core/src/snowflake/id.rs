//! [`SnowflakeId`]: the 63-bit ID type.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A Snowflake ID: a non-negative `i64`, so it fits a signed `BIGINT` column.
///
/// The sign bit is always 0; every constructor checks it. Under a [`Layout`](crate::Layout) the
/// 63 bits hold a timestamp, a node ID and a sequence number, so IDs sort by creation time.
///
/// Text and JSON forms are decimal. With the `serde` feature an ID serializes as a JSON
/// **string** (`"112719806108546862"`), because a JavaScript `Number` is a double and would turn
/// 112719806108546862 into 112719806108546864; it deserializes from a string or an integer.
///
/// ```
/// use idgen_core::SnowflakeId;
///
/// let id: SnowflakeId = "112719806108546862".parse()?;
/// assert_eq!(id.get(), 112719806108546862);
/// assert_eq!(id.to_string(), "112719806108546862");
/// assert!(SnowflakeId::try_from(-1i64).is_err());
/// assert!(SnowflakeId::try_from(u64::MAX).is_err());
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "diesel",
    derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow),
    diesel(sql_type = diesel::sql_types::BigInt)
)]
#[repr(transparent)]
pub struct SnowflakeId(i64);

impl SnowflakeId {
    /// The smallest ID, 0.
    pub const MIN: SnowflakeId = SnowflakeId(0);
    /// The largest ID, `i64::MAX`.
    pub const MAX: SnowflakeId = SnowflakeId(i64::MAX);

    /// The ID for `value`, or `None` when `value` is negative.
    ///
    /// ```
    /// use idgen_core::SnowflakeId;
    /// assert_eq!(SnowflakeId::new(42).map(SnowflakeId::get), Some(42));
    /// assert_eq!(SnowflakeId::new(-42), None);
    /// ```
    #[inline]
    pub const fn new(value: i64) -> Option<Self> {
        if value >= 0 { Some(Self(value)) } else { None }
    }

    /// The ID's value.
    ///
    /// ```
    /// # use idgen_core::SnowflakeId;
    /// assert_eq!(SnowflakeId::new(7).unwrap().get(), 7);
    /// ```
    #[inline]
    pub const fn get(self) -> i64 {
        self.0
    }

    /// The ID's value as an `i64`, as stored in a `BIGINT` column (the same as [`get`](Self::get)).
    ///
    /// ```
    /// # use idgen_core::SnowflakeId;
    /// assert_eq!(SnowflakeId::new(7).unwrap().as_i64(), 7i64);
    /// ```
    #[inline]
    pub const fn as_i64(self) -> i64 {
        self.0
    }

    /// The ID's value as a `u64` (always exact: the value is never negative).
    ///
    /// ```
    /// # use idgen_core::SnowflakeId;
    /// assert_eq!(SnowflakeId::MAX.as_u64(), i64::MAX as u64);
    /// ```
    #[inline]
    pub const fn as_u64(self) -> u64 {
        self.0 as u64
    }

    /// Wraps a value known to be in range (only for code in this crate that checked it).
    #[inline]
    pub(crate) const fn from_raw(value: u64) -> Self {
        debug_assert!(value <= i64::MAX as u64);
        Self(value as i64)
    }
}

impl fmt::Display for SnowflakeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for SnowflakeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SnowflakeId({})", self.0)
    }
}

impl FromStr for SnowflakeId {
    type Err = Error;

    /// Parses canonical decimal digits only: no sign, no whitespace, no underscores, at most
    /// `i64::MAX`. Leading zeros are accepted (`"007"` is 7).
    fn from_str(s: &str) -> Result<Self, Error> {
        parse_decimal(s)
    }
}

/// Strict decimal parse shared by `FromStr` and serde.
pub(crate) fn parse_decimal(s: &str) -> Result<SnowflakeId, Error> {
    let reject = |reason| Error::InvalidIdText {
        input: s.chars().take(64).collect(),
        reason,
    };
    if s.is_empty() {
        return Err(reject("the text is empty"));
    }
    let mut value: u64 = 0;
    for b in s.bytes() {
        if !b.is_ascii_digit() {
            return Err(reject(match b {
                b'+' | b'-' => "a sign is not allowed; an ID is unsigned decimal digits",
                b' ' | b'\t' | b'\n' | b'\r' => "whitespace is not allowed",
                b'.' | b'e' | b'E' => "an ID is an integer, not a decimal fraction or exponent",
                _ => "only the decimal digits 0-9 are allowed",
            }));
        }
        value = match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
        {
            Some(v) if v <= i64::MAX as u64 => v,
            _ => {
                return Err(reject(
                    "the value is larger than 9223372036854775807 (i64::MAX)",
                ));
            }
        };
    }
    Ok(SnowflakeId(value as i64))
}

impl TryFrom<i64> for SnowflakeId {
    type Error = Error;
    fn try_from(value: i64) -> Result<Self, Error> {
        Self::new(value).ok_or(Error::IdOutOfRange {
            value: value.into(),
        })
    }
}

impl TryFrom<u64> for SnowflakeId {
    type Error = Error;
    fn try_from(value: u64) -> Result<Self, Error> {
        i64::try_from(value)
            .map(Self)
            .map_err(|_| Error::IdOutOfRange {
                value: value.into(),
            })
    }
}

impl TryFrom<i128> for SnowflakeId {
    type Error = Error;
    fn try_from(value: i128) -> Result<Self, Error> {
        i64::try_from(value)
            .ok()
            .and_then(Self::new)
            .ok_or(Error::IdOutOfRange { value })
    }
}

impl From<SnowflakeId> for i64 {
    fn from(id: SnowflakeId) -> i64 {
        id.0
    }
}

impl From<SnowflakeId> for u64 {
    fn from(id: SnowflakeId) -> u64 {
        id.0 as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_digits_up_to_i64_max() {
        assert_eq!("0".parse::<SnowflakeId>().unwrap().get(), 0);
        assert_eq!("007".parse::<SnowflakeId>().unwrap().get(), 7);
        assert_eq!(
            "9223372036854775807".parse::<SnowflakeId>().unwrap(),
            SnowflakeId::MAX
        );
    }

    #[test]
    fn parse_rejects_each_bad_input_with_its_reason() {
        for (input, reason_part) in [
            ("", "empty"),
            ("-1", "sign"),
            ("+1", "sign"),
            (" 1", "whitespace"),
            ("1 ", "whitespace"),
            ("1.5", "fraction"),
            ("1e3", "fraction"),
            ("12a", "digits"),
            ("1_000", "digits"),
            ("9223372036854775808", "i64::MAX"),
            ("99999999999999999999999", "i64::MAX"),
        ] {
            let err = input.parse::<SnowflakeId>().unwrap_err();
            let text = err.to_string();
            assert!(text.contains(reason_part), "{input:?}: {text}");
            assert!(
                text.contains(&format!("{input:?}")),
                "{input:?} not named in: {text}"
            );
        }
    }

    #[test]
    fn conversions_check_the_range() {
        assert_eq!(SnowflakeId::try_from(5i64).unwrap().get(), 5);
        assert!(matches!(
            SnowflakeId::try_from(-5i64).unwrap_err(),
            Error::IdOutOfRange { value: -5 }
        ));
        assert_eq!(
            SnowflakeId::try_from(i64::MAX as u64).unwrap(),
            SnowflakeId::MAX
        );
        assert_eq!(
            SnowflakeId::try_from(1u64 << 63).unwrap_err().to_string(),
            "9223372036854775808 is not a Snowflake ID: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        assert_eq!(i64::from(SnowflakeId::MAX), i64::MAX);
        assert_eq!(u64::from(SnowflakeId::MAX), i64::MAX as u64);
    }

    proptest::proptest! {
        #[test]
        fn display_and_parse_round_trip(v in 0i64..=i64::MAX) {
            let id = SnowflakeId::new(v).unwrap();
            proptest::prop_assert_eq!(id.to_string().parse::<SnowflakeId>().unwrap(), id);
        }

        #[test]
        fn parse_agrees_with_std_on_digit_strings(s in "[0-9]{1,25}") {
            let ours = s.parse::<SnowflakeId>().ok().map(SnowflakeId::get);
            let std = s.parse::<i64>().ok();
            proptest::prop_assert_eq!(ours, std);
        }
    }
}
