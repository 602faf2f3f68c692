//! PostgreSQL: `INT8` (`BIGINT`), and `INT8[]` for `WHERE id = ANY($1)`.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueRef};
use sqlx::{Decode, Encode, Postgres, Type};

use crate::snowflake::SnowflakeId;

impl Type<Postgres> for SnowflakeId {
    fn type_info() -> PgTypeInfo {
        <i64 as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <i64 as Type<Postgres>>::compatible(ty)
    }
}

impl PgHasArrayType for SnowflakeId {
    fn array_type_info() -> PgTypeInfo {
        <i64 as PgHasArrayType>::array_type_info()
    }

    fn array_compatible(ty: &PgTypeInfo) -> bool {
        <i64 as PgHasArrayType>::array_compatible(ty)
    }
}

impl Encode<'_, Postgres> for SnowflakeId {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<'_, Postgres>>::encode_by_ref(&self.get(), buf)
    }

    fn size_hint(&self) -> usize {
        std::mem::size_of::<i64>()
    }
}

impl<'r> Decode<'r, Postgres> for SnowflakeId {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        super::decoded_i64(<i64 as Decode<'r, Postgres>>::decode(value)?)
    }
}
