//! MySQL and MariaDB: `BINARY(16)`.
//!
//! Written as sqlx writes a `Uuid` (the 16 bytes). Read as bytes and checked here, so a value of
//! another length is an error naming it. (A `BINARY(16)` column pads a shorter value written by
//! other code with zero bytes, so such a value reads as 16 bytes; `VARBINARY` and `BLOB` keep the
//! length, and the check catches it.)

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::mysql::{MySqlTypeInfo, MySqlValueRef};
use sqlx::{Decode, Encode, MySql, Type};
use uuid::Uuid;

use crate::public_id::PublicId;

impl<T: ?Sized> Type<MySql> for PublicId<T> {
    fn type_info() -> MySqlTypeInfo {
        <Uuid as Type<MySql>>::type_info()
    }

    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <Uuid as Type<MySql>>::compatible(ty)
    }
}

impl<T: ?Sized> Encode<'_, MySql> for PublicId<T> {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <Uuid as Encode<'_, MySql>>::encode_by_ref(&self.uuid(), buf)
    }

    fn size_hint(&self) -> usize {
        // One length byte, then the 16 bytes.
        17
    }
}

impl<'r, T: ?Sized> Decode<'r, MySql> for PublicId<T> {
    fn decode(value: MySqlValueRef<'r>) -> Result<Self, BoxDynError> {
        super::from_column_bytes(<&'r [u8] as Decode<'r, MySql>>::decode(value)?)
    }
}
