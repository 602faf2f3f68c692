//! Node-ID leases on PostgreSQL (a database of its own per test, from idgen-testkit).

mod lease_common;

use idgen_sqlx::lease::{PgLeaseStore, WorkerLease};
use idgen_sqlx::{Error, Layout};
use idgen_testkit::TestDb;
use lease_common::Backend;
use sqlx::{PgPool, Postgres};

struct Pg;

impl Backend for Pg {
    type DB = Postgres;
    async fn test_db() -> TestDb<Postgres> {
        idgen_testkit::postgres()
            .await
            .expect("a PostgreSQL database")
    }
    async fn connect(url: &str) -> PgPool {
        PgPool::connect(url).await.expect("connect to PostgreSQL")
    }
}

lease_tests!(Pg);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable() {
    let db = lease_common::db_with_table::<Pg>(Pg::test_db().await).await;
    let (pool, outage) = lease_common::proxied::<Pg>(&db).await;
    lease_common::a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable::<Pg>(
        &db, pool, outage,
    )
    .await;
}

#[tokio::test]
async fn a_custom_table_in_a_schema_and_a_refused_name() {
    let db = Pg::test_db().await;
    sqlx::query("CREATE SCHEMA ops")
        .execute(db.pool())
        .await
        .unwrap();
    let store = PgLeaseStore::with_table(db.pool().clone(), "ops.leases").unwrap();
    store.create_table().await.unwrap();
    let lease = WorkerLease::options()
        .table("ops.leases")
        .acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap();
    let rows = store.rows("default").await.unwrap();
    assert_eq!(rows.len(), 1024);
    assert!(rows[lease.node() as usize].holder.is_some(), "{rows:?}");

    let err = WorkerLease::options()
        .table("leases; DROP SCHEMA ops")
        .acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::LeaseStore {
                operation: "claim",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("\"leases; DROP SCHEMA ops\""),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_table_is_named_with_a_hint() {
    let db = Pg::test_db().await;
    let err = WorkerLease::acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"idgen_worker_lease\""), "{text}");
    assert!(text.contains("create_lease_table"), "{text}");
}
