//! The lease table's SQL on SQLite: one `UPDATE … RETURNING` per claim (SQLite has one writer at
//! a time), Unix milliseconds from `julianday('now')` for expiry.

use sqlx::{AssertSqlSafe, Row, Sqlite, SqlitePool};

use crate::lease::store::{DialectFuture, LeaseDialect, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// The database clock in Unix milliseconds (fixed for the duration of one statement).
const NOW_MS: &str = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

impl LeaseDialect for Sqlite {
    const QUOTE: char = '"';

    fn migration_sql(table: &str) -> String {
        format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      TEXT    NOT NULL,\n    \
             node           INTEGER NOT NULL,\n    \
             holder         TEXT    NULL,\n    \
             expires_at     INTEGER NOT NULL, -- Unix ms\n    \
             last_timestamp INTEGER NULL,\n    \
             PRIMARY KEY (namespace, node)\n)"
        )
    }

    fn create_table<'a>(pool: &'a SqlitePool, table: &'a str) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(AssertSqlSafe(Self::migration_sql(table)))
                .execute(pool)
                .await
                .map(drop)
        })
    }

    fn take_expired<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        req: ClaimRequest<'a>,
    ) -> DialectFuture<'a, Option<Claim>> {
        Box::pin(async move {
            // An UPDATE takes SQLite's write lock before it reads, so the lookup and the update
            // are one atomic step (other writers wait, up to the busy timeout).
            let sql = format!(
                "UPDATE {table} SET holder = ?3, expires_at = {NOW_MS} + ?4 \
                 WHERE namespace = ?1 AND node = ( \
                     SELECT node FROM {table} \
                     WHERE namespace = ?1 AND node < ?2 AND expires_at <= {NOW_MS} \
                     ORDER BY node LIMIT 1) \
                 RETURNING node, last_timestamp"
            );
            let row = sqlx::query(AssertSqlSafe(sql))
                .bind(req.namespace)
                .bind(node_i64(req.capacity))
                .bind(req.holder)
                .bind(ttl_ms(req.ttl))
                .fetch_optional(pool)
                .await?;
            row.map(|row| {
                Ok(Claim {
                    node: node_u64(row.try_get(0)?)?,
                    last_timestamp_ms: row.try_get(1)?,
                })
            })
            .transpose()
        })
    }

    fn next_missing<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, u64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT COALESCE(MAX(node) + 1, 0) FROM {table} WHERE namespace = ?1 AND node < ?2"
            );
            let next: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(capacity))
                .fetch_one(pool)
                .await?;
            node_u64(next)
        })
    }

    fn count_expired<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, i64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT COUNT(*) FROM {table} \
                 WHERE namespace = ?1 AND node < ?2 AND expires_at <= {NOW_MS}"
            );
            sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(capacity))
                .fetch_one(pool)
                .await
        })
    }

    fn insert_rows<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        namespace: &'a str,
        nodes: std::ops::Range<u64>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            let sql = format!(
                "WITH RECURSIVE n(node) AS (SELECT ?2 UNION ALL SELECT node + 1 FROM n WHERE node + 1 < ?3) \
                 INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
                 SELECT ?1, node, NULL, {NOW_MS}, NULL FROM n WHERE true \
                 ON CONFLICT (namespace, node) DO NOTHING"
            );
            sqlx::query(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(nodes.start))
                .bind(node_i64(nodes.end))
                .execute(pool)
                .await
                .map(drop)
        })
    }

    fn renew<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, bool> {
        Box::pin(async move {
            // Multi-argument MAX is NULL if an argument is NULL: the COALESCE keeps whichever is set.
            let sql = format!(
                "UPDATE {table} SET expires_at = {NOW_MS} + ?4, \
                 last_timestamp = COALESCE(MAX(last_timestamp, ?5), last_timestamp, ?5) \
                 WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
            );
            let done = sqlx::query(AssertSqlSafe(sql))
                .bind(req.namespace)
                .bind(node_i64(req.node))
                .bind(req.holder)
                .bind(ttl_ms(req.ttl))
                .bind(req.last_timestamp_ms)
                .execute(pool)
                .await?;
            Ok(done.rows_affected() == 1)
        })
    }

    fn release<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            let sql = format!(
                "UPDATE {table} SET holder = NULL, expires_at = MIN(expires_at, {NOW_MS}), \
                 last_timestamp = ?4 \
                 WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
            );
            sqlx::query(AssertSqlSafe(sql))
                .bind(req.namespace)
                .bind(node_i64(req.node))
                .bind(req.holder)
                .bind(req.last_timestamp_ms)
                .execute(pool)
                .await
                .map(drop)
        })
    }

    fn rows<'a>(
        pool: &'a SqlitePool,
        table: &'a str,
        namespace: &'a str,
    ) -> DialectFuture<'a, Vec<LeaseRow>> {
        Box::pin(async move {
            let sql = format!(
                "SELECT node, holder, expires_at, last_timestamp FROM {table} \
                 WHERE namespace = ?1 ORDER BY node"
            );
            let rows = sqlx::query(AssertSqlSafe(sql))
                .bind(namespace)
                .fetch_all(pool)
                .await?;
            rows.iter()
                .map(|row| {
                    Ok(LeaseRow {
                        node: node_u64(row.try_get(0)?)?,
                        holder: row.try_get(1)?,
                        expires_at_ms: row.try_get(2)?,
                        last_timestamp_ms: row.try_get(3)?,
                    })
                })
                .collect()
        })
    }

    fn is_transient(err: &sqlx::Error) -> bool {
        // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with their extended codes.
        match err {
            sqlx::Error::Database(e) => e
                .code()
                .and_then(|c| c.parse::<i32>().ok())
                .is_some_and(|c| matches!(c & 0xff, 5 | 6)),
            _ => false,
        }
    }

    fn is_missing_table(err: &sqlx::Error) -> bool {
        matches!(err, sqlx::Error::Database(e) if e.message().contains("no such table"))
    }
}
