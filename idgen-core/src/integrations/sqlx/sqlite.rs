//! SQLite: `INTEGER`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArgumentsBuffer, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Sqlite, Type};

use crate::snowflake::SnowflakeId;

impl Type<Sqlite> for SnowflakeId {
    fn type_info() -> SqliteTypeInfo {
        <i64 as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <i64 as Type<Sqlite>>::compatible(ty)
    }
}

impl Encode<'_, Sqlite> for SnowflakeId {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<'_, Sqlite>>::encode_by_ref(&self.get(), buf)
    }
}

impl<'r> Decode<'r, Sqlite> for SnowflakeId {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        super::decoded_i64(<i64 as Decode<'r, Sqlite>>::decode(value)?)
    }
}
