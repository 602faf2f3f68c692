//! The lease table's SQL on SQLite (idgen-sqlx's, statement for statement): one
//! `UPDATE … RETURNING` per claim (SQLite has one writer at a time), Unix milliseconds from
//! `julianday('now')` for expiry.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{OptionalExtension, QueryResult, RunQueryDsl, SqliteConnection, sql_query};

use crate::lease::sql_rows::{ClaimRow, NextRow, TableRow};
use crate::lease::store::{LeaseConnection, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// The database clock in Unix milliseconds (fixed for the duration of one statement).
const NOW_MS: &str = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

impl LeaseConnection for SqliteConnection {
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

    fn prepare(&mut self) -> QueryResult<()> {
        crate::sqlite_busy::ensure_busy_timeout(self)
    }

    fn take_expired(&mut self, table: &str, req: ClaimRequest<'_>) -> QueryResult<Option<Claim>> {
        // An UPDATE takes SQLite's write lock before it reads, so the lookup and the update are
        // one atomic step (other writers wait, up to the busy timeout).
        let sql = format!(
            "UPDATE {table} SET holder = ?3, expires_at = {NOW_MS} + ?4 \
             WHERE namespace = ?1 AND node = ( \
                 SELECT node FROM {table} \
                 WHERE namespace = ?1 AND node < ?2 AND expires_at <= {NOW_MS} \
                 ORDER BY node LIMIT 1) \
             RETURNING node, last_timestamp"
        );
        sql_query(sql)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.capacity))
            .bind::<Text, _>(req.holder)
            .bind::<BigInt, _>(ttl_ms(req.ttl))
            .get_result::<ClaimRow>(self)
            .optional()?
            .map(|row| row.claim())
            .transpose()
    }

    fn next_missing(&mut self, table: &str, namespace: &str, capacity: u64) -> QueryResult<u64> {
        let sql = format!(
            "SELECT COALESCE(MAX(node) + 1, 0) AS next FROM {table} \
             WHERE namespace = ?1 AND node < ?2"
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
        let sql = format!(
            "WITH RECURSIVE n(node) AS (SELECT ?2 UNION ALL SELECT node + 1 FROM n WHERE node + 1 < ?3) \
             INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
             SELECT ?1, node, NULL, {NOW_MS}, NULL FROM n WHERE true \
             ON CONFLICT (namespace, node) DO NOTHING"
        );
        sql_query(sql)
            .bind::<Text, _>(namespace)
            .bind::<BigInt, _>(node_i64(nodes.start))
            .bind::<BigInt, _>(node_i64(nodes.end))
            .execute(self)
            .map(drop)
    }

    fn renew(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<bool> {
        // Multi-argument MAX is NULL if an argument is NULL: the COALESCE keeps whichever is set.
        let sql = format!(
            "UPDATE {table} SET expires_at = {NOW_MS} + ?4, \
             last_timestamp = COALESCE(MAX(last_timestamp, ?5), last_timestamp, ?5) \
             WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
        );
        let rows = sql_query(sql)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.node))
            .bind::<Text, _>(req.holder)
            .bind::<BigInt, _>(ttl_ms(req.ttl))
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .execute(self)?;
        Ok(rows == 1)
    }

    fn release(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<()> {
        let sql = format!(
            "UPDATE {table} SET holder = NULL, expires_at = MIN(expires_at, {NOW_MS}), \
             last_timestamp = ?4 \
             WHERE namespace = ?1 AND node = ?2 AND holder = ?3"
        );
        sql_query(sql)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.node))
            .bind::<Text, _>(req.holder)
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .execute(self)
            .map(drop)
    }

    fn rows(&mut self, table: &str, namespace: &str) -> QueryResult<Vec<LeaseRow>> {
        let sql = format!(
            "SELECT node, holder, expires_at AS expires_at_ms, last_timestamp FROM {table} \
             WHERE namespace = ?1 ORDER BY node"
        );
        sql_query(sql)
            .bind::<Text, _>(namespace)
            .load::<TableRow>(self)?
            .into_iter()
            .map(TableRow::into_lease_row)
            .collect()
    }
}
