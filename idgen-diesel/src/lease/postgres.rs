//! The lease table's SQL on PostgreSQL (idgen-sqlx's, statement for statement):
//! `FOR UPDATE SKIP LOCKED` claims, `now()` for expiry.

use diesel::sql_types::{BigInt, Double, Nullable, Text};
use diesel::{OptionalExtension, PgConnection, QueryResult, RunQueryDsl, sql_query};

use crate::lease::sql_rows::{ClaimRow, NextRow, TableRow};
use crate::lease::store::{LeaseConnection, LeaseRow, node_i64, node_u64, ttl_ms};
use crate::lease::{Claim, ClaimRequest, RenewRequest};

/// Interval arithmetic: `now() + <ms> milliseconds`.
const PLUS_MS: &str = "* INTERVAL '1 millisecond'";

impl LeaseConnection for PgConnection {
    const QUOTE: char = '"';

    fn create_if_missing(&mut self, ddl: &str) -> QueryResult<()> {
        crate::pg_ddl::create_if_missing(self, ddl)
    }

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

    fn take_expired(&mut self, table: &str, req: ClaimRequest<'_>) -> QueryResult<Option<Claim>> {
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
        sql_query(sql)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.capacity))
            .bind::<Text, _>(req.holder)
            .bind::<Double, _>(ttl_ms(req.ttl) as f64)
            .get_result::<ClaimRow>(self)
            .optional()?
            .map(|row| row.claim())
            .transpose()
    }

    fn next_missing(&mut self, table: &str, namespace: &str, capacity: u64) -> QueryResult<u64> {
        let sql = format!(
            "SELECT COALESCE(MAX(node) + 1, 0) AS next FROM {table} \
             WHERE namespace = $1 AND node < $2"
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
            "INSERT INTO {table} (namespace, node, holder, expires_at, last_timestamp) \
             SELECT $1, n, NULL, now(), NULL FROM generate_series($2::bigint, $3::bigint) AS n \
             ON CONFLICT (namespace, node) DO NOTHING"
        );
        sql_query(sql)
            .bind::<Text, _>(namespace)
            .bind::<BigInt, _>(node_i64(nodes.start))
            .bind::<BigInt, _>(node_i64(nodes.end) - 1)
            .execute(self)
            .map(drop)
    }

    fn renew(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<bool> {
        // GREATEST ignores NULLs on PostgreSQL.
        let sql = format!(
            "UPDATE {table} SET expires_at = now() + $4::float8 {PLUS_MS}, \
             last_timestamp = GREATEST(last_timestamp, $5) \
             WHERE namespace = $1 AND node = $2 AND holder = $3"
        );
        let rows = sql_query(sql)
            .bind::<Text, _>(req.namespace)
            .bind::<BigInt, _>(node_i64(req.node))
            .bind::<Text, _>(req.holder)
            .bind::<Double, _>(ttl_ms(req.ttl) as f64)
            .bind::<Nullable<BigInt>, _>(req.last_timestamp_ms)
            .execute(self)?;
        Ok(rows == 1)
    }

    fn release(&mut self, table: &str, req: RenewRequest<'_>) -> QueryResult<()> {
        let sql = format!(
            "UPDATE {table} SET holder = NULL, expires_at = LEAST(expires_at, now()), \
             last_timestamp = $4 \
             WHERE namespace = $1 AND node = $2 AND holder = $3"
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
            "SELECT node, holder, \
             (EXTRACT(EPOCH FROM expires_at) * 1000)::bigint AS expires_at_ms, last_timestamp \
             FROM {table} WHERE namespace = $1 ORDER BY node"
        );
        sql_query(sql)
            .bind::<Text, _>(namespace)
            .load::<TableRow>(self)?
            .into_iter()
            .map(TableRow::into_lease_row)
            .collect()
    }
}
