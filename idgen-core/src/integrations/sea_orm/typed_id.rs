//! [`Id<T>`](crate::typed_id::Id) as a sea-orm 2.0 `BIGINT` column type: the impls
//! [`SnowflakeId`](crate::snowflake::SnowflakeId) has (`Value`, `ValueType`, `Nullable`, `TryGetable`,
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

use crate::typed_id::Id;

bigint_column_type!(impl[T: ?Sized] Id<T>, type_name "Id");

#[cfg(test)]
mod tests {
    use sea_orm::sea_query::ArrayType;
    use sea_orm::{DbErr, TryFromU64, Value};

    use super::*;
    use crate::integrations::sea_orm::assert_values_round_trip;

    struct Order;

    fn decoded<T: ?Sized>(value: i64) -> Result<Id<T>, sea_orm::TryGetError> {
        crate::integrations::sea_orm::decoded(value, "Id")
    }

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
        assert_values_round_trip(
            id,
            Value::BigInt(None),
            Value::BigInt(Some(i64::MIN)),
            ArrayType::BigInt,
        );
        assert_eq!(Id::<Order>::try_from_u64(7).unwrap(), id);
    }
}
