//! The bookstore gives its node IDs back on every way out (issue 12, items 5 and 6): Ctrl-C
//! and SIGTERM during a run (tasks and processes) and while serving, a lease that fails
//! half-way; and it refuses more instances than node IDs before leasing anything. A worker
//! process leases, then waits for its parent's `go` before its first order.
//!
//! Each test runs the real binary on SQLite files in a temporary directory and reads the lease
//! rows of the control database (`SqliteLeaseStore::rows`).

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use idgen_sqlx::Layout;
use idgen_sqlx::lease::{LeaseRow, SqliteLeaseStore, WorkerLease};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The bookstore's lease namespace.
const NAMESPACE: &str = "orders";

fn bookstore(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bookstore"));
    cmd.arg("--data-dir")
        .arg(dir)
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Starts the bookstore with `args` on a fresh data directory.
fn start(args: &[&str]) -> (tempfile::TempDir, Child) {
    let dir = tempfile::tempdir().unwrap();
    let child = bookstore(dir.path()).args(args).spawn().unwrap();
    (dir, child)
}

/// Runs the bookstore with `args` to its end.
async fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    bookstore(dir).args(args).output().await.unwrap()
}

async fn store(dir: &Path) -> SqliteLeaseStore {
    let options = SqliteConnectOptions::new()
        .filename(dir.join("control.sqlite"))
        .busy_timeout(Duration::from_secs(30));
    SqliteLeaseStore::new(SqlitePool::connect_with(options).await.unwrap())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The rows of the namespace whose lease has not ended (a missing table holds none).
async fn held(dir: &Path) -> Vec<LeaseRow> {
    if !dir.join("control.sqlite").exists() {
        return Vec::new();
    }
    let now = now_ms();
    match store(dir).await.rows(NAMESPACE).await {
        Ok(rows) => rows.into_iter().filter(|r| r.expires_at_ms > now).collect(),
        Err(_) => Vec::new(),
    }
}

/// Waits until `n` leases are held (the run is under way).
async fn wait_for_held(dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if held(dir).await.len() >= n {
            return;
        }
        assert!(Instant::now() < deadline, "{n} leases were never held");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn signal(child: &Child, name: &str) {
    let pid = child.id().expect("the child runs").to_string();
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

async fn finish(child: Child) -> (Option<i32>, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the bookstore stopped")
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_while_serving_releases_the_node_id() {
    let (dir, mut child) = start(&["--orders", "20", "--serve", "--port", "0"]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = stdout.next_line().await.unwrap() {
        if line.contains("Serving the API on") {
            break;
        }
    }
    // The run's 4 leases were released after the report; the API's own lease is held.
    assert_eq!(held(dir.path()).await.len(), 1);
    signal(&child, "TERM");
    let (code, stderr) = finish(child).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("SIGTERM: stopping the API"), "{stderr}");
    assert_eq!(held(dir.path()).await, [], "{stderr}");
    // Nobody holds a node ID any more, and each node ID used (the run's 4, then the API's) has
    // its last timestamp recorded, so the next holder starts at once.
    let rows = store(dir.path()).await.rows(NAMESPACE).await.unwrap();
    assert!(rows.iter().all(|r| r.holder.is_none()), "{rows:?}");
    assert!(
        rows.iter()
            .filter(|r| r.last_timestamp_ms.is_some())
            .count()
            >= 4,
        "{rows:?}"
    );
}

/// Runs the bookstore with `args` until `leases` node IDs are held, then sends it `signal`:
/// it must stop with exit code 1 and `message`, holding no node ID.
async fn signal_during_a_run(args: &[&str], leases: usize, signal_name: &str, message: &str) {
    let (dir, child) = start(args);
    wait_for_held(dir.path(), leases).await;
    signal(&child, signal_name);
    let (code, stderr) = finish(child).await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
    assert_eq!(held(dir.path()).await, [], "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_a_run_of_tasks_releases_every_node_id() {
    signal_during_a_run(
        &["--orders", "4000000"],
        4,
        "INT",
        "stopped by Ctrl-C (SIGINT) before the run finished",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_run_of_processes_releases_every_node_id() {
    // Only the parent gets the signal; it stops its workers by closing their stdin.
    signal_during_a_run(
        &["--processes", "--instances", "3", "--orders", "3000000"],
        3,
        "TERM",
        "stopped by SIGTERM before the run finished",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_parent_dies_releases_its_node_id() {
    let (dir, mut parent) = start(&["--processes", "--instances", "2", "--orders", "3000000"]);
    wait_for_held(dir.path(), 2).await;
    // SIGKILL: the parent cannot do anything; its workers see their stdin end (and their
    // progress lines hit a broken pipe). They must release well before the lease's 30 s TTL
    // would free the node IDs anyway.
    parent.kill().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !held(dir.path()).await.is_empty() {
        assert!(
            Instant::now() < deadline,
            "orphaned workers kept their node IDs: {:?}",
            held(dir.path()).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn more_instances_than_node_ids_is_a_usage_error_before_any_lease() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["--instances", "100000"][..],
            "100000 instances need 100000 node IDs, but the layout has 1024",
        ),
        (&["--instances", "1025", "--processes"], "run at most 1024"),
        (&["--instances", "0"], "0 instances would create no orders"),
        (&["--customers", "0"], "0 customers: orders need at least 1"),
    ] {
        let out = run(dir.path(), args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    // Nothing was leased, nor even created.
    assert!(!dir.path().join("control.sqlite").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_that_fails_half_way_releases_the_ones_taken() {
    let dir = tempfile::tempdir().unwrap();
    // Create the databases with a short run, then let another holder take all but 2 node IDs.
    common::succeeded(run(dir.path(), &["--orders", "4"]).await);
    let store = store(dir.path()).await;
    let mut others = Vec::new();
    for _ in 0..Layout::TWITTER.max_node() + 1 - 2 {
        let lease = WorkerLease::options()
            .skip_takeover_wait_for_tests_and_development(true) // a fresh database
            .namespace(NAMESPACE)
            .holder("another-app")
            .ttl(Duration::from_secs(600))
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap();
        others.push(lease);
    }
    // 4 instances, 2 free node IDs: the third lease fails.
    let out = run(dir.path(), &["--orders", "100"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no free node ID"), "{stderr}");
    let held = held(dir.path()).await;
    assert_eq!(held.len(), 1022, "only the other holder's leases are held");
    assert!(
        held.iter().all(|r| r
            .holder
            .as_deref()
            .is_some_and(|h| h.starts_with("another-app"))),
        "{held:?}"
    );
    // And a plain run works at once with the 2 free node IDs.
    common::succeeded(run(dir.path(), &["--orders", "10", "--instances", "2"]).await);
    drop(others);
}

/// Runs `bookstore worker` (as `--processes` does) on a data directory made by a short run,
/// waits for its `leased NODE` line and checks that it holds that node ID and says nothing
/// more for a while (no order before `go`), then gives it `go` (and closes its stdin once it
/// is done) or closes its stdin at once. Its output after `leased`, how it ended, and its node.
async fn worker_told(go: bool) -> (tempfile::TempDir, std::process::Output, String, u64) {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    common::succeeded(run(dir.path(), &["--orders", "4", "--instances", "1"]).await);
    let mut worker = bookstore(dir.path())
        .args(["worker", "--orders", "5", "--customers", "10"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(worker.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(60), stdout.next_line())
        .await
        .expect("a line within 60 s")
        .unwrap()
        .expect("a first line");
    let node: u64 = first
        .strip_prefix("leased ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("`leased NODE` first, got {first:?}"));
    let held = held(dir.path()).await;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].node, node);
    // Five orders take a few milliseconds; none may come before `go`.
    let early = tokio::time::timeout(Duration::from_millis(500), stdout.next_line()).await;
    assert!(early.is_err(), "a line before `go`: {early:?}");
    let mut stdin = worker.stdin.take();
    if go {
        let pipe = stdin.as_mut().unwrap();
        pipe.write_all(b"go\n").await.unwrap();
        pipe.flush().await.unwrap();
    } else {
        drop(stdin.take());
    }
    let mut rest = Vec::new();
    while let Some(line) = stdout.next_line().await.unwrap() {
        let done = line.starts_with("done ");
        rest.push(line);
        if done {
            drop(stdin.take());
        }
    }
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), worker.wait_with_output())
        .await
        .expect("the worker stopped")
        .unwrap();
    (dir, out, rest.join("\n"), node)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_leases_and_waits_for_go_before_its_first_order() {
    let (dir, out, lines, node) = worker_told(true).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(lines.matches("progress 1").count(), 5, "{lines}");
    assert!(lines.ends_with(&format!("\ndone {node}")), "{lines}");
    assert_eq!(held(dir.path()).await, [], "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_whose_stdin_ends_before_go_creates_nothing_and_releases() {
    let (dir, out, lines, _) = worker_told(false).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the parent process closed stdin"),
        "{stderr}"
    );
    assert_eq!(lines, "", "no order without `go`");
    assert_eq!(held(dir.path()).await, [], "{stderr}");
}
