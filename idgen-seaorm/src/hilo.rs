//! Hi-lo over a sea-orm [`DatabaseConnection`] (feature `hilo`, on by default): blocks of IDs
//! from one central database counter, handed out from memory by idgen-engine's [`HiLo`] engine
//! (re-exported here with everything of `idgen_engine::hilo`).
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
//!
//! let db = sea_orm::Database::connect("sqlite::memory:").await?;
//! SeaOrmCounter::new(&db, "hilo")?.create(1000).await?; // once, or the migration
//!
//! let ids = HiLo::new(&db, 1000).await?; // the counter "hilo"
//! assert_eq!(ids.next_id().await?, 1);
//! assert_eq!(ids.next_id().await?, 2);
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! # The same counters as idgen-sqlx
//!
//! Semantics are **pooled-lo** (a counter value `v` is the block `[v, v + block)`, starting at
//! 1). [`SeaOrmCounter`] **is** idgen-sql's one hi-lo counter (`SqlCounter`, as idgen-sqlx's
//! `PgSequence`, `MySqlCounter` and `SqliteCounter` are) on the sqlx pool behind the
//! `DatabaseConnection`: one set of SQL, so sqlx and sea-orm processes can share one counter:
//!
//! | database | counter | one allocation | increment read from |
//! |---|---|---|---|
//! | PostgreSQL | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT nextval('name')` | `pg_catalog.pg_sequence` |
//! | MariaDB ≥ 10.3 | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT NEXTVAL(name)` | `SELECT increment FROM name` |
//! | MySQL, older MariaDB | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?` | any step per call |
//! | SQLite | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1` | any step per call |
//!
//! At start-up a sequence whose increment differs from the block size is refused
//! ([`EngineErrorKind::HiLoIncrementMismatch`](crate::EngineErrorKind::HiLoIncrementMismatch), naming both
//! numbers). Counter tables advance by any step per call, so there is nothing to mismatch.
//!
//! # Its own connection, autocommit
//!
//! Each counter owns a **one-connection pool** made from the connect options of the
//! `DatabaseConnection`'s sqlx pool (connected lazily, reconnected after a failure); every
//! allocation is one autocommit statement there: never inside a caller's transaction (a
//! rolled-back transaction cannot un-allocate a block already handed out) and never waiting for
//! a slot of the caller's pool (no deadlock when every connection waits for an ID).
//!
//! # Names
//!
//! Counter and table names are written into SQL, so only `name` or `schema.name` of ASCII
//! letters, digits and `_` (not starting with a digit, parts of at most 63 characters) pass
//! ([`EngineErrorKind::InvalidSqlName`](crate::EngineErrorKind::InvalidSqlName)).

use idgen_sql::{CounterPool, SqlCounter};
use sea_orm::DatabaseConnection;

pub use idgen_engine::hilo::*;
pub use idgen_sql::CounterMode;

#[allow(deprecated)]
pub use crate::SeaOrmConnection;
pub use crate::SeaOrmMarker;
pub use crate::pool::SeaOrmPool;

/// The counter table's default name (MySQL table mode, SQLite; idgen-sql's).
///
/// ```
/// assert_eq!(idgen_seaorm::hilo::DEFAULT_TABLE, "idgen_hilo");
/// ```
pub use idgen_sql::DEFAULT_COUNTER_TABLE as DEFAULT_TABLE;

/// A hi-lo counter in the database behind a sea-orm [`DatabaseConnection`]: idgen-sql's
/// [`SqlCounter`] (a sequence on PostgreSQL and MariaDB ≥ 10.3, else a row of `idgen_hilo`),
/// the source behind `HiLo::new(&db, block)`, on a one-connection sqlx pool of its own made
/// from the connection's sqlx pool ([`SeaOrmPool`]).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
/// use idgen_sql::Dialect;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let orders = SeaOrmCounter::new(&db, "orders")?;
/// assert_eq!(orders.dialect(), Dialect::Sqlite);
/// assert!(orders.migration_sql(500)?.ends_with("VALUES ('orders', 1)"));
/// orders.create(500).await?;
/// let ids = HiLo::new(orders, 500).await?;
/// assert_eq!(ids.reserve(10).await?, 1..11);
///
/// let err = SeaOrmCounter::new(&db, "9lives").unwrap_err();
/// assert!(err.to_string().contains("\"9lives\""));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
///
/// A `DatabaseConnection` that is not an sqlx pool of a database this crate was built for (a
/// mock, a proxy, a disconnected one) makes a counter whose every call fails with
/// [`Error::UnsupportedConnection`](crate::Error::UnsupportedConnection): `HiLo::new` then refuses to start, naming it.
pub type SeaOrmCounter = SqlCounter<SeaOrmMarker, SeaOrmPool>;

impl CounterPool<SeaOrmMarker> for SeaOrmPool {
    type Of = DatabaseConnection;

    /// A one-connection sqlx pool of the counter's own, with the connect options of `db`'s pool
    /// (connected lazily), or why `db` has none.
    fn for_counter(db: &DatabaseConnection) -> Self {
        SeaOrmPool::of(db).dedicated()
    }
}

/// `HiLo::new(&db, block)`: the counter named by `HiLoBuilder::counter` (default `hilo`); a
/// refused name, or a connection without an sqlx pool, fails at start-up, naming it.
impl IntoHiLoSource<SeaOrmMarker> for DatabaseConnection {
    type Source = SeaOrmCounter;

    fn into_hilo_source(self, counter: &str) -> SeaOrmCounter {
        SqlCounter::named(&self, counter)
    }
}
