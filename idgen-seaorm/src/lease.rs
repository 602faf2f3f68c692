//! Node IDs leased over a sea-orm [`DatabaseConnection`] (feature `lease`, on by default).
//!
//! The engine is idgen-engine's [`WorkerLease`] (re-exported here with everything of
//! `idgen_engine::lease`): each process claims a free node ID from a table of the application's
//! database, renews it in the background and stops its generator before a claim it could not
//! renew expires. [`SeaOrmLeaseStore`] **is** idgen-sql's one lease store
//! ([`SqlLeaseStore`], as idgen-sqlx's is) on the sqlx pool behind
//! the `DatabaseConnection`: one table and one set of SQL, so sea-orm and sqlx processes can
//! lease node IDs from one table and never share one.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_seaorm::lease::{create_lease_table, WorkerLease};
//! use idgen_seaorm::{Layout, Snowflake};
//!
//! let db = sea_orm::Database::connect("sqlite::memory:").await?;
//! create_lease_table(&db).await?; // once, or the migration (feature `migration`)
//!
//! let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&db, &Layout::TWITTER).await?;
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! assert_eq!(Layout::TWITTER.decompose(ids.next_id()?)?.node, handle.node());
//!
//! handle.release().await?; // at shutdown: the node ID is free again at once
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! # How it works
//!
//! - One row per node ID and namespace, created on the namespace's first claim (in chunks of
//!   1024 node IDs, as needed), idempotently.
//! - **Claim** takes the lowest node ID whose `expires_at` has passed on the **database's**
//!   clock, atomically: PostgreSQL `UPDATE … WHERE node = (SELECT … FOR UPDATE SKIP LOCKED)
//!   RETURNING`; MySQL/MariaDB a short transaction of its own with `SELECT …
//!   FOR UPDATE SKIP LOCKED` (plain `FOR UPDATE` before MySQL 8.0.1 / MariaDB 10.6) then
//!   `UPDATE`; SQLite one `UPDATE … RETURNING`.
//! - **Renew** succeeds while this holder still holds the row and keeps the larger last
//!   timestamp; **release** expires the row now, clears its holder (so a late renewal finds
//!   nothing to renew) and stores the exact last timestamp.
//! - Every statement runs on a connection of its own from the `DatabaseConnection`'s pool,
//!   never inside a transaction of the caller (the store takes the connection, not a
//!   `DatabaseTransaction`), and changes none of its settings (on MySQL/MariaDB each step in an
//!   explicit transaction of its own, committed whatever the connection's autocommit). A call
//!   cancelled halfway closes its connection rather than giving it back inside a transaction.
//!   Deadlocks, lock time-outs and busy errors are retried briefly.
//!
//! # The table
//!
//! `idgen_worker_lease` by default ([`LeaseOptions::table`], [`SeaOrmLeaseStore::with_table`]
//! for another `name` or `schema.name` of ASCII letters, digits and `_`). Columns: `namespace`,
//! `node`, `holder`, `expires_at` (database clock; `TIMESTAMPTZ`, `DATETIME(6)` in UTC, or Unix
//! ms on SQLite), `last_timestamp` (Unix ms). [`create_lease_table`],
//! [`SeaOrmLeaseStore::create_table`] or the sea-orm-migration `Migration` (feature
//! `migration`) create it; [`SeaOrmLeaseStore::migration_sql`] shows the statement.

use idgen_sql::SqlLeaseStore;
use sea_orm::{DatabaseConnection, DbErr};

pub use idgen_engine::lease::*;
/// The lease table's default name (idgen-sql's).
pub use idgen_sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;
/// One row of the lease table, from [`SqlLeaseStore::rows`].
pub use idgen_sql::LeaseRow;

#[allow(deprecated)]
pub use crate::SeaOrmConnection;
pub use crate::SeaOrmMarker;
use crate::error::Error;
pub use crate::pool::SeaOrmPool;

/// Node-ID leases kept in a table of the database behind a sea-orm [`DatabaseConnection`]
/// (PostgreSQL, MySQL/MariaDB or SQLite): idgen-sql's [`SqlLeaseStore`] on the connection's
/// sqlx pool ([`SeaOrmPool`]), the [`LeaseStore`] behind `WorkerLease::acquire(&db, &layout)`.
/// Its methods (`with_table`, `create_table`, `rows`, `free`, …) are idgen-sql's.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::lease::{SeaOrmLeaseStore, SeaOrmPool, WorkerLease};
/// use idgen_seaorm::Layout;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let store = SeaOrmLeaseStore::with_table(SeaOrmPool::of(&db), "my_leases")?;
/// store.create_table().await?;
/// let a = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// let b = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_ne!(a.node(), b.node());
/// assert_eq!(store.rows("default").await?.len(), 1024); // the first chunk of node IDs
///
/// let err = SeaOrmLeaseStore::with_table(SeaOrmPool::of(&db), "x; DROP TABLE y").unwrap_err();
/// assert!(err.to_string().contains("may contain only ASCII letters, digits and '_'"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
///
/// A `DatabaseConnection` without an sqlx pool of a database this crate was built for (a mock,
/// a proxy, a disconnected one) makes a store whose every call fails with
/// [`Error::UnsupportedConnection`]: `WorkerLease::acquire` then refuses, naming it.
pub type SeaOrmLeaseStore = SqlLeaseStore<SeaOrmMarker, SeaOrmPool>;

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), sea_orm::DbErr> {
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
///
/// # Errors
///
/// [`Error::UnsupportedConnection`] for a connection without an sqlx pool, or the database's
/// refusal, as a [`DbErr`].
pub async fn create_lease_table(db: &DatabaseConnection) -> Result<(), DbErr> {
    let pool = SeaOrmPool::of(db);
    if let Some(unsupported) = pool.unsupported() {
        return Err(unsupported.clone().into());
    }
    SeaOrmLeaseStore::new(pool)
        .create_table()
        .await
        .map_err(|e| Error::from(e).into())
}

/// `WorkerLease::acquire(&db, …)`: the lease table named by `LeaseOptions::table` (default
/// `idgen_worker_lease`) in the database behind `db`.
impl IntoLeaseStore<SeaOrmMarker> for DatabaseConnection {
    type Store = SeaOrmLeaseStore;
    fn into_lease_store(self, table: &str) -> SeaOrmLeaseStore {
        SqlLeaseStore::named(SeaOrmPool::of(&self), table)
    }
}
