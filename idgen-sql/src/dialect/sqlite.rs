//! SQLite's SQL: for leases times as Unix ms integers (from `julianday('now')`), two-argument
//! `MIN`/`MAX`, `INSERT OR IGNORE`, and a recursive CTE for new rows; hi-lo counters in a
//! counter table's rows ([`SqliteTable`]; SQLite has no sequences).

use std::ops::Range;

use idgen_engine::Error;

use super::{
    CounterDialect, CounterKind, DialectSql, LEASE_COLUMNS, LeaseColumns, above, block_i64,
    node_i64,
};
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

    fn refuses_counter(&self, kind: CounterKind) -> Option<&'static str> {
        (kind == CounterKind::Sequence).then_some("SQLite has no sequences; use a counter table")
    }

    fn sequence_counter(&self) -> &'static dyn CounterDialect {
        &SqliteTable
    }

    fn table_counter(&self) -> &'static dyn CounterDialect {
        &SqliteTable
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

/// A row of a counter table, advanced by `UPDATE … RETURNING`.
pub(crate) struct SqliteTable;

impl CounterDialect for SqliteTable {
    fn create(&self, name: &str, table: &str, _block: u64) -> Vec<String> {
        vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {table} (\n    name     TEXT    NOT NULL PRIMARY KEY,\n    next_val INTEGER NOT NULL\n)"
            ),
            format!(
                "{} INTO {table} (name, next_val) VALUES ('{name}', 1)",
                Sqlite.insert_or_ignore().0
            ),
        ]
    }

    fn take<'a>(&self, name: &'a str, table: &str, size: u64) -> Result<Statement<'a>, Error> {
        Ok(Statement::new(
            format!(
                "UPDATE {table} SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1 AS value"
            ),
            vec![Value::BigInt(block_i64(size)?), Value::Text(name)],
        ))
    }

    fn raise_above<'a>(&self, name: &'a str, table: &str, floor: i64) -> Option<Statement<'a>> {
        Some(Statement::new(
            format!("UPDATE {table} SET next_val = MAX(next_val, ?1) WHERE name = ?2"),
            vec![Value::BigInt(above(floor)), Value::Text(name)],
        ))
    }
}
