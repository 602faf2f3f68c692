//! How a step's SQL runs as one unit that records itself: the progress table, the record of
//! a finished step, and a PostgreSQL transaction whose locks are tried for a short time only.

use idgen_engine::SqlName;
use idgen_sql::{Dialect, QuotedName};

use crate::limits::LOCK_TRY_MS;

/// `CREATE TABLE IF NOT EXISTS` for the progress table.
pub(crate) fn progress_table_sql(dialect: Dialect, progress: &SqlName) -> String {
    let t = progress.quoted(dialect);
    match dialect {
        Dialect::MySql => format!(
            "CREATE TABLE IF NOT EXISTS {t} (\n    table_name  VARCHAR(255) NOT NULL,\n    step        VARCHAR(64)  NOT NULL,\n    \
             finished_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n    PRIMARY KEY (table_name, step)\n) ENGINE = InnoDB"
        ),
        _ => format!(
            "{};\nCREATE TABLE IF NOT EXISTS {t} (\n    table_name  VARCHAR(255) NOT NULL,\n    step        VARCHAR(64)  NOT NULL,\n    \
             finished_at TIMESTAMPTZ  NOT NULL DEFAULT now(),\n    PRIMARY KEY (table_name, step)\n)",
            idgen_sql::PG_DDL_LOCK
        ),
    }
}

/// The statement that records `step` of `table` as finished (idempotent).
pub(crate) fn record_sql(
    dialect: Dialect,
    progress: &SqlName,
    table: &SqlName,
    step: &str,
) -> String {
    let t = progress.quoted(dialect);
    let (table, values) = (table.as_str(), "(table_name, step)");
    match dialect {
        Dialect::MySql => format!("INSERT IGNORE INTO {t} {values} VALUES ('{table}', '{step}')"),
        _ => {
            format!("INSERT INTO {t} {values} VALUES ('{table}', '{step}') ON CONFLICT DO NOTHING")
        }
    }
}

/// One PostgreSQL transaction: a lock time-out, `statements`, the progress record.
pub(crate) fn pg_transaction(statements: &[String], record: String) -> Vec<String> {
    let mut statements = statements.to_vec();
    statements.push(record);
    pg_locked(&statements)
}

/// One PostgreSQL transaction: a lock time-out, then `statements`.
pub(crate) fn pg_locked(statements: &[String]) -> Vec<String> {
    let mut sql = vec![
        "BEGIN".to_owned(),
        format!("SET LOCAL lock_timeout = '{LOCK_TRY_MS}ms'"),
    ];
    sql.extend(statements.iter().cloned());
    sql.push("COMMIT".to_owned());
    vec![sql.join(";\n")]
}
