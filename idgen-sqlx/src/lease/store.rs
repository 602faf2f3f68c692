//! [`SqlxLeaseStore`]: node-ID leases in a table of the application's database, over a sqlx pool.

use std::sync::Arc;
use std::time::Duration;

use idgen_core::lease::steps::{self, Call, StepStore};
use idgen_core::sql::LeaseSql;
use sqlx::pool::PoolOptions;
use sqlx::{Database, Pool};

use crate::lease::{BoxError, IntoLeaseStore};
use crate::{Error, SqlxDatabase, SqlxPool};

/// The lease table's default name (idgen-core's, shared by every adapter).
pub use idgen_core::sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;
/// One row of the lease table, from [`SqlxLeaseStore::rows`].
pub use idgen_core::sql::LeaseRow;

/// How long a [`detached`](crate::lease::LeaseStore::detached) copy waits for its one connection.
const DETACHED_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over a
/// sqlx [`Pool`]: the [`LeaseStore`](crate::lease::LeaseStore) behind `WorkerLease::acquire(&pool, &layout)`.
///
/// Each call runs on a connection of its own from the pool, never inside a transaction of the
/// caller, and leaves the connection as it found it: no setting changed (on MySQL/MariaDB each
/// step in an explicit transaction of its own), and a call cancelled halfway closes the
/// connection rather than giving it back inside a transaction.
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
/// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
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
    /// The table's SQL, or why the given name was refused.
    sql: Result<Arc<LeaseSql>, Error>,
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

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist.
/// The SQL for migrations is in the [module documentation](crate::lease).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// idgen_sqlx::lease::create_lease_table(&pool).await?;
/// idgen_sqlx::lease::create_lease_table(&pool).await?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub async fn create_lease_table<DB: SqlxDatabase>(pool: &Pool<DB>) -> Result<(), Error> {
    SqlxLeaseStore::new(pool.clone()).create_table().await
}

impl<DB: SqlxDatabase> SqlxLeaseStore<DB> {
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
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
        match &store.sql {
            Ok(_) => Ok(store),
            Err(e) => Err(e.clone()),
        }
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(pool: Pool<DB>, table: &str) -> Self {
        let sql = LeaseSql::new(DB::DIALECT, table).map(Arc::new);
        SqlxLeaseStore { pool, sql }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    pub fn table(&self) -> Option<&str> {
        self.sql.as_ref().ok().map(|sql| sql.table())
    }

    /// The pool.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
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

    /// The `CREATE TABLE` statement for this store's table, for a migration file (no
    /// connection needed). Errors: [`Error::InvalidSqlName`] when the table name was refused.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let sql = idgen_sqlx::lease::SqliteLeaseStore::new(pool).migration_sql()?;
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> Result<String, Error> {
        Ok(self.sql()?.create_table())
    }

    /// Creates the table if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    /// let store = idgen_sqlx::lease::SqliteLeaseStore::new(pool);
    /// store.create_table().await?;
    /// assert!(store.rows("default").await?.is_empty());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create_table(&self) -> Result<(), Error> {
        let sql = self.sql()?;
        let mut session = self.session("create").await?;
        steps::create_table(&mut session, sql)
            .await
            .map_err(store_error("create"))
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
    /// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).namespace("orders").holder("web-1")
    ///     .acquire(store.clone(), &idgen_sqlx::Layout::TWITTER).await?;
    /// let rows = store.rows("orders").await?;
    /// assert_eq!(rows.len(), 1024); // the node space, created on the first claim
    /// assert!(rows[0].holder.as_deref().is_some_and(|h| h.starts_with("web-1:")));
    /// assert_eq!(rows[1].holder, None);
    /// # drop(lease); Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, Error> {
        let sql = self.sql()?;
        let mut session = self.session("read rows").await?;
        steps::rows(&mut session, sql, namespace)
            .await
            .map_err(store_error("read rows"))
    }

    fn sql(&self) -> Result<&LeaseSql, Error> {
        self.sql.as_deref().map_err(Clone::clone)
    }

    async fn session(&self, operation: &'static str) -> Result<DB::Session, Error> {
        DB::session(&self.pool)
            .await
            .map_err(|e| Error::LeaseStore {
                operation,
                message: format!(
                    "no connection for lease table {}: {e}",
                    self.table().unwrap_or("?")
                ),
                source: Some(std::sync::Arc::new(e)),
            })
    }
}

/// The store error of a direct call (not through the engine).
fn store_error(operation: &'static str) -> impl Fn(BoxError) -> Error {
    move |e| Error::LeaseStore {
        operation,
        message: e.to_string(),
        source: Some(std::sync::Arc::from(e)),
    }
}

/// The [`LeaseStore`](crate::lease::LeaseStore): idgen-core's procedures ([`steps`]), each call on a connection of its
/// own from the pool.
impl<DB: SqlxDatabase> StepStore for SqlxLeaseStore<DB> {
    async fn run_call<K: Call>(&self, call: K) -> Result<K::Output, BoxError> {
        let sql = self.sql()?;
        let mut session = self.session(K::OPERATION).await?;
        call.run(&mut session, sql).await
    }

    /// The same table on a one-connection pool of its own, with this pool's connect options
    /// (host, credentials, TLS, SQLite file and busy timeout), connected on first use. Such a
    /// pool starts no background task, so the copy works on whatever runtime calls it, after
    /// the runtime of this store's pool has stopped. Options set on the pool itself
    /// (`after_connect` hooks, sizes) are not copied.
    fn detach(&self) -> Option<Self> {
        let pool = PoolOptions::<DB>::new()
            .max_connections(1)
            .min_connections(0)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(DETACHED_ACQUIRE_TIMEOUT)
            .connect_lazy_with((*self.pool.connect_options()).clone());
        Some(SqlxLeaseStore {
            pool,
            sql: self.sql.clone(),
        })
    }
}

impl<DB: SqlxDatabase> IntoLeaseStore<SqlxPool> for Pool<DB> {
    type Store = SqlxLeaseStore<DB>;
    /// The store on this pool; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> SqlxLeaseStore<DB> {
        SqlxLeaseStore::named(self, table)
    }
}

impl<DB: Database> Clone for SqlxLeaseStore<DB> {
    fn clone(&self) -> Self {
        SqlxLeaseStore {
            pool: self.pool.clone(),
            sql: self.sql.clone(),
        }
    }
}

impl<DB: Database> std::fmt::Debug for SqlxLeaseStore<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlxLeaseStore")
            .field("database", &DB::NAME)
            .field("table", &self.sql.as_ref().ok().map(|sql| sql.table()))
            .finish()
    }
}

#[cfg(all(test, feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod tests {
    use idgen_core::sql::{DEFAULT_LEASE_TABLE, Dialect, LeaseSql};

    /// The migration SQL in the module documentation is what `create_table` runs.
    #[test]
    fn the_documented_migrations_are_the_statements_run() {
        let docs: String = include_str!("mod.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .collect::<Vec<_>>()
            .join("\n");
        for dialect in [Dialect::Postgres, Dialect::MySql, Dialect::Sqlite] {
            let sql = LeaseSql::new(dialect, DEFAULT_LEASE_TABLE)
                .unwrap()
                .create_table();
            assert!(docs.contains(&sql), "not in the docs:\n{sql}");
        }
    }
}
