//! SQLite: a counter table, `UPDATE … RETURNING` in one statement.

use idgen_sql::{CounterSql, Dialect};
use sqlx::SqlitePool;

use super::counter::Counter;
use super::{DEFAULT_TABLE, pool};
use idgen_engine::Error;

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
/// let ids = HiLo::new(orders, 100).await?;
/// assert_eq!(ids.next_id().await?, 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteCounter {
    counter: Counter<sqlx::Sqlite>,
    name: String,
}

impl SqliteCounter {
    /// The counter `name` (a row of the table `idgen_hilo`). Fails with
    /// [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) when `name` is not a plain identifier.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use idgen_sqlx::hilo::SqliteCounter;
    ///
    /// let pool = sqlx::SqlitePool::connect_lazy("sqlite::memory:").unwrap();
    /// assert!(SqliteCounter::new(&pool, "orders").is_ok());
    /// assert!(SqliteCounter::new(&pool, "").is_err());
    /// # }
    /// ```
    pub fn new(pool: &SqlitePool, name: &str) -> Result<SqliteCounter, Error> {
        CounterSql::table(Dialect::Sqlite, name, DEFAULT_TABLE)?;
        Ok(SqliteCounter::unchecked(pool, name))
    }

    fn unchecked(pool: &SqlitePool, name: &str) -> SqliteCounter {
        SqliteCounter {
            counter: Counter {
                allocator: pool::dedicated(pool),
                sql: CounterSql::table(Dialect::Sqlite, name, DEFAULT_TABLE),
            },
            name: name.to_owned(),
        }
    }

    /// Uses the counter table `table` instead of `idgen_hilo`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::SqliteCounter;
    /// # let pool = sqlx::SqlitePool::connect_lazy("sqlite::memory:").unwrap();
    /// let orders = SqliteCounter::new(&pool, "orders").unwrap().with_table("counters").unwrap();
    /// assert!(orders.migration_sql(1000).unwrap().contains("counters"));
    /// # }
    /// ```
    pub fn with_table(mut self, table: &str) -> Result<SqliteCounter, Error> {
        self.counter.sql = Ok(CounterSql::table(Dialect::Sqlite, &self.name, table)?);
        Ok(self)
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a migration file. `block` is
    /// not stored (a table counter takes any step per call); it is there so every source's
    /// `migration_sql` reads alike.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::SqliteCounter;
    /// # let pool = sqlx::SqlitePool::connect_lazy("sqlite::memory:").unwrap();
    /// let sql = SqliteCounter::new(&pool, "orders").unwrap().migration_sql(1000).unwrap();
    /// assert!(sql.ends_with("INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
    /// # }
    /// ```
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        self.counter.migration_sql(block)
    }

    /// Creates the counter table and the counter's row (starting at 1) if they do not exist.
    /// `block` is not stored (a table counter takes any step per call); it is there so every
    /// source's `create` reads alike.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_sqlx::Error> {
    /// # use idgen_sqlx::hilo::SqliteCounter;
    /// # let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    /// let orders = SqliteCounter::new(&pool, "orders")?;
    /// orders.create(1000).await?;
    /// orders.create(1000).await?; // idempotent
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        self.counter.create(block).await
    }
}

super::counter::counter_source!(
    #[doc = "`HiLo::new(sqlite_pool, block)`: the row named by `HiLoBuilder::counter` (default `hilo`)"]
    #[doc = "of the table `idgen_hilo`."]
    SqliteCounter for SqlitePool
);
