//! MySQL and MariaDB: `BIGINT` and `BIGINT UNSIGNED`.
//!
//! sqlx's `i64` refuses `UNSIGNED` columns and its `u64` refuses signed ones, so an ID accepts
//! both and decodes each with its own range check: a negative signed value, or an unsigned value
//! above `i64::MAX`, is an error naming the value.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::mysql::{MySqlTypeInfo, MySqlValueRef};
use sqlx::{Decode, Encode, MySql, Type, ValueRef};

use crate::snowflake::SnowflakeId;

impl Type<MySql> for SnowflakeId {
    fn type_info() -> MySqlTypeInfo {
        <i64 as Type<MySql>>::type_info()
    }

    fn compatible(ty: &MySqlTypeInfo) -> bool {
        <i64 as Type<MySql>>::compatible(ty) || <u64 as Type<MySql>>::compatible(ty)
    }
}

impl Encode<'_, MySql> for SnowflakeId {
    fn encode_by_ref(&self, buf: &mut Vec<u8>) -> Result<IsNull, BoxDynError> {
        <i64 as Encode<'_, MySql>>::encode_by_ref(&self.get(), buf)
    }

    fn size_hint(&self) -> usize {
        std::mem::size_of::<i64>()
    }
}

impl<'r> Decode<'r, MySql> for SnowflakeId {
    fn decode(value: MySqlValueRef<'r>) -> Result<Self, BoxDynError> {
        let unsigned = <u64 as Type<MySql>>::compatible(&value.type_info());
        if unsigned {
            let raw = <u64 as Decode<'r, MySql>>::decode(value)?;
            SnowflakeId::try_from(raw).map_err(Into::into)
        } else {
            super::decoded_i64(<i64 as Decode<'r, MySql>>::decode(value)?)
        }
    }
}
