//! Create-if-missing on PostgreSQL that is safe for callers starting at the same moment.
//!
//! `CREATE TABLE IF NOT EXISTS` and `CREATE SEQUENCE IF NOT EXISTS` are not: two sessions can
//! both find the name free, and the later one fails on a catalog index (`duplicate key value
//! violates unique constraint "pg_type_typname_nsp_index"`). So the DDL runs after a
//! transaction-scoped advisory lock, both in one `batch_execute` (one simple-query message,
//! which PostgreSQL runs as one transaction): the lock is held until the DDL is committed, and
//! the next caller's `IF NOT EXISTS` sees the committed object.

use diesel::PgConnection;
use diesel::connection::SimpleConnection;
use diesel::result::{DatabaseErrorKind, Error as QueryError, QueryResult};

/// The same key as idgen-sqlx's (`"idgenDDL"` in ASCII), so diesel and sqlx processes wait for
/// each other.
const PG_DDL_LOCK: &str = "SELECT pg_advisory_xact_lock(7594308556992824396)";

/// Runs `ddl` (idempotent, `IF NOT EXISTS`) under the lock. A creator that does not take the
/// lock (a migration tool running the same statement) can still collide with it: the statement
/// is then run once more, and finds the object there.
pub(crate) fn create_if_missing(conn: &mut PgConnection, ddl: &str) -> QueryResult<()> {
    let sql = format!("{PG_DDL_LOCK};\n{ddl}");
    match conn.batch_execute(&sql) {
        Err(e) if is_duplicate(&e) => conn.batch_execute(&sql),
        outcome => outcome,
    }
}

/// A unique violation on a catalog index, or "relation … already exists".
fn is_duplicate(err: &QueryError) -> bool {
    match err {
        QueryError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => true,
        QueryError::DatabaseError(_, info) => info.message().contains("already exists"),
        _ => false,
    }
}
