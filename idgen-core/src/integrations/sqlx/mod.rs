//! [`SnowflakeId`](crate::SnowflakeId) as an sqlx 0.9 column type.
//!
//! | feature         | database          | column types                        |
//! |-----------------|-------------------|-------------------------------------|
//! | `sqlx-postgres` | PostgreSQL        | `INT8`/`BIGINT`, arrays `INT8[]`     |
//! | `sqlx-mysql`    | MySQL, MariaDB    | `BIGINT`, `BIGINT UNSIGNED`          |
//! | `sqlx-sqlite`   | SQLite            | `INTEGER`                            |
//!
//! Values are written as a signed 64-bit integer. Reading checks the range: a negative value, or
//! an unsigned value above `i64::MAX`, is a decode error whose message names the value
//! ([`Error::IdOutOfRange`](crate::Error::IdOutOfRange)); it never panics and never wraps.
//! `Option<SnowflakeId>` reads and writes `NULL` through sqlx's own impls.

#[cfg(feature = "sqlx-mysql")]
mod mysql;
#[cfg(feature = "sqlx-postgres")]
mod postgres;
#[cfg(feature = "sqlx-sqlite")]
mod sqlite;

use crate::SnowflakeId;

/// The ID for a value read from a signed column, or a decode error naming the value.
#[cfg_attr(
    not(any(
        feature = "sqlx-postgres",
        feature = "sqlx-mysql",
        feature = "sqlx-sqlite"
    )),
    allow(dead_code)
)]
fn decoded_i64(value: i64) -> Result<SnowflakeId, sqlx::error::BoxDynError> {
    SnowflakeId::try_from(value).map_err(Into::into)
}
