//! [`AsyncDieselLeaseStore`]: node-ID leases in a table of the application's database, over a
//! diesel-async deadpool pool.

use std::future::Future;
use std::sync::Arc;

use idgen_core::lease::steps::{self, Call, StepStore};
use idgen_core::sql::LeaseSql;

use crate::async_session::{AsyncDieselSession, Lent, pooled, unpooled};
use crate::lease::store::store_error;
use crate::lease::{BoxError, DEFAULT_TABLE, LeaseRow, LeaseStore};
use crate::session::Unsettled;
use deadpool::managed::Manager;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError};

use crate::{AsyncDieselConnection, AsyncDieselPool, Error};

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over a
/// diesel-async deadpool pool (feature `async`): the [`LeaseStore`] behind
/// `WorkerLease::acquire(&pool, &layout)`.
///
/// The table, the SQL and the guarantees are those of [`DieselLeaseStore`](super::DieselLeaseStore)
/// and idgen-sqlx's store, so processes of any of them lease from one table without ever
/// sharing a node ID. Each call takes a connection of its own from the pool (waiting at most
/// 5 s), changes none of its settings (on MySQL/MariaDB each step runs in an explicit
/// transaction of its own; a task dropped halfway closes its connection),
/// never inside a transaction of the caller, as a task of its own on the caller's runtime (a
/// caller that stops waiting leaves the statement to complete). A store (with its clones) runs
/// one call at a time.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use idgen_diesel::lease::{AsyncDieselLeaseStore, WorkerLease};
/// use idgen_diesel::Layout;
///
/// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
/// let store = AsyncDieselLeaseStore::with_table(pool, "my_leases")?;
/// store.create_table().await?;
/// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_eq!(store.rows("default").await?[0].node, lease.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct AsyncDieselLeaseStore<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    pool: AsyncDieselPool<C>,
    /// The table's SQL, or why the given name was refused.
    sql: Result<Arc<LeaseSql>, Error>,
    /// A [`detached`](LeaseStore::detached) copy: each call opens a connection of its own
    /// through the pool's manager (never one of the pool's, which may belong to a runtime that
    /// has stopped).
    detached: bool,
    /// Taken by each lease statement's task for its whole statement, so the statements of one
    /// store (its clones and detached copies included) run one at a time, as the blocking
    /// store's: a burst of claims then queues here on one connection instead of taking the
    /// pool's, each holding a connection through the claim's retries while the others wait
    /// for one.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl<C: AsyncDieselConnection> AsyncDieselLeaseStore<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let store = idgen_diesel::lease::AsyncDieselLeaseStore::new(pool);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: AsyncDieselPool<C>) -> Self {
        Self::named(pool, DEFAULT_TABLE)
    }

    /// A store using the table `table` (`name` or `schema.name`, ASCII letters, digits and `_`,
    /// not starting with a digit: the name is written into the SQL, so nothing else is accepted).
    ///
    /// Errors: [`Error::InvalidSqlName`] naming the rejected name.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::lease::AsyncDieselLeaseStore;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let store = AsyncDieselLeaseStore::with_table(pool.clone(), "main.leases")?;
    /// assert_eq!(store.table(), Some("\"main\".\"leases\""));
    /// assert!(AsyncDieselLeaseStore::with_table(pool, "leases--").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(pool: AsyncDieselPool<C>, table: &str) -> Result<Self, Error> {
        let store = Self::named(pool, table);
        store.sql()?;
        Ok(store)
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(pool: AsyncDieselPool<C>, table: &str) -> Self {
        let sql = LeaseSql::new(C::DIALECT, table).map(Arc::new);
        AsyncDieselLeaseStore {
            pool,
            sql,
            detached: false,
            turn: Arc::default(),
        }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::lease::AsyncDieselLeaseStore;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let store = AsyncDieselLeaseStore::with_table(pool, "leases")?;
    /// assert_eq!(store.table(), Some("\"leases\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn table(&self) -> Option<&str> {
        self.sql.as_ref().ok().map(|sql| sql.table())
    }

    /// The pool.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).max_size(3).build()?;
    /// let store = idgen_diesel::lease::AsyncDieselLeaseStore::new(pool);
    /// assert_eq!(store.pool().status().max_size, 3);
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn pool(&self) -> &AsyncDieselPool<C> {
        &self.pool
    }

    /// The `CREATE TABLE` statement for this store's table, for a migration file (no
    /// connection needed). Errors: [`Error::InvalidSqlName`] when the table name was refused.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
    /// let sql = idgen_diesel::lease::AsyncDieselLeaseStore::new(pool).migration_sql()?;
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> Result<String, Error> {
        Ok(self.sql()?.create_table())
    }

    /// Creates the table if it does not exist (idempotent; safe for instances that start
    /// together).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
    /// let store = idgen_diesel::lease::AsyncDieselLeaseStore::new(pool);
    /// store.create_table().await?;
    /// store.create_table().await?; // idempotent
    /// assert!(store.rows("default").await?.is_empty());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create_table(&self) -> Result<(), Error> {
        self.create_if_missing()
            .await
            .map_err(store_error("create"))
    }

    /// The rows of `namespace` by node ID: for operators and tests.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    /// use diesel_async::pooled_connection::deadpool::Pool;
    /// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
    /// use idgen_diesel::lease::{AsyncDieselLeaseStore, WorkerLease};
    /// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
    /// let store = AsyncDieselLeaseStore::new(pool);
    /// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).namespace("orders").holder("web-1").create_if_missing(true)
    ///     .acquire(store.clone(), &idgen_diesel::Layout::TWITTER).await?;
    /// let rows = store.rows("orders").await?;
    /// assert_eq!(rows.len(), 1024); // the node space, created on the first claim
    /// assert!(rows[0].holder.as_deref().is_some_and(|h| h.starts_with("web-1:")));
    /// assert_eq!(rows[1].holder, None);
    /// # drop(lease); Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, Error> {
        let rows = async {
            let (mut conn, sql) = self.start().await?;
            steps::rows(&mut conn.session(), sql, namespace).await
        };
        rows.await.map_err(store_error("read rows"))
    }

    fn sql(&self) -> Result<&LeaseSql, Error> {
        self.sql.as_deref().map_err(Clone::clone)
    }

    /// A readied connection and the SQL for one store call.
    async fn start(&self) -> Result<(Connection<C>, &LeaseSql), BoxError> {
        let sql = self.sql()?;
        let conn = if self.detached {
            unpooled(&self.pool)
                .await
                .map(|conn| Connection::Own(conn, Unsettled::default()))
        } else {
            pooled::<C>(&self.pool)
                .await
                .map(|conn| Connection::Pooled(Lent::new(conn)))
        };
        let conn =
            conn.map_err(|e| format!("no connection for lease table {}: {e}", sql.table()))?;
        Ok((conn, sql))
    }
}

/// A connection of the pool, or of a detached store's own.
enum Connection<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    /// Closed rather than given back to the pool if a call left it unsettled ([`Lent`]).
    Pooled(Lent<C>),
    /// Closed when dropped.
    Own(C, Unsettled),
}

impl<C: AsyncDieselConnection> Connection<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn session(&mut self) -> AsyncDieselSession<'_, C> {
        match self {
            Connection::Pooled(lent) => lent.session(),
            Connection::Own(conn, state) => AsyncDieselSession { conn, state },
        }
    }
}

/// Runs `call` as a task of its own on the caller's runtime: a caller that stops waiting (the
/// engine's time-out) neither cancels a statement half-way nor waits for it. (diesel-async's
/// `SyncConnectionWrapper` blocks the dropping thread until a cancelled statement ends, up to
/// SQLite's busy timeout: the engine's time-out would only fire after it.)
async fn spawned<T: Send + 'static>(
    call: impl Future<Output = Result<T, BoxError>> + Send + 'static,
) -> Result<T, BoxError> {
    tokio::spawn(call)
        .await
        .unwrap_or_else(|e| Err(format!("the lease statement's task failed: {e}").into()))
}

/// The [`LeaseStore`]: idgen-core's procedures ([`steps`]), each call a task of its own
/// (`spawned`), in turn with the store's other calls.
impl<C: AsyncDieselConnection> StepStore for AsyncDieselLeaseStore<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    async fn run_call<K: Call>(&self, call: K) -> Result<K::Output, BoxError> {
        let store = self.clone();
        spawned(async move {
            let _turn = store.turn.lock().await;
            let (mut conn, sql) = store.start().await?;
            call.run(&mut conn.session(), sql).await
        })
        .await
    }

    /// The same table, each call on a connection of its own that the pool's manager opens (its
    /// URL and setup) on whatever runtime calls it, outside the pool: the pool's connections
    /// belong to the runtime they were opened on, which may have stopped.
    fn detach(&self) -> Option<Self> {
        Some(AsyncDieselLeaseStore {
            detached: true,
            ..self.clone()
        })
    }
}

impl<C: AsyncDieselConnection> crate::lease::IntoLeaseStore<crate::DeadpoolPool>
    for AsyncDieselPool<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Store = AsyncDieselLeaseStore<C>;
    /// The store on this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> AsyncDieselLeaseStore<C> {
        AsyncDieselLeaseStore::named(self, table)
    }
}

impl<C: AsyncDieselConnection> Clone for AsyncDieselLeaseStore<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn clone(&self) -> Self {
        AsyncDieselLeaseStore {
            pool: self.pool.clone(),
            sql: self.sql.clone(),
            detached: self.detached,
            turn: Arc::clone(&self.turn),
        }
    }
}

impl<C: AsyncDieselConnection> std::fmt::Debug for AsyncDieselLeaseStore<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncDieselLeaseStore")
            .field("connection", &std::any::type_name::<C>())
            .field("table", &self.table())
            .field("detached", &self.detached)
            .finish()
    }
}
