//! `schemars::JsonSchema` (feature `schemars`, schemars 1) for
//! [`SnowflakeId`](crate::snowflake::SnowflakeId), [`Id<T>`](crate::typed_id::Id) and
//! [`PublicId<T>`](crate::public_id::PublicId): a string with a `pattern` that matches exactly what the
//! type's parser accepts, a `format`, a length range and an example.
//!
//! ```
//! use idgen_core::{Id, PublicId, PublicIdPrefix, SnowflakeId};
//!
//! struct Order;
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! #[derive(schemars::JsonSchema)]
//! #[allow(dead_code)]
//! struct OrderView {
//!     id: Id<Order>,
//!     public_id: PublicId<Order>,
//!     trace: SnowflakeId,
//! }
//!
//! let schema = schemars::schema_for!(OrderView);
//! let public_id = &schema.as_value()["$defs"]["OrderPublicId"];
//! assert_eq!(public_id["type"], "string");
//! assert_eq!(public_id["pattern"], "^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$");
//! assert_eq!(public_id["format"], "typeid");
//! assert_eq!(public_id["examples"][0], "ord_01h455vb4pex5vsknk084sn02q");
//! assert_eq!(schema.as_value()["$defs"]["OrderId"]["format"], "int64");
//! assert_eq!(schema.as_value()["$defs"]["SnowflakeId"]["maxLength"], 19);
//! ```

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::schema::{Described, StringSchema};

fn to_schema(s: StringSchema) -> Schema {
    json_schema!({
        "type": "string",
        "description": s.description,
        "pattern": s.pattern,
        "format": s.format,
        "minLength": s.min_length,
        "maxLength": s.max_length,
        "examples": [s.example],
    })
}

/// `JsonSchema` from a type's [`Described`] string schema.
macro_rules! json_schema {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                Self::string_schema().name.into()
            }

            fn schema_id() -> Cow<'static, str> {
                Self::string_schema().id.into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                to_schema(Self::string_schema())
            }
        }
    };
}

for_each_described_type!(json_schema);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::schema::tests::{WrittenBy, assert_each_schema_is_the_description};

    struct Schemars;

    impl<X: JsonSchema + Described> WrittenBy<Schemars> for X {
        fn json() -> serde_json::Value {
            schemars::schema_for!(X).as_value().clone()
        }

        fn name() -> String {
            X::schema_name().into_owned()
        }
    }

    #[test]
    fn each_schema_is_the_shared_description() {
        assert_each_schema_is_the_description::<Schemars>();
    }
}
