//! The hi-lo promises over diesel, checked the same way on each real database
//! (see `hilo_tests!`).

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::process::Command;

use diesel::r2d2::{ConnectionManager, Pool};
use idgen_diesel::Error;
use idgen_diesel::hilo::{DieselCounter, HiLo, HiLoConnection};
use idgen_diesel::lease::DieselPool;
use idgen_testkit::TestDb;

/// Processes of the multi-process test.
pub const PROCESSES: usize = 4;
/// IDs each process draws.
pub const IDS_PER_PROCESS: usize = 25_000;
/// The block size everywhere.
pub const BLOCK: u64 = 1000;

/// What each database's test file provides.
pub trait Backend: 'static {
    type Conn: HiLoConnection;
    type DB: sqlx::Database;
    fn test_db() -> impl Future<Output = TestDb<Self::DB>>;
    fn diesel_url(db: &TestDb<Self::DB>) -> String;
}

pub fn pool<B: Backend>(url: &str) -> DieselPool<B::Conn> {
    Pool::builder()
        .max_size(4)
        .build(ConnectionManager::<B::Conn>::new(url))
        .expect("an r2d2 pool")
}

/// A fresh database with the counter `hilo` (block 1000), and a pool to it.
pub async fn db_with_counter<B: Backend>() -> (TestDb<B::DB>, DieselPool<B::Conn>) {
    let db = B::test_db().await;
    let pool = pool::<B>(&B::diesel_url(&db));
    let counter = DieselCounter::new(&pool, "hilo").unwrap();
    tokio::task::spawn_blocking(move || counter.create(BLOCK))
        .await
        .unwrap()
        .expect("create the counter");
    (db, pool)
}

/// Four OS processes of this test binary draw 25,000 IDs each from one counter: all 100,000
/// are distinct and positive, and each process's IDs increase.
pub async fn four_processes_draw_distinct_ids<B: Backend>() {
    let (db, _pool) = db_with_counter::<B>().await;
    let url = B::diesel_url(&db);
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}.txt"));
            let child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "hilo_child", "--nocapture", "--test-threads=1"])
                .env("IDGEN_HILO_CHILD_URL", &url)
                .env("IDGEN_HILO_CHILD_OUT", &out)
                .spawn()
                .expect("spawn the child");
            (child, out)
        })
        .collect();
    let mut all = HashSet::new();
    for (mut child, out) in children {
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "child exited with {status}");
        let ids: Vec<i64> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(ids.len(), IDS_PER_PROCESS);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "not increasing in one process"
        );
        assert!(ids[0] >= 1);
        for id in ids {
            assert!(all.insert(id), "ID {id} issued twice");
        }
    }
    assert_eq!(all.len(), PROCESSES * IDS_PER_PROCESS);
}

/// An sqlx `HiLo` (this process, idgen-sqlx's source) and two diesel processes draw from one
/// counter at the same time: every ID is distinct.
pub async fn sqlx_and_diesel_processes_draw_distinct_ids<B: Backend>()
where
    for<'a> &'a sqlx::Pool<B::DB>: idgen_diesel::hilo::IntoHiLoSource<idgen_sqlx::hilo::PoolMarker>,
{
    let (db, _pool) = db_with_counter::<B>().await;
    let url = B::diesel_url(&db);
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..2)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}.txt"));
            let child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "hilo_child", "--nocapture", "--test-threads=1"])
                .env("IDGEN_HILO_CHILD_URL", &url)
                .env("IDGEN_HILO_CHILD_OUT", &out)
                .spawn()
                .expect("spawn the child");
            (child, out)
        })
        .collect();
    let sqlx_hilo = HiLo::new(db.pool(), BLOCK).await.expect("hi-lo over sqlx");
    let mut all = HashSet::new();
    for _ in 0..IDS_PER_PROCESS {
        assert!(all.insert(sqlx_hilo.next_id().await.unwrap()));
    }
    for (mut child, out) in children {
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "child exited with {status}");
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let id: i64 = line.parse().unwrap();
            assert!(all.insert(id), "ID {id} issued by sqlx and diesel");
        }
    }
    assert_eq!(all.len(), 3 * IDS_PER_PROCESS);
}

/// The child side of [`four_processes_draw_distinct_ids`] (a no-op as an ordinary test).
pub fn child_main<B: Backend>() {
    let (Ok(url), Ok(out)) = (
        std::env::var("IDGEN_HILO_CHILD_URL"),
        std::env::var("IDGEN_HILO_CHILD_OUT"),
    ) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ids = runtime.block_on(async {
        let pool = pool::<B>(&url);
        let hilo = HiLo::new(&pool, BLOCK)
            .await
            .expect("start hi-lo in the child");
        let mut ids = Vec::with_capacity(IDS_PER_PROCESS);
        for _ in 0..IDS_PER_PROCESS {
            ids.push(hilo.next_id().await.expect("an ID"));
        }
        ids
    });
    let text: Vec<String> = ids.iter().map(i64::to_string).collect();
    std::fs::write(out, text.join("\n")).unwrap();
}

/// A counter that is not there is named at start-up.
pub async fn a_missing_counter_is_named<B: Backend>() {
    let (_db, pool) = db_with_counter::<B>().await;
    let err = HiLo::builder(&pool)
        .counter("orders")
        .block(BLOCK)
        .build()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("orders"), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = HiLo::builder(&pool)
        .counter("orders; DROP TABLE x")
        .block(BLOCK)
        .build()
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("\"orders; DROP TABLE x\""),
        "{err}"
    );
}

/// A sequence created with another increment than the block is refused, naming both.
pub async fn a_sequence_with_another_increment_is_refused<B: Backend>() {
    let (_db, pool) = db_with_counter::<B>().await;
    let orders = DieselCounter::new(&pool, "orders_seq").unwrap();
    let create = orders.clone();
    tokio::task::spawn_blocking(move || create.create(500))
        .await
        .unwrap()
        .unwrap();
    let err = HiLo::new(orders, BLOCK).await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::HiLoIncrementMismatch {
                configured: 1000,
                database: 500,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("advances by 500"), "{err}");
}

/// The tests every database runs.
#[macro_export]
macro_rules! hilo_tests {
    ($backend:ty) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn four_processes_draw_25_000_distinct_ids_each() {
            hilo_common::four_processes_draw_distinct_ids::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_missing_counter_is_named() {
            hilo_common::a_missing_counter_is_named::<$backend>().await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn an_sqlx_process_and_diesel_processes_draw_distinct_ids() {
            hilo_common::sqlx_and_diesel_processes_draw_distinct_ids::<$backend>().await;
        }

        /// The child process of `four_processes_draw_25_000_distinct_ids_each`.
        #[test]
        fn hilo_child() {
            hilo_common::child_main::<$backend>();
        }
    };
}
