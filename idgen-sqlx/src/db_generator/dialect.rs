//! [`DbGeneratorDialect`]: the databases that can host the database-side generator.

use sqlx::Pool;
use std::future::Future;
use std::pin::Pin;

use crate::session::{SqlxDatabase, SqlxSession};

/// A future of the hidden [`DbGeneratorDialect`] methods.
#[doc(hidden)]
pub type DialectFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'a>>;

/// A database that can run a database-side generator: `sqlx::Postgres` and `sqlx::MySql`
/// (MariaDB 10.3 or later: the generator keeps its state in sequences, which MySQL lacks),
/// with the crate features of the same names. Sealed (through [`SqlxDatabase`], which only
/// sqlx's database types implement); the installer itself is idgen-db-generator's, written once over a
/// session.
///
/// ```
/// fn takes_a_generator_pool<DB: idgen_sqlx::db_generator::DbGeneratorDialect>(_: &sqlx::Pool<DB>) {}
/// # #[cfg(feature = "postgres")]
/// # let _ = takes_a_generator_pool::<sqlx::Postgres>;
/// ```
pub trait DbGeneratorDialect: SqlxDatabase {
    /// A session on a connection of `pool` that is closed, not given back, when the session
    /// is dropped: the installer's session lock goes with it, whatever cancelled the install.
    #[doc(hidden)]
    fn closing_session(pool: &Pool<Self>) -> DialectFuture<'_, <Self as SqlxDatabase>::Session>;

    /// `sql` (one `SELECT` of one `BIGINT`) on the pool.
    #[doc(hidden)]
    fn select_id(pool: &Pool<Self>, sql: String) -> DialectFuture<'_, i64>;
}

macro_rules! generator_database {
    ($feature:literal, $db:ty) => {
        #[cfg(feature = $feature)]
        impl DbGeneratorDialect for $db {
            fn closing_session(pool: &Pool<Self>) -> DialectFuture<'_, SqlxSession<Self>> {
                Box::pin(async move {
                    let mut conn = pool.acquire().await?;
                    conn.close_on_drop();
                    Ok(SqlxSession::new(conn))
                })
            }

            fn select_id(pool: &Pool<Self>, sql: String) -> DialectFuture<'_, i64> {
                Box::pin(async move {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                        .fetch_one(pool)
                        .await
                })
            }
        }
    };
}

generator_database!("postgres", sqlx::Postgres);
generator_database!("mysql", sqlx::MySql);
