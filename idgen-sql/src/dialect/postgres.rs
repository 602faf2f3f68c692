//! PostgreSQL's lease SQL: `TIMESTAMPTZ` times, `now()`, intervals, `FOR UPDATE SKIP LOCKED`
//! in the claim, `ON CONFLICT DO NOTHING`, `generate_series` for new rows, and the advisory
//! lock before DDL.

use std::ops::Range;

use super::{DialectSql, LEASE_COLUMNS, LeaseColumns, node_i64};
use crate::statement::{Statement, Value};

/// PostgreSQL ([`Dialect::Postgres`](super::Dialect::Postgres)).
pub(crate) struct Postgres;

impl DialectSql for Postgres {
    fn lease_columns(&self) -> LeaseColumns {
        LeaseColumns {
            text: "VARCHAR(255)",
            timestamp: "TIMESTAMPTZ  NOT NULL,",
            integer: "BIGINT      ",
            suffix: "",
        }
    }

    fn ddl_lock(&self) -> Option<&'static str> {
        Some(crate::PG_DDL_LOCK)
    }

    fn now(&self) -> &'static str {
        "now()"
    }

    /// Bound as a `float8` of milliseconds, times an interval of one.
    fn plus_ms(&self, now: &str, param: &str, ttl_ms: i64) -> (String, Value<'static>) {
        (
            format!("{now} + {param}::float8 * INTERVAL '1 millisecond'"),
            Value::Double(ttl_ms as f64),
        )
    }

    fn epoch_ms(&self, timestamp: &str) -> String {
        format!("(EXTRACT(EPOCH FROM {timestamp}) * 1000)::bigint")
    }

    /// `GREATEST` ignores NULLs on PostgreSQL: the value is bound once.
    fn greatest_not_null(&self, column: &str, first: usize) -> (String, usize) {
        (format!("GREATEST({column}, ${first})"), 1)
    }

    fn claim_lock(&self) -> &'static str {
        " FOR UPDATE SKIP LOCKED"
    }

    fn insert_or_ignore(&self) -> (&'static str, &'static str) {
        ("INSERT", " ON CONFLICT (namespace, node) DO NOTHING")
    }

    fn insert_free_rows<'a>(&self, table: &str, ns: &'a str, nodes: Range<u64>) -> Statement<'a> {
        let columns = LEASE_COLUMNS;
        let now = self.now();
        Statement::new(
            format!(
                "INSERT INTO {table} {columns} \
                 SELECT $1, n, NULL, {now}, NULL FROM generate_series($2::bigint, $3::bigint) AS n \
                 ON CONFLICT (namespace, node) DO NOTHING"
            ),
            vec![
                Value::Text(ns),
                Value::BigInt(node_i64(nodes.start)),
                Value::BigInt(node_i64(nodes.end) - 1),
            ],
        )
    }
}
