//! One serde visitor for every 64-bit integer that travels as a JSON string: [`SnowflakeId`],
//! [`Id<T>`](crate::typed_id::Id) and the plain integers of [`serde_string`](crate::serde_string).
//!
//! It reads a string (strict canonical decimal, see `crate::canonical_int`) or an integer, and
//! refuses everything else — floats, `null`, booleans, out-of-range numbers — with a message
//! naming the input.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserializer;
use serde::de::{self, Visitor};

use crate::error::Error;

/// A type read from a JSON string or integer.
pub(crate) trait JsonInteger: Sized {
    /// What a value is, for messages: `a Snowflake ID`, `an ID of type Order`, `an i64`.
    fn what() -> String;
    /// The allowed values, for messages: `an ID is an integer from 0 to 9223372036854775807`.
    const RANGE: &'static str;
    /// Binary formats hold it as a `u64` (else as an `i64`).
    const UNSIGNED: bool = false;
    /// Parses canonical decimal text; the error names the text.
    fn from_text(text: &str) -> Result<Self, Error>;
    /// Checks a number's range; the error names the number.
    fn from_i128(value: i128) -> Result<Self, Error>;
}

/// Reads an `X`: a string or an integer in human-readable formats, the native integer in
/// binary ones.
pub(crate) fn deserialize<'de, X: JsonInteger, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<X, D::Error> {
    let visitor = IntegerVisitor::<X>(PhantomData);
    if deserializer.is_human_readable() {
        deserializer.deserialize_any(visitor)
    } else if X::UNSIGNED {
        deserializer.deserialize_u64(visitor)
    } else {
        deserializer.deserialize_i64(visitor)
    }
}

/// Deserializes a [`JsonInteger`].
struct IntegerVisitor<X>(PhantomData<fn() -> X>);

impl<X: JsonInteger> Visitor<'_> for IntegerVisitor<X> {
    type Value = X;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: a decimal string or an integer ({})",
            X::what(),
            X::RANGE
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<X, E> {
        X::from_text(v).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<X, E> {
        X::from_i128(v.into()).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<X, E> {
        X::from_i128(v.into()).map_err(E::custom)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<X, E> {
        X::from_i128(v).map_err(E::custom)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<X, E> {
        match i128::try_from(v) {
            Ok(v) => self.visit_i128(v),
            Err(_) => Err(E::custom(format_args!(
                "{v} is not {}: {}",
                X::what(),
                X::RANGE
            ))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<X, E> {
        Err(E::custom(format_args!(
            "{v} is not {}: the number was read as floating point (it has a fraction or an \
             exponent, or is too large for 64 bits); {}",
            X::what(),
            X::RANGE
        )))
    }
}
