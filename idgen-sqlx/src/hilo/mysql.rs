//! MySQL and MariaDB: a MariaDB `SEQUENCE` (10.3+), or a counter table read with
//! `LAST_INSERT_ID(expr)` from the `UPDATE`'s own result.

use std::sync::OnceLock;

use idgen_sql::{CounterKind, CounterSql, Dialect, detect_mysql_kind};
use sqlx::MySqlPool;

use super::counter::Counter;
use super::{DEFAULT_TABLE, pool};
use crate::hilo::{BoxError, HiLoSource, Increment, IntoHiLoSource};
use crate::session::SqlxDatabase;
use crate::session::SqlxMarker;
use idgen_engine::{Error, ErrorKind};

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
    resolved: std::sync::Arc<OnceLock<CounterKind>>,
}

impl MySqlCounter {
    /// The counter `name` in `mode`. A sequence is named `name`; a table counter is the row
    /// `name` of the table `idgen_hilo` ([`with_table`](Self::with_table) to change it). Fails
    /// with [`ErrorKind::InvalidSqlName`] when `name` is not a plain identifier.
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
        CounterSql::table(Dialect::MySql, name, DEFAULT_TABLE)?;
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
    /// assert!(orders.migration_sql(100).unwrap().starts_with("CREATE SEQUENCE IF NOT EXISTS orders_seq"));
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
    /// assert!(orders.migration_sql(100).unwrap().starts_with("CREATE TABLE IF NOT EXISTS idgen_hilo"));
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
    /// assert!(orders.migration_sql(100).unwrap().contains("app.counters"));
    /// # }
    /// ```
    pub fn with_table(mut self, table: &str) -> Result<MySqlCounter, Error> {
        CounterSql::table(Dialect::MySql, &self.name, table)?;
        table.clone_into(&mut self.table);
        Ok(self)
    }

    fn unchecked(pool: &MySqlPool, name: &str, mode: MySqlMode) -> MySqlCounter {
        MySqlCounter {
            allocator: pool::dedicated(pool),
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
            MySqlMode::Detect => self.resolved.get().map(|&kind| mode_of(kind)),
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
    /// let sql = MySqlCounter::sequence(&pool, "orders").unwrap().migration_sql(1000).unwrap();
    /// assert_eq!(
    ///     sql,
    ///     "CREATE SEQUENCE IF NOT EXISTS orders START WITH 1 MINVALUE 1 INCREMENT BY 1000 NOCACHE NOCYCLE"
    /// );
    /// # }
    /// ```
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        let kind = match self.mode() {
            Some(MySqlMode::Sequence) => CounterKind::Sequence,
            _ => CounterKind::Table,
        };
        self.counter(kind).migration_sql(block)
    }

    /// The counter's SQL as a sequence or a table row.
    fn counter(&self, kind: CounterKind) -> Counter<sqlx::MySql> {
        let sql = match kind {
            CounterKind::Sequence => CounterSql::sequence(Dialect::MySql, &self.name),
            CounterKind::Table => CounterSql::table(Dialect::MySql, &self.name, &self.table),
        };
        Counter {
            allocator: self.allocator.clone(),
            sql,
        }
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
        self.counter(self.resolve().await?).create(block).await
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
        Ok(mode_of(self.resolve().await?))
    }

    async fn resolve(&self) -> Result<CounterKind, Error> {
        match self.mode {
            MySqlMode::Sequence => return Ok(CounterKind::Sequence),
            MySqlMode::Table => return Ok(CounterKind::Table),
            MySqlMode::Detect => {}
        }
        if let Some(kind) = self.resolved.get() {
            return Ok(*kind);
        }
        let detected = async {
            let mut session = sqlx::MySql::session(&self.allocator).await?;
            detect_mysql_kind(&mut session).await
        };
        let kind = detected
            .await
            .map_err(|e: sqlx::Error| ErrorKind::HiLoSource {
                counter: self.name.clone(),
                source: std::sync::Arc::new(e),
            })?;
        Ok(*self.resolved.get_or_init(|| kind))
    }
}

fn mode_of(kind: CounterKind) -> MySqlMode {
    match kind {
        CounterKind::Sequence => MySqlMode::Sequence,
        CounterKind::Table => MySqlMode::Table,
    }
}

impl HiLoSource for MySqlCounter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.counter(self.resolve().await?).allocate(size).await
    }

    /// One forward-only step ([`CounterSql::raise_on`](idgen_sql::CounterSql::raise_on)).
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.counter(self.resolve().await?).raise_above(floor).await
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        self.counter(self.resolve().await?).increment().await
    }

    /// [`create`](Self::create).
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        Ok(self.create(block).await?)
    }

    /// `true`: the counter lives in the database with the rows its IDs key.
    fn create_if_missing_by_default(&self) -> bool {
        true
    }

    /// [`migration_sql`](Self::migration_sql): the detected mode's, once start-up looked.
    fn migration_sql(&self, block: u64) -> Option<String> {
        Self::migration_sql(self, block).ok()
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// `HiLo::new(mysql_pool, block)`: the counter named by [`HiLoBuilder::counter`] (default
/// `hilo`) in [`MySqlMode::Detect`].
///
/// [`HiLoBuilder::counter`]: crate::hilo::HiLoBuilder::counter
impl IntoHiLoSource<SqlxMarker> for MySqlPool {
    type Source = MySqlCounter;

    fn into_hilo_source(self, counter: &str) -> MySqlCounter {
        MySqlCounter::unchecked(&self, counter, MySqlMode::Detect)
    }
}
