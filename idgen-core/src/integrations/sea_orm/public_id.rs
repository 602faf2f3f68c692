//! [`PublicId`](crate::PublicId) as a sea-orm 2.0 column type: 16 bytes, sea-orm's UUID
//! (`ColumnType::Uuid`: PostgreSQL `uuid`, MySQL/MariaDB `binary(16)`, SQLite a 16-byte `BLOB`
//! in a `uuid_text` column).
//!
//! * `From<PublicId<T>> for sea_orm::Value` (`Value::Uuid`), `Nullable`, and
//!   `sea_query::ValueType`, so it is an entity field, `Option<PublicId<T>>` is `NULL`, and it
//!   filters (`Column::PublicId.eq(id)`);
//! * `TryGetable`, `IntoActiveValue`;
//! * `TryFromU64`, so it compiles as a primary key. A database never makes a public ID, so the
//!   conversion from an auto-increment value always fails, with a message saying to set the ID
//!   in the ActiveModel. Set it (`PublicId::new()`, or `fill_ids_on_insert!` in idgen-seaorm)
//!   and sea-orm never asks.
//!
//! ```
//! use idgen_core::{PublicId, PublicIdPrefix};
//! use sea_orm::sea_query::{ColumnType, ValueType};
//! use sea_orm::{TryFromU64, Value};
//!
//! struct Order;
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! let id = PublicId::<Order>::new();
//! assert_eq!(Value::from(id), Value::Uuid(Some(id.uuid())));
//! assert_eq!(Value::from(None::<PublicId<Order>>), Value::Uuid(None));
//! assert_eq!(<PublicId<Order> as ValueType>::column_type(), ColumnType::Uuid);
//! assert_eq!(<PublicId<Order> as ValueType>::try_from(Value::from(id)).unwrap(), id);
//!
//! let err = PublicId::<Order>::try_from_u64(7).unwrap_err();
//! assert!(err.to_string().contains("auto-increment value 7 is not a public ID"), "{err}");
//! ```

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, ValueType, ValueTypeErr};
use sea_orm::{
    ActiveValue, ColIdx, DbErr, IntoActiveValue, QueryResult, TryFromU64, TryGetError, TryGetable,
    Value,
};
use uuid::Uuid;

use crate::PublicId;

impl<T: ?Sized> From<PublicId<T>> for Value {
    fn from(id: PublicId<T>) -> Self {
        Value::Uuid(Some(id.uuid()))
    }
}

impl<T: ?Sized> Nullable for PublicId<T> {
    fn null() -> Value {
        Value::Uuid(None)
    }
}

impl<T: ?Sized> ValueType for PublicId<T> {
    fn try_from(v: Value) -> Result<Self, ValueTypeErr> {
        <Uuid as ValueType>::try_from(v).map(PublicId::from_uuid)
    }

    fn type_name() -> String {
        "PublicId".to_owned()
    }

    fn array_type() -> ArrayType {
        ArrayType::Uuid
    }

    fn column_type() -> ColumnType {
        ColumnType::Uuid
    }
}

impl<T: ?Sized> TryGetable for PublicId<T> {
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
        <Uuid as TryGetable>::try_get_by(res, index).map(PublicId::from_uuid)
    }
}

impl<T: ?Sized> TryFromU64 for PublicId<T> {
    fn try_from_u64(n: u64) -> Result<Self, DbErr> {
        Err(DbErr::Custom(format!(
            "auto-increment value {n} is not a public ID: a PublicId primary key must be set in \
             the ActiveModel before insert (PublicId::new(), or idgen_seaorm::fill_ids_on_insert!)"
        )))
    }
}

impl<T: ?Sized> IntoActiveValue<PublicId<T>> for PublicId<T> {
    fn into_active_value(self) -> ActiveValue<PublicId<T>> {
        ActiveValue::Set(self)
    }
}

#[cfg(feature = "sea-orm-postgres-array")]
impl<T: ?Sized> sea_orm::sea_query::postgres_array::NotU8 for PublicId<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_and_other_values_are_refused() {
        let id = PublicId::<()>::new();
        assert_eq!(
            <PublicId<()> as ValueType>::try_from(Value::from(id)).unwrap(),
            id
        );
        assert!(<PublicId<()> as ValueType>::try_from(Value::Uuid(None)).is_err());
        assert!(<PublicId<()> as ValueType>::try_from(Value::BigInt(Some(1))).is_err());
        assert_eq!(<PublicId<()> as Nullable>::null(), Value::Uuid(None));
        assert_eq!(<PublicId<()> as ValueType>::array_type(), ArrayType::Uuid);
        assert_eq!(id.into_active_value(), ActiveValue::Set(id));
    }

    #[test]
    fn try_from_u64_always_fails_naming_the_value() {
        for n in [0, 1, u64::MAX] {
            let err = PublicId::<()>::try_from_u64(n).unwrap_err().to_string();
            assert!(
                err.contains(&format!("auto-increment value {n} is not a public ID")),
                "{err}"
            );
        }
    }
}
