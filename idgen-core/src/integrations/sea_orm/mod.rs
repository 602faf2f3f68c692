//! sea-orm 2.0 column types (feature `sea-orm`): [`SnowflakeId`](crate::snowflake::SnowflakeId) as
//! `BIGINT`, [`Id<T>`](crate::typed_id::Id) as `BIGINT`, [`PublicId`](crate::public_id::PublicId) as `uuid` /
//! `BINARY(16)` / 16-byte `BLOB`.
//! No sea-orm driver or runtime is chosen by this crate.

use std::sync::Arc;

use sea_orm::{DbErr, TryGetError};

/// The impls every ID column type has, written from how its value is stored: the ID is stored
/// as a `$stored` in `Value::$variant` (`encode` makes that from the ID, `decode` the ID from
/// it, or a `TryGetError` naming it); `ValueType`'s names and types; `Nullable`, `TryGetable`,
/// `IntoActiveValue`, and with `sea-orm-postgres-array` the `NotU8` of array columns.
macro_rules! column_type {
    (
        impl[$($generics:tt)*] $ty:ty,
        stored as $stored:ty, in Value::$variant:ident,
        encode |$id:ident| $encode:expr,
        decode |$value:ident| $decode:expr,
        type_name $name:literal, array $array:ident, column $column:ident $(,)?
    ) => {
        impl<$($generics)*> From<$ty> for ::sea_orm::Value {
            fn from($id: $ty) -> Self {
                ::sea_orm::Value::$variant(Some($encode))
            }
        }

        impl<$($generics)*> ::sea_orm::sea_query::Nullable for $ty {
            fn null() -> ::sea_orm::Value {
                ::sea_orm::Value::$variant(None)
            }
        }

        impl<$($generics)*> ::sea_orm::sea_query::ValueType for $ty {
            fn try_from(
                v: ::sea_orm::Value,
            ) -> Result<Self, ::sea_orm::sea_query::ValueTypeErr> {
                let $value = <$stored as ::sea_orm::sea_query::ValueType>::try_from(v)?;
                let decoded: Result<Self, ::sea_orm::TryGetError> = $decode;
                decoded.map_err(|_| ::sea_orm::sea_query::ValueTypeErr)
            }

            fn type_name() -> String {
                $name.to_owned()
            }

            fn array_type() -> ::sea_orm::sea_query::ArrayType {
                ::sea_orm::sea_query::ArrayType::$array
            }

            fn column_type() -> ::sea_orm::sea_query::ColumnType {
                ::sea_orm::sea_query::ColumnType::$column
            }
        }

        impl<$($generics)*> ::sea_orm::TryGetable for $ty {
            fn try_get_by<I: ::sea_orm::ColIdx>(
                res: &::sea_orm::QueryResult,
                index: I,
            ) -> Result<Self, ::sea_orm::TryGetError> {
                let $value = <$stored as ::sea_orm::TryGetable>::try_get_by(res, index)?;
                $decode
            }
        }

        impl<$($generics)*> ::sea_orm::IntoActiveValue<$ty> for $ty {
            fn into_active_value(self) -> ::sea_orm::ActiveValue<$ty> {
                ::sea_orm::ActiveValue::Set(self)
            }
        }

        #[cfg(feature = "sea-orm-postgres-array")]
        impl<$($generics)*> ::sea_orm::sea_query::postgres_array::NotU8 for $ty {}
    };
}

/// [`column_type!`] for an ID stored as `BIGINT` (`SnowflakeId`, `Id<T>`), with a range check
/// on every read, plus `TryFromU64` (so it can be a primary key) and, with
/// `sea-orm-postgres-array`, `TryGetableArray` (`Vec<…>` columns, `eq_any`).
macro_rules! bigint_column_type {
    (impl[$($generics:tt)*] $ty:ty, type_name $name:literal) => {
        column_type! {
            impl[$($generics)*] $ty,
            stored as i64, in Value::BigInt,
            encode |id| id.get(),
            decode |value| $crate::integrations::sea_orm::decoded(value, $name),
            type_name $name, array BigInt, column BigInteger,
        }

        impl<$($generics)*> ::sea_orm::TryFromU64 for $ty {
            fn try_from_u64(n: u64) -> Result<Self, ::sea_orm::DbErr> {
                <$ty as TryFrom<u64>>::try_from(n)
                    .map_err(|err| $crate::integrations::sea_orm::out_of_range("u64", $name, err))
            }
        }

        #[cfg(feature = "sea-orm-postgres-array")]
        impl<$($generics)*> ::sea_orm::TryGetableArray for $ty {
            fn try_get_by<I: ::sea_orm::ColIdx>(
                res: &::sea_orm::QueryResult,
                index: I,
            ) -> Result<Vec<Self>, ::sea_orm::TryGetError> {
                <Vec<i64> as ::sea_orm::TryGetable>::try_get_by(res, index)?
                    .into_iter()
                    .map(|value| $crate::integrations::sea_orm::decoded(value, $name))
                    .collect()
            }
        }
    };
}

mod public_id;
mod snowflake;
mod typed_id;

/// The sea-orm error for a number that is not an ID (`into`, the type's name); its message
/// names the number (and the ID's type).
fn out_of_range(from: &'static str, into: &'static str, err: crate::error::Error) -> DbErr {
    DbErr::TryIntoErr {
        from,
        into,
        source: Arc::new(err),
    }
}

/// The ID for a value read from a `BIGINT` column, or an error naming the value.
fn decoded<X: TryFrom<i64, Error = crate::error::Error>>(
    value: i64,
    into: &'static str,
) -> Result<X, TryGetError> {
    X::try_from(value).map_err(|err| TryGetError::DbErr(out_of_range("i64", into, err)))
}

/// What every ID column type does with `Value`s: `id` round-trips; `NULL` (which is
/// `Nullable::null()`), a value of another kind (`other`) and a string are refused; its
/// arrays are `array`; its active value is the ID.
#[cfg(test)]
fn assert_values_round_trip<X>(
    id: X,
    null: sea_orm::Value,
    other: sea_orm::Value,
    array: sea_orm::sea_query::ArrayType,
) where
    X: sea_orm::sea_query::ValueType
        + sea_orm::sea_query::Nullable
        + sea_orm::IntoActiveValue<X>
        + Into<sea_orm::Value>
        + Copy
        + PartialEq
        + std::fmt::Debug,
{
    use sea_orm::sea_query::{Nullable, ValueType};
    assert_eq!(<X as ValueType>::try_from(id.into()).unwrap(), id);
    assert_eq!(<X as Nullable>::null(), null);
    assert!(<X as ValueType>::try_from(null).is_err());
    assert!(<X as ValueType>::try_from(other).is_err());
    assert!(<X as ValueType>::try_from(sea_orm::Value::String(Some("7".into()))).is_err());
    assert_eq!(<X as ValueType>::array_type(), array);
    assert_eq!(id.into_active_value(), sea_orm::ActiveValue::Set(id));
}
