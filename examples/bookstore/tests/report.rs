//! The report end to end on SQLite in a temporary directory: every key distinct across the
//! shards, orders routed by customer, the newest orders in ID order.

mod common;

use std::collections::HashSet;
use std::process::Command;

use bookstore::db::SHARDS;
use bookstore::shards::shard_of;
use bookstore::shutdown::Shutdown;
use bookstore::workload::{Workload, run_tasks};
use indicatif::ProgressBar;

#[tokio::test(flavor = "multi_thread")]
async fn four_instances_four_shards_no_duplicates() {
    let (_dir, cluster, shards) = common::sqlite_cluster().await;
    let work = Workload {
        instances: 4,
        orders: 400,
        customers: 100,
    };
    let run = run_tasks(
        &cluster,
        &shards,
        &work,
        &ProgressBar::hidden(),
        &Shutdown::new(),
    )
    .await
    .unwrap();
    let report = bookstore::report::build(&shards, &cluster.location, Some(run))
        .await
        .unwrap();

    let nodes: HashSet<u64> = report
        .run
        .as_ref()
        .unwrap()
        .instances
        .iter()
        .map(|i| i.node)
        .collect();
    assert_eq!(nodes.len(), 4, "each instance leased its own node ID");
    let shards = &report.stored.per_shard;
    assert_eq!(shards.len(), SHARDS);
    assert_eq!(report.stored.orders, 400);
    assert_eq!(
        report.this_run.as_ref(),
        Some(&report.stored),
        "a first run"
    );
    assert!(shards.iter().all(|s| s.orders > 0), "{shards:?}");
    let lines: u64 = shards.iter().map(|s| s.lines).sum();
    assert!((400..=1600).contains(&lines));

    assert_eq!(
        (report.order_ids.rows, report.order_ids.distinct),
        (400, 400)
    );
    assert_eq!(
        (report.public_ids.rows, report.public_ids.distinct),
        (400, 400)
    );
    assert_eq!(
        (report.line_ids.rows, report.line_ids.distinct),
        (lines, lines)
    );
    assert_eq!(report.duplicates(), 0);
    let largest = shards.iter().map(|s| s.orders).max().unwrap();
    assert_eq!(report.identity_collisions, 400 - largest);

    assert_eq!(report.newest.len(), 10);
    for pair in report.newest.windows(2) {
        assert!(pair[0].order.id > pair[1].order.id, "newest first, by ID");
    }
    for n in &report.newest {
        assert_eq!(n.shard, shard_of(n.order.customer_id));
        assert!(nodes.contains(&n.node));
    }
    let decoded = report.decoded.as_ref().unwrap();
    assert_eq!(decoded.id, report.newest[0].order.id);
    assert!(nodes.contains(&decoded.node));
    // The example is the API's view: the newest order's public ID, no internal key.
    let json = serde_json::to_value(report.example.as_ref().unwrap()).unwrap();
    assert_eq!(
        json["public_id"],
        report.newest[0].order.public_id.to_string()
    );
    assert!(json.get("id").is_none(), "{json}");
    assert!(
        !json
            .to_string()
            .contains(&report.newest[0].order.id.to_string())
    );
    // Every instance released its node ID.
    assert_eq!(cluster.release_leases().await, Vec::<String>::new());
    cluster.close().await;
}

fn run_binary(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    common::succeeded(
        Command::new(env!("CARGO_BIN_EXE_bookstore"))
            .arg("--data-dir")
            .arg(dir)
            .args(extra)
            .env_remove("DATABASE_URL")
            .output()
            .unwrap(),
    )
}

#[test]
fn the_binary_prints_the_report_and_a_second_run_adds_to_the_same_shards() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let text = String::from_utf8(run_binary(&data, &["--orders", "300"]).stdout).unwrap();
    for expected in [
        "4 app instances (tasks) created 300 orders",
        "This run's orders per shard",
        "Duplicate IDs across all shards, over all 300 stored orders: 0",
        "Newest 10 orders of all shards, merged by ID",
        "One ID decoded (Twitter layout)",
        "The newest order as the API shows it",
        "\"public_id\": \"ord_",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
    for file in ["control.sqlite", "shard-0.sqlite", "shard-3.sqlite"] {
        assert!(data.join(file).exists(), "{file}");
    }

    let json = run_binary(&data, &["--orders", "200", "--instances", "2", "--json"]).stdout;
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let sum = |counts: &serde_json::Value, key: &str| -> u64 {
        counts["per_shard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[key].as_u64().unwrap())
            .sum()
    };
    // This run's rows are this run's only; the stored ones include the first run's.
    assert_eq!(report["this_run"]["orders"], 200);
    assert_eq!(sum(&report["this_run"], "orders"), 200);
    assert_eq!(
        report["stored"]["orders"], 500,
        "both runs' orders are in the shards"
    );
    assert_eq!(sum(&report["stored"], "orders"), 500);
    let this_run_lines = sum(&report["this_run"], "lines");
    assert!((200..=800).contains(&this_run_lines), "{this_run_lines}");
    assert!(report["stored"]["lines"].as_u64().unwrap() > this_run_lines);
    // The elapsed time is a number of seconds.
    let elapsed = report["run"]["elapsed_secs"].as_f64().unwrap();
    assert!(elapsed > 0.0 && elapsed < 600.0, "{elapsed}");
    assert_eq!(report["order_ids"]["distinct"], 500);
    assert_eq!(report["line_ids"]["rows"], report["line_ids"]["distinct"]);
    assert_eq!(report["public_ids"]["distinct"], 500);
    assert!(report["newest"][0]["order"]["id"].is_string());
}

#[test]
fn four_processes_lease_four_node_ids_and_share_one_line_counter() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--processes",
        "--instances",
        "4",
        "--orders",
        "400",
        "--json",
    ];
    let report: serde_json::Value =
        serde_json::from_slice(&run_binary(dir.path(), &args).stdout).unwrap();
    let run = &report["run"];
    assert_eq!(run["processes"], true);
    let nodes: HashSet<u64> = run["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["node"].as_u64().unwrap())
        .collect();
    assert_eq!(
        nodes.len(),
        4,
        "each process leased its own node ID: {nodes:?}"
    );
    assert_eq!(report["this_run"]["orders"], 400);
    assert_eq!(report["stored"]["orders"], 400);
    assert_eq!(report["order_ids"]["distinct"], 400);
    assert_eq!(report["public_ids"]["distinct"], 400);
    assert_eq!(report["line_ids"]["rows"], report["line_ids"]["distinct"]);
}

#[test]
fn database_url_from_the_environment_is_announced_with_its_password_hidden() {
    let dir = tempfile::tempdir().unwrap();
    // An unsupported scheme fails at once, after the announcement.
    let out = Command::new(env!("CARGO_BIN_EXE_bookstore"))
        .env("DATABASE_URL", "nosuchdb://app:s3cret@db.example/shop")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "bookstore: using DATABASE_URL from the environment: nosuchdb://app:***@db.example/shop"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
    // An explicit --data-dir wins, and says so.
    let out = Command::new(env!("CARGO_BIN_EXE_bookstore"))
        .env("DATABASE_URL", "nosuchdb://app:s3cret@db.example/shop")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--orders", "8"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("ignoring DATABASE_URL from the environment (nosuchdb://app:***@db.example/shop): --data-dir was given"),
        "{stderr}"
    );
    // Given as an option, nothing is announced.
    let out = Command::new(env!("CARGO_BIN_EXE_bookstore"))
        .env_remove("DATABASE_URL")
        .args(["--database-url", "nosuchdb://x"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("DATABASE_URL"), "{stderr}");
}
