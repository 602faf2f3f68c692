//! The installer's statements on MariaDB and MySQL.

use sqlx::{AssertSqlSafe, Executor, MySql, MySqlConnection, MySqlPool};

use super::dialect::{DbGeneratorDialect, state_row};
use crate::db_generator::{SqlDialect, StateRow};
use crate::lease::DialectFuture;

/// The installers' named lock, and how long an installer waits for it (seconds).
const LOCK_NAME: &str = "idgen_db_generator";
const LOCK_WAIT_S: i64 = 60;

impl DbGeneratorDialect for MySql {
    const DIALECT: SqlDialect = SqlDialect::MySql;

    fn lock(conn: &mut MySqlConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, ?)")
                .bind(LOCK_NAME)
                .bind(LOCK_WAIT_S)
                .fetch_one(conn)
                .await?;
            match got {
                Some(1) => Ok(()),
                _ => Err(sqlx::Error::Protocol(format!(
                    "GET_LOCK('{LOCK_NAME}') was not granted within {LOCK_WAIT_S} s: another installer holds it"
                ))),
            }
        })
    }

    fn unlock(conn: &mut MySqlConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT RELEASE_LOCK(?)")
                .bind(LOCK_NAME)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    fn execute(conn: &mut MySqlConnection, sql: String) -> DialectFuture<'_, ()> {
        Box::pin(async move { conn.execute(AssertSqlSafe(sql)).await.map(drop) })
    }

    fn read_state<'a>(
        conn: &'a mut MySqlConnection,
        sql: String,
        key: &'a str,
    ) -> DialectFuture<'a, Option<StateRow>> {
        Box::pin(async move {
            let row: Option<(String, String, i64, String, i64)> =
                sqlx::query_as(AssertSqlSafe(sql))
                    .bind(key)
                    .fetch_optional(conn)
                    .await?;
            row.map(|(l, ns, node, holder, word)| state_row(l, ns, node, holder, word))
                .transpose()
        })
    }

    fn write_state<'a>(
        conn: &'a mut MySqlConnection,
        sql: String,
        key: &'a str,
        row: StateRow,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(AssertSqlSafe(sql))
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
        conn: &'a mut MySqlConnection,
        sql: String,
        key: &'a str,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(AssertSqlSafe(sql))
                .bind(key)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    fn select_id(pool: &MySqlPool, sql: String) -> DialectFuture<'_, i64> {
        Box::pin(async move { sqlx::query_scalar(AssertSqlSafe(sql)).fetch_one(pool).await })
    }
}
