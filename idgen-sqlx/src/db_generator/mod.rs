//! Snowflake IDs made inside PostgreSQL or MariaDB under the application's layout: installing
//! idgen-db-generator's [`DbGenerator`] function with a node ID leased from the lease table
//! (features `lease` and `postgres` or `mysql`).
//!
//! [`install`] creates the state table, gives the database a node ID through the same lease
//! table and claim procedure the applications' [`WorkerLease`](crate::lease::WorkerLease)s use
//! (so the two never share a node ID), and creates the function, its fence and its helpers
//! (`idgen_decode`, `idgen_min_id_at`, `idgen_max_id_at`). The SQL and what it does are
//! described in [`idgen_db_generator`], re-exported here.
//!
//! ```no_run
//! # #[cfg(feature = "postgres")]
//! # async fn demo(pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::db_generator::{self, DbGenerator};
//! use idgen_sqlx::Dialect;
//! use idgen_sqlx::Layout;
//!
//! let generator = DbGenerator::new(Layout::TWITTER); // the layout the application uses
//! let node = db_generator::install(&pool, &generator).await?;
//! sqlx::raw_sql("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id BIGINT)").execute(&pool).await?;
//! let default = generator.column_default_sql(Dialect::Postgres, "orders", "id")?;
//! sqlx::raw_sql(sqlx::AssertSqlSafe(default)).execute(&pool).await?;
//!
//! // Any SQL client now gets IDs that decode like the application's, on the database's node.
//! let id: i64 = sqlx::query_scalar("INSERT INTO orders (customer_id) VALUES (42) RETURNING id")
//!     .fetch_one(&pool).await?;
//! let id = idgen_sqlx::SnowflakeId::try_from(id)?;
//! assert_eq!(Layout::TWITTER.decompose(id)?.node, node);
//! # Ok(()) }
//! ```
//!
//! The doctests of [`install`], [`uninstall`] and [`next_id`] run against a real server in
//! idgen-sqlx's tests (`tests/db_generator.rs`), since a doctest has none.

pub(crate) mod dialect;

use std::sync::Arc;

use sqlx::Pool;

pub use dialect::DbGeneratorDialect;
#[doc(hidden)]
pub use dialect::DialectFuture;
pub use idgen_db_generator::*;

use idgen_engine::SnowflakeId;
use idgen_engine::{Error, ErrorKind};

/// Installs `generator`'s function (idempotent) on one connection of `pool` (a pool of one is
/// enough): creates the lease table, the state table, the function's sequences and SQL helpers
/// if missing, gives the database a node ID from the lease table (keeping the one it holds on a
/// second install), and creates or replaces the function and the trigger that fences it.
/// Returns the database's node ID. A claim that cannot prove the node ID was given back (a
/// fresh database, a lease taken over after it expired) returns only once the database's clock
/// has passed claim time + TTL + allowance (default 31 s; see
/// [`DbGenerator::takeover_wait`]). The steps are idgen-db-generator's
/// [`install`](idgen_db_generator::install); the connection is closed afterwards (and if
/// the install is cancelled), so its session lock never goes back to the pool.
///
/// Installs from several processes at once are serialised by a lock (`pg_advisory_lock`,
/// `GET_LOCK`) and end with one node ID. On MariaDB a fresh install recreates the sequences:
/// install at deployment, not under load.
///
/// # Errors
///
/// [`ErrorKind::NoFreeNode`] when every node ID is leased; [`ErrorKind::InvalidOptions`] when
/// the function was installed with another layout, lease table or namespace (naming both:
/// uninstall it with its own options first); [`ErrorKind::DbGenerator`] with the database's error.
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::db_generator::{install, DbGenerator};
/// let generator = DbGenerator::new(idgen_sqlx::Layout::TWITTER);
/// let node = install(&pool, &generator).await?;
/// assert_eq!(install(&pool, &generator).await?, node); // a second install keeps it
/// # Ok(()) }
/// ```
pub async fn install<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    generator: &DbGenerator,
) -> Result<u64, Error> {
    let mut session = installer_session(pool, generator, "install").await?;
    idgen_db_generator::install(&mut session, generator).await
}

/// Gives `generator`'s node ID back to the lease table with the last timestamp it issued (so
/// the next holder never issues at or below it), then drops the function, its fence, helpers
/// and sequences and deletes its state row, on one connection of `pool`. Nothing to do if it is
/// not installed. On PostgreSQL, drop column defaults that call it first: while one does, the
/// uninstall fails and changes nothing. If giving the node ID back fails, nothing has changed;
/// once it is given back, the function refuses to issue.
///
/// # Errors
///
/// [`ErrorKind::DbGenerator`] with the database's error; [`ErrorKind::LeaseStore`] when the
/// lease could not be released.
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::db_generator::{install, uninstall, DbGenerator};
/// let generator = DbGenerator::new(idgen_sqlx::Layout::TWITTER);
/// install(&pool, &generator).await?;
/// uninstall(&pool, &generator).await?;
/// uninstall(&pool, &generator).await?; // harmless
/// # Ok(()) }
/// ```
pub async fn uninstall<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    generator: &DbGenerator,
) -> Result<(), Error> {
    idgen_db_generator::uninstall(
        &mut installer_session(pool, generator, "uninstall").await?,
        generator,
    )
    .await
}

/// A session on one connection of `pool` that is closed when dropped (its session lock goes
/// with it), for the installer's `operation`.
async fn installer_session<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    generator: &DbGenerator,
    operation: &'static str,
) -> Result<DB::Session, Error> {
    DB::closing_session(pool)
        .await
        .map_err(|e| database_error(generator, operation, e))
}

/// One ID from the installed function (`SELECT idgen_next_id()`), with the function's errors
/// as the Rust generator's: [`ErrorKind::Id`] with [`CoreError::ClockMovedBackwards`](idgen_engine::CoreError::ClockMovedBackwards), [`CoreError::Fenced`](idgen_engine::CoreError::Fenced) (its lease is not
/// held, or it is not installed), [`CoreError::BeforeEpoch`](idgen_engine::CoreError::BeforeEpoch), [`CoreError::TimeOverflow`](idgen_engine::CoreError::TimeOverflow); any other
/// database error as [`ErrorKind::DbGenerator`].
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::db_generator::{install, next_id, DbGenerator};
/// let generator = DbGenerator::new(idgen_sqlx::Layout::TWITTER);
/// let node = install(&pool, &generator).await?;
/// let id = next_id(&pool, &generator).await?;
/// assert_eq!(idgen_sqlx::Layout::TWITTER.decompose(id)?.node, node);
/// # Ok(()) }
/// ```
pub async fn next_id<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    generator: &DbGenerator,
) -> Result<SnowflakeId, Error> {
    let raw = DB::select_id(pool, generator.next_id_sql(DB::DIALECT)?)
        .await
        .map_err(|e| database_error(generator, "issue an ID", e))?;
    Ok(SnowflakeId::try_from(raw)?)
}

/// `err` as the Rust generator's error when the function raised it, else
/// [`ErrorKind::DbGenerator`].
///
/// ```
/// use idgen_sqlx::db_generator::{database_error, DbGenerator};
/// let generator = DbGenerator::new(idgen_sqlx::Layout::TWITTER);
/// let err = database_error(&generator, "issue an ID", sqlx::Error::PoolTimedOut);
/// assert!(err.to_string().starts_with("database ID generator idgen_next_id failed to issue an ID: "));
/// ```
pub fn database_error(generator: &DbGenerator, operation: &'static str, err: sqlx::Error) -> Error {
    if let Some(db) = err.as_database_error()
        && let Some(code) = db.code()
        && let Some(mapped) = generator.error_from_database(&code, db.message())
    {
        return mapped.into();
    }
    ErrorKind::DbGenerator {
        function: generator.function_name(),
        operation,
        source: Arc::new(err),
    }
    .into()
}
