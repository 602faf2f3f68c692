//! SQLite: a `BLOB` of 16 bytes.
//!
//! Written as sqlx writes a `Uuid` (a 16-byte blob). Read only from `BLOB` values (sqlx's `Uuid`
//! also takes `TEXT`, whose bytes are not an ID) and checked here, so a blob of another length is
//! an error naming it.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Sqlite, Type};
use uuid::Uuid;

use crate::public_id::PublicId;

impl<T: ?Sized> Type<Sqlite> for PublicId<T> {
    fn type_info() -> SqliteTypeInfo {
        <Uuid as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        *ty == <[u8] as Type<Sqlite>>::type_info()
    }
}

impl<T: ?Sized> Encode<'_, Sqlite> for PublicId<T> {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <Uuid as Encode<'_, Sqlite>>::encode_by_ref(&self.uuid(), buf)
    }
}

impl<'r, T: ?Sized> Decode<'r, Sqlite> for PublicId<T> {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        super::from_column_bytes(<&'r [u8] as Decode<'r, Sqlite>>::decode(value)?)
    }
}
