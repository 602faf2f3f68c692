//! [`SnowflakeId`]: the 63-bit ID type.

use std::fmt;
use std::str::FromStr;

use crate::canonical_int;
use crate::error::Error;

/// A Snowflake ID: a non-negative `i64`, so it fits a signed `BIGINT` column.
///
/// The sign bit is always 0; every constructor checks it. Under a [`Layout`](crate::snowflake::Layout) the
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

    /// Parses canonical decimal digits only, the text [`Display`](fmt::Display) prints: no
    /// sign, no leading zero (`"007"` is refused), no whitespace, no underscores, at most
    /// `i64::MAX`.
    fn from_str(s: &str) -> Result<Self, Error> {
        parse_decimal(s)
    }
}

/// Strict decimal parse shared by `FromStr`, serde and the column types (see `crate::canonical_int`).
pub(crate) fn parse_decimal(s: &str) -> Result<SnowflakeId, Error> {
    canonical_int::parse_unsigned(s, canonical_int::Limit::I64Max)
        .map(|v| SnowflakeId(v as i64))
        .map_err(|reason| Error::InvalidIdText {
            input: canonical_int::excerpt(s),
            reason,
        })
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
        assert_eq!(
            "9223372036854775807".parse::<SnowflakeId>().unwrap(),
            SnowflakeId::MAX
        );
    }

    #[test]
    fn parse_accepts_exactly_the_shared_canonical_texts() {
        for &(input, value) in crate::canonical_int::tests::ACCEPTED {
            assert_eq!(input.parse::<SnowflakeId>().unwrap().as_u64(), value);
        }
    }

    #[test]
    fn parse_rejects_each_bad_input_with_its_reason() {
        for &(input, reason_part) in crate::canonical_int::tests::REJECTED {
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
        fn parse_agrees_with_std_on_canonical_digit_strings(s in "[0-9]{1,25}") {
            let ours = s.parse::<SnowflakeId>().ok().map(SnowflakeId::get);
            let std = s.parse::<i64>().ok().filter(|v| v.to_string() == s);
            proptest::prop_assert_eq!(ours, std);
        }
    }
}
