//! PostgreSQL: `BIGINT` (`INT8`).

use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::BigInt;

use crate::snowflake::SnowflakeId;

impl ToSql<BigInt, Pg> for SnowflakeId {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <i64 as ToSql<BigInt, Pg>>::to_sql(&self.get(), &mut out.reborrow())
    }
}

impl FromSql<BigInt, Pg> for SnowflakeId {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        let raw = <i64 as FromSql<BigInt, Pg>>::from_sql(value)?;
        Ok(SnowflakeId::try_from(raw)?)
    }
}
