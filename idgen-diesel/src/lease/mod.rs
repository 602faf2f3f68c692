//! Node IDs leased from the application's own database over diesel (feature `lease`, on by
//! default).
//!
//! Two processes with one node ID silently issue the same Snowflake IDs. With a lease, each
//! process claims a free node ID from a table in the database it already uses, renews the claim
//! in the background, and stops its generator before a claim it could not renew expires; the
//! table also keeps each node ID's last timestamp, so the next holder never issues at or below
//! it. The engine is idgen-engine's [`WorkerLease`] (re-exported here with everything of
//! `idgen_engine::lease`); this module stores the leases over an r2d2 pool of diesel connections
//! ([`DieselLeaseStore`]), in **the same table with the same SQL as idgen-sqlx**, so diesel and
//! sqlx processes can lease from one table and never hold the same node ID.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use diesel::r2d2::{ConnectionManager, Pool};
//! use idgen_diesel::lease::{create_lease_table, WorkerLease};
//! use idgen_diesel::{Layout, Snowflake};
//!
//! # let dir = tempfile::tempdir()?;
//! # let database_url = dir.path().join("app.db").display().to_string();
//! let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
//! create_lease_table(&pool)?; // once, or the migration below
//!
//! let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&pool, &Layout::TWITTER).await?;
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! let id = ids.next_id()?;
//! assert_eq!(Layout::TWITTER.decompose(id)?.node, handle.node());
//!
//! handle.release().await?; // at shutdown: the node ID is free again at once
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! The store's calls run on short-lived threads of their own (never on a runtime thread, and
//! still while a runtime shuts down), each on a connection of its own from the pool, changing
//! none of its settings: on MySQL/MariaDB each step runs in an explicit transaction of its own
//! (`START TRANSACTION` … `COMMIT`, committed whether the pool's connections run with
//! `autocommit=1` or `0`), and a connection inside a transaction of the application's is left
//! alone (the call fails). A connection a call could not leave settled (a transaction whose end
//! failed, a diesel-async task dropped halfway) is closed, not given back to the pool. On SQLite a connection without a busy timeout gets one of
//! 5 s (as sqlx's default), since claims from several processes wait for the one writer.
//!
//! # The table
//!
//! [`create_lease_table`] (or [`DieselLeaseStore::create_table`] for another name) runs the
//! statement below; with diesel migrations, put it in a migration's `up.sql` (and
//! `DROP TABLE idgen_worker_lease` in `down.sql`). Instances that start together may all call
//! it: on PostgreSQL it runs after idgen's advisory lock (as in idgen-sqlx), on SQLite it waits
//! for other writers. Columns: `namespace`, `node`, `holder` (who holds it; `NULL` when free),
//! `expires_at` (database clock), `last_timestamp` (Unix ms). Do not delete rows of a namespace
//! in use.
//!
//! PostgreSQL:
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS "idgen_worker_lease" (
//!     namespace      VARCHAR(255) NOT NULL,
//!     node           BIGINT       NOT NULL,
//!     holder         VARCHAR(255) NULL,
//!     expires_at     TIMESTAMPTZ  NOT NULL,
//!     last_timestamp BIGINT       NULL,
//!     PRIMARY KEY (namespace, node)
//! )
//! ```
//!
//! MySQL / MariaDB (`expires_at` in UTC):
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS `idgen_worker_lease` (
//!     namespace      VARCHAR(255) NOT NULL,
//!     node           BIGINT       NOT NULL,
//!     holder         VARCHAR(255) NULL,
//!     expires_at     DATETIME(6)  NOT NULL,
//!     last_timestamp BIGINT       NULL,
//!     PRIMARY KEY (namespace, node)
//! ) ENGINE = InnoDB
//! ```
//!
//! SQLite (`expires_at` in Unix ms):
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS "idgen_worker_lease" (
//!     namespace      TEXT    NOT NULL,
//!     node           INTEGER NOT NULL,
//!     holder         TEXT    NULL,
//!     expires_at     INTEGER NOT NULL, -- Unix ms
//!     last_timestamp INTEGER NULL,
//!     PRIMARY KEY (namespace, node)
//! )
//! ```
//!
//! [`DieselLeaseStore::migration_sql`] returns the statement for a store's table name.

#[cfg(feature = "async")]
mod async_store;
mod exit_wait;
pub(crate) mod store;

pub use crate::markers::*;
#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub use async_store::{AsyncDieselLeaseStore, AsyncTurn};
pub use idgen_engine::lease::*;
/// Runs a store's future to its end on this thread, for blocking code (the r2d2 store runs
/// each statement on a thread of its own, so no async runtime is needed).
pub use idgen_sql::block_on;
pub use store::{DEFAULT_TABLE, DieselLeaseStore, LeaseRow, create_lease_table};
