//! Adopting idgen on a table that already has rows, on a pool (features `lease` and
//! `postgres` or `mysql`): [`plan`] reads the table and returns the steps with their SQL,
//! changing nothing; [`apply`] runs them, recording each in a progress table, so that a second
//! run after an interruption finishes the job and a run after completion changes nothing.
//!
//! The procedure is idgen-adopt's [`idgen_adopt`] (re-exported here), written once over a
//! session; this module opens one connection of the pool for it and closes it afterwards (or
//! when the call is cancelled), so nothing it set goes back to the pool. What each step does
//! and why it is safe online is described there.
//!
//! ```no_run
//! # #[cfg(feature = "postgres")]
//! # async fn demo(pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::adopt::{self, AdoptOptions};
//! use idgen_sqlx::Layout;
//!
//! // orders: BIGINT GENERATED ALWAYS AS IDENTITY, with rows and child tables.
//! let options = AdoptOptions::snowflake("orders", Layout::TWITTER)?;
//! println!("{}", adopt::plan(&pool, &options).await?); // every step and its SQL
//! adopt::apply(&pool, &options).await?;
//! // From now on the application writes keys from its `Snowflake` generator, all above the old ones.
//! # Ok(()) }
//! ```
//!
//! The doctests of [`plan`], [`apply`] and [`apply_first`] run against real servers in
//! idgen-sqlx's tests (`tests/adopt.rs`), since a doctest has none.

use std::sync::Arc;

use sqlx::Pool;

use crate::db_generator::DbGeneratorDialect;
pub use idgen_adopt::*;

/// Reads `options`' table on one connection of `pool` and returns the steps that adopt it
/// ([`idgen_adopt::plan`]). Changes nothing.
///
/// # Errors
///
/// An [`AdoptError`] naming why the table cannot be adopted (no or a composite primary key,
/// a UUID or text key, a trigger that writes the key, a table the user does not own, keys above
/// what the layout issues, …), or [`AdoptError::Database`].
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "mysql")]
/// # async fn demo(pool: sqlx::MySqlPool) -> Result<(), idgen_sqlx::adopt::AdoptError> {
/// use idgen_sqlx::adopt::{plan, AdoptOptions};
/// let plan = plan(&pool, &AdoptOptions::snowflake("orders", idgen_sqlx::Layout::TWITTER)?).await?;
/// for step in &plan.steps {
///     println!("{}: {}\n{}", step.name, step.description, step.sql.join(";\n"));
/// }
/// # Ok(()) }
/// ```
pub async fn plan<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    options: &AdoptOptions,
) -> Result<AdoptionPlan, AdoptError> {
    idgen_adopt::plan(&mut session(pool, options).await?, options).await
}

/// Runs every unfinished step of the adoption on one connection of `pool`
/// ([`idgen_adopt::apply`]) and returns the plan as it stands afterwards.
///
/// # Errors
///
/// As [`plan`], and [`AdoptError::Busy`] when a step did not get its lock in time (that step
/// did not make its change: run again).
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::adopt::AdoptError> {
/// use idgen_sqlx::adopt::{apply, AdoptOptions};
/// let options = AdoptOptions::hilo("order_lines", 1000)?; // the identity's own sequence
/// assert!(apply(&pool, &options).await?.finished());
/// // `HiLo::builder(&pool).counter("public.order_lines_id_seq").block(1000)` now starts.
/// # Ok(()) }
/// ```
pub async fn apply<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    options: &AdoptOptions,
) -> Result<AdoptionPlan, AdoptError> {
    idgen_adopt::apply(&mut session(pool, options).await?, options).await
}

/// Like [`apply`], calling `progress` after every batch of a public-ID backfill
/// ([`idgen_adopt::apply_with_progress`]): rows done, rows expected, rate and time left.
///
/// # Errors
///
/// As [`apply`].
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::adopt::AdoptError> {
/// use idgen_sqlx::adopt::{apply_with_progress, AdoptOptions};
/// let options = AdoptOptions::snowflake("orders", idgen_sqlx::Layout::TWITTER)?.public_id("public_id")?;
/// apply_with_progress(&pool, &options, |p| eprintln!("{p}")).await?;
/// # Ok(()) }
/// ```
pub async fn apply_with_progress<DB, F>(
    pool: &Pool<DB>,
    options: &AdoptOptions,
    progress: F,
) -> Result<AdoptionPlan, AdoptError>
where
    DB: DbGeneratorDialect,
    F: FnMut(&Progress) + Send,
{
    idgen_adopt::apply_with_progress(&mut session(pool, options).await?, options, progress).await
}

/// Like [`apply`], but runs at most `steps` unfinished steps ([`idgen_adopt::apply_first`]).
///
/// # Errors
///
/// As [`apply`].
///
/// # Examples
///
/// ```no_run
/// # #[cfg(feature = "postgres")]
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::adopt::AdoptError> {
/// use idgen_sqlx::adopt::{apply_first, AdoptOptions};
/// let options = AdoptOptions::snowflake("orders", idgen_sqlx::Layout::TWITTER)?;
/// let plan = apply_first(&pool, &options, 2).await?; // the progress table and the key check
/// assert!(!plan.finished());
/// # Ok(()) }
/// ```
pub async fn apply_first<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    options: &AdoptOptions,
    steps: usize,
) -> Result<AdoptionPlan, AdoptError> {
    idgen_adopt::apply_first(&mut session(pool, options).await?, options, steps).await
}

async fn session<DB: DbGeneratorDialect>(
    pool: &Pool<DB>,
    options: &AdoptOptions,
) -> Result<DB::Session, AdoptError> {
    DB::closing_session(pool)
        .await
        .map_err(|e| AdoptError::Database {
            table: options.table().to_owned(),
            operation: "open a connection".to_owned(),
            source: Arc::new(e),
        })
}
