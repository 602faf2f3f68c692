//! [`DieselLeaseStore`]: node-ID leases in a table of the application's database, over an r2d2
//! pool of diesel connections.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use diesel::r2d2::R2D2Connection;
use idgen_core::lease::steps::{self, Call, StepStore};
use idgen_core::sql::{LeaseSql, block_on};

use crate::lease::exit_wait;
use crate::lease::{BoxError, IntoLeaseStore};
use crate::session::{DieselSession, Unsettled, break_connection};
use crate::{DieselConnection, DieselPool, Error, R2d2Pool};

/// The lease table's default name (idgen-core's, shared by every adapter).
pub use idgen_core::sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;
/// One row of the lease table, from [`DieselLeaseStore::rows`].
pub use idgen_core::sql::LeaseRow;

/// The longest a call waits for a pooled connection (less if the pool's own time-out is
/// shorter): idgen-core's default store time-out, so a blocking call does not outlive the
/// engine's time-out by r2d2's 30 s, nor hold up a runtime's shutdown that long.
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over an
/// r2d2 pool of diesel connections: the [`LeaseStore`](crate::lease::LeaseStore) behind
/// `WorkerLease::acquire(&pool, &layout)`.
///
/// The table, the SQL and the guarantees are idgen-sqlx's, so diesel and sqlx processes lease
/// from one table without ever sharing a node ID. Each call takes a connection of its own from
/// the pool, changes none of its settings (on MySQL/MariaDB each step runs in an explicit
/// transaction of its own), never inside a transaction of the caller, on a short-lived thread of its own per call, so
/// async executors never block on the database (and a release still runs while the runtime
/// shuts down). A store (with its clones) runs one call at a time.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::lease::{DieselLeaseStore, WorkerLease};
/// use idgen_diesel::Layout;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// let store = DieselLeaseStore::with_table(pool, "my_leases")?;
/// store.create_table()?;
/// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_eq!(store.rows("default")?[0].node, lease.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct DieselLeaseStore<C: R2D2Connection + 'static> {
    pool: DieselPool<C>,
    /// The table's SQL, or why the given name was refused.
    sql: Result<Arc<LeaseSql>, Error>,
    /// Taken by each lease statement's thread for its whole statement, so the statements of
    /// one store (its clones and detached copies included) run one at a time (see
    /// [`on_thread`](Self::on_thread)).
    turn: Arc<Mutex<()>>,
}

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist,
/// on a connection of `pool`. Blocking: call it at start-up or from `spawn_blocking`. The SQL
/// for migrations is in the [module documentation](crate::lease).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// idgen_diesel::lease::create_lease_table(&pool)?;
/// idgen_diesel::lease::create_lease_table(&pool)?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub fn create_lease_table<C: DieselConnection>(pool: &DieselPool<C>) -> Result<(), Error> {
    DieselLeaseStore::new(pool.clone()).create_table()
}

impl<C: DieselConnection> DieselLeaseStore<C> {
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let store = idgen_diesel::lease::DieselLeaseStore::new(pool);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: DieselPool<C>) -> Self {
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
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::lease::DieselLeaseStore;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let store = DieselLeaseStore::with_table(pool.clone(), "main.leases")?;
    /// assert_eq!(store.table(), Some("\"main\".\"leases\""));
    /// assert!(DieselLeaseStore::with_table(pool, "leases--").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(pool: DieselPool<C>, table: &str) -> Result<Self, Error> {
        let store = Self::named(pool, table);
        store.sql()?;
        Ok(store)
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(pool: DieselPool<C>, table: &str) -> Self {
        let sql = LeaseSql::new(C::DIALECT, table).map(Arc::new);
        DieselLeaseStore {
            pool,
            sql,
            turn: Arc::default(),
        }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    pub fn table(&self) -> Option<&str> {
        self.sql.as_ref().ok().map(|sql| sql.table())
    }

    /// The pool.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let store = idgen_diesel::lease::DieselLeaseStore::new(pool);
    /// assert_eq!(store.pool().max_size(), 10);
    /// # }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn pool(&self) -> &DieselPool<C> {
        &self.pool
    }

    /// The `CREATE TABLE` statement for this store's table, for a migration file (no
    /// connection needed). Errors: [`Error::InvalidSqlName`] when the table name was refused.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), idgen_diesel::Error> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let sql = idgen_diesel::lease::DieselLeaseStore::new(pool).migration_sql()?;
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> Result<String, Error> {
        Ok(self.sql()?.create_table())
    }

    /// Creates the table if it does not exist (idempotent; safe for instances that start
    /// together). Blocking: call it at start-up or from `spawn_blocking`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
    /// let store = idgen_diesel::lease::DieselLeaseStore::new(pool);
    /// store.create_table()?;
    /// assert!(store.rows("default")?.is_empty());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn create_table(&self) -> Result<(), Error> {
        self.run(|session, sql| block_on(steps::create_table(session, sql)))
            .map_err(store_error("create"))
    }

    /// The rows of `namespace` by node ID: for operators and tests. Blocking.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::lease::{DieselLeaseStore, WorkerLease};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.db").display().to_string();
    /// let store = DieselLeaseStore::new(Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?);
    /// store.create_table()?;
    /// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).namespace("orders").holder("web-1")
    ///     .acquire(store.clone(), &idgen_diesel::Layout::TWITTER).await?;
    /// let rows = store.rows("orders")?;
    /// assert_eq!(rows.len(), 1024); // the node space, created on the first claim
    /// assert!(rows[0].holder.as_deref().is_some_and(|h| h.starts_with("web-1:")));
    /// assert_eq!(rows[1].holder, None);
    /// # drop(lease); Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, Error> {
        self.run(|session, sql| block_on(steps::rows(session, sql, namespace)))
            .map_err(store_error("read rows"))
    }

    fn sql(&self) -> Result<&LeaseSql, Error> {
        self.sql.as_deref().map_err(Clone::clone)
    }

    /// Runs `op` on a readied connection of the pool, on this thread.
    fn run<T>(
        &self,
        op: impl FnOnce(&mut DieselSession<'_, C>, &LeaseSql) -> Result<T, BoxError>,
    ) -> Result<T, BoxError> {
        run_on(&self.pool, self.sql()?, op)
    }

    /// Runs `op` on a pooled connection on a thread of its own.
    ///
    /// Not `spawn_blocking`: a runtime that is shutting down cancels blocking tasks before they
    /// start, so a lease's release in its last moments would fail at once instead of reaching
    /// the database. A thread per call (a claim at start-up, a renewal every few seconds) always
    /// runs; if the caller stops waiting, the statement still completes on its own.
    ///
    /// One statement of this store at a time: two at once (a dropped lease's release task and
    /// the release its `Drop` starts when the runtime shuts down, say) would find the pool's one
    /// connection taken, and r2d2 would open another on its own worker thread, which nobody
    /// waits for. A process returning from `main` then runs `exit` — OpenSSL's clean-up — under
    /// a thread still inside libpq's connect, and dies with SIGSEGV. Taking turns, the second
    /// statement gets the first one's connection back.
    async fn on_thread<T, F>(&self, op: F) -> Result<T, BoxError>
    where
        T: Send + 'static,
        F: FnOnce(&mut DieselSession<'_, C>, &LeaseSql) -> Result<T, BoxError> + Send + 'static,
    {
        let pool = self.pool.clone();
        let sql = Arc::clone(self.sql.as_ref().map_err(Clone::clone)?);
        let (answer, answered) = tokio::sync::oneshot::channel();
        // Counted from before the spawn to the thread's last step, so a process that exits
        // meanwhile waits for it (bounded) instead of tearing libpq down under it.
        let running = exit_wait::Running::start();
        let turn = Arc::clone(&self.turn);
        std::thread::Builder::new()
            .name("idgen-diesel-lease".to_owned())
            .spawn(move || {
                let outcome = {
                    let _turn = turn.lock().unwrap_or_else(PoisonError::into_inner);
                    run_on(&pool, &sql, |session, sql| {
                        exit_wait::wait_at_exit();
                        op(session, sql)
                    })
                };
                // The pool's clone goes before the answer: when the caller has its answer, this
                // thread no longer holds a connection (it may be the pool's last clone, whose
                // drop closes them).
                drop(pool);
                let _ = answer.send(outcome);
                drop(running);
            })
            .map_err(|e| format!("no thread to run the lease statement on: {e}"))?;
        answered.await.unwrap_or_else(|_| {
            Err("the thread running the lease statement ended without an answer".into())
        })
    }
}

/// Runs `op` on a readied connection of `pool` (waiting at most [`CONNECTION_WAIT`]).
fn run_on<C: DieselConnection, T>(
    pool: &DieselPool<C>,
    sql: &LeaseSql,
    op: impl FnOnce(&mut DieselSession<'_, C>, &LeaseSql) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    let wait = pool.connection_timeout().min(CONNECTION_WAIT);
    let mut conn = pool
        .get_timeout(wait)
        .map_err(|e| format!("no connection for lease table {}: {e}", sql.table()))?;
    conn.prepare()?;
    let mut state = Unsettled::default();
    let outcome = op(
        &mut DieselSession {
            conn: &mut *conn,
            state: &mut state,
        },
        sql,
    );
    if state.any() {
        // A transaction whose end failed: r2d2 closes the connection instead of lending it on.
        break_connection(&mut *conn);
    }
    outcome
}

/// The store error of a direct call (not through the engine).
pub(crate) fn store_error(operation: &'static str) -> impl Fn(BoxError) -> Error {
    move |e| Error::LeaseStore {
        operation,
        message: e.to_string(),
        source: Some(Arc::from(e)),
    }
}

/// The [`LeaseStore`](crate::lease::LeaseStore): idgen-core's procedures ([`steps`]), each call on a thread of its own
/// (`on_thread`).
impl<C: DieselConnection + Send> StepStore for DieselLeaseStore<C> {
    async fn run_call<K: Call>(&self, call: K) -> Result<K::Output, BoxError> {
        self.on_thread(move |session, sql| block_on(call.run(session, sql)))
            .await
    }

    /// A clone: an r2d2 pool belongs to no async runtime (its connections are plain blocking
    /// ones), and each call runs on a thread of its own.
    fn detach(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl<C: DieselConnection + Send> IntoLeaseStore<R2d2Pool> for DieselPool<C> {
    type Store = DieselLeaseStore<C>;
    /// The store on this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> DieselLeaseStore<C> {
        DieselLeaseStore::named(self, table)
    }
}

impl<C: R2D2Connection + 'static> Clone for DieselLeaseStore<C> {
    fn clone(&self) -> Self {
        DieselLeaseStore {
            pool: self.pool.clone(),
            sql: self.sql.clone(),
            turn: Arc::clone(&self.turn),
        }
    }
}

impl<C: R2D2Connection + 'static> std::fmt::Debug for DieselLeaseStore<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselLeaseStore")
            .field("connection", &std::any::type_name::<C>())
            .field("table", &self.sql.as_ref().ok().map(|sql| sql.table()))
            .finish()
    }
}
