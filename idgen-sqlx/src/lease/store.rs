//! [`SqlxLeaseStore`]: node-ID leases in a table of the application's database, over a sqlx pool.

use idgen_sql::SqlLeaseStore;
use sqlx::Pool;

use crate::lease::IntoLeaseStore;
use crate::session::SqlxDatabase;
use crate::session::SqlxMarker;
use idgen_engine::Error;

/// The lease table's default name (idgen-engine's, shared by every adapter).
pub use idgen_sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;
/// One row of the lease table, from [`SqlxLeaseStore::rows`].
pub use idgen_sql::LeaseRow;

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
///
/// The methods ([`new`](SqlLeaseStore::new), [`with_table`](SqlLeaseStore::with_table),
/// [`create_table`](SqlLeaseStore::create_table), [`rows`](SqlLeaseStore::rows), …) are those of
/// idgen-sql's one [`SqlLeaseStore`], shared by every SQL adapter.
pub type SqlxLeaseStore<DB> = SqlLeaseStore<SqlxMarker, Pool<DB>>;

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
    SqlxLeaseStore::<DB>::new(pool.clone()).create_table().await
}

impl<DB: SqlxDatabase> IntoLeaseStore<SqlxMarker> for Pool<DB> {
    type Store = SqlxLeaseStore<DB>;
    fn into_lease_store(self, table: &str) -> SqlxLeaseStore<DB> {
        SqlLeaseStore::named(self, table)
    }
}

#[cfg(all(test, feature = "postgres", feature = "mysql", feature = "sqlite"))]
mod tests {
    use idgen_sql::{DEFAULT_LEASE_TABLE, Dialect, LeaseSql};

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
