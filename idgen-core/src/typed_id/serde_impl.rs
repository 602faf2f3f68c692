//! serde for [`Id<T>`](crate::typed_id::Id): a string in human-readable formats, an `i64` otherwise — as
//! for [`SnowflakeId`](crate::snowflake::SnowflakeId).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Id, type_label};
use crate::integrations::serde_integer::{self, JsonInteger};

impl<T: ?Sized> Serialize for Id<T> {
    /// A JSON string (`"112719806108546862"`) in human-readable formats, because JavaScript's
    /// `Number` rounds integers above 2^53; an `i64` in binary formats.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_snowflake().serialize(serializer)
    }
}

impl<'de, T: ?Sized> Deserialize<'de> for Id<T> {
    /// Reads canonical decimal text or an integer; rejects negatives, floats, `null`, booleans,
    /// signs, leading zeros, whitespace and values above `i64::MAX`, naming the input and `T`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_integer::deserialize(deserializer)
    }
}

impl<T: ?Sized> JsonInteger for Id<T> {
    const RANGE: &'static str = "an ID is an integer from 0 to 9223372036854775807";

    fn what() -> String {
        type_label::<T>()
    }

    fn from_text(text: &str) -> Result<Self, crate::error::Error> {
        text.parse()
    }

    fn from_i128(value: i128) -> Result<Self, crate::error::Error> {
        Id::try_from(value)
    }
}

#[cfg(test)]
mod tests {
    use crate::typed_id::Id;

    struct Order;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Row {
        id: Id<Order>,
        parent: Option<Id<Order>>,
    }

    fn from_json(text: &str) -> Result<Id<Order>, String> {
        serde_json::from_str::<Id<Order>>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn serializes_as_a_string_and_reads_strings_or_integers() {
        let row = Row {
            id: Id::new(112719806108546862).unwrap(),
            parent: None,
        };
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(json, r#"{"id":"112719806108546862","parent":null}"#);
        assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
        let numeric = r#"{"id":112719806108546862,"parent":7}"#;
        let read = serde_json::from_str::<Row>(numeric).unwrap();
        assert_eq!((read.id, read.parent), (row.id, Id::new(7)));
        for &(text, value) in crate::canonical_int::tests::ACCEPTED {
            assert_eq!(from_json(&format!("{text:?}")).unwrap().as_u64(), value);
            assert_eq!(from_json(text).unwrap().as_u64(), value);
        }
    }

    #[test]
    fn rejects_bad_input_naming_it_and_the_type() {
        for &(text, reason) in crate::canonical_int::tests::REJECTED {
            let err = from_json(&serde_json::to_string(text).unwrap()).unwrap_err();
            assert!(
                err.contains(&format!("{text:?} is not an ID of type Order"))
                    && err.contains(reason),
                "{text:?}: {err}"
            );
        }
        crate::canonical_int::tests::assert_each_refused(
            from_json,
            &[
                ("-1", "-1 is not an ID of type Order"),
                (
                    "-0",
                    "-0 is not an ID of type Order: the number was read as floating point",
                ),
                (
                    "7e0",
                    "7 is not an ID of type Order: the number was read as floating point",
                ),
                (
                    "1.5",
                    "1.5 is not an ID of type Order: the number was read as floating point",
                ),
                (
                    "9223372036854775808",
                    "9223372036854775808 is not an ID of type Order",
                ),
                (
                    "18446744073709551616",
                    "is not an ID of type Order: the number was read as floating point",
                ),
                (
                    "null",
                    "an ID of type Order: a decimal string or an integer",
                ),
                (
                    "true",
                    "an ID of type Order: a decimal string or an integer",
                ),
                ("[1]", "an ID of type Order: a decimal string or an integer"),
            ],
        );
    }

    proptest::proptest! {
        #[test]
        fn json_round_trip(v in 0i64..=i64::MAX) {
            let id = Id::<Order>::new(v).unwrap();
            let text = serde_json::to_string(&id).unwrap();
            proptest::prop_assert_eq!(text.clone(), format!("\"{v}\""));
            proptest::prop_assert_eq!(serde_json::from_str::<Id<Order>>(&text).unwrap(), id);
        }
    }
}
