//! [`SnowflakeId`](crate::snowflake::SnowflakeId) and [`PublicId`](crate::public_id::PublicId) as sqlx 0.9 column
//! types.
//!
//! | feature         | database          | `SnowflakeId`                    | `PublicId`               |
//! |-----------------|-------------------|----------------------------------|--------------------------|
//! | `sqlx-postgres` | PostgreSQL        | `INT8`/`BIGINT`, arrays `INT8[]` | `UUID`, arrays `UUID[]`  |
//! | `sqlx-mysql`    | MySQL, MariaDB    | `BIGINT`, `BIGINT UNSIGNED`      | `BINARY(16)`             |
//! | `sqlx-sqlite`   | SQLite            | `INTEGER`                        | `BLOB` of 16 bytes       |
//!
//! `PublicId` is described in [`public_id`]. Snowflake IDs are written as a signed 64-bit integer. Reading checks the range: a negative value, or
//! an unsigned value above `i64::MAX`, is a decode error whose message names the value
//! ([`Error::IdOutOfRange`](crate::error::Error::IdOutOfRange)); it never panics and never wraps.
//! `Option<SnowflakeId>` reads and writes `NULL` through sqlx's own impls.
//!
//! [`Id<T>`](crate::typed_id::Id) is the same column type as `SnowflakeId` on each database (see
//! `typed_id.rs`); its decode errors name `T`.

#[cfg(feature = "sqlx-mysql")]
mod mysql;
#[cfg(feature = "sqlx-postgres")]
mod postgres;
#[cfg(any(
    feature = "sqlx-postgres",
    feature = "sqlx-mysql",
    feature = "sqlx-sqlite"
))]
mod public_id;
#[cfg(feature = "sqlx-sqlite")]
mod sqlite;
mod typed_id;

use crate::snowflake::SnowflakeId;

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
