//! [`Id<T>`](crate::Id) as a sea-orm 2.0 `BIGINT` column type: the impls
//! [`SnowflakeId`](crate::SnowflakeId) has (`Value`, `ValueType`, `Nullable`, `TryGetable`,
//! `TryFromU64` for primary keys, `IntoActiveValue`; with `sea-orm-postgres-array` also
//! `Vec<Id<T>>` columns and `eq_any`), with the same range check on every read. A value that is
//! not an ID is a `DbErr::TryIntoErr` naming it and `T`.
//!
//! ```
//! use idgen_core::Id;
//! use sea_orm::sea_query::{ColumnType, ValueType};
//! use sea_orm::{TryFromU64, Value};
//!
//! struct Order;
//! let id = Id::<Order>::new(112719806108546862).unwrap();
//! assert_eq!(Value::from(id), Value::BigInt(Some(112719806108546862)));
//! assert_eq!(Value::from(None::<Id<Order>>), Value::BigInt(None));
//! assert_eq!(<Id<Order> as ValueType>::column_type(), ColumnType::BigInteger);
//! assert_eq!(<Id<Order> as ValueType>::try_from(Value::from(id)).unwrap(), id);
//! assert!(<Id<Order> as ValueType>::try_from(Value::BigInt(Some(-1))).is_err());
//!
//! let err = Id::<Order>::try_from_u64(u64::MAX).unwrap_err();
//! assert!(err.to_string().contains("18446744073709551615 is not an ID of type Order"), "{err}");
//! ```

use std::sync::Arc;

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, ValueType, ValueTypeErr};
use sea_orm::{
    ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryFromU64, TryGetError, TryGetable,
    Value,
};

use crate::Id;

/// The sea-orm error for a number that is not an ID; its message names the number and `T`.
fn out_of_range(from: &'static str, err: crate::Error) -> DbErr {
    DbErr::TryIntoErr {
        from,
        into: "Id",
        source: Arc::new(err),
    }
}

/// The ID for a value read from a `BIGINT` column, or an error naming the value.
fn decoded<T: ?Sized>(value: i64) -> Result<Id<T>, TryGetError> {
    <Id<T> as TryFrom<i64>>::try_from(value)
        .map_err(|err| TryGetError::DbErr(out_of_range("i64", err)))
}

impl<T: ?Sized> From<Id<T>> for Value {
    fn from(id: Id<T>) -> Self {
        Value::BigInt(Some(id.get()))
    }
}

impl<T: ?Sized> Nullable for Id<T> {
    fn null() -> Value {
        Value::BigInt(None)
    }
}

impl<T: ?Sized> ValueType for Id<T> {
    fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
        let value = <i64 as ValueType>::try_from(v)?;
        <Id<T> as TryFrom<i64>>::try_from(value).map_err(|_| ValueTypeErr)
    }

    fn type_name() -> String {
        "Id".to_owned()
    }

    fn array_type() -> ArrayType {
        ArrayType::BigInt
    }

    fn column_type() -> ColumnType {
        ColumnType::BigInteger
    }
}

impl<T: ?Sized> TryGetable for Id<T> {
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
        decoded(<i64 as TryGetable>::try_get_by(res, index)?)
    }
}

impl<T: ?Sized> TryFromU64 for Id<T> {
    fn try_from_u64(n: u64) -> Result<Self, DbErr> {
        <Id<T> as TryFrom<u64>>::try_from(n).map_err(|err| out_of_range("u64", err))
    }
}

impl<T: ?Sized> IntoActiveValue<Id<T>> for Id<T> {
    fn into_active_value(self) -> ActiveValue<Id<T>> {
        ActiveValue::Set(self)
    }
}

#[cfg(feature = "sea-orm-postgres-array")]
impl<T: ?Sized> sea_orm::sea_query::postgres_array::NotU8 for Id<T> {}

#[cfg(feature = "sea-orm-postgres-array")]
impl<T: ?Sized> sea_orm::TryGetableArray for Id<T> {
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Vec<Self>, TryGetError> {
        <Vec<i64> as TryGetable>::try_get_by(res, index)?
            .into_iter()
            .map(decoded)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Order;

    #[test]
    fn decoding_a_negative_value_is_an_error_naming_it_and_the_type() {
        let err = DbErr::from(decoded::<Order>(-5).unwrap_err());
        assert_eq!(
            err.to_string(),
            "Error converting `i64` into `Id`: -5 is not an ID of type Order: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        assert_eq!(decoded::<Order>(0).unwrap(), Id::new(0).unwrap());
        assert_eq!(decoded::<Order>(i64::MAX).unwrap(), Id::MAX);
    }

    #[test]
    fn value_round_trips_and_rejects_other_values() {
        let id = Id::<Order>::new(7).unwrap();
        assert_eq!(
            <Id<Order> as ValueType>::try_from(Value::from(id)).unwrap(),
            id
        );
        assert!(<Id<Order> as ValueType>::try_from(Value::BigInt(None)).is_err());
        assert!(<Id<Order> as ValueType>::try_from(Value::BigInt(Some(i64::MIN))).is_err());
        assert!(<Id<Order> as ValueType>::try_from(Value::String(Some("7".into()))).is_err());
        assert_eq!(<Id<Order> as Nullable>::null(), Value::BigInt(None));
        assert_eq!(id.into_active_value(), ActiveValue::Set(id));
        assert_eq!(Id::<Order>::try_from_u64(7).unwrap(), id);
    }
}
