//! # idgen-diesel
//!
//! idgen for [diesel](https://docs.rs/diesel/2.3) 2.3 users: everything of `idgen-engine` and
//! `idgen-core` (re-exported, so this is the one crate to depend on), with [`SnowflakeId`] and [`PublicId`]
//! as column types, and node-ID leases ([`lease`]) over r2d2 pools of diesel connections.
//!
//! ```toml
//! idgen-diesel = { version = "0.1", features = ["postgres"] }   # and/or "mysql", "sqlite"
//! ```
//!
//! | feature    | database       | `table!` type | column                                   |
//! |------------|----------------|---------------|------------------------------------------|
//! | `postgres` | PostgreSQL     | `BigInt`      | `BIGINT` / `INT8`                        |
//! | `mysql`    | MySQL, MariaDB | `BigInt`      | `BIGINT` (also reads `BIGINT UNSIGNED`)  |
//! | `sqlite`   | SQLite         | `BigInt`      | `INTEGER`                                |
//!
//! `PublicId<T>` is a `Uuid` column (`UUID`) on PostgreSQL and a `Binary` column on every
//! database (`BYTEA`, `BINARY(16)`, `BLOB`), holding its 16 bytes; a value of another length is
//! a load error naming the length.
//!
//! The features turn on diesel's backends with their C client libraries (libpq,
//! libmysqlclient, libsqlite3). A library that only needs the column types can depend on
//! `idgen-core` with `diesel-postgres` / `diesel-mysql` (diesel's `*_backend` features, no C
//! library) or `diesel-sqlite`.
//!
//! `SnowflakeId` is `AsExpression` and `FromSqlRow`, so it is a field of `Queryable`,
//! `Selectable` and `Insertable` structs, binds in `.eq(id)`, `.eq_any(ids)` and `find(id)`,
//! and `Option<SnowflakeId>` maps `NULL` on a `Nullable<BigInt>` column. A stored value that is
//! not an ID (negative, floating point, a non-numeric text) is a load error naming the value,
//! never a panic, never truncated:
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use diesel::prelude::*;
//! use idgen_diesel::{Layout, PublicId, PublicIdPrefix, Snowflake, SnowflakeId};
//!
//! diesel::table! {
//!     orders (id) {
//!         id -> BigInt,
//!         parent -> Nullable<BigInt>,
//!         public_id -> Binary, // `Uuid` on PostgreSQL
//!         item -> Text,
//!     }
//! }
//!
//! #[derive(Debug, PartialEq, Queryable, Selectable, Insertable)]
//! #[diesel(table_name = orders)]
//! struct Order {
//!     id: SnowflakeId,
//!     parent: Option<SnowflakeId>,
//!     public_id: PublicId<Order>,
//!     item: String,
//! }
//!
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! let conn = &mut SqliteConnection::establish(":memory:")?;
//! diesel::sql_query(
//!     "CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER, public_id BLOB NOT NULL UNIQUE, item TEXT NOT NULL)",
//! )
//! .execute(conn)?;
//!
//! let ids = Snowflake::new(Layout::TWITTER, 7)?;
//! let first = Order { id: ids.next_id()?, parent: None, public_id: PublicId::new(), item: "tea".into() };
//! let second =
//!     Order { id: ids.next_id()?, parent: Some(first.id), public_id: PublicId::new(), item: "cake".into() };
//! diesel::insert_into(orders::table).values([&first, &second]).execute(conn)?;
//!
//! let newest: Order = orders::table.order(orders::id.desc()).select(Order::as_select()).first(conn)?;
//! assert_eq!(newest, second);
//! let both: Vec<SnowflakeId> =
//!     orders::table.select(orders::id).filter(orders::id.eq_any([first.id, second.id])).load(conn)?;
//! assert_eq!(both.len(), 2);
//! let roots: i64 = orders::table.filter(orders::parent.is_null()).count().get_result(conn)?;
//! assert_eq!(roots, 1);
//!
//! // A link such as /orders/ord_… finds the row by its public ID.
//! let link = second.public_id.to_string();
//! let wanted: PublicId<Order> = link.parse()?;
//! let found: Order = orders::table.filter(orders::public_id.eq(wanted)).select(Order::as_select()).first(conn)?;
//! assert_eq!(found, second);
//!
//! diesel::sql_query("INSERT INTO orders VALUES (-5, NULL, randomblob(16), 'bad')").execute(conn)?;
//! let err = orders::table.filter(orders::item.eq("bad"))
//!     .select(Order::as_select()).first(conn).unwrap_err();
//! // diesel names the field; the cause names the value.
//! assert_eq!(err.to_string(), "Error deserializing field 'id'");
//! let cause = std::error::Error::source(&err).unwrap();
//! assert_eq!(
//!     cause.to_string(),
//!     "-5 is not a Snowflake ID: an ID is between 0 and 9223372036854775807 (i64::MAX)"
//! );
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use idgen_engine::*;

#[cfg(any(feature = "lease", feature = "hilo"))]
mod session;
#[cfg(any(feature = "lease", feature = "hilo"))]
pub use session::DieselConnection;

#[cfg(feature = "async")]
mod async_session;
#[cfg(feature = "async")]
#[allow(deprecated)]
pub use async_session::DeadpoolPool;
#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub use async_session::{AsyncDieselConnection, AsyncDieselPool, DieselAsyncMarker};

#[cfg(any(feature = "lease", feature = "hilo"))]
/// Marks idgen's implementations for r2d2 pools of diesel connections (`IntoLeaseStore`,
/// `IntoHiLoSource`), so that `WorkerLease::acquire(&pool, &layout)` and
/// `HiLo::new(&pool, block)` take one. Never named by callers.
///
/// ```
/// # #[cfg(all(feature = "sqlite", feature = "lease"))]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::lease::{create_lease_table, WorkerLease};
/// use idgen_diesel::Layout;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// create_lease_table(&pool)?;
/// let by_reference = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&pool, &Layout::TWITTER).await?;
/// let by_value = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(pool.clone(), &Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(all(feature = "sqlite", feature = "lease")))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub enum R2d2Marker {}

/// The former name of [`R2d2Marker`].
#[deprecated(note = "renamed `R2d2Marker`: each adapter's marker is named `…Marker`")]
pub type R2d2Pool = R2d2Marker;

/// An r2d2 pool of diesel connections of type `C`: what [`lease`] and [`hilo`] take.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// let pool: idgen_diesel::DieselPool<diesel::SqliteConnection> =
///     Pool::builder().build_unchecked(ConnectionManager::new(":memory:"));
/// # let _ = pool;
/// # }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[cfg(any(feature = "lease", feature = "hilo"))]
pub type DieselPool<C> = diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<C>>;

/// The pools' markers, which [`hilo`] and [`lease`] re-export beside their own items.
#[cfg(any(feature = "lease", feature = "hilo"))]
mod markers {
    pub use crate::R2d2Marker;
    #[allow(deprecated)]
    pub use crate::R2d2Pool;
    #[cfg(feature = "async")]
    #[allow(deprecated)]
    pub use crate::async_session::DeadpoolPool;
    #[cfg(feature = "async")]
    pub use crate::async_session::DieselAsyncMarker;
}

#[cfg(feature = "hilo")]
#[cfg_attr(docsrs, doc(cfg(feature = "hilo")))]
pub mod hilo;

#[cfg(feature = "lease")]
#[cfg_attr(docsrs, doc(cfg(feature = "lease")))]
pub mod lease;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(all(
    doctest,
    feature = "sqlite",
    feature = "lease",
    feature = "hilo",
    feature = "async"
))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
