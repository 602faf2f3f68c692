//! Node-ID leases over a `DatabaseConnection`: the store's SQL semantics, concurrency in one
//! process, and OS processes leasing from one table.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use idgen_seaorm::Layout;
use idgen_seaorm::lease::{
    ClaimRequest, LeaseStore, RenewRequest, SeaOrmLeaseStore, WorkerLease, create_lease_table,
};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};

/// Leases each process holds at once.
pub const LEASES_PER_PROCESS: usize = 8;
/// The environment variables that make the test binary a lease-holding child.
pub const CHILD_URL: &str = "IDGEN_SEAORM_LEASE_CHILD_URL";
/// What a child prints before its node IDs.
const NODES_PREFIX: &str = "IDGEN_CHILD_NODES";

/// The stored `last_timestamp` and whether the row has expired, read with plain SQL.
async fn row(db: &DatabaseConnection, node: i64) -> (Option<String>, Option<i64>) {
    let sql = match db.get_database_backend() {
        DbBackend::Postgres => {
            "SELECT holder, last_timestamp FROM idgen_worker_lease WHERE namespace = 'default' AND node = $1"
        }
        _ => {
            "SELECT holder, last_timestamp FROM idgen_worker_lease WHERE namespace = 'default' AND node = ?"
        }
    };
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [node.into()],
        ))
        .await
        .unwrap()
        .expect("the row exists");
    (
        row.try_get_by_index(0).unwrap(),
        row.try_get_by_index(1).unwrap(),
    )
}

/// Claim, renew, release on the store itself: the SQL semantics of the sqlx stores.
pub async fn store_claims_renews_and_releases(db: &DatabaseConnection) {
    create_lease_table(db).await.unwrap();
    let store = SeaOrmLeaseStore::new(db.clone());
    let ttl = Duration::from_secs(30);
    let claim = |holder| ClaimRequest {
        namespace: "default",
        capacity: 3,
        holder,
        ttl,
    };
    let renewal = |node, holder, last| RenewRequest {
        namespace: "default",
        node,
        holder,
        ttl,
        last_timestamp_ms: last,
    };

    let a = store.claim(claim("a")).await.unwrap().unwrap();
    assert_eq!((a.node, a.last_timestamp_ms), (0, None));
    let b = store.claim(claim("b")).await.unwrap().unwrap();
    assert_eq!(b.node, 1);

    // Renew keeps the larger last timestamp; NULL never replaces a value.
    assert!(store.renew(renewal(0, "a", Some(100))).await.unwrap());
    assert!(store.renew(renewal(0, "a", Some(50))).await.unwrap());
    assert!(store.renew(renewal(0, "a", None)).await.unwrap());
    assert_eq!(row(db, 0).await, (Some("a".into()), Some(100)));
    // Another holder cannot renew it.
    assert!(!store.renew(renewal(0, "b", Some(500))).await.unwrap());
    assert_eq!(row(db, 0).await.1, Some(100));

    // Release stores the exact last timestamp and frees the node at once.
    store.release(renewal(0, "a", Some(70))).await.unwrap();
    assert_eq!(row(db, 0).await.1, Some(70));
    let c = store.claim(claim("c")).await.unwrap().unwrap();
    assert_eq!((c.node, c.last_timestamp_ms), (0, Some(70)));
    // The old holder lost it: renew fails, release changes nothing.
    assert!(!store.renew(renewal(0, "a", Some(80))).await.unwrap());
    store.release(renewal(0, "a", Some(1))).await.unwrap();
    assert_eq!(row(db, 0).await, (Some("c".into()), Some(70)));

    // Node space full.
    assert_eq!(store.claim(claim("d")).await.unwrap().unwrap().node, 2);
    assert_eq!(store.claim(claim("e")).await.unwrap(), None);
}

/// Concurrent acquirers in one process get distinct node IDs; a released one comes back.
pub async fn concurrent_leases_are_distinct(db: &DatabaseConnection) {
    create_lease_table(db).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            WorkerLease::acquire(&db, &Layout::TWITTER).await.unwrap()
        }));
    }
    let mut leases = Vec::new();
    for task in tasks {
        leases.push(task.await.unwrap());
    }
    let mut held: HashSet<u64> = leases.iter().map(|l| l.node()).collect();
    // Distinct. (Not necessarily 0..20: a claim skips rows other claims have locked.)
    assert_eq!(held.len(), 20);

    // A released node ID is free at once: the next claim takes the lowest free one.
    let lowest = leases.iter().min_by_key(|l| l.node()).unwrap().handle();
    lowest.release().await.unwrap();
    held.remove(&lowest.node());
    let lowest_free = (0..).find(|n| !held.contains(n)).unwrap();
    assert_eq!(lowest_free, lowest.node());
    let again = WorkerLease::acquire(db, &Layout::TWITTER).await.unwrap();
    assert_eq!(again.node(), lowest_free);
    held.insert(again.node());

    // With a capacity of 25, the free node IDs below 25 can be leased, then no more.
    let free_below = 25 - held.iter().filter(|&&n| n < 25).count();
    let mut more = Vec::new();
    for _ in 0..free_below {
        let lease = WorkerLease::options()
            .capacity(25)
            .acquire(db, &Layout::TWITTER)
            .await
            .unwrap();
        assert!(lease.node() < 25 && held.insert(lease.node()));
        more.push(lease);
    }
    let err = WorkerLease::options()
        .capacity(25)
        .acquire(db, &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            idgen_seaorm::CoreError::NoFreeNode { capacity: 25, .. }
        ),
        "{err}"
    );
}

/// Without the table, acquiring fails naming the table and how to create it.
pub async fn missing_table_is_named(db: &DatabaseConnection) {
    let err = WorkerLease::acquire(db, &Layout::TWITTER)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("idgen_worker_lease"), "{text}");
    assert!(text.contains("create_lease_table"), "{text}");
}

/// Child processes (this test binary, running each of `child_tests`) each hold
/// `LEASES_PER_PROCESS` leases at once from the database at `url`: all node IDs differ.
pub fn processes_never_share_a_node(url: &str, child_tests: &[&str]) {
    let mut children = Vec::new();
    for child_test in child_tests {
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", child_test, "--include-ignored", "--nocapture"])
            .env(CHILD_URL, url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a child process");
        children.push(child);
    }
    let mut all = Vec::new();
    let mut outputs = Vec::new();
    for child in &mut children {
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = stdout
            .by_ref()
            .map(|l| l.unwrap())
            .find(|l| l.starts_with(NODES_PREFIX))
            .expect("the child prints its node IDs");
        outputs.push(stdout);
        let nodes: Vec<u64> = line[NODES_PREFIX.len()..]
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(nodes.len(), LEASES_PER_PROCESS);
        all.extend(nodes);
    }
    // Every child still holds its leases here; closing stdin lets them go.
    for child in &mut children {
        drop(child.stdin.take());
    }
    // Read the rest of each child's output, so its last lines do not hit a closed pipe.
    for (mut child, rest) in children.into_iter().zip(outputs) {
        rest.for_each(drop);
        assert!(child.wait().unwrap().success(), "a child process failed");
    }
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        child_tests.len() * LEASES_PER_PROCESS,
        "{all:?}"
    );
}

/// The child side: holds `LEASES_PER_PROCESS` leases taken through sea-orm, prints them, and
/// keeps them until its stdin closes.
pub async fn hold_leases_as_child() {
    let url = std::env::var(CHILD_URL).expect("run by processes_never_share_a_node");
    let db = sea_orm::Database::connect(&url).await.unwrap();
    let mut leases = Vec::new();
    for _ in 0..LEASES_PER_PROCESS {
        leases.push(WorkerLease::acquire(&db, &Layout::TWITTER).await.unwrap());
    }
    report_and_hold(&leases).await;
}

/// Prints the leases' node IDs, then keeps them until stdin closes.
pub async fn report_and_hold(leases: &[WorkerLease]) {
    let nodes: Vec<String> = leases.iter().map(|l| l.node().to_string()).collect();
    println!("{NODES_PREFIX} {}", nodes.join(" "));
    tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).unwrap_or(0) > 0 {}
    })
    .await
    .unwrap();
}

/// The lease tests on the database `$connect` opens; `$url` gives its URL.
#[macro_export]
macro_rules! lease_scenarios {
    ($connect:ident, $pool:ty) => {
        #[tokio::test]
        async fn lease_store_claims_renews_and_releases() {
            let (_keep, db) = $connect().await;
            common::lease::store_claims_renews_and_releases(&db).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn concurrent_leases_are_distinct() {
            let (_keep, db) = $connect().await;
            common::lease::concurrent_leases_are_distinct(&db).await;
        }

        #[tokio::test]
        async fn lease_without_table_names_it() {
            let (_keep, db) = $connect().await;
            common::lease::missing_table_is_named(&db).await;
        }

        /// Two sea-orm processes and two sqlx (idgen-sqlx) processes lease from one table.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn lease_seaorm_and_sqlx_processes_never_share_a_node() {
            let (keep, db) = $connect().await;
            idgen_seaorm::lease::create_lease_table(&db).await.unwrap();
            let url = keep.url().to_owned();
            tokio::task::spawn_blocking(move || {
                common::lease::processes_never_share_a_node(
                    &url,
                    &[
                        "lease_child_process",
                        "lease_child_process_sqlx",
                        "lease_child_process",
                        "lease_child_process_sqlx",
                    ],
                )
            })
            .await
            .unwrap();
        }

        #[tokio::test]
        #[ignore = "a child process of lease_seaorm_and_sqlx_processes_never_share_a_node"]
        async fn lease_child_process() {
            common::lease::hold_leases_as_child().await;
        }

        #[tokio::test]
        #[ignore = "a child process of lease_seaorm_and_sqlx_processes_never_share_a_node"]
        async fn lease_child_process_sqlx() {
            let url = std::env::var(common::lease::CHILD_URL).unwrap();
            let pool = <$pool>::connect(&url).await.unwrap();
            let mut leases = Vec::new();
            for _ in 0..common::lease::LEASES_PER_PROCESS {
                let lease =
                    idgen_sqlx::lease::WorkerLease::acquire(&pool, &idgen_seaorm::Layout::TWITTER)
                        .await
                        .unwrap();
                leases.push(lease);
            }
            common::lease::report_and_hold(&leases).await;
        }
    };
}
