//! What the diesel test files share: opening a test database through diesel, reading an error's
//! whole chain, and (`column_cases!`) the column-type cases every database runs, written once.

#![allow(dead_code, unreachable_pub)]

pub mod column_cases;

use std::future::Future;

use diesel::Connection;
use idgen_diesel::PublicIdPrefix;
use idgen_testkit::TestDb;

/// An error's message followed by its sources' (diesel's MySQL backend wraps a field's
/// deserialization error in one that names only the field).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(err) = source {
        text.push_str(": ");
        text.push_str(&err.to_string());
        source = err.source();
    }
    text
}

/// A fresh test database from `db` (`idgen_testkit::postgres()`, `mysql()` or `sqlite()`), a
/// diesel connection `C` to it, and `ddl` run on that connection.
///
/// diesel opens a server by its URL and SQLite by the file's path (not a `sqlite://` URL).
pub async fn open<DB, C>(
    db: impl Future<Output = Result<TestDb<DB>, idgen_testkit::Error>>,
    ddl: &str,
) -> (TestDb<DB>, C)
where
    DB: sqlx::Database,
    C: Connection,
{
    let db = db.await.expect("a test database");
    let target = if db.url().starts_with("sqlite:") {
        db.name()
    } else {
        db.url()
    };
    let mut conn = C::establish(target).expect("a diesel connection");
    conn.batch_execute(ddl).expect("the test's tables");
    (db, conn)
}

/// Rows of the round-trip test.
pub const ROWS: usize = 10_000;
/// Rows per `INSERT … VALUES (…), (…)` (3 binds a row: far below every backend's limit).
pub const BATCH: usize = 2_500;

/// The entity of the test tables' IDs; its public IDs print as `ord_…`.
#[derive(Debug)]
pub struct OrderTag;

impl PublicIdPrefix for OrderTag {
    const PREFIX: &'static str = "ord";
}
