//! The sqlx pool behind a sea-orm [`DatabaseConnection`], for idgen-sqlx's stores and sources.

use sea_orm::{DatabaseConnection, DatabaseConnectionType};

use crate::error::Error;

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
}
