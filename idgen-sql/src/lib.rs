//! The database contract, written once: what every SQL adapter (`idgen-sqlx`, `idgen-diesel`,
//! `idgen-seaorm`) sends to PostgreSQL, MySQL/MariaDB and SQLite for node-ID leases and hi-lo
//! counters. No driver is involved: the adapters bind the [`Value`]s of a [`Statement`] in
//! order and decode the rows, nothing else, so processes of different adapters share one table
//! or counter and behave alike.
//!
//! - [`Dialect`]: the database, its quoting, its clock, and error classification
//!   ([`Dialect::classify`]); [`Server`]: a server's dialect and version, read with one query,
//!   and what the version allows (MariaDB's sequences, `SKIP LOCKED`; the rules:
//!   [`mariadb_has_sequences`], [`mysql_has_skip_locked`]).
//! - [`SqlName`]: the one rule for a table, sequence or counter name written into SQL
//!   (`name` or `schema.name`, each part 1 to 63 ASCII letters, digits or `_`, not starting
//!   with a digit), refused with [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName).
//! - [`LeaseSql`]: the lease table's DDL and statements.
//! - [`CounterSql`]: a hi-lo counter's DDL and statements (a sequence, or a row of a table).
//! - [`SqlLeaseStore`] and [`SqlCounter`]: the one lease store and the one hi-lo counter of
//!   every SQL adapter, over the adapter's [`SqlPool`] (how a call reaches a connection).
//! - [`Session`]: the primitives an adapter implements on one connection (run a statement,
//!   read a value), over which the lease procedure ([`procedure`]) and the hi-lo counter
//!   procedure ([`CounterSql::allocate_on`] and friends) are written once.
//! - [`CallError`]: a failed call of any adapter's store or counter (SQL, etcd, Redis), the
//!   driver's error kept as its source.
//! - The default names: [`DEFAULT_LEASE_TABLE`], [`DEFAULT_COUNTER_TABLE`], [`DEFAULT_COUNTER`].
//!
//! Two products are written over the same [`Session`] in crates of their own: the
//! database-side generator (`idgen-db-generator`) and taking over a table that already has
//! rows (`idgen-adopt`).
//!
//! ```
//! use idgen_sql::{Dialect, LeaseSql, DEFAULT_LEASE_TABLE};
//!
//! let sql = LeaseSql::new(Dialect::Postgres, DEFAULT_LEASE_TABLE)?;
//! assert!(sql.create_table().starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
//! let renew = sql.renew("orders", 3, "web-1", 30_000, Some(1_700_000_000_000));
//! assert_eq!(renew.params.len(), 5);
//! assert!(LeaseSql::new(Dialect::MySql, "leases; --").is_err());
//! # Ok::<(), idgen_engine::Error>(())
//! ```

mod counter;
mod dialect;
mod lease;
mod pool;
mod server;
pub(crate) mod session;
mod statement;

pub use counter::{
    CounterKind, CounterMode, CounterPool, CounterSpec, CounterSql, SqlCounter, detect_mysql_kind,
    read_next_value,
};
pub use dialect::{Dialect, ErrorClass, QuotedName, mariadb_has_sequences, mysql_has_skip_locked};
pub use idgen_engine::{CallError, SqlName};
pub use lease::{LeaseSql, SqlLeaseStore, procedure};
pub use pool::{Call, CallTarget, SqlPool};
pub use server::Server;
pub use session::{LeaseRow, Session, block_on, check_outside_transaction, create_if_missing};
pub use statement::{Statement, Value};

/// The lease table's default name, shared by every adapter (defined in `idgen-engine`, whose
/// `LeaseOptions` default to it).
///
/// ```
/// assert_eq!(idgen_sql::DEFAULT_LEASE_TABLE, "idgen_worker_lease");
/// ```
pub use idgen_engine::lease::DEFAULT_LEASE_TABLE;

/// The hi-lo counter table's default name (MySQL table mode, SQLite).
///
/// ```
/// assert_eq!(idgen_sql::DEFAULT_COUNTER_TABLE, "idgen_hilo");
/// ```
pub const DEFAULT_COUNTER_TABLE: &str = "idgen_hilo";

/// The hi-lo counter's default name: what `HiLo::new(pool, block)` uses (defined in
/// `idgen-engine`).
///
/// ```
/// assert_eq!(idgen_sql::DEFAULT_COUNTER, "hilo");
/// ```
pub use idgen_engine::hilo::DEFAULT_COUNTER;

/// The transaction-scoped advisory lock every idgen adapter takes on PostgreSQL before its
/// create-if-missing DDL (key `"idgenDDL"` in ASCII), so instances that start together wait for
/// each other: `CREATE … IF NOT EXISTS` alone fails for concurrent callers there (two sessions
/// both find the name free, and the later one fails on a catalog index).
///
/// ```
/// assert!(idgen_sql::PG_DDL_LOCK.starts_with("SELECT pg_advisory_xact_lock("));
/// ```
pub const PG_DDL_LOCK: &str = "SELECT pg_advisory_xact_lock(7594308556992824396)";

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
