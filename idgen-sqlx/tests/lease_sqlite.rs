//! Node-ID leases on SQLite (a temporary database file per test, from idgen-testkit).

mod lease_common;

use std::str::FromStr;
use std::time::Duration;

use idgen_sqlx::Layout;
use idgen_sqlx::lease::WorkerLease;
use idgen_testkit::TestDb;
use lease_common::{Backend, Outage};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Sqlite, SqlitePool};

struct Lite;

impl Backend for Lite {
    type DB = Sqlite;
    async fn test_db() -> TestDb<Sqlite> {
        idgen_testkit::sqlite().await.expect("an SQLite database")
    }
    async fn connect(url: &str) -> SqlitePool {
        let options = SqliteConnectOptions::from_str(url)
            .unwrap()
            .busy_timeout(Duration::from_secs(30));
        SqlitePoolOptions::new()
            .connect_with(options)
            .await
            .expect("open the SQLite file")
    }
}

lease_tests!(Lite);

/// SQLite has no connection to cut: another connection takes the write lock instead, so the
/// renewals cannot write (they wait and time out), as a database that stopped answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable() {
    let db = lease_common::db_with_table::<Lite>(Lite::test_db().await).await;
    let outage = Outage::Lock {
        url: db.url().to_owned(),
        holder: None,
    };
    let pool = db.pool().clone();
    lease_common::a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable::<
        Lite,
    >(&db, pool, outage)
    .await;
}

#[tokio::test]
async fn a_missing_table_is_named_with_a_hint() {
    let db = Lite::test_db().await;
    let err = WorkerLease::acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"idgen_worker_lease\""), "{text}");
    assert!(text.contains("create_lease_table"), "{text}");
}
