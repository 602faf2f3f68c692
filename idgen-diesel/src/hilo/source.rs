//! [`DieselCounter`]: a hi-lo counter (sequence or counter table) over an r2d2 pool of diesel
//! connections, on a connection of its own.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::r2d2::{ConnectionManager, PooledConnection, R2D2Connection};
use idgen_sql::{CounterKind, CounterSql, block_on, detect_mysql_kind};

use crate::hilo::spec::CounterSpec;
use crate::hilo::{BoxError, HiLoSource, Increment, IntoHiLoSource};
use crate::session::DieselConnection;
use crate::session::{DieselSession, Unsettled, break_connection};
use crate::{DieselPool, R2d2Marker};
use idgen_engine::{Error, ErrorKind};

/// The counter table's default name (MySQL table mode, SQLite; idgen-sql's).
pub use idgen_sql::DEFAULT_COUNTER_TABLE as DEFAULT_TABLE;

/// The longest an allocation waits for its connection (the engine retries after that).
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// A hi-lo counter over an r2d2 pool of diesel connections: the [`HiLoSource`] behind
/// `HiLo::new(&pool, 1000)`, with idgen-sqlx's SQL and semantics (pooled-lo; the increment
/// read from the catalog at start-up; one autocommit statement per block).
///
/// Allocations run on tokio's blocking threads, on a connection the counter takes from the
/// pool once and keeps (taken again after a failure): never a connection in a caller's
/// transaction, and never waiting behind the callers for a pool slot once it holds one. This
/// costs one connection of the pool per counter (clones share it).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::hilo::{DieselCounter, HiLo};
///
/// # let dir = tempfile::tempdir()?;
/// # let database_url = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
/// DieselCounter::new(&pool, "hilo")?.create(1000)?; // once, or a migration
///
/// let ids = HiLo::new(&pool, 1000).await?; // the counter "hilo"
/// assert_eq!(ids.next_id().await?, 1);
/// assert_eq!(ids.next_id().await?, 2);
///
/// // Where migrations own the schema: a missing counter is refused, naming the migration.
/// let orders = HiLo::builder(&pool).counter("orders").block(1000).create_if_missing(false).build().await;
/// assert!(orders.unwrap_err().to_string().contains("no row 'orders' in table idgen_hilo"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct DieselCounter<C: R2D2Connection + 'static> {
    pool: DieselPool<C>,
    /// Name, table, and sequence or table row (on MySQL/MariaDB decided once from
    /// `SELECT VERSION()`).
    spec: CounterSpec,
    /// The counter's own connection, taken from the pool on first use.
    conn: Arc<Mutex<Option<PooledConnection<ConnectionManager<C>>>>>,
}

impl<C: DieselConnection> DieselCounter<C> {
    /// The counter `name` (a sequence on PostgreSQL and MariaDB ≥ 10.3, else the row `name` of
    /// the table `idgen_hilo`). Fails with [`ErrorKind::InvalidSqlName`] when `name` is not a plain
    /// identifier.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// assert!(DieselCounter::new(&pool, "orders_id_seq").is_ok());
    /// assert!(DieselCounter::new(&pool, "orders'); DROP TABLE orders; --").is_err());
    /// # }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: &DieselPool<C>, name: &str) -> Result<Self, Error> {
        let counter = Self::unchecked(pool, name);
        counter.spec.check(C::DIALECT)?;
        Ok(counter)
    }

    /// The same counter kept in the table `table` instead of `idgen_hilo` (table counters only).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), idgen_diesel::Error> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let counter = DieselCounter::new(&pool, "orders")?.with_table("counters")?;
    /// assert_eq!(counter.table(), "counters");
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(self, table: &str) -> Result<Self, Error> {
        Ok(DieselCounter {
            spec: self.spec.with_table(C::DIALECT, table)?,
            conn: Arc::new(Mutex::new(None)),
            pool: self.pool,
        })
    }

    fn unchecked(pool: &DieselPool<C>, name: &str) -> Self {
        DieselCounter {
            pool: pool.clone(),
            spec: CounterSpec::unchecked(name),
            conn: Arc::new(Mutex::new(None)),
        }
    }

    /// The counter table's name (used by table counters).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), idgen_diesel::Error> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// assert_eq!(idgen_diesel::hilo::DieselCounter::new(&pool, "orders")?.table(), "idgen_hilo");
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn table(&self) -> &str {
        &self.spec.table
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a diesel migration's `up.sql`
    /// (no connection needed): on MySQL/MariaDB the table form until the counter has met its
    /// server (`create`, or the first allocation), which decides between sequence and table.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let sql = DieselCounter::new(&pool, "orders")?.migration_sql(1000)?;
    /// assert!(sql.ends_with("INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        self.spec.migration_sql(C::DIALECT, block)
    }

    /// Creates the sequence (`INCREMENT BY block`) or the table and row if they do not exist
    /// (an existing sequence is left as it is; start-up then checks its increment), safely when
    /// other processes do the same at the same moment. Blocking.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// # let dir = tempfile::tempdir()?;
    /// # let database_url = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
    /// let orders = DieselCounter::new(&pool, "orders")?;
    /// orders.create(1000)?;
    /// orders.create(1000)?; // idempotent
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn create(&self, block: u64) -> Result<(), Error> {
        self.with_session(|session, sql| block_on(sql.create_on(session, block)))
            .map_err(|source| {
                ErrorKind::HiLoSource {
                    counter: self.spec.name.clone(),
                    source: source.into(),
                }
                .into()
            })
    }

    /// Runs `op` on the counter's own connection (taken from the pool if it has none yet, and
    /// given back to the pool after a failure) with the counter's SQL.
    fn with_session<T>(
        &self,
        op: impl FnOnce(&mut DieselSession<'_, C>, &CounterSql) -> Result<T, BoxError>,
    ) -> Result<T, BoxError> {
        self.spec.check(C::DIALECT)?;
        let mut slot = self
            .conn
            .lock()
            .map_err(|_| "a hi-lo allocation panicked while holding the counter's connection")?;
        if slot.is_none() {
            let wait = self.pool.connection_timeout().min(CONNECTION_WAIT);
            let mut conn = self.pool.get_timeout(wait)?;
            conn.prepare()?;
            *slot = Some(conn);
        }
        let Some(conn) = slot.as_mut() else {
            return Err("the counter has no connection".into());
        };
        let mut state = Unsettled::default();
        let mut session = DieselSession {
            conn: &mut **conn,
            state: &mut state,
        };
        let outcome = self.kind(&mut session).and_then(|kind| {
            let sql = self.spec.sql(C::DIALECT, kind)?;
            op(&mut session, &sql)
        });
        if state.any() {
            // A transaction whose end failed: r2d2 closes the connection instead of lending it
            // on.
            break_connection(&mut **conn);
        }
        if outcome.is_err() || state.any() {
            *slot = None;
        }
        outcome
    }

    /// Sequence or table: decided once (MySQL/MariaDB by the server's version).
    fn kind(&self, session: &mut DieselSession<'_, C>) -> Result<CounterKind, BoxError> {
        if let Some(kind) = self.spec.known_kind(C::DIALECT) {
            return Ok(kind);
        }
        Ok(self.spec.decided(block_on(detect_mysql_kind(session))?))
    }

    async fn blocking<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut DieselSession<'_, C>, &CounterSql) -> Result<T, BoxError> + Send + 'static,
    ) -> Result<T, BoxError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.with_session(op))
            .await
            .unwrap_or_else(|e| {
                Err(format!("the hi-lo allocation's blocking task failed: {e}").into())
            })
    }
}

impl<C: DieselConnection + Send> HiLoSource for DieselCounter<C> {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.blocking(move |session, sql| block_on(sql.allocate_on(session, size)))
            .await
    }

    /// Several blocks in one statement on PostgreSQL (`nextval` over `generate_series`); one
    /// block elsewhere.
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        self.blocking(move |session, sql| block_on(sql.allocate_blocks_on(session, size, count)))
            .await
    }

    /// One forward-only step ([`CounterSql::raise_on`]), on a blocking thread.
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.blocking(move |session, sql| block_on(sql.raise_on(session, floor)))
            .await?;
        Ok(true)
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let step = self
            .blocking(|session, sql| block_on(sql.increment_on(session)))
            .await?;
        Ok(step.map_or(Increment::PerCall, Increment::Fixed))
    }

    fn name(&self) -> &str {
        &self.spec.name
    }

    /// [`create`](Self::create), on a blocking thread.
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        self.blocking(move |session, sql| block_on(sql.create_on(session, block)))
            .await
    }

    /// `true`: the counter lives in the database with the rows its IDs key.
    fn create_if_missing_by_default(&self) -> bool {
        true
    }

    /// [`migration_sql`](Self::migration_sql).
    fn migration_sql(&self, block: u64) -> Option<String> {
        Self::migration_sql(self, block).ok()
    }
}

impl<C: DieselConnection + Send> IntoHiLoSource<R2d2Marker> for DieselPool<C> {
    type Source = DieselCounter<C>;
    /// The counter `counter` on this pool; a refused name fails at start-up, naming it.
    fn into_hilo_source(self, counter: &str) -> DieselCounter<C> {
        DieselCounter::unchecked(&self, counter)
    }
}

impl<C: R2D2Connection + 'static> Clone for DieselCounter<C> {
    fn clone(&self) -> Self {
        DieselCounter {
            pool: self.pool.clone(),
            spec: self.spec.clone(),
            conn: Arc::clone(&self.conn),
        }
    }
}

impl<C: R2D2Connection + 'static> std::fmt::Debug for DieselCounter<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselCounter")
            .field("connection", &std::any::type_name::<C>())
            .field("name", &self.spec.name)
            .field("table", &self.spec.table)
            .finish()
    }
}
