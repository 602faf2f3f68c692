//! [`AsyncDieselCounter`]: a hi-lo counter (sequence or counter table) over a diesel-async
//! deadpool pool, on a connection of its own.

use std::sync::Arc;

use idgen_sql::{CounterKind, detect_mysql_kind};

use crate::async_session::{AsyncDieselSession, Lent, pooled};
use crate::hilo::spec::CounterSpec;
use crate::hilo::{BoxError, HiLoSource, Increment};
use deadpool::managed::Manager;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError};

use crate::async_session::AsyncDieselConnection;
use crate::async_session::AsyncDieselPool;
use idgen_engine::CallError;
use idgen_engine::{Error, ErrorKind};

/// A hi-lo counter over a diesel-async deadpool pool (feature `async`): the [`HiLoSource`]
/// behind `HiLo::builder(&pool)`, with the SQL and semantics of
/// [`DieselCounter`](super::DieselCounter) and idgen-sqlx (pooled-lo; the increment read from
/// the catalog at start-up; one autocommit statement per block), so processes of any of them
/// share one counter.
///
/// Allocations run as tasks of their own on the caller's runtime, on a connection the counter takes from the pool
/// once and keeps (taken again after a failure): never a connection in a caller's
/// transaction, and never waiting behind the callers for a pool slot once it holds one. This
/// costs one connection of the pool per counter (clones share it).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use idgen_diesel::hilo::{AsyncDieselCounter, HiLo};
///
/// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
/// AsyncDieselCounter::new(&pool, "hilo")?.create(1000).await?; // once, or a migration
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
pub struct AsyncDieselCounter<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    pool: AsyncDieselPool<C>,
    /// Name, table, and sequence or table row (on MySQL/MariaDB decided once from
    /// `SELECT VERSION()`).
    spec: CounterSpec,
    /// The counter's own connection, taken from the pool on first use.
    conn:
        Arc<tokio::sync::Mutex<Option<deadpool::managed::Object<AsyncDieselConnectionManager<C>>>>>,
}

/// Runs `$op` (an expression of `session` and `sql`) on the counter's own connection with the
/// counter's SQL; a connection whose statement failed goes back to the pool's recycling check.
macro_rules! on_connection {
    ($counter:expr, |$session:ident, $sql:ident| $op:expr) => {{
        let counter = $counter.clone();
        // A task of its own: a caller that stops waiting neither cancels a statement half-way
        // nor waits for it (diesel-async's `SyncConnectionWrapper` blocks the dropping thread
        // until a cancelled statement ends).
        let task = tokio::spawn(async move {
            counter.spec.check(C::DIALECT)?;
            let mut slot = counter.conn.lock().await;
            let conn = match slot.take() {
                Some(conn) => conn,
                None => pooled::<C>(&counter.pool).await.map_err(|e| {
                    CallError::new(format!("no connection for the counter: {e}"), e)
                })?,
            };
            // Closed, not given back to the pool, if this task is dropped halfway.
            let mut lent = Lent::new(conn);
            let outcome: Result<_, BoxError> = async {
                let mut session = lent.session();
                let kind = counter.kind(&mut session).await?;
                let $sql = counter.spec.sql(C::DIALECT, kind)?;
                let $session = &mut session;
                $op.await
            }
            .await;
            if outcome.is_ok() {
                *slot = lent.settled();
            }
            outcome
        });
        async move {
            task.await
                .unwrap_or_else(|e| Err(format!("the hi-lo statement's task failed: {e}").into()))
        }
    }};
}

impl<C: AsyncDieselConnection> AsyncDieselCounter<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    /// The counter `name` (a sequence on PostgreSQL and MariaDB ≥ 10.3, else the row `name` of
    /// the table `idgen_hilo`). Fails with [`ErrorKind::InvalidSqlName`] when `name` is not a plain
    /// identifier.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::hilo::AsyncDieselCounter;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// assert!(AsyncDieselCounter::new(&pool, "orders_id_seq").is_ok());
    /// assert!(AsyncDieselCounter::new(&pool, "orders'); DROP TABLE orders; --").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: &AsyncDieselPool<C>, name: &str) -> Result<Self, Error> {
        let counter = Self::unchecked(pool, name);
        counter.spec.check(C::DIALECT)?;
        Ok(counter)
    }

    /// The same counter kept in the table `table` instead of `idgen_hilo` (table counters only).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::hilo::AsyncDieselCounter;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let counter = AsyncDieselCounter::new(&pool, "orders")?.with_table("counters")?;
    /// assert_eq!(counter.table(), "counters");
    /// assert!(AsyncDieselCounter::new(&pool, "orders")?.with_table("counters;").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(self, table: &str) -> Result<Self, Error> {
        Ok(AsyncDieselCounter {
            spec: self.spec.with_table(C::DIALECT, table)?,
            conn: Arc::default(),
            pool: self.pool,
        })
    }

    fn unchecked(pool: &AsyncDieselPool<C>, name: &str) -> Self {
        AsyncDieselCounter {
            pool: pool.clone(),
            spec: CounterSpec::unchecked(name),
            conn: Arc::default(),
        }
    }

    /// The counter table's name (used by table counters).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// assert_eq!(idgen_diesel::hilo::AsyncDieselCounter::new(&pool, "orders")?.table(), "idgen_hilo");
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
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::hilo::AsyncDieselCounter;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let sql = AsyncDieselCounter::new(&pool, "orders")?.migration_sql(1000)?;
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
    /// other processes do the same at the same moment.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::hilo::AsyncDieselCounter;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
    /// let orders = AsyncDieselCounter::new(&pool, "orders")?;
    /// orders.create(1000).await?;
    /// orders.create(1000).await?; // idempotent
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        on_connection!(self, |session, sql| sql.create_on(session, block))
            .await
            .map_err(|source| {
                ErrorKind::HiLoSource {
                    counter: self.spec.name.clone(),
                    source: source.into(),
                }
                .into()
            })
    }

    /// Sequence or table: decided once (MySQL/MariaDB by the server's version).
    async fn kind(&self, session: &mut AsyncDieselSession<'_, C>) -> Result<CounterKind, BoxError> {
        if let Some(kind) = self.spec.known_kind(C::DIALECT) {
            return Ok(kind);
        }
        Ok(self.spec.decided(detect_mysql_kind(session).await?))
    }
}

impl<C: AsyncDieselConnection> HiLoSource for AsyncDieselCounter<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        on_connection!(self, |session, sql| sql.allocate_on(session, size)).await
    }

    /// Several blocks in one statement on PostgreSQL (`nextval` over `generate_series`); one
    /// block elsewhere.
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        on_connection!(self, |session, sql| sql
            .allocate_blocks_on(session, size, count))
        .await
    }

    /// One forward-only step ([`CounterSql::raise_on`](idgen_sql::CounterSql::raise_on)).
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        on_connection!(self, |session, sql| sql.raise_on(session, floor)).await?;
        Ok(true)
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let step = on_connection!(self, |session, sql| sql.increment_on(session)).await?;
        Ok(step.map_or(Increment::PerCall, Increment::Fixed))
    }

    fn name(&self) -> &str {
        &self.spec.name
    }

    /// [`create`](Self::create).
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        on_connection!(self, |session, sql| sql.create_on(session, block)).await
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

impl<C: AsyncDieselConnection> crate::hilo::IntoHiLoSource<crate::async_session::DieselAsyncMarker>
    for AsyncDieselPool<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Source = AsyncDieselCounter<C>;
    /// The counter `counter` on this pool; a refused name fails at start-up, naming it.
    fn into_hilo_source(self, counter: &str) -> AsyncDieselCounter<C> {
        AsyncDieselCounter::unchecked(&self, counter)
    }
}

impl<C: AsyncDieselConnection> Clone for AsyncDieselCounter<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn clone(&self) -> Self {
        AsyncDieselCounter {
            pool: self.pool.clone(),
            spec: self.spec.clone(),
            conn: Arc::clone(&self.conn),
        }
    }
}

impl<C: AsyncDieselConnection> std::fmt::Debug for AsyncDieselCounter<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncDieselCounter")
            .field("connection", &std::any::type_name::<C>())
            .field("name", &self.spec.name)
            .field("table", &self.spec.table)
            .finish()
    }
}
