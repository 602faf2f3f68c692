//! The `adopt_orders` example (examples/adopt_orders.rs) on PostgreSQL and MariaDB: the first run
//! fills the legacy tables and adopts them, the second finds them adopted and changes nothing
//! but its new order.

#[allow(dead_code, unreachable_pub)] // `main` is not called here; `pub` is for the example binary
#[path = "../examples/adopt_orders.rs"]
mod example;

use example::{LEGACY_ORDERS, run};

async fn twice(url: &str) {
    let first = run(url).await.unwrap();
    assert!(first.plan.finished(), "{}", first.plan);
    assert_eq!(
        first.backfilled, LEGACY_ORDERS as u64,
        "every legacy order got a public ID"
    );
    assert!(
        first.placed.id > LEGACY_ORDERS,
        "idgen's keys are above the legacy ones"
    );
    assert_eq!(first.found.id, 1, "the old order is found by its public ID");
    assert!(first.found.public_id.to_string().starts_with("ord_"));

    let second = run(url).await.unwrap();
    assert!(second.plan.finished());
    assert_eq!(second.backfilled, 0, "run again, nothing left to fill");
    assert!(second.placed.id > first.placed.id);
    assert_eq!(
        second.found.public_id, first.found.public_id,
        "public IDs are kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_on_postgres_then_changes_nothing() {
    let db = idgen_testkit::postgres().await.expect("a database");
    twice(db.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_on_mariadb_then_changes_nothing() {
    let db = idgen_testkit::mysql().await.expect("a database");
    twice(db.url()).await;
}

#[tokio::test]
async fn sqlite_is_refused_with_what_to_do() {
    let err = run("sqlite::memory:").await.unwrap_err();
    assert!(err.to_string().contains("PostgreSQL or MariaDB"), "{err}");
}
