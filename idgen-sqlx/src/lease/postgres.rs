//! The lease table's SQL on PostgreSQL: `FOR UPDATE SKIP LOCKED` claims, `now()` for expiry.

use sqlx::{AssertSqlSafe, PgPool, Postgres, Row};

use crate::lease::store::{DialectFuture, LeaseDialect, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// Interval arithmetic: `now() + <ms> milliseconds`.
const PLUS_MS: &str = "* INTERVAL '1 millisecond'";

impl LeaseDialect for Postgres {
    const QUOTE: char = '"';

    fn migration_sql(table: &str) -> String {
        format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      VARCHAR(255) NOT NULL,\n    \
             node           BIGINT       NOT NULL,\n    \
             holder         VARCHAR(255) NULL,\n    \
             expires_at     TIMESTAMPTZ  NOT NULL,\n    \
             last_timestamp BIGINT       NULL,\n    \
             PRIMARY KEY (namespace, node)\n)"
        )
    }

    fn create_table<'a>(pool: &'a PgPool, table: &'a str) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            crate::pg_ddl::create_if_missing(pool, &Self::migration_sql(table)).await
        })
    }

    fn take_expired<'a>(
        pool: &'a PgPool,
        table: &'a str,
        req: ClaimRequest<'a>,
    ) -> DialectFuture<'a, Option<Claim>> {
        Box::pin(async move {
            // The subquery locks the lowest expired row nobody else is claiming right now; rows
            // other claimants locked are skipped, so concurrent claims never wait or collide.
            let sql = format!(
                "UPDATE {table} SET holder = $3, expires_at = now() + $4::float8 {PLUS_MS} \
                 WHERE namespace = $1 AND node = ( \
                     SELECT node FROM {table} \
                     WHERE namespace = $1 AND node < $2 AND expires_at <= now() \
                     ORDER BY node LIMIT 1 FOR UPDATE SKIP LOCKED) \
                 RETURNING node, last_timestamp"
            );
            let row = sqlx::query(AssertSqlSafe(sql))
                .bind(req.namespace)
                .bind(node_i64(req.capacity))
                .bind(req.holder)
                .bind(ttl_ms(req.ttl) as f64)
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
        pool: &'a PgPool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, u64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT COALESCE(MAX(node) + 1, 0) FROM {table} WHERE namespace = $1 AND node < $2"
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
        pool: &'a PgPool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, i64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT COUNT(*) FROM {table} \
                 WHERE namespace = $1 AND node < $2 AND expires_at <= now()"
            );
            sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(capacity))
                .fetch_one(pool)
                .await
        })
    }

    fn insert_rows<'a>(
        pool: &'a PgPool,
        table: &'a str,
        namespace: &'a str,
        nodes: std::ops::Range<u64>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            let sql = format!(
                "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
                 SELECT $1, n, NULL, now(), NULL FROM generate_series($2::bigint, $3::bigint) AS n \
                 ON CONFLICT (namespace, node) DO NOTHING"
            );
            sqlx::query(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(nodes.start))
                .bind(node_i64(nodes.end) - 1)
                .execute(pool)
                .await
                .map(drop)
        })
    }

    fn renew<'a>(
        pool: &'a PgPool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, bool> {
        Box::pin(async move {
            // GREATEST ignores NULLs on PostgreSQL.
            let sql = format!(
                "UPDATE {table} SET expires_at = now() + $4::float8 {PLUS_MS}, \
                 last_timestamp = GREATEST(last_timestamp, $5) \
                 WHERE namespace = $1 AND node = $2 AND holder = $3"
            );
            let done = sqlx::query(AssertSqlSafe(sql))
                .bind(req.namespace)
                .bind(node_i64(req.node))
                .bind(req.holder)
                .bind(ttl_ms(req.ttl) as f64)
                .bind(req.last_timestamp_ms)
                .execute(pool)
                .await?;
            Ok(done.rows_affected() == 1)
        })
    }

    fn release<'a>(
        pool: &'a PgPool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            let sql = format!(
                "UPDATE {table} SET holder = NULL, expires_at = LEAST(expires_at, now()), \
                 last_timestamp = $4 \
                 WHERE namespace = $1 AND node = $2 AND holder = $3"
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
        pool: &'a PgPool,
        table: &'a str,
        namespace: &'a str,
    ) -> DialectFuture<'a, Vec<LeaseRow>> {
        Box::pin(async move {
            let sql = format!(
                "SELECT node, holder, \
                 (EXTRACT(EPOCH FROM expires_at) * 1000)::bigint, last_timestamp \
                 FROM {table} WHERE namespace = $1 ORDER BY node"
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
        // serialization_failure, deadlock_detected, lock_not_available
        matches!(sqlstate(err).as_deref(), Some("40001" | "40P01" | "55P03"))
    }

    fn is_missing_table(err: &sqlx::Error) -> bool {
        sqlstate(err).as_deref() == Some("42P01")
    }
}

fn sqlstate(err: &sqlx::Error) -> Option<String> {
    match err {
        sqlx::Error::Database(e) => e.code().map(|c| c.into_owned()),
        _ => None,
    }
}
