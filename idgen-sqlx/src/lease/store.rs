//! [`SqlxLeaseStore`]: node-ID leases in a table of the application's database, over a sqlx pool.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sqlx::pool::PoolOptions;
use sqlx::{Database, Pool};

use crate::Error;
use crate::lease::{BoxError, Claim, ClaimRequest, IntoLeaseStore, LeaseStore, RenewRequest};
use idgen_core::lease::TableName;

/// The lease table's default name.
pub const DEFAULT_TABLE: &str = "idgen_worker_lease";

/// Rows of a namespace are created in chunks of this many node IDs, as they are needed.
const CHUNK: u64 = 1024;

/// Attempts of a claim that found expired rows, all locked by other sessions for the moment.
const LOCKED_ROUNDS: u64 = 100;

/// Attempts of one claim step that failed on a deadlock, lock time-out or busy database.
const TRANSIENT_ATTEMPTS: u32 = 8;

/// How long a [`detached`](LeaseStore::detached) copy waits for its one connection.
const DETACHED_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over a
/// sqlx [`Pool`]: the [`LeaseStore`] behind `WorkerLease::acquire(&pool, &layout)`.
///
/// Each call runs on a connection of its own from the pool, in autocommit (a claim on
/// MySQL/MariaDB in a short transaction of its own), never inside a transaction of the caller.
/// Expiry is measured on the database's clock. See the [module documentation](crate::lease)
/// for the table and the SQL.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_sqlx::lease::{SqlxLeaseStore, WorkerLease};
/// use idgen_sqlx::Layout;
///
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// let store = SqlxLeaseStore::with_table(pool, "my_leases")?;
/// store.create_table().await?;
/// let lease = WorkerLease::acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_eq!(store.rows("default").await?[0].node, lease.node());
///
/// let err = SqlxLeaseStore::with_table(sqlx::SqlitePool::connect("sqlite::memory:").await?, "x; DROP TABLE y");
/// assert!(err.unwrap_err().to_string().contains("may contain only ASCII letters, digits and '_'"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct SqlxLeaseStore<DB: Database> {
    pub(crate) pool: Pool<DB>,
    /// The quoted table name, or why the given name was refused.
    table: Result<Arc<str>, Error>,
}

/// [`SqlxLeaseStore`] on PostgreSQL.
#[cfg(feature = "postgres")]
pub type PgLeaseStore = SqlxLeaseStore<sqlx::Postgres>;
/// [`SqlxLeaseStore`] on MySQL or MariaDB.
#[cfg(feature = "mysql")]
pub type MySqlLeaseStore = SqlxLeaseStore<sqlx::MySql>;
/// [`SqlxLeaseStore`] on SQLite.
#[cfg(feature = "sqlite")]
pub type SqliteLeaseStore = SqlxLeaseStore<sqlx::Sqlite>;

/// One row of the lease table, from [`SqlxLeaseStore::rows`].
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

/// Marks the [`IntoLeaseStore`] implementations for sqlx pools, so that
/// `WorkerLease::acquire(&pool, &layout)` takes a `PgPool`, `MySqlPool` or `SqlitePool`.
/// Never named by callers.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_sqlx::lease::{create_lease_table, WorkerLease};
/// use idgen_sqlx::Layout;
///
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// create_lease_table(&pool).await?;
/// let by_reference = WorkerLease::acquire(&pool, &Layout::TWITTER).await?;
/// let by_value = WorkerLease::acquire(pool.clone(), &Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SqlxPool;

/// A future of the hidden [`LeaseDialect`] methods.
#[doc(hidden)]
pub type DialectFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'a>>;

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    #[cfg(feature = "postgres")]
    impl Sealed for sqlx::Postgres {}
    #[cfg(feature = "mysql")]
    impl Sealed for sqlx::MySql {}
    #[cfg(feature = "sqlite")]
    impl Sealed for sqlx::Sqlite {}
}

/// A database that can hold the lease table: `sqlx::Postgres`, `sqlx::MySql` (MariaDB too) and
/// `sqlx::Sqlite`, with the crate features of the same names. Sealed; its methods are the SQL of
/// each database, used through [`SqlxLeaseStore`].
///
/// ```
/// fn takes_a_lease_pool<DB: idgen_sqlx::lease::LeaseDialect>(_pool: &sqlx::Pool<DB>) {}
/// # #[cfg(feature = "sqlite")]
/// # let _ = takes_a_lease_pool::<sqlx::Sqlite>;
/// ```
pub trait LeaseDialect: Database + sealed::Sealed {
    #[doc(hidden)]
    const QUOTE: char;
    #[doc(hidden)]
    fn migration_sql(table: &str) -> String;
    #[doc(hidden)]
    fn create_table<'a>(pool: &'a Pool<Self>, table: &'a str) -> DialectFuture<'a, ()>;
    #[doc(hidden)]
    fn take_expired<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        req: ClaimRequest<'a>,
    ) -> DialectFuture<'a, Option<Claim>>;
    #[doc(hidden)]
    fn next_missing<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, u64>;
    #[doc(hidden)]
    fn count_expired<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, i64>;
    #[doc(hidden)]
    fn insert_rows<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        namespace: &'a str,
        nodes: std::ops::Range<u64>,
    ) -> DialectFuture<'a, ()>;
    #[doc(hidden)]
    fn renew<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, bool>;
    #[doc(hidden)]
    fn release<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, ()>;
    #[doc(hidden)]
    fn rows<'a>(
        pool: &'a Pool<Self>,
        table: &'a str,
        namespace: &'a str,
    ) -> DialectFuture<'a, Vec<LeaseRow>>;
    /// A deadlock, lock time-out or busy database: worth another attempt.
    #[doc(hidden)]
    fn is_transient(err: &sqlx::Error) -> bool;
    /// The table does not exist.
    #[doc(hidden)]
    fn is_missing_table(err: &sqlx::Error) -> bool;
}

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist.
/// The SQL for migrations is in the [module documentation](crate::lease).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), sqlx::Error> {
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// idgen_sqlx::lease::create_lease_table(&pool).await?;
/// idgen_sqlx::lease::create_lease_table(&pool).await?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub async fn create_lease_table<DB: LeaseDialect>(pool: &Pool<DB>) -> Result<(), sqlx::Error> {
    SqlxLeaseStore::new(pool.clone()).create_table().await
}

/// The lease table name `table` as written into the SQL, each part quoted with `quote`
/// (`LeaseDialect::QUOTE`: `"` on PostgreSQL and SQLite, `` ` `` on MySQL), without a pool: for
/// tools (migrations) that run [`SqlxLeaseStore::migration_sql`]'s statement themselves.
///
/// Errors: [`Error::InvalidOptions`] naming a name that is not `name` or `schema.name` of ASCII
/// letters, digits and `_`.
///
/// ```
/// use idgen_sqlx::lease::quoted_table_name;
/// assert_eq!(quoted_table_name("ops.leases", '`')?, "`ops`.`leases`");
/// assert!(quoted_table_name("leases; --", '"').is_err());
/// # Ok::<(), idgen_sqlx::Error>(())
/// ```
pub fn quoted_table_name(table: &str, quote: char) -> Result<String, Error> {
    TableName::parse(table).map(|t| t.quoted(quote))
}

impl<DB: LeaseDialect> SqlxLeaseStore<DB> {
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sqlx::Error> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let store = idgen_sqlx::lease::SqliteLeaseStore::new(pool);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: Pool<DB>) -> Self {
        Self::named(pool, DEFAULT_TABLE)
    }

    /// A store using the table `table` (`name` or `schema.name`, ASCII letters, digits and `_`,
    /// not starting with a digit: the name is written into the SQL, so nothing else is accepted).
    ///
    /// Errors: [`Error::InvalidOptions`] naming the rejected name.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let store = idgen_sqlx::lease::SqlxLeaseStore::with_table(pool.clone(), "main.leases")?;
    /// assert_eq!(store.table(), Some("\"main\".\"leases\""));
    /// assert!(idgen_sqlx::lease::SqlxLeaseStore::with_table(pool, "leases--").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(pool: Pool<DB>, table: &str) -> Result<Self, Error> {
        let store = Self::named(pool, table);
        match &store.table {
            Ok(_) => Ok(store),
            Err(e) => Err(e.clone()),
        }
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(pool: Pool<DB>, table: &str) -> Self {
        let table = TableName::parse(table).map(|t| Arc::from(t.quoted(DB::QUOTE)));
        SqlxLeaseStore { pool, table }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref().ok()
    }

    /// The pool.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sqlx::Error> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let store = idgen_sqlx::lease::SqliteLeaseStore::new(pool);
    /// assert!(!store.pool().is_closed());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn pool(&self) -> &Pool<DB> {
        &self.pool
    }

    /// The `CREATE TABLE` statement(s) for this store's table, for a migration file.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sqlx::Error> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let sql = idgen_sqlx::lease::SqliteLeaseStore::new(pool).migration_sql();
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> String {
        match &self.table {
            Ok(table) => DB::migration_sql(table),
            Err(e) => format!("-- {e}"),
        }
    }

    /// Creates the table if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sqlx::Error> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let store = idgen_sqlx::lease::SqliteLeaseStore::new(pool);
    /// store.create_table().await?;
    /// assert!(store.rows("default").await?.is_empty());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create_table(&self) -> Result<(), sqlx::Error> {
        DB::create_table(&self.pool, self.quoted_table()?).await
    }

    /// The rows of `namespace` by node ID: for operators and tests.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_sqlx::lease::{SqliteLeaseStore, WorkerLease};
    /// let store = SqliteLeaseStore::new(sqlx::SqlitePool::connect("sqlite::memory:").await?);
    /// store.create_table().await?;
    /// let lease = WorkerLease::options().namespace("orders").holder("web-1")
    ///     .acquire(store.clone(), &idgen_sqlx::Layout::TWITTER).await?;
    /// let rows = store.rows("orders").await?;
    /// assert_eq!(rows.len(), 1024); // the node space, created on the first claim
    /// assert!(rows[0].holder.as_deref().is_some_and(|h| h.starts_with("web-1:")));
    /// assert_eq!(rows[1].holder, None);
    /// # drop(lease); Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, sqlx::Error> {
        DB::rows(&self.pool, self.quoted_table()?, namespace).await
    }

    fn quoted_table(&self) -> Result<&str, sqlx::Error> {
        match &self.table {
            Ok(t) => Ok(t),
            Err(e) => Err(sqlx::Error::Configuration(e.to_string().into())),
        }
    }

    /// A store error naming the table, with a hint when the table is missing.
    fn context(&self, operation: &str, err: sqlx::Error) -> BoxError {
        let table = self.table().unwrap_or("?");
        let hint = if DB::is_missing_table(&err) {
            " (create it with idgen_sqlx::lease::create_lease_table or the migration SQL in the idgen_sqlx::lease documentation)"
        } else {
            ""
        };
        format!("{operation} on lease table {table}: {err}{hint}").into()
    }

    async fn claim_once(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, sqlx::Error> {
        let table = self.quoted_table()?;
        // Each round claims, finds the node space full, creates missing rows, or waits for rows
        // that were locked for a moment (by another claim's scan, or on MySQL by a concurrent
        // insert of the same rows) and so were skipped.
        let rounds = req.capacity.div_ceil(CHUNK) + 2 + LOCKED_ROUNDS;
        let mut locked_rounds = 0;
        for _ in 0..rounds {
            // Rows are never deleted, so every row counted here is seen by the claim after it.
            let next = DB::next_missing(&self.pool, table, req.namespace, req.capacity).await?;
            if let Some(claim) = DB::take_expired(&self.pool, table, req).await? {
                return Ok(Some(claim));
            }
            if next < req.capacity {
                let end = req.capacity.min(next + CHUNK);
                DB::insert_rows(&self.pool, table, req.namespace, next..end).await?;
                continue;
            }
            // Every row exists and none could be locked: full, unless some were only locked.
            let expired = DB::count_expired(&self.pool, table, req.namespace, req.capacity).await?;
            if expired == 0 {
                return Ok(None);
            }
            locked_rounds += 1;
            tokio::time::sleep(Duration::from_millis(5 * locked_rounds.min(20))).await;
        }
        Err(sqlx::Error::Protocol(format!(
            "expired rows stayed locked by other sessions through {LOCKED_ROUNDS} attempts"
        )))
    }
}

/// Runs `step` again (after a short pause) while it fails with a transient error.
async fn retry_transient<DB: LeaseDialect, T, F, Fut>(mut step: F) -> Result<T, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, sqlx::Error>>,
{
    let mut attempt = 0;
    loop {
        match step().await {
            Err(e) if DB::is_transient(&e) && attempt + 1 < TRANSIENT_ATTEMPTS => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(5 << attempt)).await;
            }
            outcome => return outcome,
        }
    }
}

impl<DB: LeaseDialect> LeaseStore for SqlxLeaseStore<DB> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        retry_transient::<DB, _, _, _>(|| self.claim_once(req))
            .await
            .map_err(|e| self.context("claim", e))
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let attempt = || async { DB::renew(&self.pool, self.quoted_table()?, req).await };
        retry_transient::<DB, _, _, _>(attempt)
            .await
            .map_err(|e| self.context("renew", e))
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        let attempt = || async { DB::release(&self.pool, self.quoted_table()?, req).await };
        retry_transient::<DB, _, _, _>(attempt)
            .await
            .map_err(|e| self.context("release", e))
    }

    /// The same table on a one-connection pool of its own, with this pool's connect options
    /// (host, credentials, TLS, SQLite file and busy timeout), connected on first use. Such a
    /// pool starts no background task, so the copy works on whatever runtime calls it, after
    /// the runtime of this store's pool has stopped. Options set on the pool itself
    /// (`after_connect` hooks, sizes) are not copied.
    fn detached(&self) -> Option<Self> {
        let pool = PoolOptions::<DB>::new()
            .max_connections(1)
            .min_connections(0)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(DETACHED_ACQUIRE_TIMEOUT)
            .connect_lazy_with((*self.pool.connect_options()).clone());
        Some(SqlxLeaseStore {
            pool,
            table: self.table.clone(),
        })
    }
}

impl<DB: LeaseDialect> IntoLeaseStore<SqlxPool> for Pool<DB> {
    type Store = SqlxLeaseStore<DB>;
    /// The store on this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> SqlxLeaseStore<DB> {
        SqlxLeaseStore::named(self, table)
    }
}

impl<DB: LeaseDialect> IntoLeaseStore<SqlxPool> for &Pool<DB> {
    type Store = SqlxLeaseStore<DB>;
    /// The store on a clone of this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> SqlxLeaseStore<DB> {
        SqlxLeaseStore::named(self.clone(), table)
    }
}

impl<DB: Database> Clone for SqlxLeaseStore<DB> {
    fn clone(&self) -> Self {
        SqlxLeaseStore {
            pool: self.pool.clone(),
            table: self.table.clone(),
        }
    }
}

impl<DB: Database> std::fmt::Debug for SqlxLeaseStore<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlxLeaseStore")
            .field("database", &DB::NAME)
            .field("table", &self.table.as_deref().ok())
            .finish()
    }
}

/// Milliseconds of a TTL, as the databases take them.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub(crate) fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// A node ID as a `BIGINT` (node IDs are far below `i64::MAX`: at most 2^22 of them).
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub(crate) fn node_i64(node: u64) -> i64 {
    i64::try_from(node).unwrap_or(i64::MAX)
}

/// A `BIGINT` node ID read back.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub(crate) fn node_u64(node: i64) -> Result<u64, sqlx::Error> {
    u64::try_from(node)
        .map_err(|_| sqlx::Error::Protocol(format!("negative node ID {node} in the lease table")))
}

#[cfg(all(test, feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod tests {
    use super::LeaseDialect;

    /// The migration SQL in the module documentation is what `create_table` runs.
    #[test]
    fn the_documented_migrations_are_the_statements_run() {
        let docs: String = include_str!("mod.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .collect::<Vec<_>>()
            .join("\n");
        for sql in [
            sqlx::Postgres::migration_sql("\"idgen_worker_lease\""),
            sqlx::MySql::migration_sql("`idgen_worker_lease`"),
            sqlx::Sqlite::migration_sql("\"idgen_worker_lease\""),
        ] {
            assert!(docs.contains(&sql), "not in the docs:\n{sql}");
        }
    }
}
