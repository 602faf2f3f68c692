//! Create-if-missing on PostgreSQL that is safe for callers starting at the same moment.
//!
//! `CREATE TABLE IF NOT EXISTS` and `CREATE SEQUENCE IF NOT EXISTS` are not: two sessions can
//! both find the name free, and the later one fails on a catalog index (`duplicate key value
//! violates unique constraint "pg_type_typname_nsp_index"`). So every idgen adapter takes one
//! transaction-scoped advisory lock before its DDL and sends both in one simple-query message,
//! which PostgreSQL runs as one transaction: the lock is held until the DDL is committed, and
//! the next caller's `IF NOT EXISTS` sees the committed table.

use sqlx::{AssertSqlSafe, Executor, PgPool};

/// The advisory lock idgen's create-if-missing statements take on PostgreSQL (idgen-sqlx,
/// idgen-diesel and idgen-seaorm use the same key, `"idgenDDL"` in ASCII), so they wait for
/// each other.
///
/// ```
/// assert!(idgen_sqlx::PG_DDL_LOCK.starts_with("SELECT pg_advisory_xact_lock("));
/// ```
#[doc(hidden)]
pub const PG_DDL_LOCK: &str = "SELECT pg_advisory_xact_lock(7594308556992824396)";

/// Runs `ddl` (idempotent, `IF NOT EXISTS`) under [`PG_DDL_LOCK`]. A creator that does not take
/// the lock (a migration tool running the same statement) can still collide with it: the
/// statement is then run once more, and finds the object there.
pub(crate) async fn create_if_missing(pool: &PgPool, ddl: &str) -> Result<(), sqlx::Error> {
    // A string without arguments goes out as one simple-query message.
    let sql = format!("{PG_DDL_LOCK};\n{ddl}");
    match pool.execute(AssertSqlSafe(sql.clone())).await {
        Err(e) if is_duplicate(&e) => pool.execute(AssertSqlSafe(sql)).await.map(drop),
        outcome => outcome.map(drop),
    }
}

/// unique_violation (a catalog index), duplicate_table, duplicate_object.
fn is_duplicate(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|e| e.code())
        .is_some_and(|code| matches!(code.as_ref(), "23505" | "42P07" | "42710"))
}
