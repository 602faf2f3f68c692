//! SQLite writers wait for each other: a connection without a busy timeout gets one.

use diesel::sql_types::Integer;
use diesel::{QueryResult, QueryableByName, RunQueryDsl, SqliteConnection, sql_query};

/// How long a statement waits for another writer when the connection has no busy timeout of its
/// own (diesel's default is none; sqlx's is 5 s).
const BUSY_TIMEOUT_MS: i32 = 5_000;

#[derive(QueryableByName)]
struct BusyTimeout {
    #[diesel(sql_type = Integer)]
    timeout: i32,
}

/// Sets a 5 s busy timeout on `conn` unless it has one.
pub(crate) fn ensure_busy_timeout(conn: &mut SqliteConnection) -> QueryResult<()> {
    let current: BusyTimeout = sql_query("PRAGMA busy_timeout").get_result(conn)?;
    if current.timeout == 0 {
        sql_query(format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")).execute(conn)?;
    }
    Ok(())
}
