//! [`SnowflakeId`](crate::snowflake::SnowflakeId) as a sea-orm 2.0 `BIGINT` column type.
//!
//! The impls are those `#[derive(DeriveValueType)]` would write for a `BIGINT` newtype, plus a
//! range check on every read:
//!
//! * `From<SnowflakeId> for sea_orm::Value` (a `BIGINT` value) and, through sea-query,
//!   `From<Option<SnowflakeId>>` (`NULL` for `None`);
//! * `sea_query::ValueType` with column type `ColumnType::BigInteger` and array type `BigInt`,
//!   and `sea_query::Nullable`;
//! * `sea_orm::TryGetable`, so it is a field type of `DeriveEntityModel` models,
//!   `FromQueryResult` structs and `Option<SnowflakeId>` columns;
//! * `sea_orm::TryFromU64`, so it can be a primary key (`auto_increment = false`);
//! * `sea_orm::IntoActiveValue`.
//!
//! With feature `sea-orm-postgres-array` also `NotU8` and `TryGetableArray`, for
//! `Vec<SnowflakeId>` (`INT8[]`) columns and `Column::eq_any` on PostgreSQL.
//!
//! A value that is not an ID (negative, or above `i64::MAX` from `TryFromU64`) is an error whose
//! message names it: `DbErr::TryIntoErr` wrapping [`Error::IdOutOfRange`](crate::error::Error::IdOutOfRange).
//! Nothing here panics.
//!
//! ```
//! use idgen_core::SnowflakeId;
//! use sea_orm::sea_query::{ColumnType, Nullable, ValueType};
//! use sea_orm::{TryFromU64, Value};
//!
//! let id = SnowflakeId::new(112719806108546862).unwrap();
//! assert_eq!(Value::from(id), Value::BigInt(Some(112719806108546862)));
//! assert_eq!(Value::from(None::<SnowflakeId>), Value::BigInt(None));
//! assert_eq!(<SnowflakeId as Nullable>::null(), Value::BigInt(None));
//! assert_eq!(<SnowflakeId as ValueType>::column_type(), ColumnType::BigInteger);
//! assert_eq!(<SnowflakeId as ValueType>::try_from(Value::from(id)).unwrap(), id);
//! assert!(<SnowflakeId as ValueType>::try_from(Value::BigInt(Some(-1))).is_err());
//!
//! assert_eq!(SnowflakeId::try_from_u64(42)?, SnowflakeId::new(42).unwrap());
//! let err = SnowflakeId::try_from_u64(u64::MAX).unwrap_err();
//! assert!(err.to_string().contains("18446744073709551615 is not a Snowflake ID"), "{err}");
//! # Ok::<(), sea_orm::DbErr>(())
//! ```

use crate::snowflake::SnowflakeId;

bigint_column_type!(impl[] SnowflakeId, type_name "SnowflakeId");

#[cfg(test)]
mod tests {
    use sea_orm::sea_query::ArrayType;
    use sea_orm::{DbErr, TryFromU64, Value};

    use super::*;
    use crate::integrations::sea_orm::assert_values_round_trip;

    fn decoded(value: i64) -> Result<SnowflakeId, sea_orm::TryGetError> {
        crate::integrations::sea_orm::decoded(value, "SnowflakeId")
    }

    #[test]
    fn decoding_a_negative_value_is_an_error_naming_it() {
        let err = DbErr::from(decoded(-5).unwrap_err());
        assert!(matches!(
            err,
            DbErr::TryIntoErr {
                from: "i64",
                into: "SnowflakeId",
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "Error converting `i64` into `SnowflakeId`: -5 is not a Snowflake ID: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        assert_eq!(decoded(0).unwrap(), SnowflakeId::new(0).unwrap());
        assert_eq!(decoded(i64::MAX).unwrap(), SnowflakeId::MAX);
    }

    #[test]
    fn try_from_u64_accepts_every_id_and_nothing_above() {
        assert_eq!(
            SnowflakeId::try_from_u64(i64::MAX as u64).unwrap(),
            SnowflakeId::MAX
        );
        let err = SnowflakeId::try_from_u64(i64::MAX as u64 + 1).unwrap_err();
        assert!(
            err.to_string()
                .contains("9223372036854775808 is not a Snowflake ID"),
            "{err}"
        );
    }

    #[test]
    fn value_round_trips_and_rejects_other_values() {
        assert_values_round_trip(
            SnowflakeId::new(7).unwrap(),
            Value::BigInt(None),
            Value::BigInt(Some(i64::MIN)),
            ArrayType::BigInt,
        );
    }
}
