//! [`DieselLeaseStore`]: node-ID leases in a table of the application's database, over an r2d2
//! pool of diesel connections.

use std::sync::Arc;
use std::time::Duration;

use diesel::r2d2::R2D2Connection;
use diesel::result::{DatabaseErrorKind, Error as QueryError, QueryResult};

use crate::DieselError;
use crate::lease::exit_wait;
use crate::lease::{BoxError, Claim, ClaimRequest, IntoLeaseStore, LeaseStore, RenewRequest};
use idgen_core::lease::TableName;

/// The lease table's default name (the same as idgen-sqlx's, so both use one table).
pub const DEFAULT_TABLE: &str = "idgen_worker_lease";

/// Rows of a namespace are created in chunks of this many node IDs, as they are needed.
const CHUNK: u64 = 1024;

/// Claims that find no free row before the node space counts as full (see `claim_once`).
const FULL_CHECKS: u32 = 4;

/// Attempts of one step that failed on a deadlock, lock time-out or busy database.
const TRANSIENT_ATTEMPTS: u32 = 8;

/// The longest a call waits for a pooled connection (less if the pool's own time-out is
/// shorter): idgen-core's default store time-out, so a blocking call does not outlive the
/// engine's time-out by r2d2's 30 s, nor hold up a runtime's shutdown that long.
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

pub use crate::DieselPool;

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over an
/// r2d2 pool of diesel connections: the [`LeaseStore`] behind
/// `WorkerLease::acquire(&pool, &layout)`.
///
/// The table, the SQL and the guarantees are idgen-sqlx's, so diesel and sqlx processes lease
/// from one table without ever sharing a node ID. Each call takes a connection of its own from
/// the pool and runs in autocommit (a claim on MySQL/MariaDB in a short transaction of its own),
/// never inside a transaction of the caller, on a short-lived thread of its own per call, so
/// async executors never block on the database (and a release still runs while the runtime
/// shuts down).
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
/// let lease = WorkerLease::acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_eq!(store.rows("default")?[0].node, lease.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct DieselLeaseStore<C: R2D2Connection + 'static> {
    pool: DieselPool<C>,
    /// The quoted table name, or why the given name was refused.
    table: Result<Arc<str>, idgen_core::Error>,
}

/// One row of the lease table, from [`DieselLeaseStore::rows`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseRow {
    /// The node ID.
    pub node: u64,
    /// Who holds it (`None` if it was never claimed or was released).
    pub holder: Option<String>,
    /// When the lease ends (ended), in Unix ms on the database's clock.
    pub expires_at_ms: i64,
    /// The largest timestamp (Unix ms) a holder of this node ID may have issued.
    pub last_timestamp_ms: Option<i64>,
}

/// Marks the [`IntoLeaseStore`] implementations for r2d2 pools of diesel connections, so that
/// `WorkerLease::acquire(&pool, &layout)` takes one. Never named by callers.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::lease::{create_lease_table, WorkerLease};
/// use idgen_diesel::Layout;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// create_lease_table(&mut *pool.get()?)?;
/// let by_reference = WorkerLease::acquire(&pool, &Layout::TWITTER).await?;
/// let by_value = WorkerLease::acquire(pool.clone(), &Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub struct R2d2Pool;

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    #[cfg(feature = "postgres")]
    impl Sealed for diesel::PgConnection {}
    #[cfg(feature = "mysql")]
    impl Sealed for diesel::MysqlConnection {}
    #[cfg(feature = "sqlite")]
    impl Sealed for diesel::SqliteConnection {}
}

/// A diesel connection that can hold the lease table: `PgConnection`, `MysqlConnection`
/// (MariaDB too) and `SqliteConnection`, with the crate features `postgres`, `mysql`, `sqlite`.
/// Sealed; its methods are each database's SQL, used through [`DieselLeaseStore`].
///
/// ```
/// fn takes_a_lease_connection<C: idgen_diesel::lease::LeaseConnection>(_conn: &mut C) {}
/// # #[cfg(feature = "sqlite")]
/// # let _ = takes_a_lease_connection::<diesel::SqliteConnection>;
/// ```
pub trait LeaseConnection: R2D2Connection + sealed::Sealed + 'static {
    #[doc(hidden)]
    const QUOTE: char;
    #[doc(hidden)]
    fn migration_sql(table: &str) -> String;
    #[doc(hidden)]
    fn prepare(&mut self) -> QueryResult<()> {
        Ok(())
    }
    /// Runs the idempotent `ddl`, safely when other processes run it at the same moment.
    #[doc(hidden)]
    fn create_if_missing(&mut self, ddl: &str) -> QueryResult<()> {
        self.batch_execute(ddl)
    }
    #[doc(hidden)]
    fn take_expired(&mut self, table: &str, req: ClaimRequest<'_>) -> QueryResult<Option<Claim>>;
    #[doc(hidden)]
    fn next_missing(&mut self, table: &str, namespace: &str, capacity: u64) -> QueryResult<u64>;
    #[doc(hidden)]
    fn insert_rows(
        &mut self,
        table: &str,
        namespace: &str,
        nodes: std::ops::Range<u64>,
    ) -> QueryResult<()>;
    #[doc(hidden)]
    fn renew(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<bool>;
    #[doc(hidden)]
    fn release(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<()>;
    #[doc(hidden)]
    fn rows(&mut self, table: &str, namespace: &str) -> QueryResult<Vec<LeaseRow>>;
}

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist,
/// on `conn` (e.g. `&mut pool.get()?`, or in a migration). The SQL is in the
/// [module documentation](crate::lease).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> diesel::QueryResult<()> {
/// use diesel::Connection;
/// let conn = &mut diesel::SqliteConnection::establish(":memory:").unwrap();
/// idgen_diesel::lease::create_lease_table(conn)?;
/// idgen_diesel::lease::create_lease_table(conn)?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub fn create_lease_table<C: LeaseConnection>(conn: &mut C) -> QueryResult<()> {
    let table = TableName::parse(DEFAULT_TABLE)
        .map(|t| t.quoted(C::QUOTE))
        .unwrap_or_default();
    conn.prepare()?;
    conn.create_if_missing(&C::migration_sql(&table))
}

impl<C: LeaseConnection> DieselLeaseStore<C> {
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
    /// Errors: [`DieselError::Core`] naming the rejected name.
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
    pub fn with_table(pool: DieselPool<C>, table: &str) -> Result<Self, DieselError> {
        let store = Self::named(pool, table);
        match &store.table {
            Ok(_) => Ok(store),
            Err(e) => Err(DieselError::Core(e.clone())),
        }
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(pool: DieselPool<C>, table: &str) -> Self {
        let table = TableName::parse(table).map(|t| Arc::from(t.quoted(C::QUOTE)));
        DieselLeaseStore { pool, table }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref().ok()
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

    /// The `CREATE TABLE` statement for this store's table, for a migration file.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let sql = idgen_diesel::lease::DieselLeaseStore::new(pool).migration_sql();
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> String {
        match &self.table {
            Ok(table) => C::migration_sql(table),
            Err(e) => format!("-- {e}"),
        }
    }

    /// Creates the table if it does not exist (idempotent). Blocking: call it at start-up or
    /// from `spawn_blocking`.
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
    pub fn create_table(&self) -> Result<(), DieselError> {
        let sql = C::migration_sql(self.quoted_table()?);
        let conn = &mut *self.pool.get()?;
        conn.prepare()?;
        conn.create_if_missing(&sql)?;
        Ok(())
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
    /// let lease = WorkerLease::options().namespace("orders").holder("web-1")
    ///     .acquire(store.clone(), &idgen_diesel::Layout::TWITTER).await?;
    /// let rows = store.rows("orders")?;
    /// assert_eq!(rows.len(), 1024); // the node space, created on the first claim
    /// assert!(rows[0].holder.as_deref().is_some_and(|h| h.starts_with("web-1:")));
    /// assert_eq!(rows[1].holder, None);
    /// # drop(lease); Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, DieselError> {
        let table = self.quoted_table()?;
        let conn = &mut *self.pool.get()?;
        conn.prepare()?;
        Ok(conn.rows(table, namespace)?)
    }

    fn quoted_table(&self) -> Result<&str, DieselError> {
        match &self.table {
            Ok(t) => Ok(t),
            Err(e) => Err(DieselError::Core(e.clone())),
        }
    }

    /// Runs `op` on a pooled connection on a thread of its own, retrying transient errors, and
    /// names the operation and the table in an error.
    ///
    /// Not `spawn_blocking`: a runtime that is shutting down cancels blocking tasks before they
    /// start, so a lease's release in its last moments would fail at once instead of reaching
    /// the database. A thread per call (a claim at start-up, a renewal every few seconds) always
    /// runs; if the caller stops waiting, the statement still completes on its own.
    async fn blocking<T, F>(&self, operation: &'static str, op: F) -> Result<T, BoxError>
    where
        T: Send + 'static,
        F: Fn(&mut C, &str) -> QueryResult<T> + Send + 'static,
    {
        let pool = self.pool.clone();
        let table = self.table.clone();
        let (answer, answered) = tokio::sync::oneshot::channel();
        // Counted from before the spawn to the thread's last step, so a process that exits
        // meanwhile waits for it (bounded) instead of tearing libpq down under it.
        let running = exit_wait::Running::start();
        let work = move || {
            let outcome = (|| -> Result<T, DieselError> {
                let table = table?;
                let wait = pool.connection_timeout().min(CONNECTION_WAIT);
                let conn = &mut *pool.get_timeout(wait)?;
                exit_wait::wait_at_exit();
                conn.prepare()?;
                Ok(retry_transient(|| op(conn, &table))?)
            })();
            // The pool's clone goes before the answer: when the caller has its answer, this
            // thread no longer holds a connection (it may be the pool's last clone, whose drop
            // closes them).
            drop(pool);
            drop(op);
            let _ = answer.send(outcome);
            drop(running);
        };
        let outcome = match std::thread::Builder::new()
            .name("idgen-diesel-lease".to_owned())
            .spawn(work)
        {
            Ok(_) => answered.await.unwrap_or_else(|_| {
                Err(DieselError::Task(
                    "the thread running the statement ended without an answer".to_owned(),
                ))
            }),
            Err(e) => Err(DieselError::Task(format!(
                "no thread to run the statement on: {e}"
            ))),
        };
        outcome.map_err(|err| {
            let table = self.table().unwrap_or("?");
            let hint = if is_missing_table(&err) {
                " (create it with idgen_diesel::lease::create_lease_table or the migration SQL in the idgen_diesel::lease documentation)"
            } else {
                ""
            };
            format!("{operation} on lease table {table}: {err}{hint}").into()
        })
    }
}

/// One claim: take an expired row, or create the next chunk of rows and try again.
fn claim_once<C: LeaseConnection>(
    conn: &mut C,
    table: &str,
    req: ClaimRequest<'_>,
) -> QueryResult<Option<Claim>> {
    // Each round either claims, finds the node space full, or creates missing rows.
    let rounds = req.capacity.div_ceil(CHUNK) + 2 + u64::from(FULL_CHECKS);
    let mut full_checks = 0;
    for _ in 0..rounds {
        // Rows are never deleted, so every row counted here is seen by the claim after it.
        let next = conn.next_missing(table, req.namespace, req.capacity)?;
        if let Some(claim) = conn.take_expired(table, req)? {
            return Ok(Some(claim));
        }
        if next >= req.capacity {
            // `SKIP LOCKED` also skips free rows that a concurrent `insert_rows` (MySQL's
            // `ON DUPLICATE KEY UPDATE` locks every existing row it meets) holds for a moment:
            // look again before calling the node space full.
            full_checks += 1;
            if full_checks >= FULL_CHECKS {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(10 << full_checks));
            continue;
        }
        let end = req.capacity.min(next + CHUNK);
        conn.insert_rows(table, req.namespace, next..end)?;
    }
    Ok(None)
}

/// Runs `step` again (after a short pause) while it fails with a transient error.
fn retry_transient<T>(mut step: impl FnMut() -> QueryResult<T>) -> QueryResult<T> {
    let mut attempt = 0;
    loop {
        match step() {
            Err(e) if is_transient(&e) && attempt + 1 < TRANSIENT_ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(5 << attempt));
            }
            outcome => return outcome,
        }
    }
}

/// A deadlock, lock time-out, serialization failure or busy database: worth another attempt.
fn is_transient(err: &QueryError) -> bool {
    match err {
        QueryError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        QueryError::DatabaseError(_, info) => {
            let message = info.message();
            [
                "deadlock detected",          // PostgreSQL 40P01
                "could not obtain lock",      // PostgreSQL 55P03
                "Deadlock found",             // MySQL 1213
                "Lock wait timeout exceeded", // MySQL 1205
                "database is locked",         // SQLITE_BUSY
                "database table is locked",   // SQLITE_LOCKED
            ]
            .iter()
            .any(|needle| message.contains(needle))
        }
        _ => false,
    }
}

/// The lease table does not exist.
fn is_missing_table(err: &DieselError) -> bool {
    let DieselError::Query(QueryError::DatabaseError(_, info)) = err else {
        return false;
    };
    let message = info.message();
    (message.starts_with("relation") && message.contains("does not exist")) // PostgreSQL
        || (message.starts_with("Table") && message.contains("doesn't exist")) // MySQL
        || message.contains("no such table") // SQLite
}

/// An owned [`ClaimRequest`], for a blocking task.
struct OwnedClaim {
    namespace: String,
    capacity: u64,
    holder: String,
    ttl: Duration,
}

impl OwnedClaim {
    fn request(&self) -> ClaimRequest<'_> {
        ClaimRequest {
            namespace: &self.namespace,
            capacity: self.capacity,
            holder: &self.holder,
            ttl: self.ttl,
        }
    }
}

/// An owned [`RenewRequest`], for a blocking task.
struct OwnedRenew {
    namespace: String,
    node: u64,
    holder: String,
    ttl: Duration,
    last_timestamp_ms: Option<i64>,
}

impl OwnedRenew {
    fn new(req: RenewRequest<'_>) -> Self {
        OwnedRenew {
            namespace: req.namespace.to_owned(),
            node: req.node,
            holder: req.holder.to_owned(),
            ttl: req.ttl,
            last_timestamp_ms: req.last_timestamp_ms,
        }
    }

    fn request(&self) -> RenewRequest<'_> {
        RenewRequest {
            namespace: &self.namespace,
            node: self.node,
            holder: &self.holder,
            ttl: self.ttl,
            last_timestamp_ms: self.last_timestamp_ms,
        }
    }
}

impl<C: LeaseConnection> LeaseStore for DieselLeaseStore<C> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        let owned = OwnedClaim {
            namespace: req.namespace.to_owned(),
            capacity: req.capacity,
            holder: req.holder.to_owned(),
            ttl: req.ttl,
        };
        self.blocking("claim", move |conn, table| {
            claim_once(conn, table, owned.request())
        })
        .await
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let owned = OwnedRenew::new(req);
        self.blocking("renew", move |conn, table| {
            conn.renew(table, owned.request())
        })
        .await
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        let owned = OwnedRenew::new(req);
        self.blocking("release", move |conn, table| {
            conn.release(table, owned.request())
        })
        .await
    }

    /// A clone: an r2d2 pool belongs to no async runtime (its connections are plain blocking
    /// ones), and each call runs on a thread of its own.
    fn detached(&self) -> Option<Self> {
        Some(self.clone())
    }
}

impl<C: LeaseConnection> IntoLeaseStore<R2d2Pool> for DieselPool<C> {
    type Store = DieselLeaseStore<C>;
    /// The store on this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> DieselLeaseStore<C> {
        DieselLeaseStore::named(self, table)
    }
}

impl<C: LeaseConnection> IntoLeaseStore<R2d2Pool> for &DieselPool<C> {
    type Store = DieselLeaseStore<C>;
    /// The store on a clone of this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> DieselLeaseStore<C> {
        DieselLeaseStore::named(self.clone(), table)
    }
}

impl<C: R2D2Connection + 'static> Clone for DieselLeaseStore<C> {
    fn clone(&self) -> Self {
        DieselLeaseStore {
            pool: self.pool.clone(),
            table: self.table.clone(),
        }
    }
}

impl<C: R2D2Connection + 'static> std::fmt::Debug for DieselLeaseStore<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselLeaseStore")
            .field("connection", &std::any::type_name::<C>())
            .field("table", &self.table.as_deref().ok())
            .finish()
    }
}

/// Milliseconds of a TTL, as the databases take them.
pub(crate) fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// A node ID as a `BIGINT` (node IDs are far below `i64::MAX`: at most 2^22 of them).
pub(crate) fn node_i64(node: u64) -> i64 {
    i64::try_from(node).unwrap_or(i64::MAX)
}

/// A `BIGINT` node ID read back.
pub(crate) fn node_u64(node: i64) -> QueryResult<u64> {
    u64::try_from(node).map_err(|_| {
        QueryError::DeserializationError(
            format!("negative node ID {node} in the lease table").into(),
        )
    })
}
