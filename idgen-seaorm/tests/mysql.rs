//! idgen-seaorm on a real MySQL/MariaDB server (through idgen-testkit).

mod common;

use sea_orm::{Database, DatabaseConnection};

async fn connect() -> (idgen_testkit::TestDb<sqlx::MySql>, DatabaseConnection) {
    let db = idgen_testkit::mysql()
        .await
        .expect("a MySQL/MariaDB database");
    let conn = Database::connect(db.url()).await.expect("sea-orm connects");
    (db, conn)
}

scenarios!(connect);
#[cfg(feature = "hilo")]
hilo_scenarios!(connect);
