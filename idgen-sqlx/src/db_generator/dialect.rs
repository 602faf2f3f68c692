//! [`DbGeneratorDialect`]: what differs between PostgreSQL and MariaDB/MySQL for the installer.

use sqlx::Pool;

use crate::db_generator::{SqlDialect, StateRow};
use std::future::Future;
use std::pin::Pin;

use crate::session::SqlxDatabase;

/// A future of the hidden [`DbGeneratorDialect`] methods.
#[doc(hidden)]
pub type DialectFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'a>>;

/// A database that can run a database-side generator: `sqlx::Postgres` and `sqlx::MySql`
/// (MariaDB too), with the crate features of the same names. Sealed (through
/// [`SqlxDatabase`], which only sqlx's database types implement: the orphan rule keeps other
/// crates from implementing this trait for them); its methods bind and decode the statements of
/// [`DbGenerator`](crate::db_generator::DbGenerator).
///
/// ```
/// fn takes_a_generator_pool<DB: idgen_sqlx::db_generator::DbGeneratorDialect>(_: &sqlx::Pool<DB>) {}
/// # #[cfg(feature = "postgres")]
/// # let _ = takes_a_generator_pool::<sqlx::Postgres>;
/// ```
pub trait DbGeneratorDialect: SqlxDatabase {
    #[doc(hidden)]
    const GENERATOR_DIALECT: SqlDialect;
    /// Takes the installer's lock, held by the connection until `unlock` or its end.
    #[doc(hidden)]
    fn lock(conn: &mut Self::Connection) -> DialectFuture<'_, ()>;
    #[doc(hidden)]
    fn unlock(conn: &mut Self::Connection) -> DialectFuture<'_, ()>;
    /// Runs one statement without parameters (text protocol: DDL and function bodies).
    #[doc(hidden)]
    fn execute(conn: &mut Self::Connection, sql: String) -> DialectFuture<'_, ()>;
    #[doc(hidden)]
    fn read_state<'a>(
        conn: &'a mut Self::Connection,
        sql: String,
        key: &'a str,
    ) -> DialectFuture<'a, Option<StateRow>>;
    #[doc(hidden)]
    fn write_state<'a>(
        conn: &'a mut Self::Connection,
        sql: String,
        key: &'a str,
        row: StateRow,
    ) -> DialectFuture<'a, ()>;
    #[doc(hidden)]
    fn delete_state<'a>(
        conn: &'a mut Self::Connection,
        sql: String,
        key: &'a str,
    ) -> DialectFuture<'a, ()>;
    #[doc(hidden)]
    fn select_id(pool: &Pool<Self>, sql: String) -> DialectFuture<'_, i64>;
}

/// A state row read back: `node` is a `BIGINT` that must not be negative.
pub(crate) fn state_row(
    layout: String,
    namespace: String,
    node: i64,
    holder: String,
    last_word: i64,
) -> Result<StateRow, sqlx::Error> {
    let node = u64::try_from(node).map_err(|_| {
        sqlx::Error::Protocol(format!(
            "negative node ID {node} in the generator state table"
        ))
    })?;
    Ok(StateRow {
        layout,
        namespace,
        node,
        holder,
        last_word,
    })
}

/// The methods of [`DbGeneratorDialect`] that read the same on every database (binding and
/// decoding only): written once, expanded in each database's `impl`.
macro_rules! bind_and_decode {
    ($conn:ty, $pool:ty) => {
        fn execute(conn: &mut $conn, sql: String) -> $crate::db_generator::dialect::DialectFuture<'_, ()> {
            Box::pin(async move {
                sqlx::Executor::execute(conn, sqlx::AssertSqlSafe(sql))
                    .await
                    .map(drop)
            })
        }

        fn read_state<'a>(
            conn: &'a mut $conn,
            sql: String,
            key: &'a str,
        ) -> $crate::db_generator::dialect::DialectFuture<'a, Option<$crate::db_generator::StateRow>> {
            Box::pin(async move {
                let row: Option<(String, String, i64, String, i64)> =
                    sqlx::query_as(sqlx::AssertSqlSafe(sql))
                        .bind(key)
                        .fetch_optional(conn)
                        .await?;
                row.map(|(l, ns, node, holder, word)| {
                    $crate::db_generator::dialect::state_row(l, ns, node, holder, word)
                })
                .transpose()
            })
        }

        fn write_state<'a>(
            conn: &'a mut $conn,
            sql: String,
            key: &'a str,
            row: $crate::db_generator::StateRow,
        ) -> $crate::db_generator::dialect::DialectFuture<'a, ()> {
            Box::pin(async move {
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(key)
                    .bind(row.layout)
                    .bind(row.namespace)
                    .bind(i64::try_from(row.node).unwrap_or(i64::MAX))
                    .bind(row.holder)
                    .bind(row.last_word)
                    .execute(conn)
                    .await
                    .map(drop)
            })
        }

        fn delete_state<'a>(
            conn: &'a mut $conn,
            sql: String,
            key: &'a str,
        ) -> $crate::db_generator::dialect::DialectFuture<'a, ()> {
            Box::pin(async move {
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(key)
                    .execute(conn)
                    .await
                    .map(drop)
            })
        }

        fn select_id(pool: &$pool, sql: String) -> $crate::db_generator::dialect::DialectFuture<'_, i64> {
            Box::pin(async move {
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .fetch_one(pool)
                    .await
            })
        }
    };
}
pub(super) use bind_and_decode;
