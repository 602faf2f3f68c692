//! PostgreSQL's SQL: for leases `TIMESTAMPTZ` times, `now()`, intervals, `FOR UPDATE SKIP LOCKED`
//! in the claim, `ON CONFLICT DO NOTHING`, `generate_series` for new rows, and the advisory
//! lock before DDL; hi-lo counters in sequences ([`PgSequence`]).

use std::ops::Range;

use idgen_engine::Error;

use super::{CounterDialect, CounterKind, DialectSql, LEASE_COLUMNS, LeaseColumns, node_i64};
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

    fn refuses_counter(&self, kind: CounterKind) -> Option<&'static str> {
        (kind == CounterKind::Table).then_some("on PostgreSQL a counter is a sequence")
    }

    fn sequence_counter(&self) -> &'static dyn CounterDialect {
        &PgSequence
    }

    fn table_counter(&self) -> &'static dyn CounterDialect {
        &PgSequence
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

/// A PostgreSQL sequence whose `INCREMENT BY` is the block size.
pub(crate) struct PgSequence;

impl CounterDialect for PgSequence {
    fn create(&self, name: &str, _table: &str, block: u64) -> Vec<String> {
        vec![format!(
            "CREATE SEQUENCE IF NOT EXISTS {name} AS BIGINT INCREMENT BY {block} MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE"
        )]
    }

    fn take<'a>(&self, name: &'a str, _table: &str, _size: u64) -> Result<Statement<'a>, Error> {
        Ok(Statement::new(
            format!("SELECT nextval('{name}') AS value"),
            Vec::new(),
        ))
    }

    fn take_many(&self, name: &str, count: i64) -> Option<Statement<'static>> {
        Some(Statement::new(
            format!(
                "SELECT string_agg(nextval('{name}')::text, ',') AS value FROM generate_series(1, $1)"
            ),
            vec![Value::BigInt(count)],
        ))
    }

    /// One `DO` block, whose `ALTER SEQUENCE` (to the increment it has) takes the lock that
    /// `nextval` and `setval` wait for, so the value it reads cannot change before its `setval`
    /// to the first value above `floor` on the sequence's grid.
    fn raise_above<'a>(&self, name: &'a str, _table: &str, floor: i64) -> Option<Statement<'a>> {
        Some(Statement::new(
            format!(
                "DO $idgen$\nDECLARE inc bigint; nxt bigint;\nBEGIN\n  \
                 SELECT seqincrement INTO inc FROM pg_catalog.pg_sequence WHERE seqrelid = '{name}'::regclass;\n  \
                 EXECUTE format('ALTER SEQUENCE {name} INCREMENT BY %s', inc);\n  \
                 SELECT CASE WHEN is_called THEN last_value + inc ELSE last_value END INTO nxt FROM {name};\n  \
                 IF nxt <= {floor} THEN\n    \
                 PERFORM setval('{name}', nxt + inc * (({floor} - nxt) / inc + 1), false);\n  \
                 END IF;\nEND\n$idgen$"
            ),
            Vec::new(),
        ))
    }

    fn increment<'a>(&self, name: &'a str, _table: &str) -> Statement<'a> {
        Statement::new(
            format!(
                "SELECT seqincrement AS value FROM pg_catalog.pg_sequence WHERE seqrelid = '{name}'::regclass"
            ),
            Vec::new(),
        )
    }

    /// `last_value` plus the increment once the sequence has been called.
    fn next_value<'a>(&self, name: &'a str, _table: &str) -> Statement<'a> {
        Statement::new(
            format!(
                "SELECT CASE WHEN is_called THEN last_value + (SELECT seqincrement \
                 FROM pg_catalog.pg_sequence WHERE seqrelid = '{name}'::regclass) \
                 ELSE last_value END AS value FROM {name}"
            ),
            Vec::new(),
        )
    }
}
