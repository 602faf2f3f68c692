//! `utoipa::ToSchema` (feature `utoipa`, utoipa 6) for [`SnowflakeId`], [`Id<T>`] and
//! [`PublicId<T>`], for OpenAPI documents: the same string schemas as with `schemars` — a
//! `pattern` matching exactly what the type's parser accepts, a `format`, a length range and an
//! example — under the component names `SnowflakeId`, `<T>Id` and `<T>PublicId`.
//!
//! ```
//! use idgen_core::{Id, PublicId, PublicIdPrefix};
//! use utoipa::{PartialSchema, ToSchema};
//!
//! struct Order;
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! assert_eq!(PublicId::<Order>::name(), "OrderPublicId");
//! let schema = serde_json::to_value(PublicId::<Order>::schema()).unwrap();
//! assert_eq!(schema["type"], "string");
//! assert_eq!(schema["pattern"], "^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$");
//! assert_eq!(schema["format"], "typeid");
//! assert_eq!(Id::<Order>::name(), "OrderId");
//! ```

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

use super::schema::{Described, StringSchema};
use crate::{Id, PublicId, PublicIdPrefix, SnowflakeId};

fn to_schema(s: StringSchema) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(s.description))
        .pattern(Some(s.pattern))
        .format(Some(SchemaFormat::Custom(s.format.into())))
        .min_length(Some(s.min_length))
        .max_length(Some(s.max_length))
        .examples([s.example])
        .build()
        .into()
}

impl PartialSchema for SnowflakeId {
    fn schema() -> RefOr<Schema> {
        to_schema(Self::string_schema())
    }
}

impl ToSchema for SnowflakeId {
    fn name() -> Cow<'static, str> {
        Self::string_schema().name.into()
    }
}

impl<T: ?Sized> PartialSchema for Id<T> {
    fn schema() -> RefOr<Schema> {
        to_schema(Self::string_schema())
    }
}

impl<T: ?Sized> ToSchema for Id<T> {
    fn name() -> Cow<'static, str> {
        Self::string_schema().name.into()
    }
}

impl<T: PublicIdPrefix + ?Sized> PartialSchema for PublicId<T> {
    fn schema() -> RefOr<Schema> {
        to_schema(Self::string_schema())
    }
}

impl<T: PublicIdPrefix + ?Sized> ToSchema for PublicId<T> {
    fn name() -> Cow<'static, str> {
        Self::string_schema().name.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Order;
    impl PublicIdPrefix for Order {
        const PREFIX: &'static str = "ord";
    }

    fn check<X: ToSchema + Described>() {
        let described = X::string_schema();
        let v = serde_json::to_value(X::schema()).unwrap();
        assert_eq!(v["type"], "string");
        assert_eq!(v["pattern"], described.pattern.as_str());
        assert_eq!(v["format"], described.format);
        assert_eq!(v["minLength"], described.min_length);
        assert_eq!(v["maxLength"], described.max_length);
        assert_eq!(v["examples"][0], described.example.as_str());
        assert_eq!(v["description"], described.description.as_str());
        assert_eq!(X::name(), described.name);
    }

    #[test]
    fn each_schema_is_the_shared_description() {
        check::<SnowflakeId>();
        check::<Id<Order>>();
        check::<PublicId<Order>>();
        check::<PublicId<()>>();
    }
}
