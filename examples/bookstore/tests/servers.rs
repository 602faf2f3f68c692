//! The report on PostgreSQL and MariaDB, from a URL: the shard and control databases are
//! created, filled and checked the same way as on SQLite.

mod common;

use std::process::Command;

use bookstore::db::{Pool, database_names};

fn run_report(url: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_bookstore"))
        .args(["--database-url", url, "--orders", "300", "--json"])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&common::succeeded(out).stdout).unwrap()
}

/// Checks a report after `runs` runs of 300 orders each.
fn check(report: &serde_json::Value, runs: u64) {
    let this_run = report["this_run"]["per_shard"].as_array().unwrap();
    assert_eq!(this_run.len(), 4);
    assert!(this_run.iter().all(|s| s["orders"].as_u64().unwrap() > 0));
    let this_run_orders: u64 = this_run.iter().map(|s| s["orders"].as_u64().unwrap()).sum();
    assert_eq!(this_run_orders, 300, "this run's orders only");
    let shards = report["stored"]["per_shard"].as_array().unwrap();
    let orders: u64 = shards.iter().map(|s| s["orders"].as_u64().unwrap()).sum();
    let lines: u64 = shards.iter().map(|s| s["lines"].as_u64().unwrap()).sum();
    assert_eq!(orders, 300 * runs);
    assert_eq!(report["order_ids"]["distinct"], 300 * runs);
    assert_eq!(report["public_ids"]["distinct"], 300 * runs);
    assert_eq!(report["line_ids"]["rows"], lines);
    assert_eq!(report["line_ids"]["distinct"], lines);
    assert_eq!(report["newest"].as_array().unwrap().len(), 10);
}

/// A run on the server at `url`, then a run of 4 OS processes, each leasing its node ID from
/// the same control database; then the bookstore's databases (named after `base`) are dropped
/// on `admin` with the statement `drop` writes for each name.
async fn two_runs_then_drop(url: &str, base: &str, admin: Pool, drop: fn(&str) -> String) {
    check(&run_report(url, &[]), 1);
    let report = run_report(url, &["--processes"]);
    check(&report, 2);
    let nodes = report["run"]["instances"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    for name in database_names(base).unwrap() {
        admin.execute(&drop(&name)).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_from_a_url() {
    let db = idgen_testkit::postgres().await.unwrap();
    let admin = Pool::Postgres(db.pool().clone());
    two_runs_then_drop(db.url(), db.name(), admin, |name| {
        format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")
    })
    .await;
    db.cleanup().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_from_a_url() {
    let db = idgen_testkit::mysql().await.unwrap();
    let admin = Pool::MySql(db.pool().clone());
    two_runs_then_drop(db.url(), db.name(), admin, |name| {
        format!("DROP DATABASE IF EXISTS `{name}`")
    })
    .await;
    db.cleanup().await.unwrap();
}
