//! idgen-seaorm on a real MySQL/MariaDB server (through idgen-testkit).

mod common;

use sea_orm::DatabaseConnection;

async fn connect() -> (idgen_testkit::TestDb<sqlx::MySql>, DatabaseConnection) {
    common::connect_to(idgen_testkit::mysql()).await
}

scenarios!(connect);
#[cfg(feature = "hilo")]
hilo_scenarios!(connect);
