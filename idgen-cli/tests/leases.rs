//! `idgen leases list|free` over a real lease table (SQLite in a temporary file; the same
//! procedure runs on PostgreSQL in the operator view's test).

mod common;

use std::time::Duration;

use idgen_core::Layout;
use idgen_sqlx::lease::{WorkerLease, create_lease_table};
use serde_json::Value;

async fn lease(url: &str, holder: &str) -> WorkerLease {
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    WorkerLease::options()
        .holder(holder)
        .ttl(Duration::from_secs(60))
        .renew_every(Duration::from_secs(30))
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(pool, &Layout::TWITTER)
        .await
        .unwrap()
}

fn leases(url: &str) -> Value {
    common::json(&["leases", "list", "--database-url", url])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_lease_is_freed_only_with_force_and_an_expired_one_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}?mode=rwc", dir.path().join("leases.db").display());
    create_lease_table(&sqlx::SqlitePool::connect(&url).await.unwrap())
        .await
        .unwrap();
    let a = lease(&url, "orders-a").await;
    let listed = leases(&url);
    assert_eq!(listed["leases"][0]["holder"], a.holder());
    assert_eq!(listed["leases"][0]["node"], a.node());
    assert_eq!(listed["leases"][0]["live"], true);
    let text = common::stdout(&["leases", "list", "--database-url", &url]);
    assert!(text.contains(a.holder()), "{text}");

    // Live: refused, saying what forcing risks.
    let node = a.node().to_string();
    let out = common::idgen(&["leases", "free", &node, "--database-url", &url])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("node {node} is leased by {}", a.holder()))
            && err.contains(
                "two processes issue with the same node ID until the old holder's fence deadline"
            )
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(leases(&url)["leases"][0]["live"], true);

    // Forced: the lease ends now, the holder's name stays (the next claim waits a TTL).
    let forced = common::stdout(&["leases", "free", &node, "--force", "--database-url", &url]);
    assert!(
        forced.starts_with(&format!("node {node} freed by force")),
        "{forced}"
    );
    assert_eq!(leases(&url)["leases"][0]["live"], false);

    // Expired: freed without force; the row is no longer held.
    let freed = common::stdout(&["leases", "free", &node, "--database-url", &url]);
    assert!(freed.contains("had expired"), "{freed}");
    assert_eq!(leases(&url)["leases"], Value::Array(vec![]));

    // The next claim takes the node ID, above the last timestamp the old holder stored.
    let b = lease(&url, "orders-b").await;
    assert_eq!(b.node(), a.node());
    assert!(b.previous_timestamp_ms().is_some());

    // Only the holder asked for is freed.
    let out = common::idgen(&[
        "leases",
        "free",
        &node,
        "--force",
        "--holder",
        a.holder(),
        "--database-url",
        &url,
    ])
    .assert()
    .code(1)
    .get_output()
    .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("is held by {} now", b.holder())),
        "{err}"
    );
    drop((a, b));
}

#[test]
fn without_a_database_it_says_how_to_give_one() {
    common::idgen(&["leases", "list"])
        .env_remove("IDGEN_DATABASE_URL")
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "give --database-url URL or set IDGEN_DATABASE_URL",
        ));
}
