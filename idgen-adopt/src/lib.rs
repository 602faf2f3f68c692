//! Adopting idgen on a table that already has rows: [`plan`] reads the table and writes the
//! steps (changing nothing), [`apply`] runs them, resumably, over any adapter's [`Session`]
//! on PostgreSQL and MariaDB (`idgen_sqlx::adopt` runs them on a pool; `idgen adopt` is the
//! command). Applications do not depend on this crate: they use their driver's adapter, which
//! re-exports it (`idgen_sqlx::adopt`).
//!
//! Two ways to take over a table keyed by one integer column (`IDENTITY`, `BIGSERIAL`,
//! `AUTO_INCREMENT`, or keys the application writes):
//!
//! - **Snowflake keys** ([`AdoptOptions::snowflake`]): every key idgen issues from now on is
//!   above every existing key. `plan` checks that the smallest ID the layout can issue (node 0,
//!   sequence 0, at this host's time less a clock allowance) is above `MAX(key)`, and refuses
//!   naming both otherwise; `apply` checks it again. Then the column's own default is retired
//!   so that only idgen writes keys: PostgreSQL `DROP IDENTITY` (the identity's sequence goes
//!   with it) or `DROP DEFAULT` (a serial's sequence is kept: dropping it cannot be undone and
//!   other code may still read it), MariaDB `MODIFY` without `AUTO_INCREMENT`, in place and
//!   without a lock. With [`AdoptOptions::db_generator`] the database-side generator becomes
//!   the default instead (installed first; on PostgreSQL in the same transaction as the drop,
//!   on MariaDB its trigger is created before `AUTO_INCREMENT` is removed), so inserts without
//!   a key keep working throughout. Old rows keep their keys, so child tables' foreign keys
//!   hold untouched.
//! - **Hi-lo on the existing sequence** ([`AdoptOptions::hilo`]): the column's sequence (or a
//!   named one) is set to `INCREMENT BY block` and moved above the largest key, in one safe
//!   step (below). Old writers that call `nextval` keep working.
//!
//! ```
//! use idgen_adopt::AdoptOptions;
//! use idgen_core::Layout;
//!
//! let orders = AdoptOptions::snowflake("orders", Layout::TWITTER)?;
//! assert_eq!(orders.table(), "orders");
//! let lines = AdoptOptions::hilo("order_lines", 1000)?.sequence("order_lines_id_seq")?;
//! assert_eq!(lines.table(), "order_lines");
//! assert!(AdoptOptions::hilo("lines; DROP TABLE x", 1000).is_err());
//! # Ok::<(), idgen_adopt::AdoptError>(())
//! ```
//!
//! # Public IDs for existing rows
//!
//! With [`AdoptOptions::public_id`] (after the key steps, or alone with
//! [`AdoptOptions::keep_keys`]) four more steps give every row a public ID without blocking
//! writers:
//!
//! - **`public-id-column`** adds the column (PostgreSQL `uuid`, MariaDB `BINARY(16)`, what
//!   [`PublicId`](idgen_core::PublicId) maps to) without a value, which touches no row (on
//!   MariaDB the column is `NOT NULL` and the rows already there read 16 zero bytes, the nil
//!   UUID, until the backfill reaches them, so that `NOT NULL` needs no rebuild of the table),
//!   and gives it a random version-4 default (PostgreSQL `gen_random_uuid()`, MariaDB
//!   `RANDOM_BYTES`, both from the server's cryptographic generator) for rows inserted from
//!   then on. A writer that gives a public ID keeps its own; one that does not yet know the
//!   column (an old version still running) gets the default. So every row inserted after the
//!   step has a public ID, from one of the two.
//! - **`public-id-backfill`** gives one to every row that has none, in batches of consecutive
//!   keys, each its own short transaction (`UPDATE … WHERE key BETWEEN … AND public_id IS
//!   NULL`, on MariaDB also the nil UUID): a row that a writer gave a public ID meanwhile is skipped (PostgreSQL re-checks
//!   the condition on the row it waited for; MariaDB reads the latest version in an
//!   `UPDATE`), so no row gets two. It reads the rows still without one first (their count, the
//!   smallest and largest key), walks that range, then looks again, until none is left; killed,
//!   it starts from the first row still without one.
//! - **`public-id-unique-index`**: PostgreSQL `CREATE UNIQUE INDEX CONCURRENTLY` (writers go on;
//!   an invalid index left by a build that was stopped is dropped and built again, and a build
//!   still running in another session is waited for); MariaDB `ADD UNIQUE INDEX`, in place
//!   without a lock.
//! - **`public-id-not-null`**: PostgreSQL adds `CHECK (… IS NOT NULL) NOT VALID`, validates it
//!   (a scan that does not block writers), then sets `NOT NULL` (which the valid check makes a
//!   catalog change) and turns the index into a `UNIQUE` constraint, under a lock taken in short
//!   tries. On MariaDB the column is `NOT NULL` from the first step; a column an earlier
//!   version added nullable gets `MODIFY … NOT NULL` in place without a lock, in strict mode (a
//!   row still without a public ID fails the step rather than get zeros).
//!
//! [`apply_with_progress`] reports the backfill after every batch ([`Progress`]: rows done,
//! rows expected, rate, time left).
//!
//! # Refusals
//!
//! `plan` refuses, changing nothing, with an [`AdoptError`] naming the reason: no table, no
//! primary key, a composite key, a key that is not an integer (UUID, text) or, for Snowflake
//! IDs, narrower than `BIGINT`, a trigger that sets the key column, a table or sequence the
//! user may not alter (PostgreSQL: not its owner), keys at or above the smallest ID the layout
//! can issue, a sequence that counts down, cycles or has no room for two blocks. For hi-lo
//! also: a MariaDB `AUTO_INCREMENT` key, with or without a named sequence (it would go on
//! handing out keys inside the blocks); a named sequence that is not the column's own (its
//! identity's, or the one its default calls), unless [`AdoptOptions::writers_use_sequence`]
//! says the user moves the writers to it; and a key type that leaves the sequence fewer than
//! [`MIN_SEQUENCE_VALUES_LEFT`] values (or fewer than the largest key so far) with `INCREMENT
//! BY block`, unless [`AdoptOptions::accept_key_capacity`] accepts it (the plan states the
//! room either way). On MariaDB a
//! missing `ALTER` privilege is not detected beforehand (grants through roles and wildcard
//! schemas are not reliably visible): the step fails with the server's error.
//!
//! # Hi-lo on an existing sequence: why no value is handed out twice
//!
//! idgen's hi-lo counters are pooled-lo: a sequence value `v` is the block `[v, v + block)`
//! (see [`CounterSql`](idgen_sql::CounterSql)), and a hi-lo source refuses to start unless the
//! sequence's increment equals its block. The step sets `INCREMENT BY block` and then the
//! value to `max(MAX(key), last value)`:
//!
//! - **Before the change** every value handed out (to old writers, or cached by their
//!   sessions) is at most the sequence's last value, and every key at most `MAX(key)`; the
//!   first value after the change is above both, so every block `[v, v + block)` lies above
//!   every old value and key.
//! - **After the change** every value is on one grid of step `block`: an old writer that
//!   calls `nextval` and uses `v` as its key takes a whole block and wastes the rest, and no
//!   other caller ever gets a block containing `v`. New hi-lo processes start only once the
//!   increment equals their block.
//! - **During the change**, on PostgreSQL, the step is one transaction: `ALTER SEQUENCE`
//!   takes a lock that `nextval` waits for until the commit, and the value is read and set
//!   inside it, so no `nextval` runs between the read and the set. A session whose
//!   transaction has called `nextval` and not ended holds the lock the `ALTER` waits for;
//!   each try waits at most 100 ms and is rolled back whole, and once the lock wait is spent
//!   the step gives up, changing nothing ([`AdoptError::Busy`]): the unsafe case is refused,
//!   not raced. Values other sessions had cached are discarded when
//!   the sequence is rewritten, and were below the new value anyway. On MariaDB, where
//!   `SETVAL` takes only a literal and DDL commits at once, `SETVAL` runs first: it only ever
//!   moves a sequence forwards, so a `NEXTVAL` between reading the maximum and setting it at
//!   worst makes it a no-op, never a step back, and old writers keep taking single values
//!   above the maximum. The `ALTER` (which waits for sessions using the sequence) then
//!   continues from the next value not yet cached, above everything handed out; no hi-lo
//!   process can start before it, since the increment still differs from its block. The grid
//!   argument holds from the `ALTER` on.
//!
//! Writers that make up keys without the sequence (explicit keys from elsewhere) are outside
//! this argument, as they are outside any sequence's: stop them before adopting.
//!
//! # Resumable apply
//!
//! [`apply`] creates a progress table (default `idgen_adoption`) and records each finished
//! step in it (on PostgreSQL in the step's own transaction, so a step is done and recorded or
//! neither). Run again, it skips finished steps and re-runs an unfinished one, whose SQL is
//! idempotent (`IF EXISTS`, `IF NOT EXISTS`, forward-only moves); run after it finished, it
//! changes nothing. The session should be a connection of its own (the adapters open one and
//! close it afterwards): a MariaDB step sets a user variable.

mod error;
mod facts;
mod limits;
mod options;
mod plan;
mod public_id;
mod readback;
mod run;
mod steps;
mod transaction;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use idgen_sql::Session;

pub use error::AdoptError;
pub use limits::{
    DEFAULT_BACKFILL_BATCH, DEFAULT_BACKFILL_PAUSE, DEFAULT_CLOCK_ALLOWANCE, DEFAULT_LOCK_WAIT,
    DEFAULT_PROGRESS_TABLE, MAX_BACKFILL_BATCH, MIN_SEQUENCE_VALUES_LEFT,
};
pub use options::AdoptOptions;
pub use plan::{AdoptionPlan, Step};
pub use public_id::Progress;
pub use readback::KeyReadback;
pub use run::{apply, apply_first, apply_with_progress};

/// Reads `options`' table and returns the steps that adopt it, marking those the progress
/// table records as done. Changes nothing (reads the catalog, `MAX(key)` and the progress
/// table, if there is one).
///
/// # Errors
///
/// An [`AdoptError`] naming why the table cannot be adopted (see the crate documentation),
/// or [`AdoptError::Database`] with the database's error.
///
/// # Examples
///
/// `idgen_sqlx::adopt::plan` calls it on a connection of a pool; the tests run it against
/// real servers.
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{plan, AdoptError, AdoptOptions};
/// match plan(session, &AdoptOptions::hilo("order_lines", 1000)?).await {
///     Ok(plan) => println!("{plan}"),
///     Err(AdoptError::CompositeKey { columns, .. }) => println!("keyed by {columns:?}: not adoptable"),
///     Err(other) => return Err(other),
/// }
/// # Ok(()) }
/// ```
pub async fn plan<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
) -> Result<AdoptionPlan, AdoptError> {
    run::plan_steps(session, options)
        .await
        .map(|(plan, _)| plan)
}
