//! [`CustomerId`]: a customer ID as the API takes and shows it, from 1, always a JSON string.
//!
//! One type for every place the API takes a customer ID (the `X-Customer-Id` header, the `{id}`
//! of `/customers/{id}/orders`, `customer_id` in `POST /orders`), so they accept the same texts,
//! and its OpenAPI schema says exactly which: idgen's `Id<Customer>` schema (canonical decimal
//! digits up to 9223372036854775807) without `0`, because customer IDs start at 1.
//!
//! Why the schema moved and not the server: 0 is no customer (the workload numbers customers from
//! 1, and the API has always refused 0), so the document now says so. Why a JSON integer is
//! refused: the document says string, and a JSON integer above 2^53 is what idgen exists to
//! avoid (JavaScript rounds it, and the rounded ID names another customer); accepting integers as
//! well would have to be `oneOf [string, integer]` with every caveat of JSON numbers (`7.0`,
//! `7e0`) that the server does not take.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use idgen_sqlx::Id;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{RefOr, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::model::Customer;

/// A customer's ID: an [`Id<Customer>`] from 1 to 9223372036854775807, written (and read) as
/// decimal digits without sign or leading zeros, in JSON always a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomerId(Id<Customer>);

/// Why a text is not a [`CustomerId`].
#[derive(Debug, thiserror::Error)]
pub enum CustomerIdError {
    /// Not canonical decimal digits within `i64` (idgen's message names the text and the
    /// reason).
    #[error(transparent)]
    NotAnId(#[from] idgen_core::Error),
    /// `0`.
    #[error("0 is not a customer ID: customer IDs start at 1")]
    Zero,
}

impl CustomerId {
    /// The customer ID `id`, unless it is 0.
    pub fn new(id: Id<Customer>) -> Option<CustomerId> {
        (id.get() != 0).then_some(CustomerId(id))
    }

    /// The owner of a stored order. Orders are created only for customers from 1 (the API takes
    /// a `CustomerId`, the workload numbers customers from 1), so this is one.
    pub(crate) fn of_stored_order(id: Id<Customer>) -> CustomerId {
        debug_assert_ne!(id.get(), 0, "an order of customer 0");
        CustomerId(id)
    }

    /// The ID inside.
    pub fn get(self) -> Id<Customer> {
        self.0
    }
}

impl FromStr for CustomerId {
    type Err = CustomerIdError;

    /// What `Id<Customer>` parses (canonical decimal digits up to `i64::MAX`), except `0`.
    fn from_str(s: &str) -> Result<CustomerId, CustomerIdError> {
        CustomerId::new(s.parse()?).ok_or(CustomerIdError::Zero)
    }
}

impl fmt::Display for CustomerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq<Id<Customer>> for CustomerId {
    fn eq(&self, other: &Id<Customer>) -> bool {
        self.0 == *other
    }
}

impl Serialize for CustomerId {
    /// A JSON string, as every idgen ID.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for CustomerId {
    /// A string only, parsed as [`FromStr`]; anything else is refused, naming it.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CustomerId, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = CustomerId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a customer ID as a string of decimal digits, from \"1\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CustomerId, E> {
                v.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// The start of idgen's decimal ID pattern: the alternative `0`, then the rest.
const FROM_ZERO: &str = "^(0|";

impl PartialSchema for CustomerId {
    /// idgen's `Id<Customer>` schema (a string with a pattern, format `int64`, 1 to 19
    /// characters), its pattern without the alternative `0`.
    fn schema() -> RefOr<Schema> {
        let mut schema = Id::<Customer>::schema();
        let RefOr::T(Schema::Object(object)) = &mut schema else {
            panic!("idgen's Id<T> schema is an inline object schema");
        };
        assert!(object.schema_type == Type::String.into());
        // idgen's pattern is `^(0|[1-9][0-9]{0,17}|…)$` (idgen-core's tests check it against
        // the parser); without `0|` it is the same from 1 (tests/openapi.rs checks that, and
        // tests/id_places.rs this pattern against the server).
        let from_zero = object.pattern.take().unwrap_or_default();
        let rest = from_zero
            .strip_prefix(FROM_ZERO)
            .expect("idgen's decimal ID pattern starts with the alternative 0");
        object.pattern = Some(format!("^({rest}"));
        object.description = Some(
            "A customer's ID: an integer from 1 to 9223372036854775807, written as decimal \
             digits without sign or leading zeros, always a JSON string (so JavaScript keeps \
             every digit). 0 is no customer."
                .into(),
        );
        schema
    }
}

impl ToSchema for CustomerId {
    fn name() -> Cow<'static, str> {
        "CustomerId".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_id_parses_except_zero() {
        assert_eq!("7".parse::<CustomerId>().unwrap().get().get(), 7);
        assert!(matches!(
            "0".parse::<CustomerId>(),
            Err(CustomerIdError::Zero)
        ));
        for text in ["", "007", "+7", " 7", "9223372036854775808", "７"] {
            assert!(text.parse::<CustomerId>().is_err(), "{text:?}");
        }
    }

    #[test]
    fn json_is_a_string_only() {
        let id: CustomerId = serde_json::from_str(r#""42""#).unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""42""#);
        let e = serde_json::from_str::<CustomerId>("42").unwrap_err();
        assert!(e.to_string().contains("invalid type: integer `42`"), "{e}");
        let e = serde_json::from_str::<CustomerId>(r#""0""#).unwrap_err();
        assert!(e.to_string().contains("customer IDs start at 1"), "{e}");
    }
}
