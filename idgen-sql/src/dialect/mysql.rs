//! MySQL's and MariaDB's SQL: for leases `DATETIME(6)` times in UTC, intervals in
//! microseconds, `GREATEST` that a NULL makes NULL, `INSERT IGNORE`, one multi-row `INSERT` for
//! new rows, and InnoDB tables (a claim takes two statements on these servers:
//! `LeaseSql::lock_expired`, then `LeaseSql::assign`); hi-lo counters in MariaDB's sequences
//! ([`MariaDbSequence`]) or in a counter table's rows ([`MySqlTable`]).

use std::ops::Range;

use idgen_engine::Error;

use super::{CounterDialect, DialectSql, LEASE_COLUMNS, LeaseColumns, above, block_i64, node_i64};
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
    fn sequence_counter(&self) -> &'static dyn CounterDialect {
        &MariaDbSequence
    }

    fn table_counter(&self) -> &'static dyn CounterDialect {
        &MySqlTable
    }

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

/// A MariaDB (10.3 on) sequence whose `INCREMENT BY` is the block size.
pub(crate) struct MariaDbSequence;

impl CounterDialect for MariaDbSequence {
    fn create(&self, name: &str, _table: &str, block: u64) -> Vec<String> {
        vec![format!(
            "CREATE SEQUENCE IF NOT EXISTS {name} START WITH 1 MINVALUE 1 INCREMENT BY {block} NOCACHE NOCYCLE"
        )]
    }

    fn take<'a>(&self, name: &'a str, _table: &str, _size: u64) -> Result<Statement<'a>, Error> {
        Ok(Statement::new(
            format!("SELECT NEXTVAL({name}) AS value"),
            Vec::new(),
        ))
    }

    /// None: MariaDB's `SETVAL` takes only a literal, so the raise reads the sequence first
    /// (`CounterSql::raise_on`).
    fn raise_above<'a>(&self, _: &'a str, _: &str, _: i64) -> Option<Statement<'a>> {
        None
    }

    fn increment<'a>(&self, name: &'a str, _table: &str) -> Statement<'a> {
        Statement::new(format!("SELECT increment AS value FROM {name}"), Vec::new())
    }

    fn next_value<'a>(&self, name: &'a str, _table: &str) -> Statement<'a> {
        Statement::new(
            format!("SELECT next_not_cached_value AS value FROM {name}"),
            Vec::new(),
        )
    }
}

/// A row of an InnoDB counter table (MySQL; MariaDB by choice), advanced by
/// `LAST_INSERT_ID(next_val + size)`, which the same connection reads back.
pub(crate) struct MySqlTable;

impl CounterDialect for MySqlTable {
    fn create(&self, name: &str, table: &str, _block: u64) -> Vec<String> {
        vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {table} (\n    name     VARCHAR(255) NOT NULL PRIMARY KEY,\n    next_val BIGINT       NOT NULL\n) ENGINE = InnoDB"
            ),
            format!(
                "{} INTO {table} (name, next_val) VALUES ('{name}', 1)",
                MySql.insert_or_ignore().0
            ),
        ]
    }

    fn take<'a>(&self, name: &'a str, table: &str, size: u64) -> Result<Statement<'a>, Error> {
        Ok(Statement::new(
            format!("UPDATE {table} SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?"),
            vec![Value::BigInt(block_i64(size)?), Value::Text(name)],
        ))
    }

    fn start_from_last_insert_id(&self) -> bool {
        true
    }

    fn raise_above<'a>(&self, name: &'a str, table: &str, floor: i64) -> Option<Statement<'a>> {
        Some(Statement::new(
            format!("UPDATE {table} SET next_val = GREATEST(next_val, ?) WHERE name = ?"),
            vec![Value::BigInt(above(floor)), Value::Text(name)],
        ))
    }
}
