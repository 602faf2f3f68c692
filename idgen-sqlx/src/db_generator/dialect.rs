//! [`DbGeneratorDialect`]: what differs between PostgreSQL and MariaDB/MySQL for the installer.

use sqlx::Pool;

use crate::db_generator::{SqlDialect, StateRow};
use crate::lease::{DialectFuture, LeaseDialect};

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    #[cfg(feature = "postgres")]
    impl Sealed for sqlx::Postgres {}
    #[cfg(feature = "mysql")]
    impl Sealed for sqlx::MySql {}
}

/// A database that can run a database-side generator: `sqlx::Postgres` and `sqlx::MySql`
/// (MariaDB too), with the crate features of the same names. Sealed; its methods bind and
/// decode the statements of [`DbGenerator`](crate::db_generator::DbGenerator).
///
/// ```
/// fn takes_a_generator_pool<DB: idgen_sqlx::db_generator::DbGeneratorDialect>(_: &sqlx::Pool<DB>) {}
/// # #[cfg(feature = "postgres")]
/// # let _ = takes_a_generator_pool::<sqlx::Postgres>;
/// ```
pub trait DbGeneratorDialect: LeaseDialect + sealed::Sealed {
    #[doc(hidden)]
    const DIALECT: SqlDialect;
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
pub(super) fn state_row(
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
