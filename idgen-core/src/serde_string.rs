//! `#[serde(with = "idgen_core::serde_string")]`: a plain `i64` or `u64` field as a JSON
//! string, read as strictly as [`SnowflakeId`](crate::snowflake::SnowflakeId) and [`Id<T>`](crate::typed_id::Id).
//!
//! For integer IDs that are not (yet) typed: customer numbers, foreign keys, cursors. JSON gets
//! a string (`"112719806108546862"`), since JavaScript rounds integers above 2^53. Input is a
//! string or an integer; a string must be the canonical decimal text `to_string` prints (no
//! `+`, no leading zero, no whitespace; a `-` only before a negative `i64`, never `-0`), and
//! floats (`7e0`, `1.5`), `null`, booleans and out-of-range numbers are refused with a message
//! naming the input. Binary formats (not human-readable) get the native integer.
//! [`option`] does the same for `Option<i64>` / `Option<u64>`, with `null` for `None`.
//!
//! ```
//! #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
//! struct Payment {
//!     #[serde(with = "idgen_core::serde_string")]
//!     customer_id: i64,
//!     #[serde(with = "idgen_core::serde_string")]
//!     amount_id: u64,
//! }
//!
//! let p = Payment { customer_id: 112719806108546862, amount_id: u64::MAX };
//! let json = serde_json::to_string(&p)?;
//! assert_eq!(json, r#"{"customer_id":"112719806108546862","amount_id":"18446744073709551615"}"#);
//! assert_eq!(serde_json::from_str::<Payment>(&json)?, p);
//! let numbers = r#"{"customer_id":112719806108546862,"amount_id":18446744073709551615}"#;
//! assert_eq!(serde_json::from_str::<Payment>(numbers)?, p);
//!
//! let err = serde_json::from_str::<Payment>(r#"{"customer_id":"+7","amount_id":"1"}"#).unwrap_err();
//! assert!(err.to_string().starts_with(r#""+7" is not an i64: a sign is not allowed"#), "{err}");
//! let err = serde_json::from_str::<Payment>(r#"{"customer_id":"007","amount_id":"1"}"#).unwrap_err();
//! assert!(err.to_string().contains("leading zero"), "{err}");
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserializer, Serializer};

use crate::canonical_int::{self, Limit};
use crate::error::Error;
use crate::integrations::serde_integer::{self, JsonInteger};

/// The integer types `serde_string` handles: `i64` and `u64` (sealed).
///
/// ```
/// fn takes<T: idgen_core::serde_string::StringInteger>(_: T) {}
/// takes(5i64);
/// takes(5u64);
/// ```
pub trait StringInteger: sealed::Sealed + Copy + std::fmt::Display + Sized {
    #[doc(hidden)]
    fn serialize_native<S: Serializer>(self, serializer: S) -> Result<S::Ok, S::Error>;
    #[doc(hidden)]
    fn deserialize_native<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
}

/// Writes `value` as a decimal string (its native integer in binary formats).
///
/// ```
/// let mut out = Vec::new();
/// idgen_core::serde_string::serialize(&-5i64, &mut serde_json::Serializer::new(&mut out))?;
/// assert_eq!(out, br#""-5""#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn serialize<V: StringInteger, S: Serializer>(
    value: &V,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if serializer.is_human_readable() {
        serializer.collect_str(value)
    } else {
        value.serialize_native(serializer)
    }
}

/// Reads a canonical decimal string or an integer (see the [module](self) docs).
///
/// ```
/// let mut de = serde_json::Deserializer::from_str(r#""42""#);
/// let v: u64 = idgen_core::serde_string::deserialize(&mut de)?;
/// assert_eq!(v, 42);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn deserialize<'de, V: StringInteger, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<V, D::Error> {
    V::deserialize_native(deserializer)
}

/// The same for `Option<i64>` and `Option<u64>`: `null` is `None`.
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct Page {
///     #[serde(with = "idgen_core::serde_string::option", default)]
///     after: Option<i64>,
/// }
/// assert_eq!(serde_json::to_string(&Page { after: Some(7) })?, r#"{"after":"7"}"#);
/// assert_eq!(serde_json::to_string(&Page { after: None })?, r#"{"after":null}"#);
/// assert_eq!(serde_json::from_str::<Page>(r#"{"after":"7"}"#)?, Page { after: Some(7) });
/// assert_eq!(serde_json::from_str::<Page>(r#"{}"#)?, Page { after: None });
/// assert!(serde_json::from_str::<Page>(r#"{"after":"07"}"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod option {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::StringInteger;

    /// Writes `Some(v)` as a decimal string, `None` as `null`.
    ///
    /// ```
    /// let mut out = Vec::new();
    /// idgen_core::serde_string::option::serialize(&Some(3u64), &mut serde_json::Serializer::new(&mut out))?;
    /// assert_eq!(out, br#""3""#);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn serialize<V: StringInteger, S: Serializer>(
        value: &Option<V>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => super::serialize(v, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Reads `null` as `None`, anything else as [`super::deserialize`] does.
    ///
    /// ```
    /// let mut de = serde_json::Deserializer::from_str("null");
    /// let v: Option<i64> = idgen_core::serde_string::option::deserialize(&mut de)?;
    /// assert_eq!(v, None);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn deserialize<'de, V: StringInteger, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<V>, D::Error> {
        /// `Option`'s own impl handles `null`, then hands the value to `V`'s strict reader.
        struct Strict<V>(V);
        impl<'de, V: StringInteger> Deserialize<'de> for Strict<V> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                V::deserialize_native(d).map(Strict)
            }
        }
        Ok(Option::<Strict<V>>::deserialize(deserializer)?.map(|s| s.0))
    }
}

/// `StringInteger` for `i64` and `u64`, each written with its own serializer method.
macro_rules! string_integer {
    ($($t:ty => $serialize:ident),+) => {$(
        impl StringInteger for $t {
            fn serialize_native<S: Serializer>(self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.$serialize(self)
            }

            fn deserialize_native<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                serde_integer::deserialize(deserializer)
            }
        }
    )+};
}

string_integer!(i64 => serialize_i64, u64 => serialize_u64);

impl JsonInteger for i64 {
    const RANGE: &'static str =
        "an i64 is an integer from -9223372036854775808 to 9223372036854775807";

    fn what() -> String {
        "an i64".to_owned()
    }

    fn from_text(text: &str) -> Result<Self, Error> {
        canonical_int::parse_i64(text).map_err(|reason| invalid::<i64>(text, reason))
    }

    fn from_i128(value: i128) -> Result<Self, Error> {
        i64::try_from(value).map_err(|_| out_of_range::<i64>(value))
    }
}

impl JsonInteger for u64 {
    const UNSIGNED: bool = true;

    const RANGE: &'static str = "a u64 is an integer from 0 to 18446744073709551615";

    fn what() -> String {
        "a u64".to_owned()
    }

    fn from_text(text: &str) -> Result<Self, Error> {
        canonical_int::parse_unsigned(text, Limit::U64Max)
            .map_err(|reason| invalid::<u64>(text, reason))
    }

    fn from_i128(value: i128) -> Result<Self, Error> {
        u64::try_from(value).map_err(|_| out_of_range::<u64>(value))
    }
}

fn invalid<X: JsonInteger>(text: &str, reason: &'static str) -> Error {
    Error::InvalidIntegerText {
        input: canonical_int::excerpt(text),
        what: X::what(),
        reason,
    }
}

fn out_of_range<X: JsonInteger>(value: i128) -> Error {
    Error::IntegerOutOfRange {
        value,
        what: X::what(),
        range: X::RANGE,
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Row {
        #[serde(with = "crate::serde_string")]
        signed: i64,
        #[serde(with = "crate::serde_string")]
        unsigned: u64,
    }

    fn read(signed: &str, unsigned: &str) -> Result<Row, String> {
        serde_json::from_str(&format!(r#"{{"signed":{signed},"unsigned":{unsigned}}}"#))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_canonical_text_and_integer_round_trips() {
        for (s, u) in [(0, 0), (-1, 1), (i64::MIN, u64::MAX), (i64::MAX, 1 << 63)] {
            let row = Row {
                signed: s,
                unsigned: u,
            };
            let json = serde_json::to_string(&row).unwrap();
            assert_eq!(json, format!(r#"{{"signed":"{s}","unsigned":"{u}"}}"#));
            assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
            assert_eq!(read(&s.to_string(), &u.to_string()).unwrap(), row);
        }
        for &(text, value) in crate::canonical_int::tests::ACCEPTED {
            let row = read(&format!("{text:?}"), &format!("{text:?}")).unwrap();
            assert_eq!((row.signed as u64, row.unsigned), (value, value));
        }
    }

    #[test]
    fn the_shared_rejected_texts_are_rejected_unsigned() {
        for &(text, reason) in crate::canonical_int::tests::REJECTED {
            let quoted = serde_json::to_string(text).unwrap();
            let Err(err) = read("0", &quoted) else {
                // Only values between i64::MAX and u64::MAX are a u64 but no ID.
                let value: u64 = text.parse().unwrap();
                assert!(value > i64::MAX as u64, "{text:?}");
                continue;
            };
            assert!(
                err.contains(&format!("{text:?} is not a u64")) && err.contains(reason)
                    || err.contains("u64::MAX"),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn bad_input_is_refused_naming_it() {
        for (signed, unsigned, needle) in [
            (
                "\"+7\"",
                "0",
                r#""+7" is not an i64: a sign is not allowed"#,
            ),
            ("\"-0\"", "0", r#""-0" is not an i64: -0 is not allowed"#),
            ("\"007\"", "0", r#""007" is not an i64: a leading zero"#),
            ("\" 7\"", "0", "whitespace"),
            (
                "7e0",
                "0",
                "7 is not an i64: the number was read as floating point",
            ),
            (
                "-0",
                "0",
                "-0 is not an i64: the number was read as floating point",
            ),
            ("null", "0", "an i64: a decimal string or an integer"),
            ("true", "0", "an i64: a decimal string or an integer"),
            (
                "9223372036854775808",
                "0",
                "9223372036854775808 is not an i64",
            ),
            (
                "0",
                "-1",
                "-1 is not a u64: a u64 is an integer from 0 to 18446744073709551615",
            ),
            ("0", "\"-1\"", r#""-1" is not a u64: a sign is not allowed"#),
            (
                "0",
                "18446744073709551616",
                "is not a u64: the number was read as floating point",
            ),
        ] {
            let err = read(signed, unsigned).unwrap_err();
            assert!(err.contains(needle), "{signed} {unsigned}: {err}");
        }
    }
}
