//! `idgen leases list|free` over a real lease table on each database (SQLite, PostgreSQL,
//! MySQL/MariaDB through idgen-testkit): the rule of idgen-sql's `procedure::free`.

mod common;

use std::time::Duration;

use idgen_core::Layout;
use idgen_sqlx::SqlxDatabase;
use idgen_sqlx::lease::{WorkerLease, create_lease_table};
use idgen_testkit::TestDb;
use serde_json::Value;
use sqlx::Pool;

/// A lease of `holder` on its own pool (as another process would hold it).
async fn lease<DB: SqlxDatabase>(url: &str, holder: &str) -> WorkerLease {
    let pool = Pool::<DB>::connect(url).await.unwrap();
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

/// `idgen leases free ARGS… --database-url URL`, which must fail; its stderr.
fn refused(url: &str, args: &[&str]) -> String {
    let out = common::idgen(&["leases", "free"])
        .args(args)
        .args(["--database-url", url])
        .assert()
        .code(1)
        .get_output()
        .clone();
    String::from_utf8(out.stderr).unwrap()
}

/// A live lease is freed only with force, an expired one at once, and only the holder asked
/// for.
async fn free_rules<DB: SqlxDatabase>(db: TestDb<DB>) {
    let url = db.url().to_owned();
    create_lease_table(db.pool()).await.unwrap();
    let a = lease::<DB>(&url, "orders-a").await;
    let listed = leases(&url);
    assert_eq!(listed["leases"][0]["holder"], a.holder());
    assert_eq!(listed["leases"][0]["node"], a.node());
    assert_eq!(listed["leases"][0]["live"], true);
    let text = common::stdout(&["leases", "list", "--database-url", &url]);
    assert!(text.contains(a.holder()), "{text}");

    // Live: refused, saying what forcing risks.
    let node = a.node().to_string();
    let err = refused(&url, &[&node]);
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

    // Expired: freed without force; the row is no longer held, and the next claim is a
    // takeover (the free vouches for nothing: the old holder may still run).
    let freed = common::stdout(&["leases", "free", &node, "--database-url", &url]);
    assert!(
        freed.contains("had expired")
            && freed.contains("can no longer renew it; the next claim is a takeover")
            && !freed.contains("at once"),
        "{freed}"
    );
    assert_eq!(leases(&url)["leases"], Value::Array(vec![]));
    assert!(refused(&url, &[&node]).contains("is not held by anyone"));
    assert!(refused(&url, &["5000"]).contains("has no lease row"));

    // The next claim takes the node ID, above the last timestamp the old holder stored.
    let b = lease::<DB>(&url, "orders-b").await;
    assert_eq!(b.node(), a.node());
    assert!(b.previous_timestamp_ms().is_some());

    // Only the holder asked for is freed.
    let err = refused(&url, &[&node, "--force", "--holder", a.holder()]);
    assert!(
        err.contains(&format!("is held by {} now", b.holder())),
        "{err}"
    );
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn free_rules_on_sqlite() {
    free_rules(idgen_testkit::sqlite().await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn free_rules_on_postgres() {
    free_rules(idgen_testkit::postgres().await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn free_rules_on_mysql() {
    free_rules(idgen_testkit::mysql().await.unwrap()).await;
}

/// The database-side generator's lease (100 years) is shown as what it is, the same in text
/// and JSON, not as "expires in 3153599999.7 s".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_generators_lease_is_shown_without_expiry_on_postgres() {
    use idgen_sqlx::db_generator::{self, DbGenerator};
    let db: TestDb<sqlx::Postgres> = idgen_testkit::postgres().await.unwrap();
    let url = db.url().to_owned();
    create_lease_table(db.pool()).await.unwrap();
    let generator =
        DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
    let node = db_generator::install(db.pool(), &generator).await.unwrap();
    let app = lease::<sqlx::Postgres>(&url, "orders-a").await;

    let listed = leases(&url);
    let rows = listed["leases"].as_array().unwrap();
    let row = |n: u64| rows.iter().find(|r| r["node"] == n).unwrap().clone();
    let (db_row, app_row) = (row(node), row(app.node()));
    let label = db_row["database_generator"].as_str().unwrap().to_owned();
    assert!(
        label.starts_with("public.idgen_next_id, install "),
        "{db_row}"
    );
    let says = format!("held by the database generator {label}, no expiry");
    assert_eq!(db_row["expires"], says.as_str());
    assert_eq!(db_row["expires_in_ms"], Value::Null);
    assert_eq!(db_row["expires_at_ms"], Value::Null);
    assert_eq!(db_row["live"], true);
    assert_eq!(app_row["database_generator"], Value::Null);
    assert!(app_row["expires_in_ms"].as_i64().unwrap() > 0, "{app_row}");

    let text = common::stdout(&["leases", "list", "--database-url", &url]);
    assert!(text.contains(&says), "{text}");
    assert!(!text.contains("3153"), "no century in seconds: {text}");
    drop(app);
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
