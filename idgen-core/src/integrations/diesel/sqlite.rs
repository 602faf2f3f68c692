//! SQLite: `INTEGER`.
//!
//! SQLite stores any value in any column, and diesel's own `i64` reads a REAL or a text as
//! whatever SQLite coerces it to (`'abc'` becomes 0). An ID looks at the stored type first: an
//! integer is range-checked, a text must be exact decimal digits, and a REAL or BLOB is refused,
//! each naming the value.

use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::BigInt;
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};

use super::not_an_integer;
use crate::snowflake::SnowflakeId;
use crate::snowflake::parse_decimal;

impl ToSql<BigInt, Sqlite> for SnowflakeId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.get());
        Ok(IsNull::No)
    }
}

impl FromSql<BigInt, Sqlite> for SnowflakeId {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        match value.value_type() {
            Some(SqliteType::Text) => Ok(parse_decimal(value.read_text())?),
            Some(SqliteType::Double | SqliteType::Float) => {
                Err(not_an_integer(value.read_double(), "floating-point (REAL)").into())
            }
            Some(SqliteType::Binary) => {
                let len = value.read_blob().len();
                Err(not_an_integer(format_args!("a {len}-byte BLOB"), "BLOB").into())
            }
            // INTEGER (NULL never reaches `from_sql`: diesel maps it to `None` first).
            _ => Ok(SnowflakeId::try_from(value.read_long())?),
        }
    }
}
