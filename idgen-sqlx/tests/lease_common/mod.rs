//! The lease promises, checked the same way on each real database (see `lease_tests!`).

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use idgen_sqlx::lease::{
    ClaimRequest, LeaseDialect, LeaseOptions, LeaseStore, RenewRequest, SqlxLeaseStore, WorkerLease,
};
use idgen_sqlx::{Clock, ClockPolicy, Error, Layout, Snowflake, SystemClock};
use idgen_testkit::{TcpProxy, TestDb};
use sqlx::{Connection, Pool};
use tokio::io::{AsyncBufReadExt, BufReader};

/// What each database's test file provides.
pub trait Backend: 'static {
    type DB: LeaseDialect;
    /// A fresh database of this kind, with the lease table.
    fn test_db() -> impl Future<Output = TestDb<Self::DB>>;
    /// A pool to `url` (child processes, proxied connections).
    fn connect(url: &str) -> impl Future<Output = Pool<Self::DB>>;
}

pub async fn db_with_table<B: Backend>(db: TestDb<B::DB>) -> TestDb<B::DB> {
    idgen_sqlx::lease::create_lease_table(db.pool())
        .await
        .expect("create the lease table");
    db
}

/// A layout with `bits` node bits (capacity 2^bits).
pub fn layout(bits: u8) -> Layout {
    Layout::builder().node_bits(bits).build().unwrap()
}

pub fn short(ttl_ms: u64) -> LeaseOptions {
    let ttl = Duration::from_millis(ttl_ms);
    WorkerLease::options()
        .ttl(ttl)
        .renew_every(ttl / 8)
        .safety_margin(ttl / 4)
        .store_timeout(ttl / 8)
}

fn now_ms() -> i64 {
    SystemClock::new().now_ms()
}

// ---- 64 concurrent acquirers ----

pub async fn sixty_four_concurrent_tasks_get_distinct_node_ids<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let pool = db.pool().clone();
            tokio::spawn(async move { WorkerLease::acquire(&pool, &Layout::TWITTER).await })
        })
        .collect();
    let mut leases = Vec::new();
    for task in tasks {
        leases.push(task.await.unwrap().expect("acquire"));
    }
    let nodes: HashSet<u64> = leases.iter().map(|l| l.node()).collect();
    assert_eq!(nodes.len(), 64, "duplicate node IDs: {nodes:?}");

    // The table agrees: 64 live rows, each with a different holder.
    let store = SqlxLeaseStore::new(db.pool().clone());
    let now = now_ms();
    let live: Vec<_> = store
        .rows("default")
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.expires_at_ms > now)
        .collect();
    assert_eq!(live.len(), 64);
    let holders: HashSet<_> = live.iter().map(|r| r.holder.clone()).collect();
    assert_eq!(holders.len(), 64);
    assert_eq!(
        live.iter().map(|r| r.node).collect::<HashSet<_>>(),
        nodes,
        "the rows name other node IDs than the leases"
    );
}

// ---- capacity ----

pub async fn the_ninth_of_eight_node_ids_gets_the_capacity_error<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let eight = layout(3);
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(WorkerLease::acquire(db.pool(), &eight).await.unwrap());
    }
    let err = WorkerLease::acquire(db.pool(), &eight).await.unwrap_err();
    assert!(
        matches!(&err, Error::NoFreeNode { capacity: 8, namespace } if namespace == "default"),
        "{err:?}"
    );
    assert!(err.to_string().contains("all 8 node IDs"), "{err}");

    // The same with a capacity below the layout's, in another namespace.
    let orders = || WorkerLease::options().namespace("orders").capacity(8);
    for _ in 0..8 {
        held.push(orders().acquire(db.pool(), &Layout::TWITTER).await.unwrap());
    }
    let err = orders()
        .acquire(db.pool(), &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::NoFreeNode { capacity: 8, namespace } if namespace == "orders"),
        "{err:?}"
    );
}

// ---- node spaces above one chunk of rows ----

pub async fn rows_are_created_as_the_node_space_fills<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let store = SqlxLeaseStore::new(db.pool().clone());
    let capacity = 1_100;
    let claim = |i: u64| {
        let store = store.clone();
        async move {
            let holder = format!("holder-{i}");
            store
                .claim(ClaimRequest {
                    namespace: "big",
                    capacity,
                    holder: &holder,
                    ttl: Duration::from_secs(600),
                })
                .await
                .unwrap()
        }
    };
    let first = claim(0).await.unwrap();
    assert_eq!(first.node, 0);
    assert_eq!(store.rows("big").await.unwrap().len(), 1024);
    let mut nodes = HashSet::from([first.node]);
    for i in 1..capacity {
        nodes.insert(claim(i).await.expect("a free node ID").node);
    }
    assert_eq!(nodes, (0..capacity).collect::<HashSet<_>>());
    assert_eq!(store.rows("big").await.unwrap().len(), capacity as usize);
    assert_eq!(claim(capacity).await, None, "claimed beyond the capacity");
}

// ---- release ----

pub async fn a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let one = layout(0);
    let lease = WorkerLease::acquire(db.pool(), &one).await.unwrap();
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
    let row = SqlxLeaseStore::new(db.pool().clone())
        .rows("default")
        .await
        .unwrap()
        .remove(0);
    assert_eq!(row.last_timestamp_ms, Some(last_ms), "{row:?}");
    assert!(row.expires_at_ms <= now_ms() + 5, "{row:?}"); // 5 ms for clock rounding

    let next = WorkerLease::acquire(db.pool(), &one).await.unwrap();
    assert_eq!(next.previous_timestamp_ms(), Some(last_ms));
    let ids = Snowflake::builder()
        .layout(one)
        .lease(next)
        .build()
        .unwrap();
    assert!(ids.next_id().unwrap() > last);
}

// ---- a holder whose clock was ahead ----

pub async fn a_new_holder_never_issues_at_or_below_the_rows_last_timestamp<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let store = SqlxLeaseStore::new(db.pool().clone());
    let one = layout(0);
    // A previous holder, on a host whose clock ran 2 s ahead, recorded this and crashed.
    let ahead = now_ms() + 2_000;
    let claim = store
        .claim(ClaimRequest {
            namespace: "default",
            capacity: 1,
            holder: "previous",
            ttl: Duration::from_secs(60),
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claim.node, 0);
    let renewed = store
        .renew(RenewRequest {
            namespace: "default",
            node: 0,
            holder: "previous",
            ttl: Duration::ZERO,
            last_timestamp_ms: Some(ahead),
        })
        .await
        .unwrap();
    assert!(renewed);

    // Configured to refuse (the default waits at most 10 ms): an error, no ID.
    let lease = WorkerLease::acquire(db.pool(), &one).await.unwrap();
    assert_eq!(lease.previous_timestamp_ms(), Some(ahead));
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(one)
        .lease(lease)
        .build()
        .unwrap();
    match ids.next_id() {
        Err(Error::ClockMovedBackwards { behind_ms, .. }) => {
            assert!((1..=2_000).contains(&behind_ms), "behind {behind_ms} ms")
        }
        other => panic!("expected ClockMovedBackwards, got {other:?}"),
    }
    handle.release().await.unwrap();
    let row = store.rows("default").await.unwrap().remove(0);
    assert_eq!(row.last_timestamp_ms, Some(ahead), "release lost the floor");

    // Configured to wait: the first ID comes after the recorded timestamp.
    let lease = WorkerLease::acquire(db.pool(), &one).await.unwrap();
    let ids = Snowflake::builder()
        .layout(one)
        .clock_policy(ClockPolicy::Wait {
            max: Duration::from_secs(10),
        })
        .lease(lease)
        .build()
        .unwrap();
    let first = ids.next_id_async().await.unwrap();
    assert!(one.decompose(first).unwrap().unix_ms > ahead);
    assert!(now_ms() > ahead);
}

// ---- an expired holder ----

pub async fn a_killed_holder_loses_its_node_id_after_the_ttl<B: Backend>() {
    let db = db_with_table::<B>(B::test_db().await).await;
    let ttl_ms = 4_000;
    let mut child = Child::spawn(db.url(), "killed", (0, 1), 1_000, ttl_ms, None);
    let node = child.line("NODE").await;
    let child_last: i64 = child.line("LAST").await.parse().unwrap();
    assert_eq!(node, "0");
    child.kill().await;
    let killed_at = Instant::now();

    // Still leased (the TTL runs from the last renewal, at most ttl/8 before the kill).
    let options = || short(ttl_ms).namespace("killed");
    let err = options().acquire(db.pool(), &layout(0)).await.unwrap_err();
    assert!(matches!(err, Error::NoFreeNode { .. }), "{err:?}");

    let lease = loop {
        match options().acquire(db.pool(), &layout(0)).await {
            Ok(lease) => break lease,
            Err(Error::NoFreeNode { .. }) if killed_at.elapsed() < Duration::from_secs(60) => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("the node ID was not freed: {e}"),
        }
    };
    assert_eq!(lease.node(), 0);
    let ids = Snowflake::builder()
        .layout(layout(0))
        .lease(lease)
        .build()
        .unwrap();
    assert!(ids.next_id().unwrap().get() > child_last);
}

// ---- an unreachable database ----

/// How a test makes the database unreachable for one pool.
pub enum Outage {
    /// The pool goes through this proxy.
    Proxy(TcpProxy),
    /// SQLite: another connection holds the write lock.
    Lock {
        url: String,
        holder: Option<sqlx::SqliteConnection>,
    },
}

impl Outage {
    async fn cut(&mut self) {
        match self {
            Outage::Proxy(proxy) => proxy.cut(),
            Outage::Lock { url, holder } => {
                let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
                sqlx::query("BEGIN EXCLUSIVE")
                    .execute(&mut conn)
                    .await
                    .unwrap();
                *holder = Some(conn);
            }
        }
    }

    async fn restore(&mut self) {
        match self {
            Outage::Proxy(proxy) => proxy.restore(),
            Outage::Lock { holder, .. } => {
                let mut conn = holder.take().unwrap();
                sqlx::query("COMMIT").execute(&mut conn).await.unwrap();
            }
        }
    }
}

/// A pool to `db` through a [`TcpProxy`].
pub async fn proxied<B: Backend>(db: &TestDb<B::DB>) -> (Pool<B::DB>, Outage) {
    let url = db.url();
    let (start, end) = host_port_span(url);
    let upstream: SocketAddr = tokio::net::lookup_host(&url[start..end])
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = TcpProxy::start(upstream).await.unwrap();
    let proxied_url = format!("{}{}{}", &url[..start], proxy.addr(), &url[end..]);
    (B::connect(&proxied_url).await, Outage::Proxy(proxy))
}

/// Where `host:port` is in `scheme://user@host:port/db`.
fn host_port_span(url: &str) -> (usize, usize) {
    let after_scheme = url.find("://").unwrap() + 3;
    let start = url[after_scheme..]
        .find('@')
        .map_or(after_scheme, |at| after_scheme + at + 1);
    let end = url[start..]
        .find('/')
        .map_or(url.len(), |slash| start + slash);
    (start, end)
}

pub async fn a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable<
    B: Backend,
>(
    db: &TestDb<B::DB>,
    pool: Pool<B::DB>,
    mut outage: Outage,
) {
    let ttl_ms = 4_000;
    let lease = short(ttl_ms).acquire(&pool, &layout(0)).await.unwrap();
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(layout(0))
        .lease(lease)
        .build()
        .unwrap();
    // Wait for a renewal, so the lease is in its steady state.
    let started = Instant::now();
    while handle.status().renewals == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "never renewed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ids.next_id().unwrap();

    outage.cut().await;
    let mut issued_after_cut = Vec::new();
    let cut_at = Instant::now();
    let fenced_at;
    let fenced_until = loop {
        match ids.next_id() {
            Ok(id) => issued_after_cut.push(layout(0).decompose(id).unwrap().unix_ms),
            Err(Error::Fenced { valid_until_ms, .. }) => {
                fenced_at = Instant::now();
                break valid_until_ms;
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
        assert!(
            cut_at.elapsed() < Duration::from_secs(60),
            "never fenced: {:?}",
            handle.status()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };

    // The database's view: the lease lasts until the last successful renewal + TTL.
    let row = SqlxLeaseStore::new(db.pool().clone())
        .rows("default")
        .await
        .unwrap()
        .remove(0);
    assert!(
        fenced_until < row.expires_at_ms,
        "the generator was open until {fenced_until}, the lease expired at {}",
        row.expires_at_ms
    );
    assert!(
        issued_after_cut.iter().all(|&ms| ms < row.expires_at_ms),
        "an ID was issued after the lease expired"
    );
    let status = handle.status();
    assert!(status.failed_renewals > 0, "{status:?}");
    assert!(!status.lost);

    outage.restore().await;
    let restored_at = Instant::now();
    loop {
        match ids.next_id() {
            Ok(_) => break,
            Err(Error::Fenced { .. }) if restored_at.elapsed() < Duration::from_secs(60) => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => panic!("did not resume: {e}; {:?}", handle.status()),
        }
    }
    let status = handle.status();
    assert!(!status.lost, "{status:?}");
    eprintln!(
        "{}: fenced {} ms before the lease's expiry in the database ({} ms after the cut); \
         issuing again {} ms after the restore",
        std::any::type_name::<B>(),
        row.expires_at_ms - fenced_until,
        fenced_at.duration_since(cut_at).as_millis(),
        restored_at.elapsed().as_millis()
    );
}

// ---- OS processes ----

pub async fn sixty_four_acquirers_in_four_processes_get_distinct_node_ids_and_issue_a_million_distinct_ids<
    B: Backend,
>() {
    const PER_PROCESS: usize = 250_000;
    let db = db_with_table::<B>(B::test_db().await).await;
    let dir = tempfile::tempdir().unwrap();
    let mut children: Vec<_> = (0..4)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            let child = Child::spawn(db.url(), "procs", (10, 16), PER_PROCESS, 30_000, Some(&out));
            (child, out)
        })
        .collect();
    let mut nodes = Vec::new();
    let mut all_nodes = Vec::new();
    for (child, _) in &mut children {
        let held = child.line("NODES").await;
        all_nodes.extend(held.split(',').map(|n| n.parse::<u64>().unwrap()));
        nodes.push(child.line("NODE").await.parse::<u64>().unwrap());
    }
    let started = Instant::now();
    for (child, _) in &mut children {
        child.line("DONE").await;
    }
    eprintln!(
        "{}: 4 processes issued {} IDs each within {} ms of the parent seeing their leases",
        std::any::type_name::<B>(),
        PER_PROCESS,
        started.elapsed().as_millis()
    );
    // Each child holds its 16 leases until now: 64 acquirers in 4 processes, held at once.
    assert_eq!(all_nodes.len(), 64);
    assert_eq!(
        all_nodes.iter().collect::<HashSet<_>>().len(),
        64,
        "duplicate node IDs: {all_nodes:?}"
    );

    let mut all = HashSet::with_capacity(4 * PER_PROCESS);
    for ((child, out), node) in children.iter_mut().zip(&nodes) {
        child.finish().await;
        let bytes = std::fs::read(out).unwrap();
        assert_eq!(bytes.len(), PER_PROCESS * 8);
        for chunk in bytes.chunks_exact(8) {
            let id = i64::from_le_bytes(chunk.try_into().unwrap());
            let id = idgen_sqlx::SnowflakeId::new(id).unwrap();
            assert_eq!(layout(10).decompose(id).unwrap().node, *node);
            all.insert(id);
        }
    }
    assert_eq!(all.len(), 4 * PER_PROCESS, "duplicate IDs across processes");
}

/// A child process of this test binary running [`child_main`].
pub struct Child {
    process: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Child {
    fn spawn(
        url: &str,
        namespace: &str,
        (node_bits, leases): (u8, usize),
        count: usize,
        ttl_ms: u64,
        out: Option<&std::path::Path>,
    ) -> Child {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = tokio::process::Command::new(exe);
        cmd.args(["--exact", "lease_child", "--nocapture", "--test-threads=1"])
            .env("IDGEN_LEASE_CHILD_URL", url)
            .env("IDGEN_LEASE_CHILD_NAMESPACE", namespace)
            .env("IDGEN_LEASE_CHILD_NODE_BITS", node_bits.to_string())
            .env("IDGEN_LEASE_CHILD_LEASES", leases.to_string())
            .env("IDGEN_LEASE_CHILD_COUNT", count.to_string())
            .env("IDGEN_LEASE_CHILD_TTL_MS", ttl_ms.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(out) = out {
            cmd.env("IDGEN_LEASE_CHILD_OUT", out);
        }
        let mut process = cmd.spawn().unwrap();
        let lines = BufReader::new(process.stdout.take().unwrap()).lines();
        Child { process, lines }
    }

    /// The rest of the next line that starts with `tag `.
    async fn line(&mut self, tag: &str) -> String {
        let wait = Duration::from_secs(120);
        loop {
            let line = tokio::time::timeout(wait, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no {tag} line from the child within {wait:?}"))
                .unwrap()
                .unwrap_or_else(|| panic!("the child ended before printing {tag}"));
            // libtest prints "test lease_child ... " before the child's first line.
            let tagged = format!("{tag} ");
            if let Some(at) = line.find(&tagged) {
                return line[at + tagged.len()..].trim().to_owned();
            }
            assert!(!line.starts_with("FAILED"), "the child failed: {line}");
        }
    }

    /// Closes its stdin (it releases its lease and exits) and checks it succeeded.
    async fn finish(&mut self) {
        drop(self.process.stdin.take());
        let status = tokio::time::timeout(Duration::from_secs(120), self.process.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "child exited with {status}");
    }

    async fn kill(&mut self) {
        self.process.kill().await.unwrap();
    }
}

/// The child side: `LEASES` acquirers at once, print their node IDs, issue `COUNT` IDs from the
/// first (to `OUT`, 8 bytes each, little endian), print the last and `DONE`, hold the leases until
/// stdin closes, release.
pub fn child_main<B: Backend>() {
    let Ok(url) = std::env::var("IDGEN_LEASE_CHILD_URL") else {
        return; // run as a normal test: nothing to do
    };
    let var = |name: &str| std::env::var(format!("IDGEN_LEASE_CHILD_{name}")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = B::connect(&url).await;
        let layout = layout(var("NODE_BITS").parse().unwrap());
        // LEASES acquirers at once (tasks); the first lease's node ID issues the IDs.
        let acquirers: Vec<_> = (0..var("LEASES").parse::<usize>().unwrap())
            .map(|_| {
                let pool = pool.clone();
                let options = short(var("TTL_MS").parse().unwrap()).namespace(var("NAMESPACE"));
                tokio::spawn(async move { options.acquire(&pool, &layout).await.unwrap() })
            })
            .collect();
        let mut leases = Vec::new();
        for acquirer in acquirers {
            leases.push(acquirer.await.unwrap());
        }
        let nodes: Vec<String> = leases.iter().map(|l| l.node().to_string()).collect();
        println!("NODES {}", nodes.join(","));
        let lease = leases.remove(0);
        let handle = lease.handle();
        println!("NODE {}", lease.node());
        let ids = Snowflake::builder()
            .layout(layout)
            .lease(lease)
            .build()
            .unwrap();
        let count: usize = var("COUNT").parse().unwrap();
        let mut bytes = Vec::with_capacity(count * 8);
        let mut last = None;
        for _ in 0..count {
            let id = ids.next_id_async().await.unwrap();
            bytes.extend_from_slice(&id.get().to_le_bytes());
            last = Some(id);
        }
        if let Ok(out) = std::env::var("IDGEN_LEASE_CHILD_OUT") {
            std::fs::write(out, &bytes).unwrap();
        }
        println!("LAST {}", last.map_or(0, |id| id.get()));
        println!("DONE ok");
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(_)) = stdin.next_line().await {}
        handle.release().await.unwrap();
        for other in leases {
            other.handle().release().await.unwrap();
        }
    });
}

/// The test functions of one database, as `#[tokio::test]`s.
#[macro_export]
macro_rules! lease_tests {
    ($backend:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn sixty_four_concurrent_tasks_get_distinct_node_ids() {
            lease_common::sixty_four_concurrent_tasks_get_distinct_node_ids::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn the_ninth_of_eight_node_ids_gets_the_capacity_error() {
            lease_common::the_ninth_of_eight_node_ids_gets_the_capacity_error::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn rows_are_created_as_the_node_space_fills() {
            lease_common::rows_are_created_as_the_node_space_fills::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp() {
            lease_common::a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp::<
                $backend,
            >()
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_new_holder_never_issues_at_or_below_the_rows_last_timestamp() {
            lease_common::a_new_holder_never_issues_at_or_below_the_rows_last_timestamp::<
                $backend,
            >()
            .await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_killed_holder_loses_its_node_id_after_the_ttl() {
            lease_common::a_killed_holder_loses_its_node_id_after_the_ttl::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn sixty_four_acquirers_in_four_processes_get_distinct_node_ids_and_issue_a_million_distinct_ids(
        ) {
            lease_common::sixty_four_acquirers_in_four_processes_get_distinct_node_ids_and_issue_a_million_distinct_ids::<
                $backend,
            >()
            .await;
        }

        #[test]
        fn lease_child() {
            lease_common::child_main::<$backend>();
        }
    };
}
