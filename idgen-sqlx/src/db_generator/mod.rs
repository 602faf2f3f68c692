//! Snowflake IDs made inside PostgreSQL or MariaDB/MySQL under the application's layout:
//! installing idgen-core's [`DbGenerator`] function with a node ID leased from the lease table
//! (features `lease` and `postgres` or `mysql`).
//!
//! [`install`] creates the state table, gives the database a node ID through the same lease
//! table and claim procedure the applications' [`WorkerLease`](crate::lease::WorkerLease)s use
//! (so the two never share a node ID), and creates the function. The SQL and what it does are
//! described in [`idgen_sql::db_generator`], re-exported here.
//!
//! ```no_run
//! # #[cfg(feature = "postgres")]
//! # async fn demo(pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::db_generator::{self, DbGenerator, SqlDialect};
//! use idgen_sqlx::Layout;
//!
//! let generator = DbGenerator::new(Layout::TWITTER); // the layout the application uses
//! let node = db_generator::install(&pool, &generator).await?;
//! sqlx::raw_sql("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id BIGINT)").execute(&pool).await?;
//! let default = generator.column_default_sql(SqlDialect::Postgres, "orders", "id")?;
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
#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod postgres;

use std::sync::Arc;

use sqlx::{Connection, Pool};

pub use dialect::DbGeneratorDialect;
#[doc(hidden)]
pub use dialect::DialectFuture;
pub use idgen_sql::db_generator::*;

use crate::lease::{ClaimRequest, LeaseStore, RenewRequest, SqlxLeaseStore};
use idgen_engine::Error;
use idgen_engine::SnowflakeId;

/// Installs `generator`'s function (idempotent): creates the lease table and the state table if
/// missing, gives the database a node ID from the lease table (keeping the one it holds on a
/// second install), and creates or replaces the function. Returns the database's node ID.
///
/// Installs from several processes at once are serialised by a lock (`pg_advisory_lock`,
/// `GET_LOCK`) and end with one node ID. On MariaDB/MySQL the function is dropped and created
/// again, so calls that arrive in between fail: install at deployment, not under load.
///
/// # Errors
///
/// [`Error::NoFreeNode`] when every node ID is leased; [`Error::InvalidOptions`] when
/// the function was installed with another layout (uninstall it first); [`Error::DbGenerator`]
/// with the database's error.
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
    let failed = failure(generator, "install");
    let store = SqlxLeaseStore::with_table(pool.clone(), &generator.lease_table_name())?;
    store.create_table().await?;
    let mut conn = pool.acquire().await.map_err(&failed)?;
    // The lock is the connection's: if anything below fails, the connection closes and the lock
    // goes with it, instead of returning to the pool still held.
    conn.close_on_drop();
    DB::lock(&mut *conn).await.map_err(&failed)?;
    let node = install_locked(&mut *conn, &store, generator).await?;
    DB::unlock(&mut *conn).await.map_err(&failed)?;
    Ok(node)
}

async fn install_locked<DB: DbGeneratorDialect>(
    conn: &mut DB::Connection,
    store: &SqlxLeaseStore<DB>,
    generator: &DbGenerator,
) -> Result<u64, Error> {
    let failed = failure(generator, "install");
    let dialect = DB::GENERATOR_DIALECT;
    let mut statements = generator.migration_sql(dialect).into_iter();
    let state_table = statements.next().unwrap_or_default();
    DB::execute(conn, state_table).await.map_err(&failed)?;

    let key = generator.function_name();
    let holder = generator.holder();
    let namespace = generator.lease_namespace();
    let mut tx = conn.begin().await.map_err(&failed)?;
    let state = DB::read_state(&mut tx, generator.select_state_sql(dialect), &key)
        .await
        .map_err(&failed)?;
    if let Some(state) = &state
        && state.layout != generator.layout_key()
    {
        return Err(Error::InvalidOptions {
            reason: format!(
                "the database generator {key} was installed with the layout {:?}, not {:?}: uninstall it first",
                state.layout,
                generator.layout_key()
            ),
        });
    }
    let rows = store.rows(namespace).await?;
    let held_row = |node: Option<u64>| {
        rows.iter().find(|r| {
            r.holder.as_deref() == Some(holder.as_str()) && node.is_none_or(|n| n == r.node)
        })
    };
    let node = match state {
        // Installed, and its lease is still held: keep node and state (calls may be running).
        Some(s)
            if s.namespace == namespace
                && s.holder == holder
                && held_row(Some(s.node)).is_some() =>
        {
            s.node
        }
        _ => {
            // A lease row left under our label (an install that failed after its claim) is
            // taken back; otherwise the claim procedure of every WorkerLease.
            let (node, last_timestamp_ms) = match held_row(None) {
                Some(row) => (row.node, row.last_timestamp_ms),
                None => {
                    let claim = store
                        .claim(ClaimRequest {
                            namespace,
                            capacity: generator.layout().node_capacity(),
                            holder: &holder,
                            ttl: DATABASE_LEASE_TTL,
                        })
                        .await
                        .map_err(|e| Error::LeaseStore {
                            operation: "claim",
                            message: e.to_string(),
                            source: Some(std::sync::Arc::from(e)),
                        })?
                        .ok_or_else(|| Error::NoFreeNode {
                            namespace: namespace.to_owned(),
                            capacity: generator.layout().node_capacity(),
                        })?;
                    (claim.node, claim.last_timestamp_ms)
                }
            };
            let row = StateRow {
                layout: generator.layout_key(),
                namespace: namespace.to_owned(),
                node,
                holder: holder.clone(),
                last_word: generator.initial_word(last_timestamp_ms)?,
            };
            DB::write_state(&mut tx, generator.upsert_state_sql(dialect), &key, row)
                .await
                .map_err(&failed)?;
            node
        }
    };
    tx.commit().await.map_err(&failed)?;
    for statement in statements {
        DB::execute(conn, statement).await.map_err(&failed)?;
    }
    Ok(node)
}

/// Drops `generator`'s function, gives its node ID back to the lease table with the last
/// timestamp it issued (so the next holder never issues at or below it), and deletes its state
/// row. Waits for transactions that took an ID from it to end. Nothing to do if it is not
/// installed. On PostgreSQL, drop column defaults that call it first.
///
/// # Errors
///
/// [`Error::DbGenerator`] with the database's error; [`Error::LeaseStore`] when the
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
    let failed = failure(generator, "uninstall");
    let dialect = DB::GENERATOR_DIALECT;
    let store = SqlxLeaseStore::with_table(pool.clone(), &generator.lease_table_name())?;
    let mut conn = pool.acquire().await.map_err(&failed)?;
    conn.close_on_drop();
    DB::lock(&mut *conn).await.map_err(&failed)?;
    DB::execute(&mut *conn, generator.drop_function_sql(dialect))
        .await
        .map_err(&failed)?;
    // The state table may not exist (never installed): create it, so the read finds no row.
    DB::execute(&mut *conn, generator.state_table_sql(dialect))
        .await
        .map_err(&failed)?;
    let key = generator.function_name();
    let mut tx = conn.begin().await.map_err(&failed)?;
    // Locks the state row: waits for the transactions that took IDs to end.
    let state = DB::read_state(&mut tx, generator.select_state_sql(dialect), &key)
        .await
        .map_err(&failed)?;
    if let Some(state) = state {
        store
            .release(RenewRequest {
                namespace: &state.namespace,
                node: state.node,
                holder: &state.holder,
                ttl: std::time::Duration::ZERO,
                last_timestamp_ms: generator.last_timestamp_ms(state.last_word),
            })
            .await
            .map_err(|e| Error::LeaseStore {
                operation: "release",
                message: e.to_string(),
                source: Some(std::sync::Arc::from(e)),
            })?;
        DB::delete_state(&mut tx, generator.delete_state_sql(dialect), &key)
            .await
            .map_err(&failed)?;
    }
    tx.commit().await.map_err(&failed)?;
    DB::unlock(&mut *conn).await.map_err(&failed)?;
    Ok(())
}

/// One ID from the installed function (`SELECT idgen_next_id()`), with the function's errors
/// as the Rust generator's: [`Error::Id`] with [`CoreError::ClockMovedBackwards`](idgen_engine::CoreError::ClockMovedBackwards), [`CoreError::Fenced`](idgen_engine::CoreError::Fenced) (its lease is not
/// held, or it is not installed), [`CoreError::BeforeEpoch`](idgen_engine::CoreError::BeforeEpoch), [`CoreError::TimeOverflow`](idgen_engine::CoreError::TimeOverflow); any other
/// database error as [`Error::DbGenerator`].
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
    let raw = DB::select_id(pool, generator.next_id_sql(DB::GENERATOR_DIALECT))
        .await
        .map_err(|e| database_error(generator, "issue an ID", e))?;
    Ok(SnowflakeId::try_from(raw)?)
}

/// `err` as the Rust generator's error when the function raised it, else
/// [`Error::DbGenerator`].
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
    Error::DbGenerator {
        function: generator.function_name(),
        operation,
        source: Arc::new(err),
    }
}

fn failure(generator: &DbGenerator, operation: &'static str) -> impl Fn(sqlx::Error) -> Error {
    move |err| database_error(generator, operation, err)
}
