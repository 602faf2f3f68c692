//! [`SnowflakeId`](crate::snowflake::SnowflakeId) as a diesel 2.3 column type.
//!
//! | feature           | database       | SQL type (`table!`) | column        |
//! |-------------------|----------------|---------------------|---------------|
//! | `diesel-postgres` | PostgreSQL     | `BigInt`            | `BIGINT`/`INT8` |
//! | `diesel-mysql`    | MySQL, MariaDB | `BigInt`            | `BIGINT` (also reads `BIGINT UNSIGNED`) |
//! | `diesel-sqlite`   | SQLite         | `BigInt`            | `INTEGER`     |
//!
//! `SnowflakeId` derives diesel's `AsExpression` and `FromSqlRow` (feature `diesel`), so it is a
//! field of `Queryable`, `Selectable` and `Insertable` structs, binds in `.eq(id)`,
//! `.eq_any(ids)` and `find(id)`, and `Option<SnowflakeId>` maps `NULL` on a
//! `Nullable<BigInt>` column.
//!
//! [`PublicId<T>`](crate::public_id::PublicId) derives the same traits for two SQL types: `Binary`
//! (`BYTEA`, MySQL/MariaDB `BINARY(16)`, SQLite `BLOB`; on every backend) and, with
//! `diesel-postgres`, `Uuid` (PostgreSQL `UUID`). Its 16 bytes are written as they are; a value
//! of another length is a deserialization error naming the length
//! ([`Error::PublicIdByteLength`](crate::error::Error::PublicIdByteLength)).
//!
//! [`Id<T>`](crate::typed_id::Id) is the same `BigInt` column type as `SnowflakeId` on each backend;
//! its errors name `T`.
//!
//! Values are written as a signed 64-bit integer. Reading checks the value: a negative number
//! ([`Error::IdOutOfRange`](crate::error::Error::IdOutOfRange)), a floating-point or binary value
//! ([`Error::NotAnInteger`](crate::error::Error::NotAnInteger)) or a text that is not a decimal ID
//! ([`Error::InvalidIdText`](crate::error::Error::InvalidIdText)) is a deserialization error whose
//! message names the value; it never panics, never truncates and never wraps.

#[cfg(feature = "diesel-mysql")]
mod mysql;
#[cfg(feature = "diesel-postgres")]
mod postgres;
mod public_id;
#[cfg(feature = "diesel-sqlite")]
mod sqlite;
mod typed_id;

/// The error for a non-integer value, naming it (cut to 64 characters).
#[cfg_attr(
    not(any(feature = "diesel-mysql", feature = "diesel-sqlite")),
    allow(dead_code)
)]
fn not_an_integer(value: impl std::fmt::Display, kind: &'static str) -> crate::error::Error {
    crate::error::Error::NotAnInteger {
        value: value.to_string().chars().take(64).collect(),
        what: "a Snowflake ID".to_owned(),
        kind,
    }
}
