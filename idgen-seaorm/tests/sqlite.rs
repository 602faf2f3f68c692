//! idgen-seaorm on SQLite (a temporary file from idgen-testkit).

mod common;

use sea_orm::{Database, DatabaseConnection};

async fn connect() -> (idgen_testkit::TestDb<sqlx::Sqlite>, DatabaseConnection) {
    let db = idgen_testkit::sqlite().await.expect("an SQLite database");
    let conn = Database::connect(db.url()).await.expect("sea-orm connects");
    (db, conn)
}

scenarios!(connect);
#[cfg(feature = "hilo")]
hilo_scenarios!(connect);
