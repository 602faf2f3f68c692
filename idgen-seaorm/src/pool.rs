//! [`SeaOrmPool`]: the sqlx pool behind a sea-orm [`DatabaseConnection`], as idgen-sql's
//! `SqlPool` (the lease store and the hi-lo counter run on it through idgen-sqlx's binding).

// Without a database feature every pool is unsupported, and the rest is unreachable.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unreachable_code, unused_variables)
)]

use std::sync::Arc;

use idgen_engine::lease::BoxError;
use idgen_sql::Call;
use idgen_sql::{Dialect, SqlPool};
use sea_orm::{DatabaseConnection, DatabaseConnectionType, DbBackend};

use crate::SeaOrmMarker;
use crate::error::Error;

/// The sqlx pool behind a sea-orm [`DatabaseConnection`] (a clone: the same pool), or why the
/// connection has none (a mock, a proxy, a disconnected connection, a database this crate was
/// not built for): then every call fails with [`Error::UnsupportedConnection`]. What
/// [`SeaOrmLeaseStore`](crate::lease::SeaOrmLeaseStore) and
/// [`SeaOrmCounter`](crate::hilo::SeaOrmCounter) run on; applications pass the
/// `DatabaseConnection` itself (`WorkerLease::acquire(&db, …)`, `HiLo::new(&db, …)`).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::SeaOrmPool;
/// use idgen_sql::{Dialect, SqlPool};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// assert_eq!(SeaOrmPool::of(&db).dialect(), Dialect::Sqlite);
/// assert!(SeaOrmPool::of(&db).unsupported().is_none());
/// assert!(SeaOrmPool::of(&sea_orm::DatabaseConnection::default()).unsupported().is_some()); // disconnected
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Debug)]
pub struct SeaOrmPool {
    dialect: Dialect,
    pool: Result<SqlxPool, Error>,
}

impl SeaOrmPool {
    /// The pool behind `db`.
    pub fn of(db: &DatabaseConnection) -> SeaOrmPool {
        let dialect = match &db.inner {
            // sea-orm's backend getter panics on a disconnected connection; no call reaches a
            // database through one anyway.
            DatabaseConnectionType::Disconnected => Dialect::Sqlite,
            #[allow(unreachable_patterns)]
            _ => match db.get_database_backend() {
                DbBackend::Postgres => Dialect::Postgres,
                DbBackend::MySql => Dialect::MySql,
                _ => Dialect::Sqlite,
            },
        };
        SeaOrmPool {
            dialect,
            pool: SqlxPool::of(db),
        }
    }

    /// Why the connection has no pool idgen can use ([`Error::UnsupportedConnection`]), or
    /// `None`.
    pub fn unsupported(&self) -> Option<&Error> {
        self.pool.as_ref().err()
    }

    /// A one-connection pool of its own with the same connect options, connected lazily: a
    /// hi-lo counter's.
    #[cfg(feature = "hilo")]
    pub(crate) fn dedicated(&self) -> SeaOrmPool {
        SeaOrmPool {
            dialect: self.dialect,
            pool: self
                .pool
                .as_ref()
                .map(SqlxPool::dedicated)
                .map_err(Clone::clone),
        }
    }
}

/// idgen-sqlx's binding of a sqlx pool.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
use idgen_sqlx::SqlxMarker as Sqlx;

/// Each call through idgen-sqlx's binding of the sqlx pool.
impl SqlPool<SeaOrmMarker> for SeaOrmPool {
    type Turn = ();

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, call: K) -> Result<K::Output, BoxError> {
        match &self.pool {
            #[cfg(feature = "postgres")]
            Ok(SqlxPool::Postgres(pool)) => SqlPool::<Sqlx>::run(pool, &(), sql, call).await,
            #[cfg(feature = "mysql")]
            Ok(SqlxPool::MySql(pool)) => SqlPool::<Sqlx>::run(pool, &(), sql, call).await,
            #[cfg(feature = "sqlite")]
            Ok(SqlxPool::Sqlite(pool)) => SqlPool::<Sqlx>::run(pool, &(), sql, call).await,
            #[cfg(not(any(feature = "postgres", feature = "mysql", feature = "sqlite")))]
            Ok(pool) => match *pool {},
            Err(error) => Err(error.clone().into()),
        }
    }

    /// idgen-sqlx's detached pool (a pool of its own with one connection made on demand), or
    /// `None` for a connection without a pool.
    fn detach(&self, _: &()) -> Option<(Self, ())> {
        let pool = match self.pool.as_ref().ok()? {
            #[cfg(feature = "postgres")]
            SqlxPool::Postgres(pool) => SqlxPool::Postgres(SqlPool::<Sqlx>::detach(pool, &())?.0),
            #[cfg(feature = "mysql")]
            SqlxPool::MySql(pool) => SqlxPool::MySql(SqlPool::<Sqlx>::detach(pool, &())?.0),
            #[cfg(feature = "sqlite")]
            SqlxPool::Sqlite(pool) => SqlxPool::Sqlite(SqlPool::<Sqlx>::detach(pool, &())?.0),
            #[cfg(not(any(feature = "postgres", feature = "mysql", feature = "sqlite")))]
            pool => match *pool {},
        };
        let dialect = self.dialect;
        Some((
            SeaOrmPool {
                dialect,
                pool: Ok(pool),
            },
            (),
        ))
    }
}

/// The sqlx pool of a `DatabaseConnection` (a clone: the same pool).
#[derive(Clone, Debug)]
pub(crate) enum SqlxPool {
    #[cfg(feature = "postgres")]
    Postgres(sea_orm::sqlx::PgPool),
    #[cfg(feature = "mysql")]
    MySql(sea_orm::sqlx::MySqlPool),
    #[cfg(feature = "sqlite")]
    Sqlite(sea_orm::sqlx::SqlitePool),
}

impl SqlxPool {
    /// The pool behind `db`, or [`Error::UnsupportedConnection`] when `db` is not an sqlx pool
    /// connection of a database this crate was built for (mock, proxy, rusqlite, disconnected).
    ///
    /// The variant of `db.inner` is matched first, so sea-orm's pool getters (which panic on
    /// another backend) are only called on their own backend.
    pub(crate) fn of(db: &DatabaseConnection) -> Result<SqlxPool, Error> {
        match &db.inner {
            #[cfg(feature = "postgres")]
            DatabaseConnectionType::SqlxPostgresPoolConnection(_) => Ok(SqlxPool::Postgres(
                db.get_postgres_connection_pool().clone(),
            )),
            #[cfg(feature = "mysql")]
            DatabaseConnectionType::SqlxMySqlPoolConnection(_) => {
                Ok(SqlxPool::MySql(db.get_mysql_connection_pool().clone()))
            }
            #[cfg(feature = "sqlite")]
            DatabaseConnectionType::SqlxSqlitePoolConnection(_) => {
                Ok(SqlxPool::Sqlite(db.get_sqlite_connection_pool().clone()))
            }
            DatabaseConnectionType::Disconnected => Err(Error::UnsupportedConnection {
                backend: "disconnected".to_owned(),
            }),
            #[allow(unreachable_patterns)]
            _ => Err(Error::UnsupportedConnection {
                backend: format!("{:?}", db.get_database_backend()),
            }),
        }
    }

    /// A one-connection pool of its own with the same connect options, connected lazily: a
    /// hi-lo counter's (idgen-sqlx's `CounterPool` binding).
    #[cfg(feature = "hilo")]
    pub(crate) fn dedicated(&self) -> SqlxPool {
        #[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        use idgen_sql::CounterPool;
        #[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        type Marker = idgen_sqlx::SqlxMarker;
        match self {
            #[cfg(feature = "postgres")]
            SqlxPool::Postgres(pool) => {
                SqlxPool::Postgres(CounterPool::<Marker>::for_counter(pool))
            }
            #[cfg(feature = "mysql")]
            SqlxPool::MySql(pool) => SqlxPool::MySql(CounterPool::<Marker>::for_counter(pool)),
            #[cfg(feature = "sqlite")]
            SqlxPool::Sqlite(pool) => SqlxPool::Sqlite(CounterPool::<Marker>::for_counter(pool)),
            #[cfg(not(any(feature = "postgres", feature = "mysql", feature = "sqlite")))]
            _ => match *self {},
        }
    }
}
