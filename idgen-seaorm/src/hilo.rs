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
//! 1). [`SeaOrmCounter`] **is** idgen-sqlx's hi-lo source (`PgSequence`, `MySqlCounter` in
//! detect mode, `SqliteCounter`) on the sqlx pool behind the `DatabaseConnection`: one set of
//! SQL, so sqlx and sea-orm processes can share one counter:
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

// Without a database feature every counter is `Unsupported`, and the rest is unreachable.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unreachable_code, unused_variables)
)]

use sea_orm::{DatabaseConnection, DbBackend};

pub use idgen_engine::hilo::*;

#[allow(deprecated)]
pub use crate::SeaOrmConnection;
pub use crate::SeaOrmMarker;
use crate::error::Error;
use crate::pool::SqlxPool;

/// The counter table's default name (MySQL without sequences, SQLite; idgen-sqlx's).
pub use idgen_sql::DEFAULT_COUNTER_TABLE as DEFAULT_TABLE;

/// A hi-lo counter in the database behind a [`DatabaseConnection`]: a sequence (PostgreSQL,
/// MariaDB ≥ 10.3) or a row of the counter table (MySQL, older MariaDB, SQLite), on a
/// connection of its own. What `HiLo::new(&db, block)` makes. It delegates every call to
/// idgen-sqlx's source for the database (`PgSequence`, `MySqlCounter` in detect mode,
/// `SqliteCounter`) on the connection's sqlx pool.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let orders = SeaOrmCounter::new(&db, "orders")?;
/// orders.create(500).await?;
/// let ids = HiLo::new(orders, 500).await?;
/// assert_eq!(ids.reserve(10).await?, 1..11);
///
/// assert!(SeaOrmCounter::new(&db, "orders; DROP TABLE x").is_err());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Debug)]
pub struct SeaOrmCounter {
    inner: Inner,
}

/// idgen-sqlx's source for the connection's database, or why there is none.
#[derive(Clone, Debug)]
enum Inner {
    #[cfg(feature = "postgres")]
    Postgres(idgen_sqlx::hilo::PgSequence),
    #[cfg(feature = "mysql")]
    MySql(idgen_sqlx::hilo::MySqlCounter),
    #[cfg(feature = "sqlite")]
    Sqlite(idgen_sqlx::hilo::SqliteCounter),
    /// Not an sqlx pool connection of a database this crate was built for.
    Unsupported {
        /// The counter's name.
        name: String,
        /// Why there is no source.
        error: Error,
    },
}

impl SeaOrmCounter {
    /// The counter `name` (a sequence, or a row of `idgen_hilo`) in the database behind `db`.
    ///
    /// # Errors
    ///
    /// [`Error::Id`] wrapping an `EngineError` of kind `EngineErrorKind::InvalidSqlName` naming the name;
    /// [`Error::UnsupportedConnection`] for a connection that is not an sqlx pool.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let err = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "9lives").unwrap_err();
    /// assert!(err.to_string().contains("\"9lives\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(db: &DatabaseConnection, name: &str) -> Result<SeaOrmCounter, Error> {
        let inner = match SqlxPool::of(db)? {
            #[cfg(feature = "postgres")]
            SqlxPool::Postgres(pool) => {
                Inner::Postgres(idgen_sqlx::hilo::PgSequence::new(&pool, name)?)
            }
            #[cfg(feature = "mysql")]
            SqlxPool::MySql(pool) => Inner::MySql(idgen_sqlx::hilo::MySqlCounter::new(
                &pool,
                name,
                idgen_sqlx::hilo::MySqlMode::Detect,
            )?),
            #[cfg(feature = "sqlite")]
            SqlxPool::Sqlite(pool) => {
                Inner::Sqlite(idgen_sqlx::hilo::SqliteCounter::new(&pool, name)?)
            }
        };
        #[allow(unreachable_code)]
        Ok(SeaOrmCounter { inner })
    }

    /// Uses the counter table `table` instead of `idgen_hilo` (where a table is used; a
    /// PostgreSQL sequence has none, but the name is checked all the same).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_seaorm::hilo::SeaOrmCounter;
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = SeaOrmCounter::new(&db, "orders")?.with_table("counters")?;
    /// assert!(counter.migration_sql(1000)?.contains("counters"));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(self, table: &str) -> Result<SeaOrmCounter, Error> {
        let inner = match self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => {
                idgen_sqlx::hilo::validate_name(table)?;
                Inner::Postgres(c)
            }
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => Inner::MySql(c.with_table(table)?),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => Inner::Sqlite(c.with_table(table)?),
            Inner::Unsupported { error, .. } => return Err(error),
        };
        Ok(SeaOrmCounter { inner })
    }

    /// idgen-sqlx's statements that create this counter with increment `block` (for a
    /// migration file; no connection needed): a sequence on PostgreSQL, and on MariaDB once a
    /// `create` has found sequences there; else the counter table and this counter's row.
    /// Idempotent.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let sql = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "orders")?.migration_sql(1000)?;
    /// assert!(sql.contains("INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    #[cfg_attr(
        not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
        allow(unused_variables)
    )]
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        #[allow(unused_variables)]
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => Ok(c.migration_sql(block)?),
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => Ok(c.migration_sql(block)?),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => Ok(c.migration_sql(block)?),
            Inner::Unsupported { error, .. } => Err(error.clone()),
        }
    }

    /// Creates the counter with increment `block` if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "hilo")?;
    /// counter.create(1000).await?;
    /// counter.create(1000).await?;
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        #[allow(unused_variables)]
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => Ok(c.create(block).await?),
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => Ok(c.create(block).await?),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => Ok(c.create(block).await?),
            Inner::Unsupported { error, .. } => Err(error.clone()),
        }
    }

    /// The database this counter is in.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "hilo")?;
    /// assert_eq!(counter.backend(), Some(sea_orm::DbBackend::Sqlite));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn backend(&self) -> Option<DbBackend> {
        match self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(_) => Some(DbBackend::Postgres),
            #[cfg(feature = "mysql")]
            Inner::MySql(_) => Some(DbBackend::MySql),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(_) => Some(DbBackend::Sqlite),
            Inner::Unsupported { .. } => None,
        }
    }
}

impl HiLoSource for SeaOrmCounter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        #[allow(unused_variables)]
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.allocate(size).await,
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => c.allocate(size).await,
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => c.allocate(size).await,
            Inner::Unsupported { error, .. } => Err(error.clone().into()),
        }
    }

    /// Several blocks in one statement on PostgreSQL (`nextval` over `generate_series`); one
    /// block elsewhere.
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        #[allow(unused_variables)]
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.allocate_blocks(size, count).await,
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => c.allocate_blocks(size, count).await,
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => c.allocate_blocks(size, count).await,
            Inner::Unsupported { error, .. } => Err(error.clone().into()),
        }
    }

    /// One forward-only step, on the database's own counter.
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        #[allow(unused_variables)]
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.raise_above(floor).await,
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => c.raise_above(floor).await,
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => c.raise_above(floor).await,
            Inner::Unsupported { error, .. } => Err(error.clone().into()),
        }
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.increment().await,
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => c.increment().await,
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => c.increment().await,
            Inner::Unsupported { error, .. } => Err(error.clone().into()),
        }
    }

    /// [`create`](Self::create).
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        Ok(self.create(block).await?)
    }

    /// `true`: the counter lives in the database with the rows its IDs key.
    fn create_if_missing_by_default(&self) -> bool {
        true
    }

    /// [`migration_sql`](Self::migration_sql).
    fn migration_sql(&self, block: u64) -> Option<String> {
        Self::migration_sql(self, block).ok()
    }

    fn name(&self) -> &str {
        match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(c) => c.name(),
            #[cfg(feature = "mysql")]
            Inner::MySql(c) => c.name(),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(c) => c.name(),
            Inner::Unsupported { name, .. } => name,
        }
    }
}

/// The source for `counter` on `db`'s pool, its name checked at start-up (as idgen-sqlx's
/// pools do), or a source whose every call fails with why `db` has none.
fn source(db: &DatabaseConnection, counter: &str) -> SeaOrmCounter {
    #[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
    use idgen_sqlx::SqlxMarker as PoolMarker;
    let inner = match SqlxPool::of(db) {
        #[cfg(feature = "postgres")]
        Ok(SqlxPool::Postgres(pool)) => Inner::Postgres(
            IntoHiLoSource::<PoolMarker>::into_hilo_source(pool, counter),
        ),
        #[cfg(feature = "mysql")]
        Ok(SqlxPool::MySql(pool)) => Inner::MySql(IntoHiLoSource::<PoolMarker>::into_hilo_source(
            pool, counter,
        )),
        #[cfg(feature = "sqlite")]
        Ok(SqlxPool::Sqlite(pool)) => Inner::Sqlite(
            IntoHiLoSource::<PoolMarker>::into_hilo_source(pool, counter),
        ),
        Err(error) => Inner::Unsupported {
            name: counter.to_owned(),
            error,
        },
    };
    SeaOrmCounter { inner }
}

impl IntoHiLoSource<SeaOrmMarker> for DatabaseConnection {
    type Source = SeaOrmCounter;

    fn into_hilo_source(self, counter: &str) -> SeaOrmCounter {
        source(&self, counter)
    }
}
