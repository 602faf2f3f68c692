//! The lease table's SQL on MySQL and MariaDB (idgen-sqlx's, statement for statement): a short
//! `READ COMMITTED` transaction per claim (`FOR UPDATE SKIP LOCKED` on MySQL 8.0.1+ and MariaDB
//! 10.6+, plain `FOR UPDATE` before), `UTC_TIMESTAMP(6)` for expiry.

use diesel::connection::Connection;
use diesel::mysql::Mysql;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{
    MysqlConnection, OptionalExtension, QueryResult, QueryableByName, RunQueryDsl, sql_query,
};

use crate::lease::sql_rows::{ClaimRow, NextRow, TableRow};
use crate::lease::store::{LeaseConnection, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// The database clock, in UTC whatever the session time zone.
const NOW: &str = "UTC_TIMESTAMP(6)";

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = Text)]
    version: String,
}

impl LeaseConnection for MysqlConnection {
    const QUOTE: char = '`';

    /// Autocommit, whatever the server's default: on a server started with `autocommit=0` every
    /// statement would otherwise open a transaction that is never committed.
    fn prepare(&mut self) -> QueryResult<()> {
        sql_query("SET autocommit = 1").execute(self).map(drop)
    }

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

    fn take_expired(&mut self, table: &str, req: ClaimRequest<'_>) -> QueryResult<Option<Claim>> {
        let version: Version = sql_query("SELECT VERSION() AS version").get_result(self)?;
        let skip_locked = if supports_skip_locked(&version.version) {
            " SKIP LOCKED"
        } else {
            ""
        };
        // READ COMMITTED: no gap locks, so claims and row inserts do not block each other.
        sql_query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED").execute(self)?;
        self.transaction(|conn| {
            let select = format!(
                "SELECT node, last_timestamp FROM {table} \
                 WHERE namespace = ? AND node < ? AND expires_at <= {NOW} \
                 ORDER BY node LIMIT 1 FOR UPDATE{skip_locked}"
            );
            let Some(row) = sql_query(select)
                .bind::<Text, _>(req.namespace)
                .bind::<BigInt, _>(node_i64(req.capacity))
                .get_result::<ClaimRow>(conn)
                .optional()?
            else {
                return Ok(None);
            };
            let update = format!(
                "UPDATE {table} SET holder = ?, expires_at = {NOW} + INTERVAL ? MICROSECOND \
                 WHERE namespace = ? AND node = ?"
            );
            sql_query(update)
                .bind::<Text, _>(req.holder)
                .bind::<BigInt, _>(ttl_ms(req.ttl).saturating_mul(1000))
                .bind::<Text, _>(req.namespace)
                .bind::<BigInt, _>(row.node())
                .execute(conn)?;
            row.claim().map(Some)
        })
    }

    fn next_missing(&mut self, table: &str, namespace: &str, capacity: u64) -> QueryResult<u64> {
        let sql = format!(
            "SELECT CAST(COALESCE(MAX(node) + 1, 0) AS SIGNED) AS next FROM {table} \
             WHERE namespace = ? AND node < ?"
        );
        let row: NextRow = sql_query(sql)
            .bind::<Text, _>(namespace)
            .bind::<BigInt, _>(node_i64(capacity))
            .get_result(self)?;
        node_u64(row.next)
    }

    fn insert_rows(
        &mut self,
        table: &str,
        namespace: &str,
        nodes: std::ops::Range<u64>,
    ) -> QueryResult<()> {
        // `node = node` makes an existing row a no-op (INSERT IGNORE would hide other errors).
        let values = vec![format!("(?, ?, NULL, {NOW}, NULL)"); nodes.clone().count()].join(", ");
        let sql = format!(
            "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
             VALUES {values} ON DUPLICATE KEY UPDATE node = node"
        );
        let mut insert = sql_query(sql).into_boxed::<Mysql>();
        for node in nodes {
            insert = insert
                .bind::<Text, _>(namespace)
                .bind::<BigInt, _>(node_i64(node));
        }
        insert.execute(self).map(drop)
    }

    fn renew(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<bool> {
        // GREATEST is NULL if an argument is NULL on MySQL: the COALESCE keeps whichever is set.
        let sql = format!(
            "UPDATE {table} SET expires_at = {NOW} + INTERVAL ? MICROSECOND, \
             last_timestamp = COALESCE(GREATEST(last_timestamp, ?), last_timestamp, ?) \
             WHERE namespace = ? AND node = ? AND holder = ?"
        );
        let rows = sql_query(sql)
            .bind::<BigInt, _>(ttl_ms(req.ttl).saturating_mul(1000))
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.node))
            .bind::<Text, _>(req.holder)
            .execute(self)?;
        // diesel connects with CLIENT_FOUND_ROWS: a matched row counts even if unchanged.
        Ok(rows == 1)
    }

    fn release(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<()> {
        let sql = format!(
            "UPDATE {table} SET holder = NULL, expires_at = LEAST(expires_at, {NOW}), \
             last_timestamp = ? \
             WHERE namespace = ? AND node = ? AND holder = ?"
        );
        sql_query(sql)
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.node))
            .bind::<Text, _>(req.holder)
            .execute(self)
            .map(drop)
    }

    fn rows(&mut self, table: &str, namespace: &str) -> QueryResult<Vec<LeaseRow>> {
        let sql = format!(
            "SELECT node, holder, \
             CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) \
             AS expires_at_ms, last_timestamp FROM {table} WHERE namespace = ? ORDER BY node"
        );
        sql_query(sql)
            .bind::<Text, _>(namespace)
            .load::<TableRow>(self)?
            .into_iter()
            .map(TableRow::into_lease_row)
            .collect()
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
