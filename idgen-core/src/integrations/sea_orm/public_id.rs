//! [`PublicId`](crate::public_id::PublicId) as a sea-orm 2.0 column type: 16 bytes, sea-orm's UUID
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

use sea_orm::{DbErr, TryFromU64};
use uuid::Uuid;

use crate::public_id::PublicId;

column_type! {
    impl[T: ?Sized] PublicId<T>,
    stored as Uuid, in Value::Uuid,
    encode |id| id.uuid(),
    decode |uuid| Ok(PublicId::from_uuid(uuid)),
    type_name "PublicId", array Uuid, column Uuid,
}

impl<T: ?Sized> TryFromU64 for PublicId<T> {
    fn try_from_u64(n: u64) -> Result<Self, DbErr> {
        Err(DbErr::Custom(format!(
            "auto-increment value {n} is not a public ID: a PublicId primary key must be set in \
             the ActiveModel before insert (PublicId::new(), or idgen_seaorm::fill_ids_on_insert!)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use sea_orm::Value;
    use sea_orm::sea_query::ArrayType;

    use super::*;
    use crate::integrations::sea_orm::assert_values_round_trip;

    #[test]
    fn values_round_trip_and_other_values_are_refused() {
        assert_values_round_trip(
            PublicId::<()>::new(),
            Value::Uuid(None),
            Value::BigInt(Some(1)),
            ArrayType::Uuid,
        );
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
