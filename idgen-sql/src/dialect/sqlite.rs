//! SQLite's lease SQL: times as Unix ms integers (from `julianday('now')`), two-argument
//! `MIN`/`MAX`, `INSERT OR IGNORE`, and a recursive CTE for new rows.

use std::ops::Range;

use super::{DialectSql, LEASE_COLUMNS, LeaseColumns, node_i64};
use crate::statement::{Statement, Value};

/// SQLite ([`Dialect::Sqlite`](super::Dialect::Sqlite)).
pub(crate) struct Sqlite;

impl DialectSql for Sqlite {
    fn lease_columns(&self) -> LeaseColumns {
        LeaseColumns {
            text: "TEXT   ",
            timestamp: "INTEGER NOT NULL, -- Unix ms",
            integer: "INTEGER",
            suffix: "",
        }
    }

    /// Unix ms, rounded from the Julian day.
    fn now(&self) -> &'static str {
        "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
    }

    fn plus_ms(&self, now: &str, param: &str, ttl_ms: i64) -> (String, Value<'static>) {
        (format!("{now} + {param}"), Value::BigInt(ttl_ms))
    }

    /// Stored as Unix ms already.
    fn epoch_ms(&self, timestamp: &str) -> String {
        timestamp.to_owned()
    }

    fn least(&self) -> &'static str {
        "MIN"
    }

    /// The multi-argument `MAX` is NULL if an argument is: the `COALESCE` keeps whichever is
    /// set, so the value is bound twice (numbered placeholders).
    fn greatest_not_null(&self, column: &str, first: usize) -> (String, usize) {
        let second = first + 1;
        (
            format!("COALESCE(MAX({column}, ?{first}), {column}, ?{second})"),
            2,
        )
    }

    fn insert_or_ignore(&self) -> (&'static str, &'static str) {
        ("INSERT OR IGNORE", "")
    }

    fn insert_free_rows<'a>(&self, table: &str, ns: &'a str, nodes: Range<u64>) -> Statement<'a> {
        let columns = LEASE_COLUMNS;
        let now = self.now();
        Statement::new(
            format!(
                "WITH RECURSIVE n(node) AS (SELECT ?2 UNION ALL SELECT node + 1 FROM n WHERE node + 1 < ?3) \
                 INSERT INTO {table} {columns} \
                 SELECT ?1, node, NULL, {now}, NULL FROM n WHERE true \
                 ON CONFLICT (namespace, node) DO NOTHING"
            ),
            vec![
                Value::Text(ns),
                Value::BigInt(node_i64(nodes.start)),
                Value::BigInt(node_i64(nodes.end)),
            ],
        )
    }
}
