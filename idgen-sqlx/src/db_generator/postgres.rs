//! The installer's statements on PostgreSQL.

use sqlx::{AssertSqlSafe, Executor, PgConnection, PgPool, Postgres};

use super::dialect::{DbGeneratorDialect, state_row};
use crate::db_generator::{SqlDialect, StateRow};
use crate::lease::DialectFuture;

/// The installers' session lock, `"idgenGEN"` in ASCII.
const LOCK_KEY: i64 = 0x6964_6765_6e47_454e;

impl DbGeneratorDialect for Postgres {
    const DIALECT: SqlDialect = SqlDialect::Postgres;

    fn lock(conn: &mut PgConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(LOCK_KEY)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    fn unlock(conn: &mut PgConnection) -> DialectFuture<'_, ()> {
        Box::pin(async move {
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(LOCK_KEY)
                .execute(conn)
                .await
                .map(drop)
        })
    }

    fn execute(conn: &mut PgConnection, sql: String) -> DialectFuture<'_, ()> {
        Box::pin(async move { conn.execute(AssertSqlSafe(sql)).await.map(drop) })
    }

    fn read_state<'a>(
        conn: &'a mut PgConnection,
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
        conn: &'a mut PgConnection,
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
        conn: &'a mut PgConnection,
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

    fn select_id(pool: &PgPool, sql: String) -> DialectFuture<'_, i64> {
        Box::pin(async move { sqlx::query_scalar(AssertSqlSafe(sql)).fetch_one(pool).await })
    }
}
