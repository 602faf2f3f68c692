//! idgen-seaorm on SQLite (a temporary file from idgen-testkit).

mod common;

use sea_orm::DatabaseConnection;

async fn connect() -> (idgen_testkit::TestDb<sqlx::Sqlite>, DatabaseConnection) {
    common::connect_to(idgen_testkit::sqlite()).await
}

scenarios!(connect);
#[cfg(feature = "hilo")]
hilo_scenarios!(connect);
