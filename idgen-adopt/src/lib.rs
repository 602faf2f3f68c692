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
//!   [`PublicId`](idgen_core::PublicId) maps to) without a value, which touches no row, and
//!   gives it a random version-4 default (PostgreSQL `gen_random_uuid()`, MariaDB
//!   `RANDOM_BYTES`, both from the server's cryptographic generator) for rows inserted from
//!   then on. A writer that gives a public ID keeps its own; one that does not yet know the
//!   column (an old version still running) gets the default. So every row inserted after the
//!   step has a public ID, from one of the two.
//! - **`public-id-backfill`** gives one to every row that has none, in batches of consecutive
//!   keys, each its own short transaction (`UPDATE … WHERE key BETWEEN … AND public_id IS
//!   NULL`): a row that a writer gave a public ID meanwhile is skipped (PostgreSQL re-checks
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
//!   tries; MariaDB `MODIFY … NOT NULL` in place without a lock, in strict mode (a row still
//!   without a public ID fails the step rather than get zeros).
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
mod public_id;
mod readback;
mod run;
mod steps;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::time::Duration;

use idgen_core::Layout;
use idgen_db_generator::DbGenerator;
use idgen_engine::SqlName;
use idgen_sql::{Dialect, Session};

pub use error::AdoptError;
pub use public_id::{DEFAULT_BACKFILL_BATCH, MAX_BACKFILL_BATCH, Progress};
pub use readback::KeyReadback;
pub use run::{apply, apply_first, apply_with_progress};
pub use steps::MIN_SEQUENCE_VALUES_LEFT;

use public_id::PublicIdOptions;

/// The default name of the progress table.
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_PROGRESS_TABLE, "idgen_adoption");
/// ```
pub const DEFAULT_PROGRESS_TABLE: &str = "idgen_adoption";

/// The default clock allowance of a Snowflake adoption: the key check uses the time this long
/// before now, for a database host or application host whose clock is behind this one's
/// (and the database-side generator, which starts 20 s behind).
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_CLOCK_ALLOWANCE.as_secs(), 60);
/// ```
pub const DEFAULT_CLOCK_ALLOWANCE: Duration = Duration::from_secs(60);

/// How long a step keeps trying to get its lock by default (see [`AdoptOptions::lock_wait`]).
///
/// ```
/// assert_eq!(idgen_adopt::DEFAULT_LOCK_WAIT.as_secs(), 10);
/// ```
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// What keys the table gets from idgen.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Snowflake {
        layout: Layout,
        generator: Option<Box<DbGenerator>>,
        clock_allowance: Duration,
    },
    HiLo {
        block: u64,
        sequence: Option<SqlName>,
        /// The user moves the writers to a named sequence that is not the column's own.
        writers_use_sequence: bool,
        /// The user accepts a key type with little room for the sequence's values.
        accept_key_capacity: bool,
    },
    /// Keys stay as they are (only a public ID is added).
    KeepKeys,
}

/// What to adopt and how: the table, Snowflake keys or hi-lo blocks, and the progress
/// table. See the [crate documentation](crate).
///
/// ```
/// use std::time::Duration;
/// use idgen_adopt::AdoptOptions;
/// use idgen_db_generator::DbGenerator;
/// use idgen_core::Layout;
///
/// let options = AdoptOptions::snowflake("shop.orders", Layout::TWITTER)?
///     .db_generator(DbGenerator::new(Layout::TWITTER))
///     .clock_allowance(Duration::from_secs(300))
///     .progress_table("ops.adoption")?;
/// assert_eq!(options.table(), "shop.orders");
/// # Ok::<(), idgen_adopt::AdoptError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdoptOptions {
    table: SqlName,
    target: Target,
    progress_table: SqlName,
    lock_wait: Duration,
    public_id: Option<PublicIdOptions>,
    accept_lost_key_readback: bool,
}

impl AdoptOptions {
    /// Snowflake keys under `layout` for `table` (`name` or `schema.name`).
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?;
    /// assert_eq!(options.table(), "orders");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn snowflake(table: &str, layout: Layout) -> Result<Self, AdoptError> {
        Self::new(
            table,
            Target::Snowflake {
                layout,
                generator: None,
                clock_allowance: DEFAULT_CLOCK_ALLOWANCE,
            },
        )
    }

    /// Hi-lo blocks of `block` for `table`, from the key column's own sequence (its identity
    /// or `DEFAULT nextval(…)`) unless [`sequence`](Self::sequence) names another.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 1000)?;
    /// assert_eq!(options.table(), "order_lines");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn hilo(table: &str, block: u64) -> Result<Self, AdoptError> {
        Self::new(
            table,
            Target::HiLo {
                block,
                sequence: None,
                writers_use_sequence: false,
                accept_key_capacity: false,
            },
        )
    }

    fn new(table: &str, target: Target) -> Result<Self, AdoptError> {
        Ok(AdoptOptions {
            table: SqlName::parse("table", table)?,
            target,
            progress_table: SqlName::parse("progress table", DEFAULT_PROGRESS_TABLE)?,
            lock_wait: DEFAULT_LOCK_WAIT,
            public_id: None,
            accept_lost_key_readback: false,
        })
    }

    /// Keys kept as they are: only a public ID is added (with [`public_id`](Self::public_id),
    /// which this adoption needs). The table must still be keyed by one integer column, which
    /// the backfill walks in batches.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a table name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::keep_keys("customers")?.public_id("public_id")?;
    /// assert_eq!(options.table(), "customers");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn keep_keys(table: &str) -> Result<Self, AdoptError> {
        Self::new(table, Target::KeepKeys)
    }

    /// Also give every row a public ID in `column` (PostgreSQL `uuid`, MariaDB `BINARY(16)`:
    /// what [`PublicId`](idgen_core::PublicId) maps to), online: the column with a random
    /// default, a backfill of the existing rows in batches, then a unique index and `NOT
    /// NULL`, none of which blocks writers (see the [crate documentation](crate)). The
    /// application can write public IDs from the moment the column exists; the backfill never
    /// overwrites one.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_adopt::AdoptOptions;
    /// let options = AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?
    ///     .public_id("public_id")?
    ///     .backfill_batch(5000)?
    ///     .backfill_pause(Duration::from_millis(10));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn public_id(mut self, column: &str) -> Result<Self, AdoptError> {
        let column = SqlName::parse("public-ID column", column)?;
        if column.as_str().contains('.') {
            return Err(AdoptError::Options(idgen_engine::Error::InvalidSqlName {
                what: "public-ID column",
                name: column.as_str().to_owned(),
                reason: "a column name has no schema part".into(),
            }));
        }
        self.public_id = Some(PublicIdOptions {
            column,
            batch: DEFAULT_BACKFILL_BATCH,
            pause: Duration::ZERO,
        });
        Ok(self)
    }

    /// How many rows a backfill batch fills (default [`DEFAULT_BACKFILL_BATCH`]; 1 to
    /// [`MAX_BACKFILL_BATCH`]). Each batch is one short transaction. Call it after
    /// [`public_id`](Self::public_id); before, it does nothing.
    ///
    /// # Errors
    ///
    /// [`AdoptError::BackfillBatch`] for 0 or more than [`MAX_BACKFILL_BATCH`].
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_adopt::{AdoptError, AdoptOptions};
    /// let options = AdoptOptions::keep_keys("t")?.public_id("public_id")?;
    /// assert!(options.clone().backfill_batch(10_000).is_ok());
    /// assert!(matches!(options.backfill_batch(0), Err(AdoptError::BackfillBatch { batch: 0, .. })));
    /// # Ok::<(), AdoptError>(())
    /// ```
    pub fn backfill_batch(mut self, rows: u32) -> Result<Self, AdoptError> {
        if rows == 0 || rows > MAX_BACKFILL_BATCH {
            return Err(AdoptError::BackfillBatch {
                batch: rows,
                max: MAX_BACKFILL_BATCH,
            });
        }
        if let Some(p) = &mut self.public_id {
            p.batch = rows;
        }
        Ok(self)
    }

    /// How long the backfill pauses between two batches (default none), to leave the server
    /// to the writers. Call it after [`public_id`](Self::public_id); before, it does nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::keep_keys("t")?
    ///     .public_id("public_id")?
    ///     .backfill_pause(Duration::from_millis(20));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn backfill_pause(mut self, pause: Duration) -> Self {
        if let Some(p) = &mut self.public_id {
            p.pause = pause;
        }
        self
    }

    /// Hi-lo: the sequence to use (`name` or `schema.name`). Ignored for Snowflake keys.
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_adopt::AdoptOptions;
    /// assert!(AdoptOptions::hilo("t", 100)?.sequence("t_id_seq").is_ok());
    /// assert!(AdoptOptions::hilo("t", 100)?.sequence("t id seq").is_err());
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn sequence(mut self, name: &str) -> Result<Self, AdoptError> {
        if let Target::HiLo { sequence, .. } = &mut self.target {
            *sequence = Some(SqlName::parse("sequence", name)?);
        }
        Ok(self)
    }

    /// Hi-lo: take a [`sequence`](Self::sequence) that is not the key column's own (not its
    /// identity's, not the one its `DEFAULT nextval(…)` calls), because the writers get their
    /// keys from it in their own SQL, or will before they write again: the user moves them.
    /// Without it such a sequence is refused ([`AdoptError::SequenceNotUsed`]): old writers
    /// would go on taking keys from the column's default, which knows nothing of the blocks.
    /// Ignored for Snowflake keys.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 1000)?
    ///     .sequence("shared_ids")?
    ///     .writers_use_sequence();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn writers_use_sequence(mut self) -> Self {
        if let Target::HiLo {
            writers_use_sequence,
            ..
        } = &mut self.target
        {
            *writers_use_sequence = true;
        }
        self
    }

    /// Hi-lo: accept a key type that leaves the sequence fewer values than idgen asks for
    /// ([`MIN_SEQUENCE_VALUES_LEFT`], and at least the largest key so far). With `INCREMENT BY
    /// block` every old writer's row takes a whole block of the key's range, so an `integer`
    /// key with blocks of 1000 has room for about 2.1 million more rows or blocks; the plan
    /// states the room either way. Without it, too little room is refused
    /// ([`AdoptError::KeyCapacity`]). Ignored for Snowflake keys.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("order_lines", 100_000)?.accept_key_capacity();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn accept_key_capacity(mut self) -> Self {
        if let Target::HiLo {
            accept_key_capacity,
            ..
        } = &mut self.target
        {
            *accept_key_capacity = true;
        }
        self
    }

    /// Snowflake keys: make the database-side generator the column's default (installed by
    /// `apply`; see [`idgen_db_generator`]). Its layout should be the one
    /// given to [`snowflake`](Self::snowflake). Ignored for hi-lo.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_adopt::AdoptOptions;
    /// use idgen_db_generator::DbGenerator;
    /// let options = AdoptOptions::snowflake("orders", Layout::TWITTER)?.db_generator(DbGenerator::new(Layout::TWITTER));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn db_generator(mut self, generator: DbGenerator) -> Self {
        if let Target::Snowflake { generator: g, .. } = &mut self.target {
            *g = Some(Box::new(generator));
        }
        self
    }

    /// Snowflake keys: how far behind this host's clock the key check looks (default
    /// [`DEFAULT_CLOCK_ALLOWANCE`]). Ignored for hi-lo.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?
    ///     .clock_allowance(Duration::ZERO);
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn clock_allowance(mut self, allowance: Duration) -> Self {
        if let Target::Snowflake {
            clock_allowance, ..
        } = &mut self.target
        {
            *clock_allowance = allowance;
        }
        self
    }

    /// The progress table's name (default [`DEFAULT_PROGRESS_TABLE`]).
    ///
    /// # Errors
    ///
    /// [`AdoptError::Options`] for a name that is not a plain SQL name.
    ///
    /// # Examples
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("t", 10)?.progress_table("ops.adoption")?;
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn progress_table(mut self, name: &str) -> Result<Self, AdoptError> {
        self.progress_table = SqlName::parse("progress table", name)?;
        Ok(self)
    }

    /// How long a step that changes the schema keeps trying to get its lock (default
    /// [`DEFAULT_LOCK_WAIT`]). Each try waits at most 100 ms on PostgreSQL (`lock_timeout`)
    /// and not at all on MariaDB (`lock_wait_timeout = 0`), because other sessions' queries
    /// queue behind an `ALTER` that waits: writers never wait behind a step for longer than
    /// one try plus the change itself. Between tries the step pauses 200 ms (10 ms on MariaDB:
    /// a try that does not wait finds the lock free only when no statement on the table runs,
    /// and blocks nobody, so it tries often).
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_adopt::AdoptOptions::hilo("t", 10)?.lock_wait(Duration::from_secs(60));
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// Acknowledge that some way writers read their new key back is not kept on this server
    /// (the plan's [`key_readback`](AdoptionPlan::key_readback) entries that are not `kept`,
    /// e.g. MariaDB's consecutive keys of a multi-row insert): without it, `apply` refuses
    /// such an adoption with [`AdoptError::KeyReadbackLost`] before changing anything.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_adopt::AdoptOptions;
    /// use idgen_db_generator::DbGenerator;
    /// let options = AdoptOptions::snowflake("orders", Layout::TWITTER)?
    ///     .db_generator(DbGenerator::new(Layout::TWITTER))
    ///     .accept_lost_key_readback();
    /// # let _ = options;
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn accept_lost_key_readback(mut self) -> Self {
        self.accept_lost_key_readback = true;
        self
    }

    /// The table, as given.
    ///
    /// ```
    /// let options = idgen_adopt::AdoptOptions::hilo("shop.lines", 10)?;
    /// assert_eq!(options.table(), "shop.lines");
    /// # Ok::<(), idgen_adopt::AdoptError>(())
    /// ```
    pub fn table(&self) -> &str {
        self.table.as_str()
    }
}

/// One step of an [`AdoptionPlan`]: a stable name (what the progress table records), what it
/// does and why it is safe, and its exact SQL in order.
///
/// ```
/// # fn show(plan: &idgen_adopt::AdoptionPlan) {
/// for step in &plan.steps {
///     println!("{} ({}): {}", step.name, if step.done { "done" } else { "to do" }, step.description);
///     for sql in &step.sql {
///         println!("    {sql};");
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Step {
    /// The step's name: `progress-table`, `check-keys`, `install-generator`,
    /// `retire-default`, `identity-by-default`, `hilo-sequence`, `public-id-column`,
    /// `public-id-backfill`, `public-id-unique-index` or `public-id-not-null`.
    pub name: &'static str,
    /// What it does, with the numbers read, and why it is safe online.
    pub description: String,
    /// Its SQL, in order. A PostgreSQL step is one text: one transaction ending with the
    /// progress record. `check-keys` reads only; `install-generator` runs
    /// [`db_generator::install`](idgen_db_generator::install), whose first statements these are.
    pub sql: Vec<String>,
    /// Whether the progress table records it as finished (`apply` skips it).
    pub done: bool,
}

impl Step {
    fn new(name: &'static str, description: String, sql: Vec<String>) -> Self {
        Step {
            name,
            description,
            sql,
            done: false,
        }
    }
}

/// What [`plan`] found and the steps [`apply`] would run. `Display` prints it for an operator.
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{plan, AdoptOptions};
/// let plan = plan(session, &AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?).await?;
/// println!("{plan}");
/// assert!(plan.steps.iter().any(|s| s.name == "retire-default"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdoptionPlan {
    /// The database.
    pub dialect: Dialect,
    /// The table.
    pub table: String,
    /// Its key column.
    pub column: String,
    /// The key column's type.
    pub data_type: String,
    /// Where its values come from today (`identity (always)`, `nextval(…)`, `AUTO_INCREMENT`, …).
    pub key_source: String,
    /// `MAX(key)` when planned (0 for an empty table).
    pub max_key: i64,
    /// The server and its version (`PostgreSQL 15.18`, `MariaDB 10.11.19`).
    pub server: String,
    /// How writers read their new row's key back, and whether each way still gives the
    /// row's key once the database-side generator makes the keys (empty when the adoption
    /// leaves the key's default alone).
    pub key_readback: Vec<KeyReadback>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl AdoptionPlan {
    /// Whether every step is done.
    ///
    /// ```no_run
    /// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
    /// use idgen_adopt::{apply, plan, AdoptOptions};
    /// let options = AdoptOptions::hilo("order_lines", 1000)?;
    /// apply(session, &options).await?;
    /// assert!(plan(session, &options).await?.finished());
    /// # Ok(()) }
    /// ```
    pub fn finished(&self) -> bool {
        self.steps.iter().all(|s| s.done)
    }

    /// The ways of reading a new key back that the switch does not keep on this server.
    ///
    /// ```no_run
    /// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
    /// use idgen_adopt::{plan, AdoptOptions};
    /// let options = AdoptOptions::hilo("order_lines", 1000)?;
    /// assert!(plan(session, &options).await?.lost_key_readback().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn lost_key_readback(&self) -> Vec<&KeyReadback> {
        self.key_readback.iter().filter(|r| !r.kept).collect()
    }
}

impl std::fmt::Display for AdoptionPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "adopt {}.{} ({}, {}; largest key {}) on {}:",
            self.table, self.column, self.data_type, self.key_source, self.max_key, self.server
        )?;
        if !self.key_readback.is_empty() {
            writeln!(
                f,
                "\nhow writers read their new key back, after the switch on {}:",
                self.server
            )?;
            for r in &self.key_readback {
                let kept = if r.kept { "kept" } else { "NOT KEPT" };
                writeln!(f, "   {kept:>8}: {} ({})", r.means, r.how)?;
            }
            if !self.lost_key_readback().is_empty() {
                writeln!(
                    f,
                    "   apply refuses until you acknowledge the means not kept (--accept-lost-key-readback)"
                )?;
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            let state = if step.done { "done" } else { "to do" };
            writeln!(
                f,
                "\n{}. {} [{state}]\n   {}",
                i + 1,
                step.name,
                step.description
            )?;
            for sql in &step.sql {
                for line in sql.lines() {
                    writeln!(f, "     {line}")?;
                }
            }
        }
        Ok(())
    }
}

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
