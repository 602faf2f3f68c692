//! [`PublicId`] as `Binary` (16 bytes: `BYTEA`, `BINARY(16)`, `BLOB`) on every backend, and as
//! `Uuid` on PostgreSQL.

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Binary;

use crate::error::Error;
use crate::public_id::{PublicId, PublicIdPrefix};

impl<T: PublicIdPrefix + ?Sized, DB: Backend> ToSql<Binary, DB> for PublicId<T>
where
    [u8]: ToSql<Binary, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        <[u8] as ToSql<Binary, DB>>::to_sql(self.as_bytes().as_slice(), out)
    }
}

impl<T: ?Sized, DB: Backend> FromSql<Binary, DB> for PublicId<T>
where
    Vec<u8>: FromSql<Binary, DB>,
{
    fn from_sql(value: DB::RawValue<'_>) -> deserialize::Result<Self> {
        let bytes = <Vec<u8> as FromSql<Binary, DB>>::from_sql(value)?;
        from_slice(&bytes)
    }
}

/// The ID of exactly 16 bytes, or an error naming the length.
fn from_slice<T: ?Sized>(bytes: &[u8]) -> deserialize::Result<PublicId<T>> {
    let array: [u8; 16] = bytes
        .try_into()
        .map_err(|_| Error::PublicIdByteLength { found: bytes.len() })?;
    Ok(PublicId::from_bytes(array))
}

#[cfg(feature = "diesel-postgres")]
mod postgres {
    use std::io::Write;

    use diesel::deserialize::{self, FromSql};
    use diesel::pg::{Pg, PgValue};
    use diesel::serialize::{self, IsNull, Output, ToSql};
    use diesel::sql_types::Uuid;

    use crate::public_id::{PublicId, PublicIdPrefix};

    /// PostgreSQL's binary form of a `UUID` is its 16 bytes.
    impl<T: PublicIdPrefix + ?Sized> ToSql<Uuid, Pg> for PublicId<T> {
        fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
            out.write_all(self.as_bytes())?;
            Ok(IsNull::No)
        }
    }

    impl<T: ?Sized> FromSql<Uuid, Pg> for PublicId<T> {
        fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
            super::from_slice(value.as_bytes())
        }
    }
}
