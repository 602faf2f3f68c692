//! Hi-lo over diesel on SQLite (a database of its own per test, from idgen-testkit).

mod hilo_common;

use hilo_common::Backend;
use idgen_testkit::TestDb;

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

hilo_tests!(Lite);
