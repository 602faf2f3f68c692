//! The lease table's SQL on MySQL and MariaDB: a short `READ COMMITTED` transaction per claim
//! (`FOR UPDATE SKIP LOCKED` on MySQL 8.0.1+ and MariaDB 10.6+, plain `FOR UPDATE` before),
//! `UTC_TIMESTAMP(6)` for expiry.

use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, Connection, MySql, MySqlPool, Row};

use crate::lease::store::{DialectFuture, LeaseDialect, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// The database clock, in UTC whatever the session time zone.
const NOW: &str = "UTC_TIMESTAMP(6)";

impl LeaseDialect for MySql {
    const QUOTE: char = '`';

    fn migration_sql(table: &str) -> String {
        format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      VARCHAR(255) NOT NULL,\n    \
             node           BIGINT       NOT NULL,\n    \
             holder         VARCHAR(255) NULL,\n    \
             expires_at     DATETIME(6)  NOT NULL,\n    \
             last_timestamp BIGINT       NULL,\n    \
             PRIMARY KEY (namespace, node)\n) ENGINE = InnoDB"
        )
    }

    fn create_table<'a>(pool: &'a MySqlPool, table: &'a str) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            sqlx::query(AssertSqlSafe(Self::migration_sql(table)))
                .execute(&mut *autocommit(pool).await?)
                .await
                .map(drop)
        })
    }

    fn take_expired<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        req: ClaimRequest<'a>,
    ) -> DialectFuture<'a, Option<Claim>> {
        Box::pin(async move {
            let mut conn = autocommit(pool).await?;
            let version: String = sqlx::query_scalar("SELECT VERSION()")
                .fetch_one(&mut *conn)
                .await?;
            let skip_locked = if supports_skip_locked(&version) {
                " SKIP LOCKED"
            } else {
                ""
            };
            // READ COMMITTED: no gap locks, so claims and row inserts do not block each other.
            sqlx::query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
                .execute(&mut *conn)
                .await?;
            let mut tx = conn.begin().await?;
            let select = format!(
                "SELECT node, last_timestamp FROM {table} \
                 WHERE namespace = ? AND node < ? AND expires_at <= {NOW} \
                 ORDER BY node LIMIT 1 FOR UPDATE{skip_locked}"
            );
            let Some(row) = sqlx::query(AssertSqlSafe(select))
                .bind(req.namespace)
                .bind(node_i64(req.capacity))
                .fetch_optional(&mut *tx)
                .await?
            else {
                tx.rollback().await?;
                return Ok(None);
            };
            let node: i64 = row.try_get(0)?;
            let last_timestamp_ms: Option<i64> = row.try_get(1)?;
            let update = format!(
                "UPDATE {table} SET holder = ?, expires_at = {NOW} + INTERVAL ? MICROSECOND \
                 WHERE namespace = ? AND node = ?"
            );
            sqlx::query(AssertSqlSafe(update))
                .bind(req.holder)
                .bind(ttl_ms(req.ttl).saturating_mul(1000))
                .bind(req.namespace)
                .bind(node)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some(Claim {
                node: node_u64(node)?,
                last_timestamp_ms,
            }))
        })
    }

    fn next_missing<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, u64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT CAST(COALESCE(MAX(node) + 1, 0) AS SIGNED) FROM {table} \
                 WHERE namespace = ? AND node < ?"
            );
            let next: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(capacity))
                .fetch_one(&mut *autocommit(pool).await?)
                .await?;
            node_u64(next)
        })
    }

    fn count_expired<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        namespace: &'a str,
        capacity: u64,
    ) -> DialectFuture<'a, i64> {
        Box::pin(async move {
            let sql = format!(
                "SELECT COUNT(*) FROM {table} \
                 WHERE namespace = ? AND node < ? AND expires_at <= {NOW}"
            );
            sqlx::query_scalar(AssertSqlSafe(sql))
                .bind(namespace)
                .bind(node_i64(capacity))
                .fetch_one(&mut *autocommit(pool).await?)
                .await
        })
    }

    fn insert_rows<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        namespace: &'a str,
        nodes: std::ops::Range<u64>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            // `node = node` makes an existing row a no-op (INSERT IGNORE would hide other errors).
            let mut insert = sqlx::QueryBuilder::<MySql>::new(format!(
                "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) "
            ));
            insert.push_values(nodes, |mut row, node| {
                row.push_bind(namespace)
                    .push_bind(node_i64(node))
                    .push("NULL")
                    .push(NOW)
                    .push("NULL");
            });
            insert.push(" ON DUPLICATE KEY UPDATE node = node");
            insert
                .build()
                .execute(&mut *autocommit(pool).await?)
                .await
                .map(drop)
        })
    }

    fn renew<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, bool> {
        Box::pin(async move {
            // GREATEST is NULL if an argument is NULL on MySQL: the COALESCE keeps whichever is set.
            let sql = format!(
                "UPDATE {table} SET expires_at = {NOW} + INTERVAL ? MICROSECOND, \
                 last_timestamp = COALESCE(GREATEST(last_timestamp, ?), last_timestamp, ?) \
                 WHERE namespace = ? AND node = ? AND holder = ?"
            );
            let done = sqlx::query(AssertSqlSafe(sql))
                .bind(ttl_ms(req.ttl).saturating_mul(1000))
                .bind(req.last_timestamp_ms)
                .bind(req.last_timestamp_ms)
                .bind(req.namespace)
                .bind(node_i64(req.node))
                .bind(req.holder)
                .execute(&mut *autocommit(pool).await?)
                .await?;
            // sqlx asks for found (not changed) rows, so a matched row counts.
            Ok(done.rows_affected() == 1)
        })
    }

    fn release<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        req: RenewRequest<'a>,
    ) -> DialectFuture<'a, ()> {
        Box::pin(async move {
            let sql = format!(
                "UPDATE {table} SET holder = NULL, expires_at = LEAST(expires_at, {NOW}), \
                 last_timestamp = ? \
                 WHERE namespace = ? AND node = ? AND holder = ?"
            );
            sqlx::query(AssertSqlSafe(sql))
                .bind(req.last_timestamp_ms)
                .bind(req.namespace)
                .bind(node_i64(req.node))
                .bind(req.holder)
                .execute(&mut *autocommit(pool).await?)
                .await
                .map(drop)
        })
    }

    fn rows<'a>(
        pool: &'a MySqlPool,
        table: &'a str,
        namespace: &'a str,
    ) -> DialectFuture<'a, Vec<LeaseRow>> {
        Box::pin(async move {
            let sql = format!(
                "SELECT node, holder, \
                 CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED), \
                 last_timestamp FROM {table} WHERE namespace = ? ORDER BY node"
            );
            let rows = sqlx::query(AssertSqlSafe(sql))
                .bind(namespace)
                .fetch_all(&mut *autocommit(pool).await?)
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
        // 1213 deadlock, 1205 lock wait timeout.
        matches!(error_number(err), Some(1213 | 1205))
    }

    fn is_missing_table(err: &sqlx::Error) -> bool {
        error_number(err) == Some(1146)
    }
}

/// A connection of `pool` in autocommit mode, whatever the server's default: on a server
/// started with `autocommit=0`, each statement would otherwise open a transaction that is never
/// committed (its rows locked, then rolled back when the connection closes).
async fn autocommit(pool: &MySqlPool) -> Result<PoolConnection<MySql>, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    sqlx::query("SET autocommit = 1")
        .execute(&mut *conn)
        .await?;
    Ok(conn)
}

fn error_number(err: &sqlx::Error) -> Option<u16> {
    match err {
        sqlx::Error::Database(e) => e
            .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
            .map(|e| e.number()),
        _ => None,
    }
}

/// `SKIP LOCKED` arrived in MySQL 8.0.1 and MariaDB 10.6.
fn supports_skip_locked(version: &str) -> bool {
    let numbers: Vec<u32> = version
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let v = (
        numbers.first().copied().unwrap_or(0),
        numbers.get(1).copied().unwrap_or(0),
        numbers.get(2).copied().unwrap_or(0),
    );
    if version.contains("MariaDB") {
        v >= (10, 6, 0)
    } else {
        v >= (8, 0, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::supports_skip_locked;

    #[test]
    fn skip_locked_is_used_from_mysql_8_0_1_and_mariadb_10_6() {
        assert!(supports_skip_locked("10.11.19-MariaDB-0+deb12u1"));
        assert!(supports_skip_locked("10.6.0-MariaDB"));
        assert!(!supports_skip_locked("10.5.23-MariaDB-log"));
        assert!(supports_skip_locked("8.0.36"));
        assert!(supports_skip_locked("8.4.0-commercial"));
        assert!(!supports_skip_locked("8.0.0-dmr"));
        assert!(!supports_skip_locked("5.7.44-log"));
    }
}
