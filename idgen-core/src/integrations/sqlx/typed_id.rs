//! [`Id<T>`](crate::typed_id::Id) as an sqlx column type: exactly what [`SnowflakeId`] is on every
//! database (PostgreSQL `INT8` with `INT8[]` arrays, MySQL/MariaDB `BIGINT` and
//! `BIGINT UNSIGNED`, SQLite `INTEGER`), because every impl delegates to `SnowflakeId`'s.
//!
//! Reading checks the same things; a value that is not an ID (negative, above `i64::MAX`) is a
//! decode error naming the value and `T`, e.g. `-5 is not an ID of type Order: …`.
//!
//! ```
//! use idgen_core::{Id, SnowflakeId};
//! # #[cfg(feature = "sqlx-sqlite")] {
//! use sqlx::{Sqlite, Type};
//! struct Order;
//! assert_eq!(<Id<Order> as Type<Sqlite>>::type_info(), <SnowflakeId as Type<Sqlite>>::type_info());
//! # }
//! ```

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

use crate::snowflake::SnowflakeId;
use crate::typed_id::Id;

impl<T: ?Sized, DB: Database> Type<DB> for Id<T>
where
    SnowflakeId: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <SnowflakeId as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <SnowflakeId as Type<DB>>::compatible(ty)
    }
}

impl<'q, T: ?Sized, DB: Database> Encode<'q, DB> for Id<T>
where
    SnowflakeId: Encode<'q, DB>,
{
    fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        self.to_snowflake().encode_by_ref(buf)
    }

    fn size_hint(&self) -> usize {
        self.to_snowflake().size_hint()
    }
}

impl<'r, T: ?Sized, DB: Database> Decode<'r, DB> for Id<T>
where
    SnowflakeId: Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
        match <SnowflakeId as Decode<'r, DB>>::decode(value) {
            Ok(id) => Ok(Id::from_snowflake(id)),
            Err(err) => Err(Id::<T>::retype_boxed(err)),
        }
    }
}

#[cfg(feature = "sqlx-postgres")]
impl<T: ?Sized> sqlx::postgres::PgHasArrayType for Id<T> {
    fn array_type_info() -> sqlx::postgres::PgTypeInfo {
        <SnowflakeId as sqlx::postgres::PgHasArrayType>::array_type_info()
    }

    fn array_compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <SnowflakeId as sqlx::postgres::PgHasArrayType>::array_compatible(ty)
    }
}
