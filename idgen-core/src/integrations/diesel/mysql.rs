//! MySQL and MariaDB: `BIGINT`, also read from `BIGINT UNSIGNED` and the narrower integers.
//!
//! diesel's own `i64` truncates a floating-point value (1.5 reads as 1); an ID refuses it
//! instead, and refuses an unsigned value above `i64::MAX`, naming the value.

use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlType, MysqlValue};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::{BigInt, Double, Unsigned};

use super::not_an_integer;
use crate::snowflake::SnowflakeId;
use crate::snowflake::parse_decimal;

impl ToSql<BigInt, Mysql> for SnowflakeId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Mysql>) -> serialize::Result {
        <i64 as ToSql<BigInt, Mysql>>::to_sql(&self.get(), &mut out.reborrow())
    }
}

impl FromSql<BigInt, Mysql> for SnowflakeId {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        match value.value_type() {
            MysqlType::Tiny | MysqlType::Short | MysqlType::Long | MysqlType::LongLong => {
                let raw = <i64 as FromSql<BigInt, Mysql>>::from_sql(value)?;
                Ok(SnowflakeId::try_from(raw)?)
            }
            MysqlType::UnsignedTiny
            | MysqlType::UnsignedShort
            | MysqlType::UnsignedLong
            | MysqlType::UnsignedLongLong => {
                let raw = <u64 as FromSql<Unsigned<BigInt>, Mysql>>::from_sql(value)?;
                Ok(SnowflakeId::try_from(raw)?)
            }
            MysqlType::Float | MysqlType::Double => {
                let raw = <f64 as FromSql<Double, Mysql>>::from_sql(value)?;
                Err(not_an_integer(raw, "floating-point").into())
            }
            // DECIMAL and text arrive as their decimal text: exact digits are an ID, anything
            // else (a fraction, a sign, letters) is refused with the text.
            MysqlType::Numeric | MysqlType::String => {
                let text = String::from_utf8_lossy(value.as_bytes());
                Ok(parse_decimal(&text)?)
            }
            other => Err(not_an_integer(
                String::from_utf8_lossy(value.as_bytes()),
                mysql_kind(other),
            )
            .into()),
        }
    }
}

/// A name for a MySQL value type that cannot hold an ID.
fn mysql_kind(ty: MysqlType) -> &'static str {
    match ty {
        MysqlType::Time => "TIME",
        MysqlType::Date => "DATE",
        MysqlType::DateTime => "DATETIME",
        MysqlType::Timestamp => "TIMESTAMP",
        MysqlType::Blob => "BLOB",
        MysqlType::Bit => "BIT",
        MysqlType::Set => "SET",
        MysqlType::Enum => "ENUM",
        _ => "non-integer",
    }
}
