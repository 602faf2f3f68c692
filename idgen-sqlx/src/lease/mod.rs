//! Node IDs leased from the application's own database (feature `lease`, on by default).
//!
//! Two processes with one node ID silently issue the same Snowflake IDs. With a lease, each
//! process claims a free node ID from a table in the database it already uses, renews the claim
//! in the background, and stops its generator before a claim it could not renew expires; the
//! table also keeps each node ID's last timestamp, so the next holder never issues at or below
//! it, even after a restart on a host whose clock is behind. The engine is idgen-engine's
//! [`WorkerLease`] (re-exported here with everything of `idgen_engine::lease`); this module
//! stores the leases in PostgreSQL, MySQL/MariaDB or SQLite over a sqlx pool.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::lease::{create_lease_table, WorkerLease};
//! use idgen_sqlx::{Layout, Snowflake};
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?; // or a PgPool, a MySqlPool
//! create_lease_table(&pool).await?; // once, or the migration below
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
//! [`LeaseOptions`] (from [`WorkerLease::options`]) sets the namespace (independent generators
//! sharing the table), the table name, TTL (30 s), renewal interval (10 s), safety margin (5 s),
//! store time-out, and the node capacity. When every node ID is leased, `acquire` fails with
//! [`ErrorKind::NoFreeNode`](idgen_engine::ErrorKind::NoFreeNode) naming the capacity.
//!
//! # How it works on each database
//!
//! - One row per node ID and namespace. The rows of a namespace are created on its first claim
//!   (in chunks of 1024 node IDs, as they are needed), idempotently.
//! - **Claim**: takes the lowest node ID whose `expires_at` has passed **on the database's
//!   clock**, atomically: PostgreSQL `UPDATE … WHERE node = (SELECT … FOR UPDATE SKIP LOCKED)
//!   RETURNING`; MySQL/MariaDB a short transaction with `SELECT … FOR UPDATE
//!   SKIP LOCKED` (MySQL 8.0.1+, MariaDB 10.6+; plain `FOR UPDATE` on older servers, which is
//!   slower under contention but as safe) then `UPDATE`; SQLite one `UPDATE … RETURNING` (one
//!   writer at a time; concurrent claims wait up to the pool's busy timeout). A claim that
//!   found no row it could lock checks, without locking, whether expired rows exist (held for a
//!   moment by another session) and tries again, so `NoFreeNode` means none is free.
//! - **Renew**: succeeds while the row's holder is still this process (even after the lease ran
//!   out, as long as nobody claimed it since), and stores the larger of the row's and the new
//!   last timestamp.
//! - **Release**: expires the row now, clears its holder and stores the exact last timestamp
//!   issued. A renewal sent before the release and answered after it finds no holder to match,
//!   so the node ID stays free.
//! - Every call runs on its own connection from the pool, never inside a transaction of the
//!   caller, and changes none of the connection's settings: on MySQL/MariaDB each step runs in
//!   an explicit transaction of its own (`START TRANSACTION` … `COMMIT`, which commits whether
//!   the pool's connections run with `autocommit=1` or `0`), after checking that the connection
//!   is not inside a transaction of the application's (MariaDB's `@@in_transaction`, on MySQL
//!   a one-shot `SET @@transaction_isolation` it refuses inside one; such a
//!   connection is left alone and the call fails). A call cancelled halfway (the store's
//!   time-out, the caller's, a dropped future, a runtime shutting down) closes its connection
//!   rather than giving it back to the pool inside a transaction. Deadlocks, lock time-outs and
//!   busy errors are retried briefly.
//!
//! # The table
//!
//! [`create_lease_table`] (or [`SqlxLeaseStore::create_table`] for another name) runs the
//! statement below; to use migrations instead, put it in one. Instances that start together may
//! all call it: on PostgreSQL it runs after a transaction-scoped advisory lock
//! (`pg_advisory_xact_lock`, one key for every idgen adapter), since `CREATE TABLE IF NOT
//! EXISTS` alone fails for concurrent callers there. Columns: `namespace`, `node`, `holder` (who
//! holds it; `NULL` when free), `expires_at` (database clock), `last_timestamp` (Unix ms).
//! The table name is configurable ([`LeaseOptions::table`], [`SqlxLeaseStore::with_table`]); it
//! must be `name` or `schema.name` of ASCII letters, digits and `_`, since it is written into the
//! SQL (quoted). Do not delete rows of a namespace in use.
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
//! [`SqlxLeaseStore::migration_sql`] returns the statement for a store's table name.

mod store;

pub use crate::session::SqlxMarker;
#[allow(deprecated)]
pub use crate::session::SqlxPool;
pub use idgen_engine::lease::*;
#[cfg(feature = "mysql")]
pub use store::MySqlLeaseStore;
#[cfg(feature = "postgres")]
pub use store::PgLeaseStore;
#[cfg(feature = "sqlite")]
pub use store::SqliteLeaseStore;
pub use store::{DEFAULT_TABLE, LeaseRow, SqlxLeaseStore, create_lease_table};
