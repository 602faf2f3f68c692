//! [`Id<T>`](crate::typed_id::Id) as a diesel column type: `BigInt` on every backend, exactly as
//! [`SnowflakeId`] (the impls delegate to its), so it is a field of `Queryable`, `Selectable`
//! and `Insertable` structs, binds in `.eq(id)`, `.eq_any(ids)` and `find(id)`, and
//! `Option<Id<T>>` maps `NULL`. A value that is not an ID is a deserialization error naming it
//! and `T`.
//!
//! ```
//! use diesel::expression::AsExpression;
//! use diesel::sql_types::BigInt;
//! use idgen_core::Id;
//! struct Order;
//! let id = Id::<Order>::new(7).unwrap();
//! let _expression = <Id<Order> as AsExpression<BigInt>>::as_expression(id);
//! ```

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::BigInt;

use crate::snowflake::SnowflakeId;
use crate::typed_id::Id;

impl<T: ?Sized, DB: Backend> ToSql<BigInt, DB> for Id<T>
where
    SnowflakeId: ToSql<BigInt, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        <SnowflakeId as ToSql<BigInt, DB>>::to_sql(self.as_snowflake(), out)
    }
}

impl<T: ?Sized, DB: Backend> FromSql<BigInt, DB> for Id<T>
where
    SnowflakeId: FromSql<BigInt, DB>,
{
    fn from_sql(value: DB::RawValue<'_>) -> deserialize::Result<Self> {
        <SnowflakeId as FromSql<BigInt, DB>>::from_sql(value)
            .map(Id::from_snowflake)
            .map_err(Id::<T>::retype_boxed)
    }
}
