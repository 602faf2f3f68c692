//! The lease promises over diesel, checked the same way on each real database
//! (see `lease_tests!`).

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use diesel::r2d2::{ConnectionManager, Pool};
use idgen_diesel::lease::{DieselLeaseStore, DieselPool, LeaseConnection, WorkerLease};
use idgen_diesel::{Error, Layout, Snowflake};
use idgen_testkit::TestDb;

/// What each database's test file provides.
pub trait Backend: 'static {
    type Conn: LeaseConnection;
    type DB: sqlx::Database;
    /// A fresh database of this kind.
    fn test_db() -> impl Future<Output = TestDb<Self::DB>>;
    /// What diesel's `establish` takes for that database.
    fn diesel_url(db: &TestDb<Self::DB>) -> String;
}

/// An r2d2 pool of diesel connections to `url`.
pub fn pool<B: Backend>(url: &str) -> DieselPool<B::Conn> {
    Pool::builder()
        .max_size(8)
        .build(ConnectionManager::<B::Conn>::new(url))
        .expect("an r2d2 pool")
}

/// A fresh database with the lease table, and a pool to it.
pub async fn db_with_table<B: Backend>() -> (TestDb<B::DB>, DieselPool<B::Conn>) {
    let db = B::test_db().await;
    let pool = pool::<B>(&B::diesel_url(&db));
    DieselLeaseStore::new(pool.clone())
        .create_table()
        .expect("create the lease table");
    (db, pool)
}

/// A layout with `bits` node bits (capacity 2^bits).
pub fn layout(bits: u8) -> Layout {
    Layout::builder().node_bits(bits).build().unwrap()
}

pub async fn thirty_two_concurrent_tasks_get_distinct_node_ids<B: Backend>() {
    let (_db, pool) = db_with_table::<B>().await;
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { WorkerLease::acquire(&pool, &Layout::TWITTER).await })
        })
        .collect();
    let mut leases = Vec::new();
    for task in tasks {
        leases.push(task.await.unwrap().expect("acquire"));
    }
    let nodes: HashSet<u64> = leases.iter().map(|l| l.node()).collect();
    assert_eq!(nodes.len(), 32, "duplicate node IDs: {nodes:?}");

    // The table agrees: 32 rows with a holder, each a different one, naming the same node IDs.
    let rows = tokio::task::spawn_blocking(move || DieselLeaseStore::new(pool).rows("default"))
        .await
        .unwrap()
        .unwrap();
    let held: Vec<_> = rows.iter().filter(|r| r.holder.is_some()).collect();
    assert_eq!(held.len(), 32);
    assert_eq!(
        held.iter()
            .map(|r| r.holder.clone())
            .collect::<HashSet<_>>()
            .len(),
        32
    );
    assert_eq!(held.iter().map(|r| r.node).collect::<HashSet<_>>(), nodes);
    release_all(&leases).await;
}

/// Releases the leases while the database still exists (dropping them would release in the
/// background, racing the test database's removal).
pub async fn release_all(leases: &[WorkerLease]) {
    for lease in leases {
        lease.handle().release().await.expect("release");
    }
}

pub async fn the_ninth_of_eight_node_ids_gets_the_capacity_error<B: Backend>() {
    let (_db, pool) = db_with_table::<B>().await;
    let eight = layout(3);
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(WorkerLease::acquire(&pool, &eight).await.unwrap());
    }
    let err = WorkerLease::acquire(&pool, &eight).await.unwrap_err();
    assert!(
        matches!(&err, Error::NoFreeNode { capacity: 8, namespace } if namespace == "default"),
        "{err:?}"
    );
    // Another namespace is independent.
    let other = WorkerLease::options()
        .namespace("orders")
        .acquire(&pool, &eight)
        .await
        .unwrap();
    assert_eq!(other.node(), 0);
    held.push(other);
    release_all(&held).await;
}

pub async fn a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp<B: Backend>() {
    let (_db, pool) = db_with_table::<B>().await;
    let one = layout(0);
    let lease = WorkerLease::acquire(&pool, &one).await.unwrap();
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(one)
        .lease(lease)
        .build()
        .unwrap();
    let mut last = ids.next_id().unwrap();
    for _ in 0..1000 {
        last = ids.next_id().unwrap();
    }
    handle.release().await.unwrap();
    assert!(matches!(ids.next_id(), Err(Error::Fenced { .. })));

    let last_ms = one.decompose(last).unwrap().unix_ms;
    let store = DieselLeaseStore::new(pool.clone());
    let row = tokio::task::spawn_blocking(move || store.rows("default"))
        .await
        .unwrap()
        .unwrap()
        .remove(0);
    assert_eq!(row.last_timestamp_ms, Some(last_ms), "{row:?}");

    let next = WorkerLease::acquire(&pool, &one).await.unwrap();
    assert_eq!(next.previous_timestamp_ms(), Some(last_ms));
    let handle = next.handle();
    let ids = Snowflake::builder()
        .layout(one)
        .lease(next)
        .build()
        .unwrap();
    assert!(ids.next_id().unwrap() > last);
    handle.release().await.unwrap();
}

pub async fn a_missing_table_and_a_refused_name_are_named<B: Backend>() {
    let db = B::test_db().await;
    let pool = pool::<B>(&B::diesel_url(&db));
    let err = WorkerLease::acquire(&pool, &Layout::TWITTER)
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
    assert!(err.to_string().contains("create_lease_table"), "{err}");

    let err = WorkerLease::options()
        .table("leases; DROP TABLE x")
        .acquire(&pool, &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("\"leases; DROP TABLE x\""),
        "{err}"
    );
}

/// Leases each child process takes and holds.
pub const LEASES_PER_CHILD: usize = 8;

/// Four OS processes of this test binary, each holding `LEASES_PER_CHILD` leases from one table
/// at once, never share a node ID; the table names the same node IDs.
pub async fn four_processes_never_share_a_node_id<B: Backend>() {
    let (db, pool) = db_with_table::<B>().await;
    let url = B::diesel_url(&db);
    let mut children: Vec<Child> = (0..4).map(|_| Child::spawn(&url)).collect();
    let mut all = Vec::new();
    for child in &mut children {
        all.extend(child.nodes());
    }
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), 4 * LEASES_PER_CHILD);
    assert_eq!(
        distinct.len(),
        all.len(),
        "node IDs shared between processes: {all:?}"
    );
    for child in children {
        child.finish();
    }
    let rows = tokio::task::spawn_blocking(move || DieselLeaseStore::new(pool).rows("default"))
        .await
        .unwrap()
        .unwrap();
    let claimed: HashSet<u64> = rows
        .iter()
        .filter(|r| r.holder.is_some())
        .map(|r| r.node)
        .collect();
    assert_eq!(claimed, distinct);
}

/// An sqlx process (this one, through idgen-sqlx's store on the same table) and two diesel
/// processes lease at the same time: no node ID is held twice.
pub async fn sqlx_and_diesel_processes_never_share_a_node_id<B: Backend>()
where
    for<'a> &'a sqlx::Pool<B::DB>: idgen_diesel::lease::IntoLeaseStore<idgen_sqlx::lease::SqlxPool>,
{
    let (db, _pool) = db_with_table::<B>().await;
    let url = B::diesel_url(&db);
    let mut children: Vec<Child> = (0..2).map(|_| Child::spawn(&url)).collect();
    let acquire_sqlx =
        (0..LEASES_PER_CHILD).map(|_| WorkerLease::acquire(db.pool(), &Layout::TWITTER));
    let mut sqlx_leases = Vec::new();
    for lease in acquire_sqlx {
        sqlx_leases.push(lease.await.expect("acquire over sqlx"));
    }
    let mut all: Vec<u64> = sqlx_leases.iter().map(|l| l.node()).collect();
    for child in &mut children {
        all.extend(child.nodes());
    }
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), 3 * LEASES_PER_CHILD);
    assert_eq!(
        distinct.len(),
        all.len(),
        "node IDs shared between sqlx and diesel: {all:?}"
    );
    release_all(&sqlx_leases).await;
    for child in children {
        child.finish();
    }
}

/// A child process of this test binary running [`child_main`].
pub struct Child {
    process: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Child {
    pub fn spawn(url: &str) -> Child {
        let exe = std::env::current_exe().unwrap();
        let mut process = Command::new(exe)
            .args(["--exact", "lease_child", "--nocapture", "--test-threads=1"])
            .env("IDGEN_LEASE_CHILD_URL", url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the child");
        let stdout = BufReader::new(process.stdout.take().unwrap());
        Child { process, stdout }
    }

    /// The node IDs the child holds (its `NODES a,b,…` line).
    pub fn nodes(&mut self) -> Vec<u64> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the child ended before printing NODES");
            // libtest may print "test lease_child ... " before the child's line.
            if let Some(at) = line.find("NODES ") {
                return line[at + 6..]
                    .trim()
                    .split(',')
                    .map(|n| n.parse().unwrap())
                    .collect();
            }
        }
    }

    /// Closes the child's stdin (it releases its leases and exits) and waits for it.
    pub fn finish(mut self) {
        drop(self.process.stdin.take());
        let mut rest = String::new();
        self.stdout.read_to_string(&mut rest).unwrap();
        let status = self.process.wait().unwrap();
        assert!(status.success(), "child exited with {status}: {rest}");
    }
}

/// The child side: acquire `LEASES_PER_CHILD` leases at once, print their node IDs, hold them
/// until stdin closes, then release them.
pub fn child_main<B: Backend>() {
    let Ok(url) = std::env::var("IDGEN_LEASE_CHILD_URL") else {
        return; // run as an ordinary test: nothing to do
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = pool::<B>(&url);
        let tasks: Vec<_> = (0..LEASES_PER_CHILD)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move { WorkerLease::acquire(&pool, &Layout::TWITTER).await })
            })
            .collect();
        let mut leases = Vec::new();
        for task in tasks {
            leases.push(task.await.unwrap().expect("acquire in the child"));
        }
        let nodes: Vec<String> = leases.iter().map(|l| l.node().to_string()).collect();
        println!("NODES {}", nodes.join(","));
        tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            std::io::stdin().read_to_string(&mut sink).unwrap();
        })
        .await
        .unwrap();
        for lease in &leases {
            lease.handle().release().await.unwrap();
        }
    });
}

/// The tests every database runs.
#[macro_export]
macro_rules! lease_tests {
    ($backend:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn thirty_two_concurrent_tasks_get_distinct_node_ids() {
            lease_common::thirty_two_concurrent_tasks_get_distinct_node_ids::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_ninth_of_eight_node_ids_gets_the_capacity_error() {
            lease_common::the_ninth_of_eight_node_ids_gets_the_capacity_error::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp() {
            lease_common::a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp::<
                                                                                        $backend,
                                                                                    >()
                                                                                    .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_missing_table_and_a_refused_name_are_named() {
            lease_common::a_missing_table_and_a_refused_name_are_named::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn four_processes_never_share_a_node_id() {
            lease_common::four_processes_never_share_a_node_id::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn an_sqlx_process_and_diesel_processes_never_share_a_node_id() {
            lease_common::sqlx_and_diesel_processes_never_share_a_node_id::<$backend>().await;
        }

        /// The child process of `four_processes_never_share_a_node_id` (a no-op otherwise).
        #[test]
        fn lease_child() {
            lease_common::child_main::<$backend>();
        }
    };
}
