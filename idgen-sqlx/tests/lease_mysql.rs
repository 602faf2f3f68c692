//! Node-ID leases on MariaDB/MySQL (a database of its own per test, from idgen-testkit).

mod lease_common;

use idgen_sqlx::Layout;
use idgen_sqlx::lease::WorkerLease;
use idgen_testkit::TestDb;
use lease_common::Backend;
use sqlx::{MySql, MySqlPool};

struct My;

impl Backend for My {
    type DB = MySql;
    async fn test_db() -> TestDb<MySql> {
        idgen_testkit::mysql()
            .await
            .expect("a MySQL/MariaDB database")
    }
    async fn connect(url: &str) -> MySqlPool {
        MySqlPool::connect(url)
            .await
            .expect("connect to MySQL/MariaDB")
    }
}

lease_tests!(My);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable() {
    let db = lease_common::db_with_table::<My>(My::test_db().await).await;
    let (pool, outage) = lease_common::proxied::<My>(&db).await;
    lease_common::a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable::<My>(
        &db, pool, outage,
    )
    .await;
}

#[tokio::test]
async fn a_missing_table_is_named_with_a_hint() {
    let db = My::test_db().await;
    let err = WorkerLease::acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("`idgen_worker_lease`"), "{text}");
    assert!(text.contains("create_lease_table"), "{text}");
}
