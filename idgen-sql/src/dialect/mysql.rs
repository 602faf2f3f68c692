//! MySQL's and MariaDB's lease SQL: `DATETIME(6)` times in UTC, intervals in microseconds,
//! `GREATEST` that a NULL makes NULL, `INSERT IGNORE`, one multi-row `INSERT` for new rows, and
//! InnoDB tables. (A claim takes two statements on these servers: `LeaseSql::lock_expired`,
//! then `LeaseSql::assign`.)

use std::ops::Range;

use super::{DialectSql, LEASE_COLUMNS, LeaseColumns, node_i64};
use crate::statement::{Statement, Value};

/// MySQL and MariaDB ([`Dialect::MySql`](super::Dialect::MySql)).
pub(crate) struct MySql;

impl DialectSql for MySql {
    fn lease_columns(&self) -> LeaseColumns {
        LeaseColumns {
            text: "VARCHAR(255)",
            timestamp: "DATETIME(6)  NOT NULL,",
            integer: "BIGINT      ",
            suffix: " ENGINE = InnoDB",
        }
    }

    fn now(&self) -> &'static str {
        "UTC_TIMESTAMP(6)"
    }

    /// Bound as a whole number of microseconds.
    fn plus_ms(&self, now: &str, param: &str, ttl_ms: i64) -> (String, Value<'static>) {
        (
            format!("{now} + INTERVAL {param} MICROSECOND"),
            Value::BigInt(ttl_ms.saturating_mul(1000)),
        )
    }

    fn epoch_ms(&self, timestamp: &str) -> String {
        format!(
            "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {timestamp}) DIV 1000 AS SIGNED)"
        )
    }

    /// `GREATEST` is NULL if an argument is: the `COALESCE` keeps whichever is set, so the
    /// value is bound twice.
    fn greatest_not_null(&self, column: &str, _first: usize) -> (String, usize) {
        (format!("COALESCE(GREATEST({column}, ?), {column}, ?)"), 2)
    }

    /// `MAX(node) + 1` is unsigned arithmetic's result on MySQL: cast back to signed.
    fn next_node(&self) -> &'static str {
        "CAST(COALESCE(MAX(node) + 1, 0) AS SIGNED)"
    }

    fn insert_or_ignore(&self) -> (&'static str, &'static str) {
        ("INSERT IGNORE", "")
    }

    /// `node = node` makes an existing row a no-op (`INSERT IGNORE` would hide other errors).
    fn insert_free_rows<'a>(&self, table: &str, ns: &'a str, nodes: Range<u64>) -> Statement<'a> {
        let columns = LEASE_COLUMNS;
        let rows = vec![format!("(?, ?, NULL, {}, NULL)", self.now()); nodes.clone().count()];
        let params = nodes
            .flat_map(|node| [Value::Text(ns), Value::BigInt(node_i64(node))])
            .collect();
        Statement::new(
            format!(
                "INSERT INTO {table} {columns} VALUES {} ON DUPLICATE KEY UPDATE node = node",
                rows.join(", ")
            ),
            params,
        )
    }
}
