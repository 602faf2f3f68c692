//! # idgen-sqlx
//!
//! idgen for [sqlx](https://docs.rs/sqlx/0.9) 0.9 users: everything of `idgen-core`
//! (re-exported, so this is the one crate to depend on), with [`SnowflakeId`] as a column type.
//!
//! ```toml
//! idgen-sqlx = { version = "0.1", features = ["postgres"] }   # and/or "mysql", "sqlite"
//! ```
//!
//! | feature    | database       | column types for `SnowflakeId`                 |
//! |------------|----------------|-------------------------------------------------|
//! | `postgres` | PostgreSQL     | `BIGINT`/`INT8`; `INT8[]` for `= ANY($1)`       |
//! | `mysql`    | MySQL, MariaDB | `BIGINT`, `BIGINT UNSIGNED`                     |
//! | `sqlite`   | SQLite         | `INTEGER` (sqlx's bundled SQLite)               |
//!
//! `runtime-tokio` (default) turns on sqlx's tokio runtime.
//!
//! `SnowflakeId` implements `sqlx::Type`, `Encode` and `Decode`, so it binds, decodes, works as a
//! field of `#[derive(sqlx::FromRow)]` structs, and `Option<SnowflakeId>` maps `NULL`. A value
//! that is not an ID (negative, or above `i64::MAX` in a `BIGINT UNSIGNED` column) is a decode
//! error naming the value, never a panic:
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::SnowflakeId;
//!
//! #[derive(Debug, sqlx::FromRow)]
//! struct Order {
//!     id: SnowflakeId,
//!     parent: Option<SnowflakeId>,
//! }
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
//! sqlx::query("CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER)").execute(&pool).await?;
//! let id = SnowflakeId::new(112719806108546862).unwrap();
//! sqlx::query("INSERT INTO orders VALUES (?, ?)").bind(id).bind(None::<SnowflakeId>).execute(&pool).await?;
//!
//! let order: Order = sqlx::query_as("SELECT id, parent FROM orders").fetch_one(&pool).await?;
//! assert_eq!((order.id, order.parent), (id, None));
//!
//! sqlx::query("INSERT INTO orders VALUES (-5, NULL)").execute(&pool).await?;
//! let err = sqlx::query_as::<_, Order>("SELECT id, parent FROM orders WHERE id < 0")
//!     .fetch_one(&pool)
//!     .await
//!     .unwrap_err();
//! assert!(err.to_string().contains("-5 is not a Snowflake ID"));
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! ## The `query!` / `query_as!` macros
//!
//! The compile-time macros know sqlx's own types only, so name `SnowflakeId` with a type
//! override in the column alias (the value is still checked when decoded):
//!
//! ```text
//! // PostgreSQL and SQLite: "name: Type" in double quotes
//! let order = sqlx::query_as!(Order, r#"SELECT id AS "id: SnowflakeId", parent AS "parent: SnowflakeId" FROM orders WHERE id = $1"#, id as SnowflakeId)
//!     .fetch_one(&pool).await?;
//! // "id: _" takes the type from the struct field; "id!: SnowflakeId" forces NOT NULL,
//! // "parent?: SnowflakeId" forces nullable.
//!
//! // MySQL / MariaDB: backticks
//! let order = sqlx::query_as!(Order, "SELECT id AS `id: SnowflakeId`, parent AS `parent: SnowflakeId` FROM orders WHERE id = ?", id)
//!     .fetch_one(&pool).await?;
//! ```
//!
//! Bind parameters take `id as SnowflakeId` (or `id as _`) on PostgreSQL. The macros need
//! `DATABASE_URL` or `cargo sqlx prepare` data at build time; idgen's own tests use the runtime
//! functions (`sqlx::query_as`) so the build never needs a database.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use idgen_core::*;

#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite")))
)]
pub mod hilo;
