//! Node IDs leased over a sea-orm [`DatabaseConnection`] (feature `lease`, on by default).
//!
//! The engine is idgen-engine's [`WorkerLease`] (re-exported here with everything of
//! `idgen_engine::lease`): each process claims a free node ID from a table of the application's
//! database, renews it in the background and stops its generator before a claim it could not
//! renew expires. [`SeaOrmLeaseStore`] **is** idgen-sqlx's lease store
//! ([`SqlxLeaseStore`](idgen_sqlx::lease::SqlxLeaseStore)) on the sqlx pool behind the
//! `DatabaseConnection`: one table and one set of SQL, so sea-orm and sqlx processes can lease
//! node IDs from one table and never share one.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_seaorm::lease::{create_lease_table, WorkerLease};
//! use idgen_seaorm::{Layout, Snowflake};
//!
//! let db = sea_orm::Database::connect("sqlite::memory:").await?;
//! create_lease_table(&db).await?; // once, or the migration (feature `migration`)
//!
//! let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&db, &Layout::TWITTER).await?;
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! assert_eq!(Layout::TWITTER.decompose(ids.next_id()?)?.node, handle.node());
//!
//! handle.release().await?; // at shutdown: the node ID is free again at once
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! # How it works
//!
//! - One row per node ID and namespace, created on the namespace's first claim (in chunks of
//!   1024 node IDs, as needed), idempotently.
//! - **Claim** takes the lowest node ID whose `expires_at` has passed on the **database's**
//!   clock, atomically: PostgreSQL `UPDATE … WHERE node = (SELECT … FOR UPDATE SKIP LOCKED)
//!   RETURNING`; MySQL/MariaDB a short transaction of its own with `SELECT …
//!   FOR UPDATE SKIP LOCKED` (plain `FOR UPDATE` before MySQL 8.0.1 / MariaDB 10.6) then
//!   `UPDATE`; SQLite one `UPDATE … RETURNING`.
//! - **Renew** succeeds while this holder still holds the row and keeps the larger last
//!   timestamp; **release** expires the row now, clears its holder (so a late renewal finds
//!   nothing to renew) and stores the exact last timestamp.
//! - Every statement runs on a connection of its own from the `DatabaseConnection`'s pool,
//!   never inside a transaction of the caller (the store takes the connection, not a
//!   `DatabaseTransaction`), and changes none of its settings (on MySQL/MariaDB each step in an
//!   explicit transaction of its own, committed whatever the connection's autocommit). A call
//!   cancelled halfway closes its connection rather than giving it back inside a transaction.
//!   Deadlocks, lock time-outs and busy errors are retried briefly.
//!
//! # The table
//!
//! `idgen_worker_lease` by default ([`LeaseOptions::table`], [`SeaOrmLeaseStore::with_table`]
//! for another `name` or `schema.name` of ASCII letters, digits and `_`). Columns: `namespace`,
//! `node`, `holder`, `expires_at` (database clock; `TIMESTAMPTZ`, `DATETIME(6)` in UTC, or Unix
//! ms on SQLite), `last_timestamp` (Unix ms). [`create_lease_table`],
//! [`SeaOrmLeaseStore::create_table`] or the sea-orm-migration `Migration` (feature
//! `migration`) create it; [`SeaOrmLeaseStore::migration_sql`] shows the statement.

// Without a database feature every store is `Unsupported`, and the rest is unreachable.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unreachable_code, unused_variables)
)]

use sea_orm::{DatabaseConnection, DbErr};

pub use idgen_engine::lease::*;
/// The lease table's default name (idgen-sqlx's).
pub use idgen_sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;

#[allow(deprecated)]
pub use crate::SeaOrmConnection;
pub use crate::SeaOrmMarker;
use crate::error::Error;
use crate::pool::SqlxPool;

/// Node-ID leases kept in a table of the database behind a sea-orm [`DatabaseConnection`]
/// (PostgreSQL, MySQL/MariaDB or SQLite): the [`LeaseStore`] behind
/// `WorkerLease::acquire(&db, &layout)`. It delegates every call to idgen-sqlx's
/// [`SqlxLeaseStore`](idgen_sqlx::lease::SqlxLeaseStore) on the connection's sqlx pool.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::lease::{SeaOrmLeaseStore, WorkerLease};
/// use idgen_seaorm::Layout;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let store = SeaOrmLeaseStore::with_table(db.clone(), "my_leases")?;
/// store.create_table().await?;
/// let a = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// let b = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store, &Layout::TWITTER).await?;
/// assert_ne!(a.node(), b.node());
///
/// let err = SeaOrmLeaseStore::with_table(db, "x; DROP TABLE y").unwrap_err();
/// assert!(err.to_string().contains("may contain only ASCII letters, digits and '_'"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Debug)]
pub struct SeaOrmLeaseStore {
    inner: Inner,
}

/// idgen-sqlx's store for the connection's database, or why there is none.
#[derive(Clone, Debug)]
enum Inner {
    #[cfg(feature = "postgres")]
    Postgres(idgen_sqlx::lease::PgLeaseStore),
    #[cfg(feature = "mysql")]
    MySql(idgen_sqlx::lease::MySqlLeaseStore),
    #[cfg(feature = "sqlite")]
    Sqlite(idgen_sqlx::lease::SqliteLeaseStore),
    /// Not an sqlx pool connection of a database this crate was built for.
    Unsupported(Error),
}

/// Evaluates `$call` with `$store` bound to idgen-sqlx's store inside `$inner`, or
/// `$unsupported` with `$err` bound to why there is none.
macro_rules! delegate {
    ($inner:expr, $store:ident => $call:expr, $err:ident => $unsupported:expr) => {
        match $inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres($store) => $call,
            #[cfg(feature = "mysql")]
            Inner::MySql($store) => $call,
            #[cfg(feature = "sqlite")]
            Inner::Sqlite($store) => $call,
            Inner::Unsupported($err) => $unsupported,
        }
    };
}

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), sea_orm::DbErr> {
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub async fn create_lease_table(db: &DatabaseConnection) -> Result<(), DbErr> {
    SeaOrmLeaseStore::new(db.clone()).create_table().await
}

impl SeaOrmLeaseStore {
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let store = idgen_seaorm::lease::SeaOrmLeaseStore::new(db);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(db: DatabaseConnection) -> Self {
        Self::named(&db, DEFAULT_TABLE)
    }

    /// A store using the table `table` (`name` or `schema.name`, ASCII letters, digits and `_`,
    /// not starting with a digit: the name is written into the SQL, so nothing else is accepted).
    ///
    /// # Errors
    ///
    /// [`Error::Id`] wrapping an `idgen_engine::Error` of kind `ErrorKind::InvalidOptions`, naming the name;
    /// [`Error::UnsupportedConnection`] for a connection that is not an sqlx pool.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_seaorm::lease::SeaOrmLeaseStore;
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// assert_eq!(SeaOrmLeaseStore::with_table(db.clone(), "main.leases")?.table(), Some("\"main\".\"leases\""));
    /// assert!(SeaOrmLeaseStore::with_table(db, "leases--").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(db: DatabaseConnection, table: &str) -> Result<Self, Error> {
        #[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        use idgen_sqlx::lease::SqlxLeaseStore;
        let inner = match SqlxPool::of(&db)? {
            #[cfg(feature = "postgres")]
            SqlxPool::Postgres(pool) => Inner::Postgres(SqlxLeaseStore::with_table(pool, table)?),
            #[cfg(feature = "mysql")]
            SqlxPool::MySql(pool) => Inner::MySql(SqlxLeaseStore::with_table(pool, table)?),
            #[cfg(feature = "sqlite")]
            SqlxPool::Sqlite(pool) => Inner::Sqlite(SqlxLeaseStore::with_table(pool, table)?),
        };
        #[allow(unreachable_code)]
        Ok(SeaOrmLeaseStore { inner })
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(db: &DatabaseConnection, table: &str) -> Self {
        #[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        use idgen_sqlx::lease::SqlxMarker as Marker;
        let inner = match SqlxPool::of(db) {
            #[cfg(feature = "postgres")]
            Ok(SqlxPool::Postgres(pool)) => {
                Inner::Postgres(IntoLeaseStore::<Marker>::into_lease_store(pool, table))
            }
            #[cfg(feature = "mysql")]
            Ok(SqlxPool::MySql(pool)) => {
                Inner::MySql(IntoLeaseStore::<Marker>::into_lease_store(pool, table))
            }
            #[cfg(feature = "sqlite")]
            Ok(SqlxPool::Sqlite(pool)) => {
                Inner::Sqlite(IntoLeaseStore::<Marker>::into_lease_store(pool, table))
            }
            Err(e) => Inner::Unsupported(e),
        };
        SeaOrmLeaseStore { inner }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused or the
    /// connection has no sqlx pool.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let store = idgen_seaorm::lease::SeaOrmLeaseStore::new(db);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn table(&self) -> Option<&str> {
        delegate!(&self.inner, store => store.table(), _e => None)
    }

    /// idgen-sqlx's `CREATE TABLE IF NOT EXISTS` statement for this store's table and database,
    /// for a migration file.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let sql = idgen_seaorm::lease::SeaOrmLeaseStore::new(db).migration_sql()?;
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> Result<String, Error> {
        delegate!(&self.inner, store => Ok(store.migration_sql()?), e => Err(e.clone()))
    }

    /// Creates the table if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// idgen_seaorm::lease::SeaOrmLeaseStore::new(db).create_table().await?;
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create_table(&self) -> Result<(), DbErr> {
        delegate!(
            &self.inner,
            store => store.create_table().await.map_err(|e| Error::from(e).into()),
            e => Err(e.clone().into())
        )
    }
}

impl LeaseStore for SeaOrmLeaseStore {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        delegate!(&self.inner, store => store.claim(req).await, e => Err(e.clone().into()))
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        delegate!(&self.inner, store => store.renew(req).await, e => Err(e.clone().into()))
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        delegate!(&self.inner, store => store.release(req).await, e => Err(e.clone().into()))
    }

    async fn create_if_missing(&self) -> Result<(), BoxError> {
        delegate!(&self.inner, store => store.create_if_missing().await, e => Err(e.clone().into()))
    }

    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        delegate!(&self.inner, store => store.record_layout(namespace, layout).await, e => Err(e.clone().into()))
    }

    /// The database's clock, as idgen-sqlx's store reads it.
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        delegate!(&self.inner, store => store.clock_ms().await, e => Err(e.clone().into()))
    }

    /// idgen-sqlx's detached store: the same table on a one-connection pool of its own with
    /// the connection's connect options, independent of the runtime the connection runs on.
    fn detached(&self) -> Option<Self> {
        let inner = match &self.inner {
            #[cfg(feature = "postgres")]
            Inner::Postgres(store) => Inner::Postgres(store.detached()?),
            #[cfg(feature = "mysql")]
            Inner::MySql(store) => Inner::MySql(store.detached()?),
            #[cfg(feature = "sqlite")]
            Inner::Sqlite(store) => Inner::Sqlite(store.detached()?),
            Inner::Unsupported(_) => return None,
        };
        Some(SeaOrmLeaseStore { inner })
    }
}

impl IntoLeaseStore<SeaOrmMarker> for DatabaseConnection {
    type Store = SeaOrmLeaseStore;
    /// The store on this connection's pool; a refused table name (or a connection without an
    /// sqlx pool) fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> SeaOrmLeaseStore {
        SeaOrmLeaseStore::named(&self, table)
    }
}
