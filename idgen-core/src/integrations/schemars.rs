//! `schemars::JsonSchema` (feature `schemars`, schemars 1) for [`SnowflakeId`], [`Id<T>`] and
//! [`PublicId<T>`]: a string with a `pattern` that matches exactly what the type's parser
//! accepts, a `format`, a length range and an example.
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
use crate::{Id, PublicId, PublicIdPrefix, SnowflakeId};

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

impl JsonSchema for SnowflakeId {
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

impl<T: ?Sized> JsonSchema for Id<T> {
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

impl<T: PublicIdPrefix + ?Sized> JsonSchema for PublicId<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Order;
    impl PublicIdPrefix for Order {
        const PREFIX: &'static str = "ord";
    }

    fn check<X: JsonSchema + Described>() {
        let described = X::string_schema();
        let schema = schemars::schema_for!(X);
        let v = schema.as_value();
        assert_eq!(v["type"], "string");
        assert_eq!(v["pattern"], described.pattern.as_str());
        assert_eq!(v["format"], described.format);
        assert_eq!(v["minLength"], described.min_length);
        assert_eq!(v["maxLength"], described.max_length);
        assert_eq!(v["examples"][0], described.example.as_str());
        assert_eq!(v["description"], described.description.as_str());
        assert_eq!(X::schema_name(), described.name);
    }

    #[test]
    fn each_schema_is_the_shared_description() {
        check::<SnowflakeId>();
        check::<Id<Order>>();
        check::<PublicId<Order>>();
        check::<PublicId<()>>();
    }
}
