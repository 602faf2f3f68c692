//! Hi-lo over real databases (through idgen-testkit): PostgreSQL, MariaDB in sequence mode and
//! in table mode, SQLite. Each scenario runs once per database.
//!
//! The multi-process test re-runs this test binary as child processes (`hilo_child`), which
//! write their IDs to files for the parent to check.

use std::collections::HashSet;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::{Child, Command};
use std::str::FromStr;
use std::time::Duration;

use idgen_sqlx::Error;
use idgen_sqlx::hilo::{
    BoxError, HiLo, HiLoSource, Increment, MySqlCounter, MySqlMode, PgSequence, SqliteCounter,
};
use sqlx::mysql::MySqlPoolOptions;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{AssertSqlSafe, Connection, MySqlPool, PgPool, SqlitePool};

const PROCESSES: usize = 4;
const TASKS: usize = 4;
const IDS_PER_TASK: usize = 25_000;
const BLOCK: u64 = 100;

/// The database and counter flavour under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Postgres,
    MariaDbSequence,
    MariaDbTable,
    Sqlite,
}

impl Kind {
    fn parse(text: &str) -> Kind {
        match text {
            "Postgres" => Kind::Postgres,
            "MariaDbSequence" => Kind::MariaDbSequence,
            "MariaDbTable" => Kind::MariaDbTable,
            "Sqlite" => Kind::Sqlite,
            other => panic!("unknown kind {other}"),
        }
    }
}

/// One database for a test, with its URL.
enum Db {
    Postgres(idgen_testkit::TestDb<sqlx::Postgres>),
    MySql(idgen_testkit::TestDb<sqlx::MySql>),
    Sqlite(idgen_testkit::TestDb<sqlx::Sqlite>),
}

impl Db {
    async fn new(kind: Kind) -> Db {
        match kind {
            Kind::Postgres => Db::Postgres(idgen_testkit::postgres().await.expect("PostgreSQL")),
            Kind::MariaDbSequence | Kind::MariaDbTable => {
                Db::MySql(idgen_testkit::mysql().await.expect("MariaDB"))
            }
            Kind::Sqlite => Db::Sqlite(idgen_testkit::sqlite().await.expect("SQLite")),
        }
    }

    fn url(&self) -> &str {
        match self {
            Db::Postgres(db) => db.url(),
            Db::MySql(db) => db.url(),
            Db::Sqlite(db) => db.url(),
        }
    }
}

/// A pool of the right type.
#[derive(Clone)]
enum AnyPool {
    Pg(PgPool),
    My(MySqlPool),
    Lite(SqlitePool),
}

async fn connect(kind: Kind, url: &str) -> AnyPool {
    connect_with(kind, url, Duration::from_secs(30)).await
}

/// `busy`: SQLite's busy timeout (how long a write waits for another writer's lock).
async fn connect_with(kind: Kind, url: &str, busy: Duration) -> AnyPool {
    match kind {
        Kind::Postgres => AnyPool::Pg(
            PgPoolOptions::new()
                .max_connections(4)
                .connect_lazy(url)
                .unwrap(),
        ),
        Kind::MariaDbSequence | Kind::MariaDbTable => AnyPool::My(
            MySqlPoolOptions::new()
                .max_connections(4)
                .connect_lazy(url)
                .unwrap(),
        ),
        Kind::Sqlite => {
            let options = SqliteConnectOptions::from_str(url)
                .unwrap()
                .busy_timeout(busy);
            AnyPool::Lite(
                SqlitePoolOptions::new()
                    .max_connections(4)
                    .connect_lazy_with(options),
            )
        }
    }
}

/// Each kind's source type behind one enum.
enum AnySource {
    Pg(PgSequence),
    My(MySqlCounter),
    Lite(SqliteCounter),
}

fn source(kind: Kind, pool: &AnyPool, counter: &str) -> AnySource {
    match (kind, pool) {
        (Kind::Postgres, AnyPool::Pg(p)) => AnySource::Pg(PgSequence::new(p, counter).unwrap()),
        (Kind::MariaDbSequence, AnyPool::My(p)) => {
            AnySource::My(MySqlCounter::sequence(p, counter).unwrap())
        }
        (Kind::MariaDbTable, AnyPool::My(p)) => {
            AnySource::My(MySqlCounter::table(p, counter).unwrap())
        }
        (Kind::Sqlite, AnyPool::Lite(p)) => {
            AnySource::Lite(SqliteCounter::new(p, counter).unwrap())
        }
        _ => unreachable!("pool and kind match by construction"),
    }
}

impl AnySource {
    async fn create(&self, block: u64) -> Result<(), Error> {
        match self {
            AnySource::Pg(s) => s.create(block).await,
            AnySource::My(s) => s.create(block).await,
            AnySource::Lite(s) => s.create(block).await,
        }
    }
}

impl HiLoSource for AnySource {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        match self {
            AnySource::Pg(s) => s.allocate(size).await,
            AnySource::My(s) => s.allocate(size).await,
            AnySource::Lite(s) => s.allocate(size).await,
        }
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        match self {
            AnySource::Pg(s) => s.increment().await,
            AnySource::My(s) => s.increment().await,
            AnySource::Lite(s) => s.increment().await,
        }
    }

    fn name(&self) -> &str {
        match self {
            AnySource::Pg(s) => HiLoSource::name(s),
            AnySource::My(s) => HiLoSource::name(s),
            AnySource::Lite(s) => HiLoSource::name(s),
        }
    }
}

/// What a script or another language does: takes one block from the counter with raw SQL,
/// bypassing idgen. Returns the block `[start, start + BLOCK)` it now owns.
async fn raw_allocation(kind: Kind, pool: &AnyPool, counter: &str) -> std::ops::Range<i64> {
    let block = BLOCK as i64;
    let start: i64 = match pool {
        AnyPool::Pg(p) => sqlx::query_scalar(AssertSqlSafe(format!("SELECT nextval('{counter}')")))
            .fetch_one(p)
            .await
            .unwrap(),
        AnyPool::My(p) if kind == Kind::MariaDbSequence => {
            sqlx::query_scalar(AssertSqlSafe(format!("SELECT NEXTVAL({counter})")))
                .fetch_one(p)
                .await
                .unwrap()
        }
        AnyPool::My(p) => {
            let mut conn = p.acquire().await.unwrap();
            sqlx::query(
                "UPDATE idgen_hilo SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?",
            )
            .bind(block)
            .bind(counter)
            .execute(&mut *conn)
            .await
            .unwrap();
            let after: i64 = sqlx::query_scalar("SELECT CAST(LAST_INSERT_ID() AS SIGNED)")
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            after - block
        }
        AnyPool::Lite(p) => sqlx::query_scalar(
            "UPDATE idgen_hilo SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1",
        )
        .bind(block)
        .bind(counter)
        .fetch_one(p)
        .await
        .unwrap(),
    };
    start..start + block
}

// ---------------------------------------------------------------------------------------------
// 4 processes × 4 tasks × 25,000 IDs, with raw allocations in between
// ---------------------------------------------------------------------------------------------

/// Entry point of a child process; does nothing unless run by `four_processes`.
#[test]
fn hilo_child() {
    let Ok(kind) = std::env::var("IDGEN_HILO_CHILD_KIND") else {
        return;
    };
    let kind = Kind::parse(&kind);
    let url = std::env::var("IDGEN_HILO_CHILD_URL").unwrap();
    let out = std::env::var("IDGEN_HILO_CHILD_OUT").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = connect(kind, &url).await;
        let ids = HiLo::builder(source(kind, &pool, "orders"))
            .block(BLOCK)
            .timeout(Duration::from_secs(30))
            .build()
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let ids = ids.clone();
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::with_capacity(IDS_PER_TASK);
                for _ in 0..IDS_PER_TASK {
                    got.push(ids.next_id().await.unwrap());
                }
                got
            }));
        }
        let mut text = String::new();
        for (task, handle) in tasks.into_iter().enumerate() {
            for id in handle.await.unwrap() {
                text.push_str(&format!("{task} {id}\n"));
            }
        }
        std::fs::write(&out, text).unwrap();
    });
}

fn spawn_child(kind: Kind, url: &str, out: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hilo_child", "--nocapture", "--test-threads=1"])
        .env("IDGEN_HILO_CHILD_KIND", format!("{kind:?}"))
        .env("IDGEN_HILO_CHILD_URL", url)
        .env("IDGEN_HILO_CHILD_OUT", out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

async fn four_processes(kind: Kind) {
    let db = Db::new(kind).await;
    let pool = connect(kind, db.url()).await;
    source(kind, &pool, "orders").create(BLOCK).await.unwrap();
    let dir = tempfile::tempdir().unwrap();

    let mut children: Vec<(Child, std::path::PathBuf)> = (0..PROCESSES)
        .map(|i| {
            let out = dir.path().join(format!("child-{i}.txt"));
            (spawn_child(kind, db.url(), &out), out)
        })
        .collect();

    // Meanwhile, raw SQL takes blocks from the same counter, as a script would.
    let mut raw_blocks = Vec::new();
    loop {
        raw_blocks.push(raw_allocation(kind, &pool, "orders").await);
        tokio::time::sleep(Duration::from_millis(20)).await;
        if children
            .iter_mut()
            .all(|(child, _)| child.try_wait().unwrap().is_some())
        {
            break;
        }
    }
    raw_blocks.push(raw_allocation(kind, &pool, "orders").await);

    let mut all = HashSet::with_capacity(PROCESSES * TASKS * IDS_PER_TASK);
    for (child, out) in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = std::fs::read_to_string(&out).unwrap();
        let mut last = [0_i64; TASKS];
        let mut count = [0_usize; TASKS];
        for line in text.lines() {
            let (task, id) = line.split_once(' ').unwrap();
            let (task, id): (usize, i64) = (task.parse().unwrap(), id.parse().unwrap());
            assert!(id > last[task], "task {task}: {id} after {}", last[task]);
            last[task] = id;
            count[task] += 1;
            assert!(all.insert(id), "{kind:?}: ID {id} handed out twice");
        }
        assert_eq!(count, [IDS_PER_TASK; TASKS]);
    }
    assert_eq!(all.len(), PROCESSES * TASKS * IDS_PER_TASK);
    assert!(all.iter().all(|&id| id >= 1));

    eprintln!(
        "{kind:?}: {} raw blocks taken while the children ran",
        raw_blocks.len()
    );
    assert!(raw_blocks.len() >= 2);
    for block in &raw_blocks {
        for id in block.clone() {
            assert!(
                !all.contains(&id),
                "{kind:?}: raw block {block:?} collides at {id}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_postgres() {
    four_processes(Kind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_mariadb_sequence() {
    four_processes(Kind::MariaDbSequence).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_mariadb_table() {
    four_processes(Kind::MariaDbTable).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_sqlite() {
    four_processes(Kind::Sqlite).await;
}

// ---------------------------------------------------------------------------------------------
// Start-up checks
// ---------------------------------------------------------------------------------------------

async fn wrong_increment_is_refused(kind: Kind) {
    let db = Db::new(kind).await;
    let pool = connect(kind, db.url()).await;
    source(kind, &pool, "orders").create(50).await.unwrap();
    let err = HiLo::new(source(kind, &pool, "orders"), 100)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::HiLoIncrementMismatch {
                configured: 100,
                database: 50,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("50") && text.contains("100"), "{text}");

    // The opt-in adopts the database's increment instead.
    let ids = HiLo::builder(source(kind, &pool, "orders"))
        .block(100)
        .adopt_database_increment(true)
        .build()
        .await
        .unwrap();
    assert_eq!(ids.stats().block_size, 50);
}

#[tokio::test]
async fn wrong_increment_is_refused_postgres() {
    wrong_increment_is_refused(Kind::Postgres).await;
}

#[tokio::test]
async fn wrong_increment_is_refused_mariadb_sequence() {
    wrong_increment_is_refused(Kind::MariaDbSequence).await;
}

/// A counter that was never created is refused at start-up, naming what is missing.
async fn missing_counter_is_refused(kind: Kind, missing: &str) {
    let db = Db::new(kind).await;
    let pool = connect(kind, db.url()).await;
    if matches!(kind, Kind::MariaDbTable | Kind::Sqlite) {
        // The table exists, the row does not.
        source(kind, &pool, "other").create(BLOCK).await.unwrap();
    }
    let err = HiLo::new(source(kind, &pool, "orders"), BLOCK)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::HiLoSource { .. }), "{err:?}");
    assert!(err.to_string().contains(missing), "{err}");
}

#[tokio::test]
async fn missing_counter_is_refused_postgres() {
    missing_counter_is_refused(Kind::Postgres, "no sequence named orders").await;
}

#[tokio::test]
async fn missing_counter_is_refused_mariadb_sequence() {
    missing_counter_is_refused(Kind::MariaDbSequence, "no sequence named orders").await;
}

#[tokio::test]
async fn missing_counter_is_refused_mariadb_table() {
    missing_counter_is_refused(Kind::MariaDbTable, "no row 'orders' in table idgen_hilo").await;
}

#[tokio::test]
async fn missing_counter_is_refused_sqlite() {
    missing_counter_is_refused(Kind::Sqlite, "no row 'orders' in table idgen_hilo").await;
}

/// `HiLo::new(pool, block)` on each pool type, with the default counter `hilo`; the builder
/// names another. Blocks follow pooled-lo arithmetic exactly.
#[tokio::test]
async fn pools_convert_with_the_default_and_named_counters() {
    let pg = idgen_testkit::postgres().await.unwrap();
    PgSequence::new(pg.pool(), "hilo")
        .unwrap()
        .create(10)
        .await
        .unwrap();
    let ids = HiLo::new(pg.pool().clone(), 10).await.unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    assert_eq!(ids.stats().counter, "hilo");

    let my = idgen_testkit::mysql().await.unwrap();
    let detected = MySqlCounter::new(my.pool(), "orders", MySqlMode::Detect).unwrap();
    detected.create(10).await.unwrap();
    assert_eq!(detected.mode(), Some(MySqlMode::Sequence), "MariaDB ≥ 10.3");
    let ids = HiLo::builder(my.pool())
        .counter("orders")
        .block(10)
        .build()
        .await
        .unwrap();
    let got: Vec<i64> = [
        ids.next_id().await.unwrap(),
        ids.reserve(5).await.unwrap().start,
    ]
    .into();
    assert_eq!(got, [1, 2]);

    let lite = idgen_testkit::sqlite().await.unwrap();
    SqliteCounter::new(lite.pool(), "hilo")
        .unwrap()
        .create(7)
        .await
        .unwrap();
    let ids = HiLo::builder(lite.pool().clone())
        .block(7)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    let mut got = Vec::new();
    for _ in 0..9 {
        got.push(ids.next_id().await.unwrap());
    }
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let next: i64 = sqlx::query_scalar("SELECT next_val FROM idgen_hilo WHERE name = 'hilo'")
        .fetch_one(lite.pool())
        .await
        .unwrap();
    assert_eq!(next, 15, "two blocks of 7 taken: [1, 8) and [8, 15)");
}

/// The allocation never joins a caller's transaction: a block taken while the caller's
/// transaction is open stays taken after it rolls back.
#[tokio::test]
async fn a_rolled_back_transaction_does_not_return_a_table_block() {
    let db = idgen_testkit::sqlite().await.unwrap();
    let pool = db.pool().clone();
    let counter = SqliteCounter::new(&pool, "orders").unwrap();
    counter.create(BLOCK).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    sqlx::query("SELECT 1").execute(&mut *tx).await.unwrap();
    let first = counter.allocate(BLOCK).await;
    tx.rollback().await.unwrap();
    assert_eq!(first.unwrap(), 1);
    assert_eq!(counter.allocate(BLOCK).await.unwrap(), 101);
}

/// The caller's pool is exhausted by a transaction waiting for IDs: the refill still runs, on
/// the source's own connection, so this does not deadlock.
#[tokio::test]
async fn an_exhausted_caller_pool_does_not_block_the_refill() {
    let db = idgen_testkit::postgres().await.unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_millis(500))
        .connect(db.url())
        .await
        .unwrap();
    PgSequence::new(&pool, "orders")
        .unwrap()
        .create(10)
        .await
        .unwrap();
    let ids = HiLo::builder(&pool)
        .counter("orders")
        .block(10)
        .prefetch(false)
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    let mut tx = pool.begin().await.unwrap(); // the pool's only connection
    assert!(
        pool.acquire().await.is_err(),
        "the caller's pool is exhausted"
    );
    sqlx::query("CREATE TABLE t (id BIGINT PRIMARY KEY)")
        .execute(&mut *tx)
        .await
        .unwrap();
    for _ in 0..35 {
        let id = ids.next_id().await.unwrap(); // crosses three block boundaries
        sqlx::query("INSERT INTO t VALUES ($1)")
            .bind(id)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT count(DISTINCT id) FROM t")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 35);
}

/// A sequence set back (a restored backup, a lagging replica) is caught at the next block:
/// the generator fails closed instead of reissuing IDs.
#[tokio::test]
async fn a_sequence_set_back_fails_closed() {
    let db = idgen_testkit::postgres().await.unwrap();
    let seq = PgSequence::new(db.pool(), "orders").unwrap();
    seq.create(10).await.unwrap();
    let ids = HiLo::builder(seq)
        .block(10)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    for expected in 1..=15 {
        assert_eq!(ids.next_id().await.unwrap(), expected);
    }
    sqlx::query("SELECT setval('orders', 1, false)")
        .execute(db.pool())
        .await
        .unwrap();
    let err = loop {
        match ids.next_id().await {
            Ok(id) => assert!(id <= 20, "{id} is from the block fetched before the reset"),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(
            err,
            Error::HiLoCounterWentBackwards {
                start: 1,
                highest: 20,
                ..
            }
        ),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The database goes away mid-run, and comes back
// ---------------------------------------------------------------------------------------------

/// The server address of a URL (`scheme://user@host:port/db` → `host:port`), and the URL with
/// that address replaced by `via`.
fn reroute(url: &str, via: SocketAddr) -> (SocketAddr, String) {
    let after_scheme = url.find("://").unwrap() + 3;
    let authority_end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |i| after_scheme + i);
    let host_start = url[after_scheme..authority_end]
        .rfind('@')
        .map_or(after_scheme, |i| after_scheme + i + 1);
    let server = url[host_start..authority_end]
        .to_socket_addrs()
        .unwrap()
        .next()
        .unwrap();
    let rerouted = format!("{}{via}{}", &url[..host_start], &url[authority_end..]);
    (server, rerouted)
}

/// Makes the database unreachable and reachable again: a TCP proxy for servers; for SQLite,
/// another connection holding the write lock (`BEGIN EXCLUSIVE`).
enum Cutter {
    Proxy(idgen_testkit::TcpProxy),
    Lock(SqlitePool, Option<sqlx::pool::PoolConnection<sqlx::Sqlite>>),
}

impl Cutter {
    async fn cut(&mut self) {
        match self {
            Cutter::Proxy(proxy) => proxy.cut(),
            Cutter::Lock(pool, held) => {
                let mut conn = pool.acquire().await.unwrap();
                sqlx::query("BEGIN EXCLUSIVE")
                    .execute(&mut *conn)
                    .await
                    .unwrap();
                *held = Some(conn);
            }
        }
    }

    async fn restore(&mut self) {
        match self {
            Cutter::Proxy(proxy) => proxy.restore(),
            Cutter::Lock(_, held) => {
                let mut conn = held.take().unwrap();
                sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
            }
        }
    }
}

async fn outage(kind: Kind) {
    let db = Db::new(kind).await;
    let direct = connect(kind, db.url()).await;
    source(kind, &direct, "orders").create(BLOCK).await.unwrap();
    let (pool, mut cutter) = match kind {
        Kind::Sqlite => (
            connect_with(kind, db.url(), Duration::from_millis(20)).await,
            Cutter::Lock(
                SqlitePoolOptions::new()
                    .max_connections(1)
                    .connect(db.url())
                    .await
                    .unwrap(),
                None,
            ),
        ),
        _ => {
            let unused: SocketAddr = "127.0.0.1:9".parse().unwrap();
            let (server, _) = reroute(db.url(), unused);
            let proxy = idgen_testkit::TcpProxy::start(server).await.unwrap();
            let (_, url) = reroute(db.url(), proxy.addr());
            (connect(kind, &url).await, Cutter::Proxy(proxy))
        }
    };
    // At most 4 blocks buffered (the look-ahead would buffer more at this flat-out rate), so
    // the bound below (10 blocks) tells a buffer from a database that is not down.
    let ids = HiLo::builder(source(kind, &pool, "orders"))
        .block(BLOCK)
        .max_buffered_blocks(4)
        .timeout(Duration::from_millis(300))
        .backoff(Duration::from_millis(20), Duration::from_millis(200))
        .build()
        .await
        .unwrap();

    let mut issued = Vec::new();
    for _ in 0..250 {
        issued.push(ids.next_id().await.unwrap());
    }
    // Let the prefetch land, so that IDs are buffered when the database goes away.
    for _ in 0..100 {
        if ids.stats().buffered >= BLOCK {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let buffered = ids.stats().buffered;
    assert!(buffered >= BLOCK, "buffered {buffered}");

    cutter.cut().await;
    let mut served_while_down = 0_u64;
    let err = loop {
        match ids.next_id().await {
            Ok(id) => {
                issued.push(id);
                served_while_down += 1;
                assert!(
                    served_while_down <= 10 * BLOCK,
                    "IDs keep coming with the database down"
                );
            }
            Err(err) => break err,
        }
    };
    eprintln!(
        "{kind:?}: {served_while_down} IDs served with the database down ({buffered} buffered); then: {err}"
    );
    assert!(matches!(err, Error::HiLoUnavailable { .. }), "{err:?}");
    assert!(
        served_while_down >= buffered,
        "{served_while_down} < {buffered}"
    );
    assert_eq!(ids.try_next_id().unwrap(), None);

    cutter.restore().await;
    let recovered = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(id) = ids.next_id().await {
                return id;
            }
        }
    })
    .await
    .expect("recovers after the database is back");
    issued.push(recovered);
    for _ in 0..500 {
        issued.push(ids.next_id().await.unwrap());
    }

    assert!(issued.windows(2).all(|w| w[0] < w[1]), "increasing");
    // Nothing issued is handed out again: the next block from the database lies above all.
    let next = raw_allocation(kind, &direct, "orders").await;
    assert!(next.start > *issued.last().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_postgres() {
    outage(Kind::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_mariadb_sequence() {
    outage(Kind::MariaDbSequence).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_mariadb_table() {
    outage(Kind::MariaDbTable).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outage_sqlite() {
    outage(Kind::Sqlite).await;
}
