//! Snowflake IDs made inside the database, under the application's [`Layout`].
//!
//! Rows inserted by SQL scripts, other languages, triggers or bulk loads can take their IDs
//! from an SQL function, `idgen_next_id()`, that issues IDs which sort and decode exactly like
//! the application's: the same epoch, time unit, field widths and order. This crate writes
//! that function's SQL for PostgreSQL (PL/pgSQL) and MariaDB (a stored function), as text, and
//! runs the installer over any adapter's [`Session`](idgen_sql::Session) ([`install`],
//! [`uninstall`]); the adapter crates call them (`idgen_sqlx::db_generator::install`).
//! Applications do not depend on this crate: they use their driver's adapter, which
//! re-exports it (`idgen_sqlx::db_generator`).
//!
//! ```
//! use idgen_db_generator::DbGenerator;
//! use idgen_sql::Dialect;
//! use idgen_core::Layout;
//!
//! let generator = DbGenerator::new(Layout::TWITTER);
//! let sql = generator.migration_sql(Dialect::Postgres)?;
//! assert!(sql[0].starts_with("CREATE TABLE IF NOT EXISTS \"idgen_db_generator\""));
//! assert!(sql.iter().any(|s| s.starts_with("CREATE SEQUENCE IF NOT EXISTS \"idgen_next_id_count\"")));
//! assert_eq!(generator.holder(), "database:idgen_next_id");
//! # Ok::<(), idgen_engine::Error>(())
//! ```
//!
//! # The database's node ID
//!
//! The function uses a node ID that the database holds through the **same lease table** the
//! applications' [`WorkerLease`](idgen_engine::lease::WorkerLease)s use, claimed with the same
//! claim procedure, so the database and the applications never share a node ID. A database
//! cannot renew a lease in the background, so the installer claims the row under a holder label
//! of its own install, `database:<schema>.<function>:<install ID>` ([`holder`](DbGenerator::holder),
//! [`install_id`](DbGenerator::install_id)), with a lease that ends only after
//! [`DATABASE_LEASE_TTL`] (100 years): applications claim only expired rows, so they never take
//! it, and another install sharing the lease table never takes it back. Uninstalling gives the
//! node ID back with the last timestamp issued, so its next holder never issues at or below it;
//! installing starts after the last timestamp any earlier holder stored, and, when its claim
//! cannot prove a release, after the applications' takeover floor
//! ([`takeover_wait`](DbGenerator::takeover_wait)).
//!
//! The installer names every object with the schema it resolves: unqualified names go to the
//! session's current schema (PostgreSQL `current_schema()`, MariaDB `DATABASE()`), except an
//! unqualified lease table on PostgreSQL, which is the one the search path finds or, when there
//! is none yet, `public`'s. So the function reads the same objects from any session.
//!
//! **Fenced when its lease row is freed or taken.** A trigger on the lease table fences the
//! function the moment its row is updated to another holder, freed or deleted (or the table is
//! truncated, on PostgreSQL), inside the transaction that does it, before any other session can
//! see the row free: from then on every call fails (`IDG02`) until the function is installed
//! again. On an update the trigger also raises the row's last timestamp to the last one the
//! function issued, so a claim of the freed row starts after it. Every ID a call returns was
//! drawn before the call saw the fence unset (the check follows the draw), so it is at or below
//! what the trigger records.
//!
//! What no trigger sees (`TRUNCATE` on MariaDB, a dropped and recreated lease table, a restore,
//! an update with triggers disabled) the function checks itself: once per jump to a new tick, and
//! on each call ahead of the clock, it reads its lease row; when the row is missing or carries
//! another holder it fences itself and raises `IDG06`.
//!
//! # No lock in the caller's transaction
//!
//! The function keeps its state in **sequences**, which are not transactional: it works the
//! same in autocommit, in long transactions, under `READ COMMITTED`, `REPEATABLE READ` and
//! `SERIALIZABLE` (and MariaDB's `innodb_snapshot_isolation`), and concurrent sessions never
//! wait for each other's transactions. A rolled-back transaction does not give its IDs back.
//!
//! The state is a pair: a **count** sequence, advanced by one per ID (`nextval`), and a
//! **base**, so that an ID's (tick, sequence) word is `count + base`. On the fast path a call
//! reads the base, draws a count, and reads the base again; if the base changed in between it
//! draws again. When the word's tick is behind the clock's (the clock moved on), the call
//! raises the base so that the next counts land at the start of the current tick (the *jump*);
//! the base only ever grows, so every word is greater than every word drawn before it, by any
//! session: IDs are unique and strictly increasing in the order they were drawn, so also per
//! session.
//!
//! - On **PostgreSQL** the base is one sequence set with `setval` under a session advisory
//!   lock that only jumps take (once per tick at most, for a few microseconds), inside an
//!   exception block that gives the lock back whatever error or cancel arrives.
//! - On **MariaDB**, where `SETVAL` takes only literals, the base is the sum of three
//!   sequences that step by 1, 2¹⁴ and 2²⁸ ticks, advanced with `NEXTVAL` only, so the base
//!   can only grow whoever moves it; jumps take a named lock (`GET_LOCK`) so that two sessions
//!   do not both add the same gap (which would push IDs into the future, never repeat one). A
//!   jump rounds up to whole ticks, so it may skip part of a tick's sequence numbers. The
//!   jumper knows the base it leaves and draws next without reading it; a session that finds
//!   the lock taken waits for it without reading the base sequences (a jump's `NEXTVAL` writes
//!   one of them, and a steady stream of readers there kept it from writing for seconds at 32
//!   sessions). A named lock belongs to the connection, and no handler runs when a statement
//!   is killed (`KILL QUERY`, `max_statement_time`, a client's time-out), so a jump cut short
//!   leaves it on an idle connection. The lock's name therefore carries a generation (the
//!   sequence `<function>_jump`): a jump goes ahead only under the lock of the generation it
//!   reads once it holds that lock, and a waiting session that finds the holder idle in the
//!   process list (`COMMAND = 'Sleep'`; a jump holds the lock only inside a statement) moves
//!   the generation on, under the next generation's lock, after any jump still running under
//!   the old one, so jumps go on under the new lock within about 20 ms. The process list shows
//!   the function (which runs as its definer) only the definer's own connections, or all with
//!   the `PROCESS` privilege: a holder it cannot see is waited for as before, and the waiter
//!   fails with `IDG05` after 10 s.
//!
//! When a tick's sequence is used up, the word runs into the next tick and the call waits for
//! that tick to begin, as the Rust generator does (Instagram's `nextval() % 1024` wraps there
//! and repeats IDs). When the word is more than one tick ahead of the database's clock (the
//! clock moved backwards), the [`ClockPolicy`] decides, as in the Rust generator: `Refuse`,
//! `Wait { max }` (sleep until the clock catches up, if it is behind by at most `max`) or
//! `Borrow { max }` (issue while within `max`); beyond the bound an error naming how far. The
//! time is the database host's, independent of the session's time zone: on PostgreSQL
//! `clock_timestamp()`, the wall clock read on every call; on MariaDB the time inside
//! `UUID()`, which `--sysdate-is-now`, `SET timestamp` and daylight-saving changes leave alone
//! and which is the wall clock read once at server start-up plus the monotonic clock since
//! (MariaDB's `mysys/my_uuid.c`: `my_interval_timer()` plus an offset `set_clock_seq()` takes
//! from `my_hrtime()` in `my_uuid_init()`). A step of the host's clock is therefore followed
//! only at the server's next restart, where a step back meets the clock policy.
//!
//! # A block per session
//!
//! One draw of the count sequence reserves a block of [`block_len`](DbGenerator::block_len)
//! words (the count sequence steps by that much), and the session hands out the rest of them
//! itself: a call that finds its session's block not used up and still in time reads no table
//! and draws from no shared sequence. The session's block lives where no rollback undoes it (a
//! table's or a `set_config` setting's state would be undone with the transaction, and the
//! block handed out again):
//!
//! - on **MariaDB** in four user variables named after the install and node, which belong to
//!   the connection; the block is held until the next tick's start plus 1 s on the session's
//!   `SYSDATE(6)`, measured from the function's clock when it was reserved (a zone change, a
//!   step of the clock or daylight saving's repeated hour moves `SYSDATE()` out of the window
//!   and ends it; a session whose `SYSDATE()` is not within 1 s of the function's clock, as
//!   under `--sysdate-is-now` with `SET timestamp`, holds none);
//! - on **PostgreSQL** in a temporary sequence (`pg_temp.idgen_<hash>`, named after the
//!   install, node and layout) holding the last ID handed out: `nextval` and `setval` are not
//!   transactional, and a sequence created in a transaction that is rolled back (or a
//!   savepoint's) is gone with its block, so the next call draws a new one. Blocks are whole
//!   multiples of the block's length, so a block never crosses a tick, and the session stops at
//!   the next block's first word. The block is held while `clock_timestamp()` is before its
//!   tick's end plus 1 s. `DISCARD ALL` or `DISCARD TEMP` drops it (the next call draws). A
//!   session that may not create temporary objects (no `TEMPORARY` privilege on the database,
//!   a security-restricted operation) keeps no block: every call draws, as before blocks. A
//!   transaction that called the function has used a temporary object, so PostgreSQL refuses to
//!   `PREPARE TRANSACTION` it (two-phase commit): installs for such applications turn blocks
//!   off ([`session_blocks(false)`](DbGenerator::session_blocks)).
//!
//! So, on both databases:
//!
//! - **an ID's time field may trail its insert by up to one tick plus 1 s**, and the IDs of
//!   two sessions interleave; each session's IDs strictly increase (every block is above every
//!   block reserved before it, and a refill drops what was left of the last one);
//! - the refill, the jump, the lease-row check and the fence check run once per block: **a
//!   fenced function may still hand out what a session had reserved before the fence, at most
//!   the rest of one block per session, never more**. The last timestamp the fence records is
//!   that of the last block reserved (MariaDB: the base plus the count sequence's next uncached
//!   value), above every reserved word, so the next holder of the node starts above them all;
//! - the clock policy applies when a block is reserved: a session's block is handed out while
//!   its time has not run out, also when the host's clock stepped back behind it (at most the
//!   rest of one block per session ahead of the clock; the next reservation meets the policy).
//!
//! # Speed
//!
//! PL/pgSQL sets every expression up again in each transaction, and most callers take one ID
//! per transaction, so every operator of the fast path costs every caller. With a block the
//! fast path is two expressions (the temporary sequence's `nextval`, and the block's end and
//! time in one comparison with `clock_timestamp()`) and the `RETURN`. Measured with callgrind
//! as instructions per autocommit `INSERT` into a table whose key defaults to the function
//! (PostgreSQL 15 in single-user mode, Twitter layout): identity 97 k, a function that only
//! returns `nextval` of a sequence (the routine floor) 92 k, the generator before blocks 128 k
//! (three reads of shared sequences and two longer expressions), with blocks 110 k; a call on
//! its own (`SELECT count(idgen_next_id()) FROM generate_series(…)`) 15.0 k against the floor's
//! 7.5 k, of which 3.1 k are `to_regclass` finding the session's sequence by name (a name
//! written into the expression would be resolved once, but would fail the session's calls
//! for good after a `DISCARD TEMP`). The shared sequences' buffers, which every call locked
//! three times before, are now locked once per block, so
//! sessions no longer queue on them. On MariaDB a single `SELECT` from a sequence inside the
//! function, before and after the draw, already cost more than the 10% the issue allows, and
//! MariaDB's `SETVAL` takes only literals, so the base cannot live in the count sequence
//! itself: most calls run two statements on user variables and the clock, no table.
//! `idgen-sqlx/BENCHMARKS.md` has the measurements and commands.
//!
//! # Replication and privileges
//!
//! The function reads the clock and draws from sequences, so it is not deterministic: on
//! MariaDB with binary logging, creating it needs `log_bin_trust_function_creators = 1` (or
//! the privilege to create such functions), and replicas must use row-based replication, so
//! that they copy the IDs instead of calling the function again. Sessions that call it need
//! `USAGE`/`SELECT`/`UPDATE` on its sequences and `SELECT` on the lease table (PostgreSQL) or
//! `SELECT`/`INSERT` on them (MariaDB); on PostgreSQL a session keeps a block only with the
//! `TEMPORARY` privilege on the database (granted to `PUBLIC` by default; without it every call
//! draws). On PostgreSQL the installer also creates an `sql_drop`
//! event trigger that fences the function when its lease table is dropped, where it may (a
//! superuser may); without it the function's own check stops it at its next jump. MySQL has no sequences: the generator needs MariaDB 10.3 or later.
//!
//! # Errors from the function
//!
//! The function raises SQLSTATE `IDG01` (the clock moved backwards beyond the policy),
//! `IDG02` (its node ID lease is not held: fenced or never installed), `IDG03` (the time is
//! before the layout's epoch), `IDG04` (after the layout's last instant), `IDG05` (MariaDB:
//! another session held the jump lock for over 10 s, running, or idle where the function
//! cannot see it) or `IDG06` (its lease row is missing or carries another holder: the lease
//! table was truncated, dropped, recreated or restored, or the row was taken with the fence
//! bypassed; the function fences itself, and later calls fail `IDG02`);
//! [`DbGenerator::error_from_database`] turns all but `IDG05` into the same [`Error`]s the Rust
//! generator returns.
//!
//! # SQL helpers
//!
//! Installing also creates three helpers for the layout ([`DbGenerator::helper_names`]):
//! `idgen_decode(id)` (the time, node and sequence of an ID), and `idgen_min_id_at(t)` /
//! `idgen_max_id_at(t)`, the smallest and largest ID of a time, so that a time-range query can
//! use the primary key (`WHERE id BETWEEN idgen_min_id_at(a) AND idgen_max_id_at(b)`). An ID's
//! time is when its block was reserved (see "A block per session"): up to one tick plus 1 s
//! before the row's insert, so a query for rows inserted from `a` on starts at
//! `idgen_min_id_at(a - 1 s - one tick)`.

mod install;
mod key_default;
mod literal;
mod mysql;
mod postgres;
#[cfg(test)]
mod tests;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::time::Duration;

use idgen_core::{ClockPolicy, Layout};
use idgen_engine::SqlName;
use idgen_engine::{Error, ErrorKind};
use idgen_sql::Dialect;

pub use install::{install, uninstall};

/// How long the database's lease on its node ID lasts: 100 years, so that it never expires
/// while the function is installed; the adapters' `uninstall` gives it back.
///
/// ```
/// assert_eq!(idgen_db_generator::DATABASE_LEASE_TTL.as_secs(), 100 * 365 * 24 * 3600);
/// ```
pub const DATABASE_LEASE_TTL: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The default name of the function.
pub const DEFAULT_FUNCTION: &str = "idgen_next_id";

/// The default name of the state table (one row per installed function).
pub const DEFAULT_STATE_TABLE: &str = "idgen_db_generator";

/// The longest suffix appended to the function's name for the objects beside it.
const LONGEST_SUFFIX: &str = "_fence_truncate";

/// The prefix of the holder label under which the database holds its node ID.
pub const HOLDER_PREFIX: &str = "database:";

/// The name the database-generator API used for [`Dialect`] (which it now takes directly).
#[deprecated(
    since = "0.6.0",
    note = "use `idgen_sql::Dialect` (SQLite is refused with an error)"
)]
pub type SqlDialect = Dialect;

/// The database a generator is written for: the [`Dialect`]s that have stored functions and
/// sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    Postgres,
    MariaDb,
}

impl Host {
    fn of(dialect: Dialect) -> Result<Host, Error> {
        match dialect {
            Dialect::Postgres => Ok(Host::Postgres),
            Dialect::MySql => Ok(Host::MariaDb),
            other => Err(ErrorKind::InvalidOptions {
                reason: format!(
                    "the database-side generator needs PostgreSQL or MariaDB (stored functions and sequences); {other} has neither"
                ),
            }.into()),
        }
    }

    fn quote(self) -> char {
        match self {
            Host::Postgres => '"',
            Host::MariaDb => '`',
        }
    }
}

/// The SQL of a database-side Snowflake generator: an SQL function issuing IDs under `layout`
/// with a node ID the database leases from the lease table. See the [crate
/// documentation](crate).
///
/// Defaults: function `idgen_next_id`, state table `idgen_db_generator`, lease table
/// `idgen_worker_lease`, lease namespace `default`, clock policy `Wait { max: 10 ms }` (the Rust
/// generator's default).
///
/// ```
/// use std::time::Duration;
/// use idgen_db_generator::DbGenerator;
/// use idgen_sql::Dialect;
/// use idgen_core::{ClockPolicy, Layout};
///
/// let generator = DbGenerator::new(Layout::INSTAGRAM)
///     .function("app.next_order_id")?
///     .namespace("orders")
///     .clock_policy(ClockPolicy::Borrow { max: Duration::from_millis(50) });
/// let sql = generator.function_sql(Dialect::MySql, 7)?;
/// assert!(sql.starts_with("CREATE OR REPLACE FUNCTION `app`.`next_order_id`()"));
///
/// let err = DbGenerator::new(Layout::TWITTER).function("next_id(); DROP TABLE x").unwrap_err();
/// assert!(err.to_string().starts_with("generator function name \"next_id(); DROP TABLE x\" is invalid"));
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbGenerator {
    layout: Layout,
    policy: ClockPolicy,
    function: SqlName,
    state_table: SqlName,
    lease_table: SqlName,
    namespace: String,
    /// The install's identity (see [`DbGenerator::install_id`]); `None` until the installer
    /// gives it one (or for an install made before identities).
    install_id: Option<String>,
    /// The label of an install made before identities (`database:<function as given>`), kept
    /// while it holds its row.
    legacy_holder: Option<String>,
    takeover: Takeover,
    /// Whether sessions keep a block of reserved IDs (see [`DbGenerator::session_blocks`]).
    session_blocks: bool,
}

/// The takeover rule of an install whose claim cannot prove a release (see
/// [`DbGenerator::takeover_wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Takeover {
    wait: bool,
    ttl: Duration,
    clock_allowance: Duration,
}

/// One row of the state table, as the installer reads and writes it: what an install chose,
/// so that a later install or uninstall finds it again (the function's running state is in
/// its sequences, not here).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateRow {
    /// The layout the function was installed with ([`DbGenerator::layout_key`]).
    pub layout: String,
    /// The lease table of its node ID (`None` in rows written before it was recorded).
    pub lease_table: Option<String>,
    /// The lease namespace of its node ID.
    pub namespace: String,
    /// Its node ID; `None` while an install has written its identity and not yet finished
    /// its claim.
    pub node: Option<u64>,
    /// The holder label its lease row carries.
    pub holder: String,
    /// The install's identity, read from its holder label (`None` for installs made before
    /// identities, whose label is `database:<function>`).
    pub install_id: Option<String>,
}

impl DbGenerator {
    /// The SQL for `layout`, with the defaults above.
    ///
    /// ```
    /// let generator = idgen_db_generator::DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(generator.function_name(), "idgen_next_id");
    /// ```
    pub fn new(layout: Layout) -> Self {
        let parse = |name| SqlName::parse("name", name).expect("the default names are valid");
        DbGenerator {
            layout,
            policy: ClockPolicy::default(),
            function: parse(DEFAULT_FUNCTION),
            state_table: parse(DEFAULT_STATE_TABLE),
            lease_table: parse(idgen_engine::lease::DEFAULT_LEASE_TABLE),
            namespace: "default".to_owned(),
            install_id: None,
            legacy_holder: None,
            takeover: Takeover {
                wait: true,
                ttl: Duration::from_secs(30),
                clock_allowance: Duration::from_secs(1),
            },
            session_blocks: true,
        }
    }

    /// The function's name, `name` or `schema.name` of ASCII letters, digits and `_`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] naming a name that is anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).function("ops.next_id")?;
    /// assert_eq!(g.function_name(), "ops.next_id");
    /// assert!(DbGenerator::new(idgen_core::Layout::TWITTER).function("1x").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn function(mut self, name: &str) -> Result<Self, Error> {
        self.function = SqlName::parse("generator function", name)?;
        let last_part = name.rsplit('.').next().unwrap_or(name);
        if last_part.len() + LONGEST_SUFFIX.len() > 63 {
            return Err(ErrorKind::InvalidOptions {
                reason: format!(
                    "generator function name {name:?} is too long: its sequences and triggers are named by appending up to {} characters ({LONGEST_SUFFIX:?}), and a name part holds at most 63, so the name may have at most {}",
                    LONGEST_SUFFIX.len(),
                    63 - LONGEST_SUFFIX.len()
                ),
            }.into());
        }
        Ok(self)
    }

    /// The state table's name (same rules as [`function`](DbGenerator::function)).
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).state_table("ops.id_state")?;
    /// assert!(g.migration_sql(Dialect::Postgres)?[0].contains("\"ops\".\"id_state\""));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn state_table(mut self, name: &str) -> Result<Self, Error> {
        self.state_table = SqlName::parse("generator state table", name)?;
        Ok(self)
    }

    /// The lease table's name: the one the applications' `WorkerLease`s use
    /// (`LeaseOptions::table`; default `idgen_worker_lease`).
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).lease_table("leases")?;
    /// assert_eq!(g.lease_table_name(), "leases");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn lease_table(mut self, name: &str) -> Result<Self, Error> {
        self.lease_table = SqlName::parse("lease table", name)?;
        Ok(self)
    }

    /// The lease namespace: the one the applications' `WorkerLease`s use
    /// (`LeaseOptions::namespace`; default `default`). Any text: the installer binds it, and
    /// the fence trigger, which cannot take bound values, holds it as a literal that reads the
    /// same under every setting (`E'…'` on PostgreSQL, whatever `standard_conforming_strings`
    /// says; a hexadecimal `_utf8mb4 X'…'` on MariaDB, whatever `NO_BACKSLASH_ESCAPES` says).
    ///
    /// ```
    /// let g = idgen_db_generator::DbGenerator::new(idgen_core::Layout::TWITTER).namespace("orders");
    /// assert_eq!(g.lease_namespace(), "orders");
    /// ```
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// What the function does when the database's clock is behind its last issued tick.
    ///
    /// ```
    /// use idgen_core::{ClockPolicy, Layout};
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER).clock_policy(ClockPolicy::Refuse);
    /// assert_eq!(g.policy(), ClockPolicy::Refuse);
    /// ```
    pub fn clock_policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The takeover rule of applications' claims, which [`install`] follows: when its claim
    /// cannot prove that the node ID was given back (a row never used, or a lease taken over
    /// after it expired: the lease table may have forgotten a holder that still issues), the
    /// function issues no tick below the database's clock at the claim + `ttl` + `allowance`.
    /// The installer waits for the database's clock to pass that floor before the function
    /// issues its first ID. Set `ttl` and `allowance` to the applications' `LeaseOptions::ttl`
    /// and `LeaseOptions::clock_allowance` (default 30 s and 1 s, theirs too).
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER)
    ///     .takeover_wait(Duration::from_secs(10), Duration::from_secs(1));
    /// assert_eq!(g.takeover_floor_ms(1_000, None), Some(12_000));
    /// ```
    pub fn takeover_wait(mut self, ttl: Duration, allowance: Duration) -> Self {
        self.takeover = Takeover {
            wait: true,
            ttl,
            clock_allowance: allowance,
        };
        self
    }

    /// Whether a session keeps the rest of the block each draw reserves (default `true`; see
    /// the crate documentation, "A block per session"). `false` makes every call draw from the
    /// shared sequences, as before blocks: an ID's time field is then its call's, and on
    /// PostgreSQL no temporary sequence is made, so a transaction that called the function
    /// can be prepared for two-phase commit (`PREPARE TRANSACTION`). Every call then pays the
    /// shared sequences' reads (crate documentation, "Speed").
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert!(g.function_sql(Dialect::Postgres, 3)?.contains("pg_temp."));
    /// let g = g.session_blocks(false);
    /// assert_eq!(g.block_len(), 1);
    /// assert!(!g.function_sql(Dialect::Postgres, 3)?.contains("pg_temp."));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn session_blocks(mut self, keep: bool) -> Self {
        self.session_blocks = keep;
        self
    }

    /// **Tests and development only**, like `LeaseOptions::skip_takeover_wait_for_tests_and_development`:
    /// `true` makes [`install`] issue at once after any claim. On a lease table that forgot a
    /// holder still issuing (a restore, a table dropped and recreated), that can give one node
    /// ID to two issuers.
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER)
    ///     .skip_takeover_wait_for_tests_and_development(true);
    /// assert_eq!(g.takeover_floor_ms(1_000, Some(500)), Some(500));
    /// ```
    pub fn skip_takeover_wait_for_tests_and_development(mut self, skip: bool) -> Self {
        self.takeover.wait = !skip;
        self
    }

    /// The floor (Unix ms) below which a function whose claim cannot prove a release issues
    /// nothing: `now_ms` (the database's clock at the claim) + the applications' TTL + clock
    /// allowance, or the stored `last_timestamp_ms` if later (see
    /// [`takeover_wait`](Self::takeover_wait)).
    ///
    /// ```
    /// let g = idgen_db_generator::DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.takeover_floor_ms(1_000, Some(99_000)), Some(99_000));
    /// assert_eq!(g.takeover_floor_ms(1_000, None), Some(32_000));
    /// ```
    pub fn takeover_floor_ms(&self, now_ms: i64, last_timestamp_ms: Option<i64>) -> Option<i64> {
        if !self.takeover.wait {
            return last_timestamp_ms;
        }
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let bound = now_ms
            .saturating_add(ms(self.takeover.ttl))
            .saturating_add(ms(self.takeover.clock_allowance));
        Some(last_timestamp_ms.map_or(bound, |last| last.max(bound)))
    }

    /// The install's identity: the installer draws one at random (16 hexadecimal digits) for a
    /// fresh install, records it in the state table and in its holder label
    /// (`database:<function>:<id>`), takes back only a lease row carrying it, and names its
    /// fence triggers after it, so that installs sharing one lease table (one schema per shard)
    /// never take each other's row or drop each other's fence. Set it only to write the SQL of
    /// a given install by hand ([`fence_sql`](Self::fence_sql), [`function_sql`](Self::function_sql)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] unless `id` is 1 to 16 lowercase hexadecimal digits.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER).install_id("00c0ffee00c0ffee")?;
    /// assert_eq!(g.holder(), "database:idgen_next_id:00c0ffee00c0ffee");
    /// assert!(DbGenerator::new(idgen_core::Layout::TWITTER).install_id("x'").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn install_id(mut self, id: &str) -> Result<Self, Error> {
        if !is_install_id(id) {
            return Err(ErrorKind::InvalidOptions {
                reason: format!(
                    "install ID {id:?} is invalid: it must be 1 to 16 lowercase hexadecimal digits"
                ),
            }
            .into());
        }
        self.install_id = Some(id.to_owned());
        Ok(self)
    }

    /// The install's identity, if set (see [`install_id`](Self::install_id)).
    ///
    /// ```
    /// let g = idgen_db_generator::DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.installed_id(), None);
    /// ```
    pub fn installed_id(&self) -> Option<&str> {
        self.install_id.as_deref()
    }

    /// The layout.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::SONYFLAKE).layout(), &Layout::SONYFLAKE);
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The clock policy.
    ///
    /// ```
    /// use idgen_core::{ClockPolicy, Layout};
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).policy(), ClockPolicy::default());
    /// ```
    pub fn policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The function's name as given (unquoted).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).function_name(), "idgen_next_id");
    /// ```
    pub fn function_name(&self) -> String {
        self.function.as_str().to_owned()
    }

    /// The lease table's name as given (unquoted).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).lease_table_name(), "idgen_worker_lease");
    /// ```
    pub fn lease_table_name(&self) -> String {
        self.lease_table.as_str().to_owned()
    }

    /// The lease namespace.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).lease_namespace(), "default");
    /// ```
    pub fn lease_namespace(&self) -> &str {
        &self.namespace
    }

    /// The holder label of the database's lease row: `database:<function name>:<install ID>`
    /// (`database:<function name>` without an [install ID](Self::install_id)). The installer
    /// writes the function's name with its schema (the one it resolved), so installs in two
    /// schemas carry different labels.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER).function("ops.next_id")?;
    /// assert_eq!(g.holder(), "database:ops.next_id");
    /// assert_eq!(g.install_id("1f")?.holder(), "database:ops.next_id:1f");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn holder(&self) -> String {
        if let Some(label) = &self.legacy_holder {
            return label.clone();
        }
        match &self.install_id {
            Some(id) => format!("{HOLDER_PREFIX}{}:{id}", self.function.as_str()),
            None => format!("{HOLDER_PREFIX}{}", self.function.as_str()),
        }
    }

    /// This generator under the label of an install made before identities.
    fn with_legacy_holder(&self, label: Option<String>) -> DbGenerator {
        DbGenerator {
            legacy_holder: label,
            ..self.clone()
        }
    }

    /// The statements that drop this install's fence triggers (not its fence function).
    fn fence_drop_sql(&self, dialect: Dialect) -> Result<Vec<String>, Error> {
        Ok(match Host::of(dialect)? {
            Host::Postgres => postgres::fence_drop_sql(self),
            Host::MariaDb => mysql::fence_drop_sql(self),
        })
    }

    /// The install ID in a holder label written by [`holder`](Self::holder), if it has one.
    fn install_id_of(label: &str) -> Option<String> {
        let (name, id) = label.rsplit_once(':')?;
        (name.starts_with(HOLDER_PREFIX) && is_install_id(id)).then(|| id.to_owned())
    }

    /// This generator with its unqualified names in the schemas the installer resolved: the
    /// function, its siblings and the state table in `schema`, the lease table in
    /// `lease_schema`. Every object the function reads is then named with its schema, so it
    /// works from a session on any search path.
    fn qualified(&self, schema: &str, lease_schema: &str) -> Result<DbGenerator, Error> {
        let qualify = |name: &SqlName, what: &'static str, schema: &str| {
            if name.as_str().contains('.') {
                Ok(name.clone())
            } else {
                SqlName::parse(what, &format!("{schema}.{}", name.as_str()))
            }
        };
        let mut g = self.clone();
        g.function = qualify(&self.function, "generator function", schema)?;
        g.state_table = qualify(&self.state_table, "generator state table", schema)?;
        g.lease_table = qualify(&self.lease_table, "lease table", lease_schema)?;
        Ok(g)
    }

    /// The layout as the state table records it, so that an install with another layout is
    /// refused instead of reading the old state under the new layout.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(
    ///     DbGenerator::new(Layout::TWITTER).layout_key(),
    ///     "epoch_ms=1288834974657 unit_ms=1 time=41 node=10 sequence=12 order=time-node-sequence"
    /// );
    /// ```
    pub fn layout_key(&self) -> String {
        idgen_engine::lease::layout_key(&self.layout)
    }

    /// The statements an install runs before it claims the node ID, in order, for a migration
    /// file: the state table, the function's sequences (fenced: the function refuses until
    /// [`install`] gives it a node ID) and the SQL helpers. [`install`] runs them, claims, and
    /// then runs [`function_sql`](Self::function_sql) and [`fence_sql`](Self::fence_sql).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for SQLite, which has no stored functions.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let sql = g.migration_sql(Dialect::MySql)?;
    /// assert!(sql.iter().any(|s| s.starts_with("CREATE OR REPLACE FUNCTION `idgen_decode`(")));
    /// assert!(g.migration_sql(Dialect::Sqlite).is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn migration_sql(&self, dialect: Dialect) -> Result<Vec<String>, Error> {
        let host = Host::of(dialect)?;
        let mut sql = vec![self.state_table_sql(host)];
        sql.extend(self.state_table_upgrade_sql(host));
        match host {
            Host::Postgres => {
                sql.extend(postgres::sequences_sql(self));
                sql.extend(postgres::helpers_sql(self));
            }
            Host::MariaDb => {
                sql.extend(mysql::sequences_sql(self));
                sql.extend(mysql::helpers_sql(self));
            }
        }
        Ok(sql)
    }

    /// The statement that creates (or replaces) the function, issuing on node ID `node`. On
    /// MariaDB the function calls a refill routine that [`routine_sql`](Self::routine_sql)
    /// creates first.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for SQLite, or for a node ID the layout cannot hold.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert!(g.function_sql(Dialect::Postgres, 3)?.starts_with(
    ///     "CREATE OR REPLACE FUNCTION \"idgen_next_id\"() RETURNS bigint"));
    /// assert!(g.function_sql(Dialect::Postgres, 1024).is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn function_sql(&self, dialect: Dialect, node: u64) -> Result<String, Error> {
        let host = Host::of(dialect)?;
        if node >= self.layout.node_capacity() {
            return Err(ErrorKind::InvalidOptions {
                reason: format!(
                    "node ID {node} does not fit the layout's {} node bits (at most {})",
                    self.layout.node_bits(),
                    self.layout.node_capacity() - 1
                ),
            }
            .into());
        }
        Ok(match host {
            Host::Postgres => postgres::function_sql(self, node),
            Host::MariaDb => mysql::function_sql(self, node),
        })
    }

    /// Every statement that creates (or replaces) the function issuing on node ID `node`, in
    /// order: on MariaDB the refill routine it calls when its session's block is used up
    /// (`<function>_refill()`, see the crate documentation's "A block per session"), then
    /// [`function_sql`](Self::function_sql); on PostgreSQL that one statement.
    ///
    /// # Errors
    ///
    /// As [`function_sql`](Self::function_sql).
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let sql = g.routine_sql(Dialect::MySql, 3)?;
    /// assert!(sql[0].starts_with("CREATE OR REPLACE FUNCTION `idgen_next_id_refill`()"));
    /// assert_eq!(sql[1], g.function_sql(Dialect::MySql, 3)?);
    /// assert_eq!(g.routine_sql(Dialect::Postgres, 3)?.len(), 1);
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn routine_sql(&self, dialect: Dialect, node: u64) -> Result<Vec<String>, Error> {
        let function = self.function_sql(dialect, node)?;
        Ok(match Host::of(dialect)? {
            Host::Postgres => vec![function],
            Host::MariaDb => vec![mysql::refill_sql(self, node), function],
        })
    }

    /// The statements that fence the function when its lease row (node `node`) is freed,
    /// taken or deleted: a trigger on the lease table (see the crate documentation).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for SQLite.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let sql = g.fence_sql(Dialect::Postgres, 3)?.join("\n");
    /// assert!(sql.contains("BEFORE UPDATE OR DELETE ON \"idgen_worker_lease\""));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn fence_sql(&self, dialect: Dialect, node: u64) -> Result<Vec<String>, Error> {
        Ok(match Host::of(dialect)? {
            Host::Postgres => postgres::fence_sql(self, node),
            Host::MariaDb => mysql::fence_sql(self, node),
        })
    }

    /// The statements that drop what an install created: the function, its fence, its helpers
    /// and its sequences (not the state table or its row: [`uninstall`] deletes the row after
    /// giving the node ID back). A column default or trigger that calls the function must be
    /// dropped first on PostgreSQL.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for SQLite.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let sql = g.drop_sql(Dialect::Postgres)?;
    /// assert_eq!(sql[0], "DROP FUNCTION IF EXISTS \"idgen_next_id\"()");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn drop_sql(&self, dialect: Dialect) -> Result<Vec<String>, Error> {
        Ok(match Host::of(dialect)? {
            Host::Postgres => postgres::drop_sql(self),
            Host::MariaDb => mysql::drop_sql(self),
        })
    }

    /// The SQL that makes the function the default of `table.column`: on PostgreSQL a
    /// sequence `<table>_<column>_idgen_seq` owned by the column and an `ALTER TABLE … SET
    /// DEFAULT` that records each key in it, so that `RETURNING`, `lastval()` and
    /// `currval(pg_get_serial_sequence(table, column))` give the row's key (two statements,
    /// one text); on MariaDB, which allows no stored function in a `DEFAULT`, a `BEFORE
    /// INSERT` trigger named `<table>_<column>_idgen` that sets the column when the insert
    /// leaves it `NULL` or 0 (declare the column `BIGINT NOT NULL DEFAULT 0`; for a column
    /// that keeps `AUTO_INCREMENT`, see [`auto_increment_trigger_sql`](Self::auto_increment_trigger_sql)).
    /// Why the PostgreSQL default reads as it does is in the source of `key_default.rs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] or [`ErrorKind::InvalidOptions`] naming a table or column name
    /// that is not a plain SQL identifier; [`ErrorKind::InvalidOptions`] for SQLite.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let pg = g.column_default_sql(Dialect::Postgres, "orders", "id")?;
    /// assert!(pg.starts_with("CREATE SEQUENCE IF NOT EXISTS \"orders_id_idgen_seq\" AS bigint"));
    /// assert!(pg.ends_with(
    ///     "ALTER TABLE \"orders\" ALTER COLUMN \"id\" SET DEFAULT \
    ///      setval('\"orders_id_idgen_seq\"'::regclass, \"idgen_next_id\"() + 0 * nextval('\"orders_id_idgen_seq\"'::regclass), true)"
    /// ));
    /// assert!(g.column_default_sql(Dialect::MySql, "orders", "id")?.starts_with(
    ///     "CREATE TRIGGER `orders_id_idgen` BEFORE INSERT ON `orders` FOR EACH ROW"));
    /// assert!(g.column_default_sql(Dialect::MySql, "orders", "a.b").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn column_default_sql(
        &self,
        dialect: Dialect,
        table: &str,
        column: &str,
    ) -> Result<String, Error> {
        match Host::of(dialect)? {
            Host::Postgres => key_default::postgres(self, table, column),
            Host::MariaDb => key_default::mariadb(self, table, column),
        }
    }

    /// MariaDB: the `BEFORE INSERT` trigger (named `<table>_<column>_idgen`) that makes the
    /// function the key of a column that **keeps `AUTO_INCREMENT`**, so that writers reading
    /// their key with `LAST_INSERT_ID()` or the OK packet's insert id (sqlx's
    /// `last_insert_id()`, diesel's `select(last_insert_id())`, sea-orm's `insert`) get the
    /// row's key: the first row a statement inserts without a key gets it as the statement's
    /// generated `AUTO_INCREMENT` value (`SET insert_id`), every further row directly; when
    /// that row is skipped (`INSERT IGNORE`) or becomes an update (`ON DUPLICATE KEY UPDATE`),
    /// the next row the statement inserts gets it, as `AUTO_INCREMENT` reports it. Keys of
    /// a multi-row insert are not consecutive, and in a session whose `timestamp` is set
    /// (`SET timestamp = …`) a statement that follows a failed or another table's insert within
    /// that fixed time gets its key directly (so `LAST_INSERT_ID()` is not the row's).
    /// `idgen adopt --db-generator` uses it on `AUTO_INCREMENT` tables.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] or [`ErrorKind::InvalidOptions`] for a name that is not a plain
    /// SQL identifier; [`ErrorKind::InvalidOptions`] for any database but MariaDB.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// let sql = g.auto_increment_trigger_sql(Dialect::MySql, "orders", "id")?;
    /// assert!(sql.starts_with("CREATE TRIGGER `orders_id_idgen` BEFORE INSERT ON `orders` FOR EACH ROW"));
    /// assert!(sql.contains("SET @@insert_id = @`idgen_key_forced.orders`"));
    /// assert!(g.auto_increment_trigger_sql(Dialect::Postgres, "orders", "id").is_err());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn auto_increment_trigger_sql(
        &self,
        dialect: Dialect,
        table: &str,
        column: &str,
    ) -> Result<String, Error> {
        match Host::of(dialect)? {
            Host::MariaDb => key_default::mariadb_auto_increment(self, table, column),
            Host::Postgres => Err(ErrorKind::InvalidOptions {
                reason:
                    "an AUTO_INCREMENT trigger is for MariaDB; on PostgreSQL use column_default_sql"
                        .into(),
            }
            .into()),
        }
    }

    /// PostgreSQL: the sequence that [`column_default_sql`](Self::column_default_sql) keeps
    /// for `table.column`'s keys (quoted), which `pg_get_serial_sequence` reports.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] or [`ErrorKind::InvalidOptions`] for a name that is not a plain
    /// SQL identifier.
    ///
    /// # Examples
    ///
    /// ```
    /// let g = idgen_db_generator::DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.key_sequence_name("shop.orders", "id")?, "\"shop\".\"orders_id_idgen_seq\"");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn key_sequence_name(&self, table: &str, column: &str) -> Result<String, Error> {
        key_default::key_sequence(table, column)
    }

    /// `SELECT <function>()`: one ID.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidOptions`] for SQLite.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_db_generator::DbGenerator;
    /// use idgen_sql::Dialect;
    /// let g = DbGenerator::new(idgen_core::Layout::TWITTER);
    /// assert_eq!(g.next_id_sql(Dialect::MySql)?, "SELECT `idgen_next_id`()");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn next_id_sql(&self, dialect: Dialect) -> Result<String, Error> {
        let q = Host::of(dialect)?.quote();
        Ok(format!("SELECT {}()", self.function.quoted_with(q)))
    }

    /// The names of the three SQL helpers: decode, smallest ID of a time, largest ID of a time.
    /// For a function named `…next_id` they replace `next_id` (`idgen_next_id` →
    /// `idgen_decode`, `idgen_min_id_at`, `idgen_max_id_at`); for any other name they append
    /// `_decode`, `_min_id_at`, `_max_id_at`.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// let names = DbGenerator::new(Layout::TWITTER).helper_names();
    /// assert_eq!(names, ["idgen_decode", "idgen_min_id_at", "idgen_max_id_at"].map(String::from));
    /// let names = DbGenerator::new(Layout::TWITTER).function("ops.order_key")?.helper_names();
    /// assert_eq!(names[0], "ops.order_key_decode");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn helper_names(&self) -> [String; 3] {
        let name = self.function.as_str();
        let stem = match name.strip_suffix("next_id") {
            Some(stem) if !stem.is_empty() && !stem.ends_with('.') => stem.to_owned(),
            _ => format!("{name}_"),
        };
        ["decode", "min_id_at", "max_id_at"].map(|h| format!("{stem}{h}"))
    }

    /// A name beside the function's (same schema), for its sequences, triggers and helpers.
    fn sibling(&self, suffix: &str) -> SqlName {
        SqlName::parse("name", &format!("{}{suffix}", self.function.as_str()))
            .expect("checked when the function was named")
    }

    fn helper(&self, index: usize) -> SqlName {
        SqlName::parse("name", &self.helper_names()[index]).expect("checked when named")
    }

    /// `CREATE TABLE IF NOT EXISTS` for the state table.
    fn state_table_sql(&self, host: Host) -> String {
        let t = self.state_table.quoted_with(host.quote());
        let engine = match host {
            Host::Postgres => "",
            Host::MariaDb => " ENGINE = InnoDB",
        };
        format!(
            "CREATE TABLE IF NOT EXISTS {t} (\n    \
             name        VARCHAR(255) NOT NULL PRIMARY KEY,\n    \
             layout      VARCHAR(255) NOT NULL,\n    \
             namespace   VARCHAR(255) NOT NULL,\n    \
             node        BIGINT       NOT NULL,\n    \
             holder      VARCHAR(255) NOT NULL,\n    \
             last_word   BIGINT       NOT NULL,\n    \
             lease_table VARCHAR(255) NULL\n){engine}"
        )
    }

    /// Adds the column that tables made by earlier versions lack.
    fn state_table_upgrade_sql(&self, host: Host) -> Option<String> {
        let t = self.state_table.quoted_with(host.quote());
        Some(format!(
            "ALTER TABLE {t} ADD COLUMN IF NOT EXISTS lease_table VARCHAR(255) NULL"
        ))
    }

    /// How many words one reservation takes (one draw of the count sequence, the rest held by
    /// the session): a 16th of a tick's sequence numbers, from 1 (a layout with fewer than 32
    /// per tick, or [`session_blocks(false)`](Self::session_blocks): every call draws) to 256.
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// assert_eq!(DbGenerator::new(Layout::TWITTER).block_len(), 256);
    /// assert_eq!(DbGenerator::new(Layout::SONYFLAKE).block_len(), 16);
    /// ```
    pub fn block_len(&self) -> i64 {
        if !self.session_blocks {
            return 1;
        }
        let per_tick = self.layout.max_sequence().saturating_add(1);
        i64::try_from((per_tick / 16).clamp(1, 256)).unwrap_or(1)
    }

    /// The number of bits of each of the sequence-free checks the installer and tests need:
    /// the words of the state, as constants for the function bodies.
    fn constants(&self) -> Constants {
        let l = &self.layout;
        let (time_shift, node_shift, seq_shift) = l.shifts();
        Constants {
            epoch_ms: l.epoch_ms(),
            unit_ms: l.unit_ms(),
            last_ms: l.last_unix_ms(),
            max_ticks: l.max_ticks(),
            seq_bits: l.sequence_bits(),
            seq_mask: l.max_sequence(),
            time_shift,
            node_shift,
            seq_shift,
            tolerance_ms: self.policy.tolerance_ms().min(i64::MAX as u64),
            policy: self.policy.name(),
            borrow: matches!(self.policy, ClockPolicy::Borrow { .. }),
            lock_key: lock_key(self.function.as_str()),
        }
    }

    /// The state word a newly claimed node ID starts from: the tick of the last timestamp an
    /// earlier holder stored, marked used up (the next ID is in a later tick), or 0.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Id`]([`idgen_core::Error::TimeOverflow`]) when that timestamp is past the layout's last instant.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// assert_eq!(g.initial_word(None)?, 0);
    /// assert_eq!(g.initial_word(Some(Layout::TWITTER.epoch_ms() + 5))?, (5 << 12) | 4095);
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn initial_word(&self, last_timestamp_ms: Option<i64>) -> Result<i64, Error> {
        let l = &self.layout;
        match last_timestamp_ms {
            Some(ms) if ms >= l.epoch_ms() => {
                let tick = l.ticks_at(ms)?;
                let word = (tick << l.sequence_bits()) | l.max_sequence();
                Ok(i64::try_from(word).unwrap_or(i64::MAX))
            }
            _ => Ok(0),
        }
    }

    /// The last timestamp (Unix ms, the start of its tick) a state word says was issued, for
    /// the lease row when the node ID is given back; `None` for the word 0 (nothing issued).
    ///
    /// ```
    /// use idgen_core::Layout;
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// assert_eq!(g.last_timestamp_ms(0), None);
    /// assert_eq!(g.last_timestamp_ms((5 << 12) | 7), Some(Layout::TWITTER.epoch_ms() + 5));
    /// ```
    pub fn last_timestamp_ms(&self, word: i64) -> Option<i64> {
        let word = u64::try_from(word).ok().filter(|w| *w > 0)?;
        Some(
            self.layout
                .tick_start_ms(word >> self.layout.sequence_bits()),
        )
    }

    /// The [`Error`] for an error the function raised (by its SQLSTATE and message), the same
    /// the Rust generator returns in that situation: `IDG01` →
    /// [`idgen_core::Error::ClockMovedBackwards`], `IDG02` → [`idgen_core::Error::Fenced`] (lease
    /// not held), `IDG03` → [`idgen_core::Error::BeforeEpoch`], `IDG04` →
    /// [`idgen_core::Error::TimeOverflow`]. `None` for any other error.
    ///
    /// ```
    /// use idgen_core::{Error, Layout};
    /// use idgen_db_generator::DbGenerator;
    /// let g = DbGenerator::new(Layout::TWITTER);
    /// let err = g.error_from_database("IDG01",
    ///     "idgen: the clock moved backwards by 5000 ms (policy wait allows 10 ms); no ID was issued").unwrap();
    /// assert!(matches!(err, Error::ClockMovedBackwards { behind_ms: 5000, allowed_ms: 10, policy: "wait" }));
    /// assert!(g.error_from_database("23505", "duplicate key").is_none());
    /// ```
    pub fn error_from_database(&self, sqlstate: &str, message: &str) -> Option<idgen_core::Error> {
        let numbers = numbers_in(message);
        match sqlstate {
            "IDG01" => Some(idgen_core::Error::ClockMovedBackwards {
                behind_ms: u64::try_from(*numbers.first()?).ok()?,
                allowed_ms: u64::try_from(*numbers.get(1)?).ok()?,
                policy: self.policy.name(),
            }),
            // The message names the function, whose name may hold digits: no number is read.
            "IDG02" | "IDG06" => Some(idgen_core::Error::Fenced {
                now_ms: 0,
                valid_until_ms: i64::MIN,
            }),
            "IDG03" => Some(idgen_core::Error::BeforeEpoch {
                unix_ms: *numbers.first()?,
                epoch_ms: self.layout.epoch_ms(),
            }),
            "IDG04" => Some(idgen_core::Error::TimeOverflow {
                unix_ms: *numbers.first()?,
                last_ms: self.layout.last_unix_ms(),
            }),
            _ => None,
        }
    }
}

/// The numbers of a layout and policy, as the function bodies write them.
struct Constants {
    epoch_ms: i64,
    unit_ms: u32,
    last_ms: i64,
    max_ticks: u64,
    seq_bits: u8,
    seq_mask: u64,
    time_shift: u32,
    node_shift: u32,
    seq_shift: u32,
    tolerance_ms: u64,
    policy: &'static str,
    borrow: bool,
    /// The function's own lock: 32 bits of FNV-1a of its name (PostgreSQL's advisory lock key;
    /// MariaDB's lock name carries the name itself).
    lock_key: i32,
}

impl Constants {
    /// `(epoch_ms, unit_ms, last_ms, max_ticks)`.
    fn time(&self) -> (i64, u32, i64, u64) {
        (self.epoch_ms, self.unit_ms, self.last_ms, self.max_ticks)
    }

    /// `(seq_bits, seq_mask, time_shift, node_shift, seq_shift)`.
    fn fields(&self) -> (u8, u64, u32, u32, u32) {
        (
            self.seq_bits,
            self.seq_mask,
            self.time_shift,
            self.node_shift,
            self.seq_shift,
        )
    }

    /// When a call ahead of the clock sleeps until its word's tick: always, except that
    /// `Borrow` issues at once from a tick more than one ahead (one ahead is a used-up tick).
    fn sleep_when(&self) -> &'static str {
        if self.borrow {
            "v_tick = v_now_tick + 1"
        } else {
            "TRUE"
        }
    }

    /// `(tolerance_ms, policy name)`.
    fn policy(&self) -> (u64, &'static str) {
        (self.tolerance_ms, self.policy)
    }
}

/// Whether `id` is an install ID: 1 to 16 lowercase hexadecimal digits.
fn is_install_id(id: &str) -> bool {
    (1..=16).contains(&id.len()) && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A fresh install ID: 64 random bits (the standard library's randomly keyed SipHash over the
/// time and process ID), as 16 hexadecimal digits.
fn random_install_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

/// 64-bit FNV-1a of `text`: the key of a session's block variables.
fn fnv64(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// FNV-1a of `name`, folded to 31 bits: the second key of the function's advisory lock.
fn lock_key(name: &str) -> i32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in name.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    i32::try_from(hash & 0x7fff_ffff).unwrap_or(0)
}

/// The (optionally negative) integers in `text`, in order.
fn numbers_in(text: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '-' && current.is_empty()) {
            current.push(c);
        } else {
            if let Ok(n) = current.parse() {
                out.push(n);
            }
            current.clear();
        }
    }
    out
}
