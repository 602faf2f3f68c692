//! The lease table's statements on each database: the very statements of idgen-sqlx's lease
//! stores (same table, same columns, same claim/renew/release semantics), sent through sea-orm.

use sea_orm::{
    AccessMode, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, IsolationLevel, QueryResult,
    Statement, TransactionTrait, Value,
};

use idgen_core::lease::{Claim, ClaimRequest, RenewRequest};

/// PostgreSQL interval arithmetic: `now() + <ms> milliseconds`.
const PG_PLUS_MS: &str = "* INTERVAL '1 millisecond'";
/// The MySQL/MariaDB clock, in UTC whatever the session time zone.
const MY_NOW: &str = "UTC_TIMESTAMP(6)";
/// The SQLite clock in Unix milliseconds (fixed for the duration of one statement).
const LITE_NOW_MS: &str = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

/// The `CREATE TABLE IF NOT EXISTS` statement for `table` (already quoted).
pub(crate) fn migration_sql(backend: DbBackend, table: &str) -> String {
    match backend {
        DbBackend::Postgres => format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      VARCHAR(255) NOT NULL,\n    \
             node           BIGINT       NOT NULL,\n    \
             holder         VARCHAR(255) NULL,\n    \
             expires_at     TIMESTAMPTZ  NOT NULL,\n    \
             last_timestamp BIGINT       NULL,\n    \
             PRIMARY KEY (namespace, node)\n)"
        ),
        DbBackend::MySql => format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      VARCHAR(255) NOT NULL,\n    \
             node           BIGINT       NOT NULL,\n    \
             holder         VARCHAR(255) NULL,\n    \
             expires_at     DATETIME(6)  NOT NULL,\n    \
             last_timestamp BIGINT       NULL,\n    \
             PRIMARY KEY (namespace, node)\n) ENGINE = InnoDB"
        ),
        _ => format!(
            "CREATE TABLE IF NOT EXISTS {table} (\n    \
             namespace      TEXT    NOT NULL,\n    \
             node           INTEGER NOT NULL,\n    \
             holder         TEXT    NULL,\n    \
             expires_at     INTEGER NOT NULL, -- Unix ms\n    \
             last_timestamp INTEGER NULL,\n    \
             PRIMARY KEY (namespace, node)\n)"
        ),
    }
}

fn stmt(backend: DbBackend, sql: String, values: Vec<Value>) -> Statement {
    Statement::from_sql_and_values(backend, sql, values)
}

fn text(s: &str) -> Value {
    Value::String(Some(s.to_owned()))
}

fn int(n: i64) -> Value {
    Value::BigInt(Some(n))
}

fn opt_int(n: Option<i64>) -> Value {
    Value::BigInt(n)
}

/// A node ID as a `BIGINT` (node IDs are far below `i64::MAX`: at most 2^22 of them).
fn node_i64(node: u64) -> i64 {
    i64::try_from(node).unwrap_or(i64::MAX)
}

/// A `BIGINT` node ID read back.
fn node_u64(node: i64) -> Result<u64, DbErr> {
    u64::try_from(node)
        .map_err(|_| DbErr::Custom(format!("negative node ID {node} in the lease table")))
}

/// Milliseconds of a TTL.
fn ttl_ms(ttl: std::time::Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

fn claim_of(row: &QueryResult) -> Result<Claim, DbErr> {
    Ok(Claim {
        node: node_u64(row.try_get_by_index(0)?)?,
        last_timestamp_ms: row.try_get_by_index(1)?,
    })
}

/// Claims the lowest expired node ID below the capacity, atomically; `None` when none is expired.
pub(crate) async fn take_expired(
    db: &DatabaseConnection,
    table: &str,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, DbErr> {
    let backend = db.get_database_backend();
    match backend {
        DbBackend::Postgres => {
            // The subquery locks the lowest expired row nobody else is claiming right now; rows
            // other claimants locked are skipped, so concurrent claims never wait or collide.
            let sql = format!(
                "UPDATE {table} SET holder = $3, expires_at = now() + $4::float8 {PG_PLUS_MS} \
                 WHERE namespace = $1 AND node = ( \
                     SELECT node FROM {table} \
                     WHERE namespace = $1 AND node < $2 AND expires_at <= now() \
                     ORDER BY node LIMIT 1 FOR UPDATE SKIP LOCKED) \
                 RETURNING node, last_timestamp"
            );
            let values = vec![
                text(req.namespace),
                int(node_i64(req.capacity)),
                text(req.holder),
                Value::Double(Some(ttl_ms(req.ttl) as f64)),
            ];
            db.query_one_raw(stmt(backend, sql, values))
                .await?
                .map(|row| claim_of(&row))
                .transpose()
        }
        DbBackend::MySql => take_expired_mysql(db, table, req).await,
        _ => {
            // An UPDATE takes SQLite's write lock before it reads, so the lookup and the update
            // are one atomic step (other writers wait, up to the busy timeout).
            let sql = format!(
                "UPDATE {table} SET holder = ?3, expires_at = {LITE_NOW_MS} + ?4 \
                 WHERE namespace = ?1 AND node = ( \
                     SELECT node FROM {table} \
                     WHERE namespace = ?1 AND node < ?2 AND expires_at <= {LITE_NOW_MS} \
                     ORDER BY node LIMIT 1) \
                 RETURNING node, last_timestamp"
            );
            let values = vec![
                text(req.namespace),
                int(node_i64(req.capacity)),
                text(req.holder),
                int(ttl_ms(req.ttl)),
            ];
            db.query_one_raw(stmt(backend, sql, values))
                .await?
                .map(|row| claim_of(&row))
                .transpose()
        }
    }
}

/// MySQL/MariaDB: a short `READ COMMITTED` transaction of its own (no gap locks, so claims and
/// row inserts do not block each other) with `SELECT … FOR UPDATE [SKIP LOCKED]`, then `UPDATE`.
async fn take_expired_mysql(
    db: &DatabaseConnection,
    table: &str,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, DbErr> {
    let backend = DbBackend::MySql;
    let version: String = db
        .query_one_raw(Statement::from_string(backend, "SELECT VERSION()"))
        .await?
        .ok_or_else(|| DbErr::Custom("SELECT VERSION() returned no row".to_owned()))?
        .try_get_by_index(0)?;
    let skip_locked = if supports_skip_locked(&version) {
        " SKIP LOCKED"
    } else {
        ""
    };
    let tx = db
        .begin_with_config(
            Some(IsolationLevel::ReadCommitted),
            Some(AccessMode::ReadWrite),
        )
        .await?;
    let select = format!(
        "SELECT node, last_timestamp FROM {table} \
         WHERE namespace = ? AND node < ? AND expires_at <= {MY_NOW} \
         ORDER BY node LIMIT 1 FOR UPDATE{skip_locked}"
    );
    let values = vec![text(req.namespace), int(node_i64(req.capacity))];
    let Some(row) = tx.query_one_raw(stmt(backend, select, values)).await? else {
        tx.rollback().await?;
        return Ok(None);
    };
    let node: i64 = row.try_get_by_index(0)?;
    let last_timestamp_ms: Option<i64> = row.try_get_by_index(1)?;
    let update = format!(
        "UPDATE {table} SET holder = ?, expires_at = {MY_NOW} + INTERVAL ? MICROSECOND \
         WHERE namespace = ? AND node = ?"
    );
    let values = vec![
        text(req.holder),
        int(ttl_ms(req.ttl).saturating_mul(1000)),
        text(req.namespace),
        int(node),
    ];
    tx.execute_raw(stmt(backend, update, values)).await?;
    tx.commit().await?;
    Ok(Some(Claim {
        node: node_u64(node)?,
        last_timestamp_ms,
    }))
}

/// The first node ID below the capacity that has no row yet.
pub(crate) async fn next_missing(
    db: &DatabaseConnection,
    table: &str,
    namespace: &str,
    capacity: u64,
) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => format!(
            "SELECT COALESCE(MAX(node) + 1, 0) FROM {table} WHERE namespace = $1 AND node < $2"
        ),
        DbBackend::MySql => format!(
            "SELECT CAST(COALESCE(MAX(node) + 1, 0) AS SIGNED) FROM {table} \
             WHERE namespace = ? AND node < ?"
        ),
        _ => format!(
            "SELECT COALESCE(MAX(node) + 1, 0) FROM {table} WHERE namespace = ?1 AND node < ?2"
        ),
    };
    let values = vec![text(namespace), int(node_i64(capacity))];
    let next: i64 = db
        .query_one_raw(stmt(backend, sql, values))
        .await?
        .ok_or_else(|| DbErr::Custom("MAX(node) returned no row".to_owned()))?
        .try_get_by_index(0)?;
    node_u64(next)
}

/// How many rows below the capacity have expired (some may be locked by other sessions).
pub(crate) async fn count_expired(
    db: &DatabaseConnection,
    table: &str,
    namespace: &str,
    capacity: u64,
) -> Result<i64, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => format!(
            "SELECT COUNT(*) FROM {table} \
             WHERE namespace = $1 AND node < $2 AND expires_at <= now()"
        ),
        DbBackend::MySql => format!(
            "SELECT COUNT(*) FROM {table} \
             WHERE namespace = ? AND node < ? AND expires_at <= {MY_NOW}"
        ),
        _ => format!(
            "SELECT COUNT(*) FROM {table} \
             WHERE namespace = ?1 AND node < ?2 AND expires_at <= {LITE_NOW_MS}"
        ),
    };
    let values = vec![text(namespace), int(node_i64(capacity))];
    db.query_one_raw(stmt(backend, sql, values))
        .await?
        .ok_or_else(|| DbErr::Custom("COUNT(*) returned no row".to_owned()))?
        .try_get_by_index(0)
}

/// Creates the rows `nodes` of `namespace` (unclaimed, expired), keeping existing ones.
pub(crate) async fn insert_rows(
    db: &DatabaseConnection,
    table: &str,
    namespace: &str,
    nodes: std::ops::Range<u64>,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let statement = match backend {
        DbBackend::Postgres => stmt(
            backend,
            format!(
                "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
                 SELECT $1, n, NULL, now(), NULL FROM generate_series($2::bigint, $3::bigint) AS n \
                 ON CONFLICT (namespace, node) DO NOTHING"
            ),
            vec![
                text(namespace),
                int(node_i64(nodes.start)),
                int(node_i64(nodes.end) - 1),
            ],
        ),
        DbBackend::MySql => {
            // `node = node` makes an existing row a no-op (INSERT IGNORE would hide other errors).
            let rows = vec![format!("(?, ?, NULL, {MY_NOW}, NULL)"); nodes.clone().count()];
            let values = nodes
                .flat_map(|node| [text(namespace), int(node_i64(node))])
                .collect();
            stmt(
                backend,
                format!(
                    "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
                     VALUES {} ON DUPLICATE KEY UPDATE node = node",
                    rows.join(", ")
                ),
                values,
            )
        }
        _ => stmt(
            backend,
            format!(
                "WITH RECURSIVE n(node) AS (SELECT ?2 UNION ALL SELECT node + 1 FROM n WHERE node + 1 < ?3) \
                 INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
                 SELECT ?1, node, NULL, {LITE_NOW_MS}, NULL FROM n WHERE true \
                 ON CONFLICT (namespace, node) DO NOTHING"
            ),
            vec![
                text(namespace),
                int(node_i64(nodes.start)),
                int(node_i64(nodes.end)),
            ],
        ),
    };
    db.execute_raw(statement).await.map(drop)
}

/// Extends the lease of a holder that still holds the node ID and keeps the larger last
/// timestamp; `false` when another holder has it now.
pub(crate) async fn renew(
    db: &DatabaseConnection,
    table: &str,
    req: RenewRequest<'_>,
) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let statement = match backend {
        // GREATEST ignores NULLs on PostgreSQL.
        DbBackend::Postgres => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = now() + $4::float8 {PG_PLUS_MS}, \
                 last_timestamp = GREATEST(last_timestamp, $5) \
                 WHERE namespace = $1 AND node = $2 AND holder = $3"
            ),
            vec![
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
                Value::Double(Some(ttl_ms(req.ttl) as f64)),
                opt_int(req.last_timestamp_ms),
            ],
        ),
        // GREATEST is NULL if an argument is NULL on MySQL: the COALESCE keeps whichever is set.
        DbBackend::MySql => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = {MY_NOW} + INTERVAL ? MICROSECOND, \
                 last_timestamp = COALESCE(GREATEST(last_timestamp, ?), last_timestamp, ?) \
                 WHERE namespace = ? AND node = ? AND holder = ?"
            ),
            vec![
                int(ttl_ms(req.ttl).saturating_mul(1000)),
                opt_int(req.last_timestamp_ms),
                opt_int(req.last_timestamp_ms),
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
            ],
        ),
        // Multi-argument MAX is NULL if an argument is NULL: the COALESCE keeps whichever is set.
        _ => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = {LITE_NOW_MS} + ?4, \
                 last_timestamp = COALESCE(MAX(last_timestamp, ?5), last_timestamp, ?5) \
                 WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
            ),
            vec![
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
                int(ttl_ms(req.ttl)),
                opt_int(req.last_timestamp_ms),
            ],
        ),
    };
    // sqlx asks MySQL for found (not changed) rows, so a matched row counts there too.
    Ok(db.execute_raw(statement).await?.rows_affected() == 1)
}

/// Expires the node ID now when the holder still holds it, storing its exact last timestamp.
pub(crate) async fn release(
    db: &DatabaseConnection,
    table: &str,
    req: RenewRequest<'_>,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let statement = match backend {
        DbBackend::Postgres => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = LEAST(expires_at, now()), last_timestamp = $4 \
                 WHERE namespace = $1 AND node = $2 AND holder = $3"
            ),
            vec![
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
                opt_int(req.last_timestamp_ms),
            ],
        ),
        DbBackend::MySql => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = LEAST(expires_at, {MY_NOW}), last_timestamp = ? \
                 WHERE namespace = ? AND node = ? AND holder = ?"
            ),
            vec![
                opt_int(req.last_timestamp_ms),
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
            ],
        ),
        _ => stmt(
            backend,
            format!(
                "UPDATE {table} SET expires_at = MIN(expires_at, {LITE_NOW_MS}), last_timestamp = ?4 \
                 WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
            ),
            vec![
                text(req.namespace),
                int(node_i64(req.node)),
                text(req.holder),
                opt_int(req.last_timestamp_ms),
            ],
        ),
    };
    db.execute_raw(statement).await.map(drop)
}

/// A deadlock, lock time-out or busy database: worth another attempt.
pub(crate) fn is_transient(backend: DbBackend, err: &DbErr) -> bool {
    let Some(db_err) = database_error(err) else {
        return false;
    };
    let code = db_err.code();
    match backend {
        // serialization_failure, deadlock_detected, lock_not_available
        DbBackend::Postgres => matches!(code.as_deref(), Some("40001" | "40P01" | "55P03")),
        // 1213 deadlock (SQLSTATE 40001), 1205 lock wait timeout.
        DbBackend::MySql => {
            code.as_deref() == Some("40001") || db_err.message().contains("Lock wait timeout")
        }
        // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with their extended codes.
        _ => code
            .and_then(|c| c.parse::<i32>().ok())
            .is_some_and(|c| matches!(c & 0xff, 5 | 6)),
    }
}

/// The table does not exist.
pub(crate) fn is_missing_table(backend: DbBackend, err: &DbErr) -> bool {
    let Some(db_err) = database_error(err) else {
        return false;
    };
    match backend {
        DbBackend::Postgres => db_err.code().as_deref() == Some("42P01"),
        DbBackend::MySql => db_err.code().as_deref() == Some("42S02"),
        _ => db_err.message().contains("no such table"),
    }
}

/// The driver's database error inside a sea-orm error.
fn database_error(err: &DbErr) -> Option<&dyn sea_orm::sqlx::error::DatabaseError> {
    use sea_orm::RuntimeErr;
    let (DbErr::Exec(RuntimeErr::SqlxError(e))
    | DbErr::Query(RuntimeErr::SqlxError(e))
    | DbErr::Conn(RuntimeErr::SqlxError(e))) = err
    else {
        return None;
    };
    match &**e {
        sea_orm::sqlx::Error::Database(db) => Some(&**db),
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
        assert!(!supports_skip_locked("8.0.0-dmr"));
        assert!(!supports_skip_locked("5.7.44-log"));
    }
}
