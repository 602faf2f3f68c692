//! A process that returns from `main` while a lease statement still runs on its thread (the
//! caller stopped waiting for it) waits for that statement before the C libraries' exit-time
//! clean-up runs (at most 2 s), and exits cleanly. On SQLite: the parent holds the database's
//! write lock so the child's claim is still running when the child returns from `main`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool};
use diesel::{Connection, SqliteConnection, connection::SimpleConnection};
use idgen_diesel::Layout;
use idgen_diesel::lease::{DieselLeaseStore, WorkerLease, block_on};

const CHILD: &str = "IDGEN_EXIT_WAIT_CHILD";
const TEST: &str = "an_exiting_process_waits_for_its_running_lease_statement";

fn store(path: &str) -> DieselLeaseStore<SqliteConnection> {
    DieselLeaseStore::new(
        Pool::builder()
            .max_size(4)
            .build_unchecked(ConnectionManager::new(path)),
    )
}

#[test]
fn an_exiting_process_waits_for_its_running_lease_statement() {
    if let Ok(path) = std::env::var(CHILD) {
        return child(&path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("leases.sqlite")
        .to_str()
        .unwrap()
        .to_owned();
    block_on(store(&path).create_table()).unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // libtest prints "test <name> ... " before the test's own first line.
    let mut expect = |word: &str| loop {
        let line = lines.next().expect("the child's output").unwrap();
        if line.ends_with(word) {
            break;
        }
    };
    expect("READY");
    let mut lock = SqliteConnection::establish(&path).unwrap();
    lock.batch_execute("BEGIN EXCLUSIVE").unwrap();
    writeln!(to_child, "LOCKED").unwrap();
    expect("RETURNING");
    // The child has returned from its test (and its harness from `main`) with its claim still
    // waiting for our lock: the process must still be there.
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the child exited while its lease statement was still running"
    );
    lock.batch_execute("COMMIT").unwrap();
    let committed = Instant::now();
    let status = child.wait().unwrap();
    assert!(status.success(), "the child exited with {status}");
    assert!(committed.elapsed() < Duration::from_secs(2));
    // The statement ran to its end. The first statement of a claim records the namespace's
    // layout (a write, so it waited for our lock): that record is in the table.
    let namespace = idgen_sql::LeaseSql::layout_namespace("exit");
    let rows = block_on(store(&path).rows(&namespace)).unwrap();
    assert_eq!(
        rows.first().and_then(|r| r.holder.clone()),
        Some(idgen_diesel::lease::layout_key(&Layout::TWITTER)),
        "{rows:?}"
    );
}

fn child(path: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = store(path);
        // One lease statement first: a connection exists, the exit wait is registered.
        let warm = WorkerLease::options()
            .skip_takeover_wait_for_tests_and_development(true) // a fresh database
            .namespace("warm")
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap();
        warm.handle().release().await.unwrap();
        println!("READY");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "LOCKED");
        // The table exists: no look for it first, so the first statement is a write.
        let claim = WorkerLease::options()
            .skip_takeover_wait_for_tests_and_development(true) // a fresh database
            .create_if_missing(false)
            .namespace("exit")
            .acquire(store, &Layout::TWITTER);
        let gave_up = tokio::time::timeout(Duration::from_millis(200), claim).await;
        assert!(gave_up.is_err(), "the claim went through the parent's lock");
        println!("RETURNING");
    });
}

/// Two lease statements of one store at once (a dropped lease's release task and the release its
/// `Drop` starts as the runtime shuts down) take turns on one connection: the second does not
/// make r2d2 open another connection on its own worker thread, which nobody waits for — a
/// process exiting under such a connect (OpenSSL's exit-time clean-up under libpq) died with
/// SIGSEGV.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_statements_of_one_store_take_turns_on_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("turns.sqlite").to_str().unwrap().to_owned();
    let store: DieselLeaseStore<SqliteConnection> = DieselLeaseStore::new(
        Pool::builder()
            .max_size(4)
            .min_idle(Some(0))
            .build_unchecked(ConnectionManager::new(&path)),
    );
    store.create_table().await.unwrap();
    assert_eq!(store.pool().state().connections, 1);

    // The first claim holds its connection, waiting for our write lock.
    let mut lock = SqliteConnection::establish(&path).unwrap();
    lock.batch_execute("BEGIN EXCLUSIVE").unwrap();
    let claim = |namespace: &'static str| {
        let store = store.clone();
        tokio::spawn(async move {
            WorkerLease::options()
                .skip_takeover_wait_for_tests_and_development(true) // a fresh database
                .namespace(namespace)
                .acquire(store, &Layout::TWITTER)
                .await
        })
    };
    let first = claim("first");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The second asks while the first still runs.
    let second = claim("second");
    tokio::time::sleep(Duration::from_millis(300)).await;
    lock.batch_execute("COMMIT").unwrap();
    let first = first.await.unwrap().expect("the first claim");
    let second = second.await.unwrap().expect("the second claim");
    // A connect r2d2 started in the background would have landed by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        store.pool().state().connections,
        1,
        "the second statement made the pool open a connection on r2d2's worker thread"
    );
    first.handle().release().await.unwrap();
    second.handle().release().await.unwrap();
}
