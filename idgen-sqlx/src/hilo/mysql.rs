//! MySQL and MariaDB: a MariaDB `SEQUENCE` (10.3+), or a counter table read with
//! `LAST_INSERT_ID(expr)` from the `UPDATE`'s own result.

use std::sync::OnceLock;

use sqlx::{AssertSqlSafe, MySqlPool};

use super::{
    DEFAULT_TABLE, PoolMarker, closing, counter_error, is_missing_relation, name, pool,
    positive_step,
};
use crate::Error;
use crate::hilo::{BoxError, HiLoSource, Increment, IntoHiLoSource};

/// How a [`MySqlCounter`] keeps its counter.
///
/// ```
/// use idgen_sqlx::hilo::MySqlMode;
///
/// assert_eq!(MySqlMode::default(), MySqlMode::Detect);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MySqlMode {
    /// At start-up, `SELECT VERSION()`: MariaDB 10.3 or newer uses [`Sequence`](Self::Sequence),
    /// anything else (MySQL, older MariaDB) [`Table`](Self::Table). The default.
    #[default]
    Detect,
    /// A MariaDB `SEQUENCE` named after the counter: `SELECT NEXTVAL(name)`, with the increment
    /// read from the sequence itself (`SELECT increment FROM name`).
    Sequence,
    /// A row named after the counter in a counter table (default `idgen_hilo`):
    /// `UPDATE … SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?`, the block start
    /// read from that statement's own result. Works on MySQL and MariaDB.
    Table,
}

/// The mode [`MySqlMode::Detect`] resolved to, decided once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolved {
    Sequence,
    Table,
}

/// A hi-lo counter on MySQL or MariaDB, as a MariaDB sequence or a counter-table row
/// ([`MySqlMode`]).
///
/// `HiLo::new(mysql_pool, block)` makes one in [`MySqlMode::Detect`]; build one yourself to
/// pick the mode or the table. Allocations run on a connection of their own, in autocommit;
/// see [the module docs](crate::hilo).
///
/// ```no_run
/// # async fn demo(pool: sqlx::MySqlPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::hilo::{HiLo, MySqlCounter};
///
/// // A counter table on MySQL or MariaDB, whatever the server:
/// let orders = MySqlCounter::table(&pool, "orders")?;
/// orders.create(1000).await?; // CREATE TABLE IF NOT EXISTS idgen_hilo …; INSERT IGNORE the row
/// let ids = HiLo::new(orders, 1000).await?;
/// # let _ = ids; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct MySqlCounter {
    allocator: MySqlPool,
    name: String,
    table: String,
    mode: MySqlMode,
    resolved: std::sync::Arc<OnceLock<Resolved>>,
}

impl MySqlCounter {
    /// The counter `name` in `mode`. A sequence is named `name`; a table counter is the row
    /// `name` of the table `idgen_hilo` ([`with_table`](Self::with_table) to change it). Fails
    /// with [`Error::HiLoInvalidCounterName`] when `name` is not a plain identifier.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use idgen_sqlx::hilo::{MySqlCounter, MySqlMode};
    ///
    /// let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// assert!(MySqlCounter::new(&pool, "orders", MySqlMode::Sequence).is_ok());
    /// assert!(MySqlCounter::new(&pool, "orders`", MySqlMode::Sequence).is_err());
    /// # }
    /// ```
    pub fn new(pool: &MySqlPool, name: &str, mode: MySqlMode) -> Result<MySqlCounter, Error> {
        name::validate(name)?;
        Ok(MySqlCounter::unchecked(pool, name, mode))
    }

    /// [`new`](Self::new) with [`MySqlMode::Sequence`] (MariaDB 10.3+).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::MySqlCounter;
    /// # let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// let orders = MySqlCounter::sequence(&pool, "orders_seq").unwrap();
    /// assert!(orders.migration_sql(100).starts_with("CREATE SEQUENCE IF NOT EXISTS orders_seq"));
    /// # }
    /// ```
    pub fn sequence(pool: &MySqlPool, name: &str) -> Result<MySqlCounter, Error> {
        MySqlCounter::new(pool, name, MySqlMode::Sequence)
    }

    /// [`new`](Self::new) with [`MySqlMode::Table`] (MySQL, or MariaDB by choice).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::MySqlCounter;
    /// # let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// let orders = MySqlCounter::table(&pool, "orders").unwrap();
    /// assert!(orders.migration_sql(100).starts_with("CREATE TABLE IF NOT EXISTS idgen_hilo"));
    /// # }
    /// ```
    pub fn table(pool: &MySqlPool, name: &str) -> Result<MySqlCounter, Error> {
        MySqlCounter::new(pool, name, MySqlMode::Table)
    }

    /// Uses the counter table `table` instead of `idgen_hilo` (table mode only).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::MySqlCounter;
    /// # let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// let orders = MySqlCounter::table(&pool, "orders").unwrap().with_table("app.counters").unwrap();
    /// assert!(orders.migration_sql(100).contains("app.counters"));
    /// # }
    /// ```
    pub fn with_table(mut self, table: &str) -> Result<MySqlCounter, Error> {
        name::validate(table)?;
        table.clone_into(&mut self.table);
        Ok(self)
    }

    fn unchecked(pool: &MySqlPool, name: &str, mode: MySqlMode) -> MySqlCounter {
        MySqlCounter {
            allocator: autocommit_pool(pool),
            name: name.to_owned(),
            table: DEFAULT_TABLE.to_owned(),
            mode,
            resolved: std::sync::Arc::new(OnceLock::new()),
        }
    }

    /// The mode, once known: the configured one, or after [`MySqlMode::Detect`] ran at start-up.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::{MySqlCounter, MySqlMode};
    /// # let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// assert_eq!(MySqlCounter::table(&pool, "orders").unwrap().mode(), Some(MySqlMode::Table));
    /// assert_eq!(MySqlCounter::new(&pool, "orders", MySqlMode::Detect).unwrap().mode(), None);
    /// # }
    /// ```
    pub fn mode(&self) -> Option<MySqlMode> {
        match self.mode {
            MySqlMode::Detect => self.resolved.get().map(|r| match r {
                Resolved::Sequence => MySqlMode::Sequence,
                Resolved::Table => MySqlMode::Table,
            }),
            known => Some(known),
        }
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a migration file. For
    /// [`MySqlMode::Detect`] the table form (call [`create`](Self::create) to let the server
    /// decide).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::MySqlCounter;
    /// # let pool = sqlx::MySqlPool::connect_lazy("mysql://localhost/app").unwrap();
    /// let sql = MySqlCounter::sequence(&pool, "orders").unwrap().migration_sql(1000);
    /// assert_eq!(
    ///     sql,
    ///     "CREATE SEQUENCE IF NOT EXISTS orders START WITH 1 MINVALUE 1 INCREMENT BY 1000 NOCACHE NOCYCLE"
    /// );
    /// # }
    /// ```
    pub fn migration_sql(&self, block: u64) -> String {
        match self.mode() {
            Some(MySqlMode::Sequence) => self.sequence_sql(block),
            _ => self.table_sql().join(";\n"),
        }
    }

    fn sequence_sql(&self, block: u64) -> String {
        format!(
            "CREATE SEQUENCE IF NOT EXISTS {} START WITH 1 MINVALUE 1 INCREMENT BY {block} NOCACHE NOCYCLE",
            self.name
        )
    }

    fn table_sql(&self) -> [String; 2] {
        [
            format!(
                "CREATE TABLE IF NOT EXISTS {} (\n    name     VARCHAR(255) NOT NULL PRIMARY KEY,\n    next_val BIGINT       NOT NULL\n) ENGINE = InnoDB",
                self.table
            ),
            format!(
                "INSERT IGNORE INTO {} (name, next_val) VALUES ('{}', 1)",
                self.table, self.name
            ),
        ]
    }

    /// Creates the sequence (`INCREMENT BY block`) or the counter table and its row (starting
    /// at 1), if they do not exist; existing ones are left as they are. In
    /// [`MySqlMode::Detect`] it asks the server first.
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::MySqlPool) -> Result<(), idgen_sqlx::Error> {
    /// # use idgen_sqlx::hilo::MySqlCounter;
    /// MySqlCounter::sequence(&pool, "orders")?.create(1000).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        name::validate(&self.name)?;
        let statements = match self.resolve().await? {
            Resolved::Sequence => vec![self.sequence_sql(block)],
            Resolved::Table => self.table_sql().to_vec(),
        };
        for sql in statements {
            sqlx::query(AssertSqlSafe(sql))
                .execute(&self.allocator)
                .await
                .map_err(|e| counter_error(&self.name, e))?;
        }
        Ok(())
    }

    /// The mode, asking the server in [`MySqlMode::Detect`] (`SELECT VERSION()`: MariaDB 10.3 or
    /// newer → [`MySqlMode::Sequence`], else [`MySqlMode::Table`]); remembered after the first
    /// answer, so [`mode`](Self::mode) and [`migration_sql`](Self::migration_sql) then know it.
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::MySqlPool) -> Result<(), idgen_sqlx::Error> {
    /// use idgen_sqlx::hilo::{MySqlCounter, MySqlMode};
    /// let counter = MySqlCounter::new(&pool, "orders", MySqlMode::Detect)?;
    /// let mode = counter.detect_mode().await?;
    /// assert_eq!(counter.mode(), Some(mode));
    /// # Ok(()) }
    /// ```
    pub async fn detect_mode(&self) -> Result<MySqlMode, Error> {
        Ok(match self.resolve().await? {
            Resolved::Sequence => MySqlMode::Sequence,
            Resolved::Table => MySqlMode::Table,
        })
    }

    async fn resolve(&self) -> Result<Resolved, Error> {
        match self.mode {
            MySqlMode::Sequence => return Ok(Resolved::Sequence),
            MySqlMode::Table => return Ok(Resolved::Table),
            MySqlMode::Detect => {}
        }
        if let Some(resolved) = self.resolved.get() {
            return Ok(*resolved);
        }
        let version: String = sqlx::query_scalar("SELECT VERSION()")
            .fetch_one(&self.allocator)
            .await
            .map_err(|e| counter_error(&self.name, e))?;
        let resolved = if mariadb_with_sequences(&version) {
            Resolved::Sequence
        } else {
            Resolved::Table
        };
        Ok(*self.resolved.get_or_init(|| resolved))
    }

    async fn allocate_from_sequence(&self) -> Result<i64, BoxError> {
        let sql = format!("SELECT NEXTVAL({})", self.name);
        let mut conn = self.allocator.acquire().await?;
        let start = sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
            .fetch_one(&mut *conn)
            .await;
        Ok(closing(&mut conn, start)?)
    }

    async fn allocate_from_table(&self, size: u64) -> Result<i64, BoxError> {
        let step = i64::try_from(size)?;
        let sql = format!(
            "UPDATE {} SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?",
            self.table
        );
        let mut conn = self.allocator.acquire().await?;
        let done = sqlx::query(AssertSqlSafe(sql))
            .bind(step)
            .bind(&self.name)
            .execute(&mut *conn)
            .await;
        let done = closing(&mut conn, done)?;
        if done.rows_affected() != 1 {
            return Err(self.missing_row().into());
        }
        // The value of `LAST_INSERT_ID(expr)` comes back in this statement's own OK packet:
        // the counter after the update, so the block starts `step` below it.
        let after = i64::try_from(done.last_insert_id())?;
        Ok(after - step)
    }

    fn missing_row(&self) -> Error {
        Error::HiLoCounterMissing {
            counter: self.name.clone(),
            missing: format!("no row '{}' in table {}", self.name, self.table),
        }
    }
}

/// The counter's own one-connection pool ([`pool::dedicated`]), each connection switched to
/// autocommit when it is opened: on a server started with `autocommit=0`, a counter update would
/// otherwise stay uncommitted, and be rolled back (its block handed out again) when the
/// connection closes.
fn autocommit_pool(pool: &MySqlPool) -> MySqlPool {
    pool::options()
        .after_connect(|conn, _| {
            Box::pin(async move {
                sqlx::query("SET autocommit = 1").execute(conn).await?;
                Ok(())
            })
        })
        .connect_lazy_with((*pool.connect_options()).clone())
}

/// `10.11.6-MariaDB-0+deb12u1` → true; MySQL `8.0.36` or MariaDB `10.2.x` → false.
fn mariadb_with_sequences(version: &str) -> bool {
    if !version.contains("MariaDB") {
        return false;
    }
    // Some proxies and old servers report the replication-compatibility prefix.
    let version = version.strip_prefix("5.5.5-").unwrap_or(version);
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (10, 3)
}

impl HiLoSource for MySqlCounter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        name::validate(&self.name)?;
        match self.resolve().await? {
            Resolved::Sequence => self.allocate_from_sequence().await,
            Resolved::Table => self.allocate_from_table(size).await,
        }
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        name::validate(&self.name)?;
        let resolved = self.resolve().await?;
        let (sql, missing) = match resolved {
            Resolved::Sequence => (
                format!("SELECT increment FROM {}", self.name),
                Error::HiLoCounterMissing {
                    counter: self.name.clone(),
                    missing: format!("no sequence named {}", self.name),
                },
            ),
            Resolved::Table => (
                format!("SELECT next_val FROM {} WHERE name = ?", self.table),
                self.missing_row(),
            ),
        };
        let mut conn = self.allocator.acquire().await?;
        let mut query = sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql));
        if resolved == Resolved::Table {
            query = query.bind(&self.name);
        }
        let found = query.fetch_optional(&mut *conn).await;
        match (closing(&mut conn, found), resolved) {
            (Ok(Some(step)), Resolved::Sequence) => {
                Ok(Increment::Fixed(positive_step(&self.name, step)?))
            }
            (Ok(Some(_)), Resolved::Table) => Ok(Increment::PerCall),
            (Ok(None), _) => Err(missing.into()),
            (Err(e), _) if is_missing_relation(&e) => Err(missing.into()),
            (Err(e), _) => Err(e.into()),
        }
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// `HiLo::new(mysql_pool, block)`: the counter named by [`HiLoBuilder::counter`] (default
/// `hilo`) in [`MySqlMode::Detect`].
///
/// [`HiLoBuilder::counter`]: crate::hilo::HiLoBuilder::counter
impl IntoHiLoSource<PoolMarker> for MySqlPool {
    type Source = MySqlCounter;

    fn into_hilo_source(self, counter: &str) -> MySqlCounter {
        MySqlCounter::unchecked(&self, counter, MySqlMode::Detect)
    }
}

impl IntoHiLoSource<PoolMarker> for &MySqlPool {
    type Source = MySqlCounter;

    fn into_hilo_source(self, counter: &str) -> MySqlCounter {
        MySqlCounter::unchecked(self, counter, MySqlMode::Detect)
    }
}

#[cfg(test)]
mod tests {
    use super::mariadb_with_sequences;

    #[test]
    fn detects_mariadb_with_sequences_from_the_version_string() {
        assert!(mariadb_with_sequences("10.11.6-MariaDB-0+deb12u1"));
        assert!(mariadb_with_sequences("10.3.0-MariaDB"));
        assert!(mariadb_with_sequences("11.4.2-MariaDB-ubu2404"));
        assert!(!mariadb_with_sequences("10.2.44-MariaDB"));
        assert!(!mariadb_with_sequences("8.0.36"));
        assert!(mariadb_with_sequences("5.5.5-10.11.6-MariaDB")); // replication prefix
    }
}
