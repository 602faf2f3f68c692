//! Node-ID leases over diesel on SQLite (a file of its own per test, from idgen-testkit).

mod lease_common;

use idgen_testkit::TestDb;
use lease_common::Backend;

struct Lite;

impl Backend for Lite {
    type Conn = diesel::SqliteConnection;
    type DB = sqlx::Sqlite;
    async fn test_db() -> TestDb<sqlx::Sqlite> {
        idgen_testkit::sqlite().await.expect("a SQLite database")
    }
    fn diesel_url(db: &TestDb<sqlx::Sqlite>) -> String {
        db.name().to_owned()
    }
}

lease_tests!(Lite);
