//! # idgen-sqlx
//!
//! idgen for [sqlx](https://docs.rs/sqlx/0.9) 0.9 users: everything of `idgen-engine` and
//! `idgen-core` (re-exported, so this is the one crate to depend on), with [`SnowflakeId`] and
//! [`PublicId`] as column types.
//!
//! ```toml
//! idgen-sqlx = { version = "0.1", features = ["postgres"] }   # and/or "mysql", "sqlite"
//! ```
//!
//! | feature    | database       | `SnowflakeId`                              | `PublicId<T>`                            |
//! |------------|----------------|--------------------------------------------|------------------------------------------|
//! | `postgres` | PostgreSQL     | `BIGINT`/`INT8`; `INT8[]` for `= ANY($1)`  | `UUID`; `UUID[]` for `= ANY($1)`         |
//! | `mysql`    | MySQL, MariaDB | `BIGINT`, `BIGINT UNSIGNED`                | `BINARY(16)`                             |
//! | `sqlite`   | SQLite         | `INTEGER` (sqlx's bundled SQLite)          | `BLOB` of 16 bytes                       |
//!
//! `runtime-tokio` (default) turns on sqlx's tokio runtime. `lease` (default) adds
//! [`lease`]: node IDs leased from a table in the same database
//! (`WorkerLease::acquire(&pool, &Layout::TWITTER)`), so two processes never share one. With
//! `postgres` or `mysql` it also adds [`db_generator`]: an SQL function, `idgen_next_id()`, that
//! makes IDs of the application's layout inside the database (for a column `DEFAULT`), on a
//! node ID the database leases from the same table, and [`adopt`]: taking over a table that
//! already has rows (Snowflake keys above the old ones, or hi-lo on its sequence), planned and
//! applied resumably. `hilo` (default) adds [`hilo`]: blocks of
//! IDs from one database counter (`HiLo::builder(&pool).block(1000).create_if_missing(true)`);
//! `hilo::StripedHiLo` with `hilo::PgStripe` takes hi-lo blocks from several servers whose
//! blocks never overlap. The features are named as in idgen-diesel and idgen-seaorm.
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
//! ## Public IDs
//!
//! Keep the Snowflake ID as the primary key for joins, and give the world a [`PublicId`] from
//! its own column with a unique index: 16 random bytes, shown as `ord_01h455vb4pex5vsknk084sn02q`.
//! The prefix is not stored; the field's type (`PublicId<Order>`) supplies it when the row is
//! read. (An unguessable ID does not replace checking that the caller may see the row.)
//!
//! ```sql
//! -- PostgreSQL
//! CREATE TABLE orders (
//!     id          BIGINT PRIMARY KEY,
//!     public_id   UUID NOT NULL UNIQUE,
//!     customer_id BIGINT NOT NULL
//! );
//! -- MySQL / MariaDB
//! CREATE TABLE orders (
//!     id          BIGINT PRIMARY KEY,
//!     public_id   BINARY(16) NOT NULL UNIQUE,
//!     customer_id BIGINT NOT NULL
//! );
//! -- SQLite
//! CREATE TABLE orders (
//!     id          INTEGER PRIMARY KEY,
//!     public_id   BLOB NOT NULL UNIQUE,
//!     customer_id INTEGER NOT NULL
//! );
//! ```
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::{Layout, PublicId, PublicIdPrefix, Snowflake, SnowflakeId};
//!
//! #[derive(sqlx::FromRow, serde::Serialize)]
//! struct Order {
//!     id: SnowflakeId,
//!     public_id: PublicId<Order>,
//!     customer_id: i64,
//! }
//!
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
//! sqlx::query(
//!     "CREATE TABLE orders (id INTEGER PRIMARY KEY, public_id BLOB NOT NULL UNIQUE, customer_id INTEGER NOT NULL)",
//! )
//! .execute(&pool)
//! .await?;
//!
//! let ids = Snowflake::new(Layout::TWITTER, 7)?;
//! let order = Order { id: ids.next_id()?, public_id: PublicId::new(), customer_id: 42 };
//! sqlx::query("INSERT INTO orders (id, public_id, customer_id) VALUES (?, ?, ?)")
//!     .bind(order.id)
//!     .bind(order.public_id)
//!     .bind(order.customer_id)
//!     .execute(&pool)
//!     .await?;
//!
//! // A request names the order by its public ID (parsed strictly: `usr_…` is refused).
//! let from_url: PublicId<Order> = order.public_id.to_string().parse()?;
//! let found: Order = sqlx::query_as("SELECT id, public_id, customer_id FROM orders WHERE public_id = ?")
//!     .bind(from_url)
//!     .fetch_one(&pool)
//!     .await?;
//! assert_eq!((found.id, found.customer_id), (order.id, 42));
//!
//! let json = serde_json::to_value(&found)?;
//! assert!(json["public_id"].as_str().unwrap().starts_with("ord_"));
//! assert_eq!(json["id"], order.id.to_string()); // a string: JavaScript never rounds it
//!
//! // A second order with the same public ID is refused by the unique index.
//! let dup = sqlx::query("INSERT INTO orders (id, public_id, customer_id) VALUES (?, ?, ?)")
//!     .bind(ids.next_id()?)
//!     .bind(order.public_id)
//!     .bind(43_i64)
//!     .execute(&pool)
//!     .await;
//! assert!(dup.unwrap_err().as_database_error().unwrap().is_unique_violation());
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! `Option<PublicId<T>>` maps `NULL`. Reading checks the stored value: a MySQL/MariaDB
//! `VARBINARY`/`BLOB` or a SQLite `BLOB` that does not hold exactly 16 bytes is a decode error
//! naming its length (`a 15-byte value is not a public ID: …`), and a SQLite `TEXT` value or a
//! PostgreSQL column that is not `UUID` is a type mismatch, never a panic. A MySQL `BINARY(16)`
//! column pads a shorter value written by other code with zero bytes; `PublicId` always writes 16.
//!
//! ## The `query!` / `query_as!` macros
//!
//! The compile-time macros know sqlx's own types only, so name `SnowflakeId` (or
//! `PublicId<Order>`) with a type override in the column alias (the value is still checked when
//! decoded):
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

pub use idgen_engine::*;

#[cfg(all(
    any(feature = "lease", feature = "hilo"),
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
mod session;
/// The SQL dialect of a database (idgen-sql's), as the database-side generator's SQL takes it.
#[cfg(all(
    any(feature = "lease", feature = "hilo"),
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
pub use idgen_sql::Dialect;
#[cfg(all(
    any(feature = "lease", feature = "hilo"),
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
#[allow(deprecated)]
pub use session::SqlxPool;
#[doc(hidden)]
#[cfg(all(
    any(feature = "lease", feature = "hilo"),
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
pub use session::{SessionFuture, SqlxSession};
#[cfg(all(
    any(feature = "lease", feature = "hilo"),
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
pub use session::{SqlxDatabase, SqlxMarker};

#[cfg(all(
    feature = "lease",
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
#[cfg_attr(docsrs, doc(cfg(feature = "lease")))]
pub mod lease;

#[cfg(all(feature = "lease", any(feature = "postgres", feature = "mysql")))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "lease", any(feature = "postgres", feature = "mysql"))))
)]
pub mod db_generator;

#[cfg(all(feature = "lease", any(feature = "postgres", feature = "mysql")))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "lease", any(feature = "postgres", feature = "mysql"))))
)]
pub mod adopt;

#[cfg(all(
    feature = "hilo",
    any(feature = "postgres", feature = "mysql", feature = "sqlite")
))]
#[cfg_attr(docsrs, doc(cfg(feature = "hilo")))]
pub mod hilo;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(all(doctest, feature = "sqlite", feature = "lease", feature = "hilo"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
