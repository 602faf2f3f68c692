//! Hi-lo over a sqlx pool: blocks of IDs from one central database counter, handed out from
//! memory (the engine is [`idgen_engine::hilo`], re-exported here).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_sqlx::hilo::{HiLo, SqliteCounter};
//!
//! let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?; // or a PgPool, a MySqlPool
//!
//! let ids = HiLo::new(pool.clone(), 1000).await?; // the counter "hilo", created if missing
//! assert_eq!(ids.next_id().await?, 1);
//! assert_eq!(ids.next_id().await?, 2);
//!
//! // Where migrations own the schema: a missing counter is refused, naming the migration.
//! let orders = HiLo::builder(pool.clone()).counter("orders").create_if_missing(false).build().await;
//! let err = orders.unwrap_err().to_string();
//! assert!(err.contains("no row 'orders' in table idgen_hilo"));
//! assert!(err.contains("INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
//! # Ok(()) }
//! ```
//!
//! `HiLo::new(pool, block)` works for a `PgPool`, `MySqlPool` or `SqlitePool` (or a reference to
//! one), with the counter [`DEFAULT_COUNTER`] (`hilo`); [`HiLoBuilder::counter`] names the
//! counter per entity, and the source types ([`PgSequence`], [`MySqlCounter`],
//! [`SqliteCounter`]) give the other choices and the `create` helpers. Counter and table names
//! are written into SQL, so only `name` or `schema.name` of ASCII letters, digits and `_` pass
//! ([`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName)); they are not
//! quoted (PostgreSQL folds them to lower case, consistently everywhere).
//!
//! # Semantics
//!
//! **pooled-lo**: a counter value `v` is the block `[v, v + block)`. A writer that takes values
//! from the same counter directly (a script, a column `DEFAULT nextval('orders_id_seq')`, another
//! language) takes a whole block and never collides with a `HiLo`. IDs are unique across every
//! process and host sharing the counter, increase within one `HiLo`, and interleave with gaps
//! across processes and restarts (a restart loses the unused rest of its blocks).
//!
//! At start-up the counter's increment is read from the database, and a sequence whose
//! increment differs from the block size is refused with
//! [`ErrorKind::HiLoIncrementMismatch`](idgen_engine::ErrorKind::HiLoIncrementMismatch) naming both numbers
//! (or adopted with [`HiLoBuilder::adopt_database_increment`]). A missing sequence, table or row
//! is created at start-up (looked for first, so an existing counter is never touched and a user
//! without the right to create anything can start); with
//! [`HiLoBuilder::create_if_missing`]`(false)` it is [`ErrorKind::HiLoCounterNotCreated`](idgen_engine::ErrorKind::HiLoCounterNotCreated), which
//! gives the migration to run. One that disappears while running is [`ErrorKind::HiLoCounterMissing`](idgen_engine::ErrorKind::HiLoCounterMissing)
//! (wrapped in [`ErrorKind::HiLoSource`](idgen_engine::ErrorKind::HiLoSource)).
//!
//! # Per database
//!
//! | database | counter | one allocation | increment read from |
//! |---|---|---|---|
//! | PostgreSQL | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT nextval('name')` | `pg_catalog.pg_sequence` (behind `pg_sequences`) |
//! | MariaDB ≥ 10.3 | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT NEXTVAL(name)` | the sequence itself: `SELECT increment FROM name` |
//! | MySQL (and MariaDB by choice) | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?`, the value from that statement's own result | any step per call |
//! | SQLite | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1` | any step per call |
//!
//! **MySQL or MariaDB?** A `MySqlPool` serves both, so [`MySqlCounter`] decides at start-up
//! ([`MySqlMode::Detect`], what `HiLo::new(mysql_pool, …)` uses): `SELECT VERSION()` containing
//! `MariaDB` with version 10.3 or newer → sequence, anything else → table. Pick explicitly with
//! [`MySqlCounter::sequence`] / [`MySqlCounter::table`] (e.g. table mode on MariaDB, so that the
//! block size may change per call with [`HiLoBuilder::adaptive`]). A deployment must not mix
//! the two modes for one counter: they are different counters.
//!
//! Table counters take any step per call ([`Increment::PerCall`]), so they support adaptive
//! block sizes; sequences have one fixed step.
//!
//! # Its own connection, autocommit
//!
//! Each source owns a **one-connection pool** made from the caller's pool's connect options
//! (connected lazily, reconnected after a failure). Every allocation is one statement on that
//! connection (on MySQL/MariaDB in an explicit transaction of its own, so a server started with
//! `autocommit=0` cannot leave a block uncommitted):
//! - never inside a caller's transaction, so a rolled-back transaction cannot un-allocate a
//!   block of a table counter that this process already hands out;
//! - never waiting for a slot of the caller's pool, so a pool whose every connection is held by
//!   a task waiting for an ID cannot deadlock the refill that would give it one.
//!
//! This costs one extra database connection per `HiLo` (clones share it). Options set on the
//! caller's pool itself (`after_connect` hooks, pool sizes) are not copied; connect options
//! (host, credentials, TLS, SQLite `busy_timeout`) are. For an in-memory SQLite database
//! (`sqlite::memory:`, a shared-cache database), the counter connection sees the same
//! database while the caller's pool keeps it open.
//!
//! # Migrations
//!
//! The `create` helpers run idempotent DDL, safe for instances that start together (on
//! PostgreSQL after idgen's advisory lock, as `create_lease_table`); to use migrations instead,
//! put the SQL there (`migration_sql` returns it for a given name and block). For the counter
//! `orders` and block 1000:
//!
//! PostgreSQL:
//! ```sql
//! CREATE SEQUENCE IF NOT EXISTS orders AS BIGINT INCREMENT BY 1000 MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE
//! ```
//! MariaDB ≥ 10.3 (sequence mode):
//! ```sql
//! CREATE SEQUENCE IF NOT EXISTS orders START WITH 1 MINVALUE 1 INCREMENT BY 1000 NOCACHE NOCYCLE
//! ```
//! MySQL / MariaDB (table mode; one row per counter):
//! ```sql
//! CREATE TABLE IF NOT EXISTS idgen_hilo (
//!     name     VARCHAR(255) NOT NULL PRIMARY KEY,
//!     next_val BIGINT       NOT NULL
//! ) ENGINE = InnoDB;
//! INSERT IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1);
//! ```
//! SQLite:
//! ```sql
//! CREATE TABLE IF NOT EXISTS idgen_hilo (
//!     name     TEXT    NOT NULL PRIMARY KEY,
//!     next_val INTEGER NOT NULL
//! );
//! INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1);
//! ```
//!
//! Changing the block size of an existing sequence: `ALTER SEQUENCE orders INCREMENT BY 500`
//! while every `HiLo` on it is stopped, then start them with the new block (pooled-lo stays
//! correct across the change). Never set the counter back (`setval` to a lower value,
//! restoring an older backup of only the counter): a `HiLo` that sees it go backwards stops
//! with [`ErrorKind::HiLoCounterWentBackwards`](idgen_engine::ErrorKind::HiLoCounterWentBackwards), but new
//! processes would reissue IDs.
//!
//! [`DEFAULT_COUNTER`]: crate::hilo::DEFAULT_COUNTER
//! [`HiLoBuilder::counter`]: crate::hilo::HiLoBuilder::counter
//! [`HiLoBuilder::adopt_database_increment`]: crate::hilo::HiLoBuilder::adopt_database_increment
//! [`HiLoBuilder::adaptive`]: crate::hilo::HiLoBuilder::adaptive
//! [`HiLoBuilder::create_if_missing`]: crate::hilo::HiLoBuilder::create_if_missing
//! [`Increment::PerCall`]: crate::hilo::Increment::PerCall

mod counter;
mod pool;

#[cfg(feature = "postgres")]
mod striped_pg;

pub use counter::SqlxCounter;
pub use idgen_engine::hilo::*;
pub use idgen_sql::CounterMode;
#[cfg(feature = "postgres")]
pub use striped_pg::PgStripe;

/// A PostgreSQL sequence as a hi-lo counter: `SELECT nextval('name')` returns the first ID of
/// a block of `INCREMENT BY` IDs; the increment is read from the catalog (`pg_sequence`, the
/// table behind the `pg_sequences` view) at start-up. The name is `name` or `schema.name`,
/// resolved with the connection's `search_path`, unquoted (PostgreSQL folds it to lower case).
///
/// Allocations run on a connection of their own (a one-connection pool with the same connect
/// options as `pool`), in autocommit; see [the module docs](crate::hilo).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use idgen_sqlx::hilo::PgSequence;
///
/// let pool = sqlx::PgPool::connect_lazy("postgres://localhost/app").unwrap();
/// let orders = PgSequence::new(&pool, "orders_id_seq").unwrap();
/// assert_eq!(
///     orders.migration_sql(1000).unwrap(), // what `orders.create(1000).await` runs
///     "CREATE SEQUENCE IF NOT EXISTS orders_id_seq AS BIGINT INCREMENT BY 1000 MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE"
/// );
/// assert!(PgSequence::new(&pool, "orders'); DROP TABLE orders; --").is_err());
/// // let ids = idgen_sqlx::hilo::HiLo::new(orders, 1000).await?;
/// # }
/// ```
#[cfg(feature = "postgres")]
pub type PgSequence = SqlxCounter<sqlx::Postgres>;

/// A hi-lo counter on MySQL or MariaDB, as a MariaDB sequence or a counter-table row
/// ([`MySqlMode`]): [`new`](SqlxCounter::new) decides at start-up (`SELECT VERSION()`: MariaDB
/// 10.3 or newer a sequence, anything else a table row); [`sequence`](SqlxCounter::sequence),
/// [`table`](SqlxCounter::table) or [`with_mode`](SqlxCounter::with_mode) pick. A table counter
/// is advanced with `UPDATE … SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?`, the
/// block start read from that statement's own result.
///
/// Allocations run on a connection of their own, in autocommit; see
/// [the module docs](crate::hilo).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::hilo::{MySqlCounter, MySqlMode};
///
/// let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
/// let orders = MySqlCounter::table(&pool, "orders")?.with_table("app.counters")?;
/// assert!(orders.migration_sql(100)?.starts_with("CREATE TABLE IF NOT EXISTS app.counters"));
/// let detect = MySqlCounter::new(&pool, "orders")?;
/// assert_eq!(detect.mode(), None); // until start-up (or `detect_mode`) asked the server
/// let sequence = detect.with_mode(MySqlMode::Sequence)?;
/// assert_eq!(sequence.mode(), Some(MySqlMode::Sequence));
/// assert_eq!(
///     sequence.migration_sql(1000)?,
///     "CREATE SEQUENCE IF NOT EXISTS orders START WITH 1 MINVALUE 1 INCREMENT BY 1000 NOCACHE NOCYCLE"
/// );
/// assert!(MySqlCounter::new(&pool, "orders`").is_err());
/// # Ok(()) }
/// ```
#[cfg(feature = "mysql")]
pub type MySqlCounter = SqlxCounter<sqlx::MySql>;

/// How a [`MySqlCounter`] keeps its counter: idgen-sql's [`CounterMode`].
///
/// ```
/// use idgen_sqlx::hilo::MySqlMode;
/// assert_eq!(MySqlMode::default(), MySqlMode::Detect);
/// ```
#[cfg(feature = "mysql")]
pub type MySqlMode = CounterMode;

/// A hi-lo counter in SQLite: the row `name` of a counter table (default `idgen_hilo`),
/// advanced with `UPDATE … SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1`
/// (SQLite 3.35+; sqlx bundles a newer one). Processes sharing the database file share the
/// counter; SQLite's file lock makes each update atomic. The pool's `busy_timeout` (sqlx
/// default 5 s) applies while another writer holds the lock.
///
/// Allocations run on a connection of their own, in autocommit; see
/// [the module docs](crate::hilo).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_sqlx::hilo::{HiLo, SqliteCounter};
///
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// let orders = SqliteCounter::new(&pool, "orders")?;
/// orders.create(100).await?; // CREATE TABLE IF NOT EXISTS idgen_hilo …; INSERT OR IGNORE the row
/// orders.create(100).await?; // idempotent
/// let ids = HiLo::new(orders, 100).await?;
/// assert_eq!(ids.next_id().await?, 1);
/// assert!(SqliteCounter::new(&pool, "").is_err());
/// assert!(SqliteCounter::sequence(&pool, "orders").is_err()); // SQLite has no sequences
/// # Ok(()) }
/// ```
#[cfg(feature = "sqlite")]
pub type SqliteCounter = SqlxCounter<sqlx::Sqlite>;

pub use crate::session::SqlxMarker;
#[allow(deprecated)]
pub use crate::session::SqlxPool;
use idgen_engine::Error;
use idgen_sql::SqlName;

/// The counter table's default name (MySQL table mode, SQLite).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use idgen_sqlx::hilo::{DEFAULT_TABLE, SqliteCounter};
///
/// let pool = sqlx::SqlitePool::connect_lazy("sqlite::memory:").unwrap();
/// let sql = SqliteCounter::new(&pool, "orders").unwrap().migration_sql(1000).unwrap();
/// assert!(sql.starts_with(&format!("CREATE TABLE IF NOT EXISTS {DEFAULT_TABLE} (")));
/// # }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub use idgen_sql::DEFAULT_COUNTER_TABLE as DEFAULT_TABLE;

/// Checks a counter or counter-table name as every source does (`name` or `schema.name`, each
/// part 1 to 63 ASCII letters, digits or `_`, not starting with a digit), without a pool: for
/// tools (migrations) that write the name into SQL of their own.
///
/// ```
/// use idgen_sqlx::hilo::validate_name;
/// assert!(validate_name("app.orders").is_ok());
/// let err = validate_name("orders; DROP TABLE x").unwrap_err();
/// assert!(err.to_string().contains("\"orders; DROP TABLE x\""));
/// ```
pub fn validate_name(name: &str) -> Result<(), Error> {
    SqlName::parse("hi-lo counter", name).map(drop)
}
