//! `utoipa::ToSchema` (feature `utoipa`, utoipa 6) for [`SnowflakeId`](crate::snowflake::SnowflakeId),
//! [`Id<T>`](crate::typed_id::Id) and [`PublicId<T>`](crate::public_id::PublicId), for OpenAPI documents: the same
//! string schemas as with `schemars` — a `pattern` matching exactly what the type's parser
//! accepts, a `format`, a length range and an example — under the component names
//! `SnowflakeId`, `<T>Id` and `<T>PublicId`.
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

/// `PartialSchema` and `ToSchema` from a type's [`Described`] string schema.
macro_rules! openapi_schema {
    ([$($generics:tt)*] $ty:ty) => {
        impl<$($generics)*> PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                to_schema(Self::string_schema())
            }
        }

        impl<$($generics)*> ToSchema for $ty {
            fn name() -> Cow<'static, str> {
                Self::string_schema().name.into()
            }
        }
    };
}

for_each_described_type!(openapi_schema);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::schema::tests::{WrittenBy, assert_each_schema_is_the_description};

    struct Utoipa;

    impl<X: ToSchema + Described> WrittenBy<Utoipa> for X {
        fn json() -> serde_json::Value {
            serde_json::to_value(X::schema()).unwrap()
        }

        fn name() -> String {
            <X as ToSchema>::name().into_owned()
        }
    }

    #[test]
    fn each_schema_is_the_shared_description() {
        assert_each_schema_is_the_description::<Utoipa>();
    }
}
