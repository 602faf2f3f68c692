//! Hi-lo over two PostgreSQL servers (Flickr's ticket servers) through idgen-testkit: one
//! server cut off mid-run, IDs keep coming from the other, both used again once it is back,
//! no duplicates; overlapping settings refused at start-up, naming both counters.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use idgen_sqlx::Error;
use idgen_sqlx::hilo::{PgStripe, StripedHiLo};
use idgen_testkit::{TcpProxy, TestDb};
use sqlx::{PgPool, Postgres};

const BLOCK: u64 = 50;

/// The server of `db` behind a proxy the test can cut, and a pool through it.
async fn through_proxy(db: &TestDb<Postgres>) -> (TcpProxy, PgPool) {
    let authority = db.url().split('/').nth(2).unwrap();
    let host_port = authority.rsplit('@').next().unwrap();
    let proxy = TcpProxy::start(host_port.parse().unwrap()).await.unwrap();
    let url = db.url().replace(host_port, &proxy.addr().to_string());
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(2))
        .connect(&url)
        .await
        .unwrap();
    (proxy, pool)
}

/// Which server's stripe an ID is from: blocks alternate, A's first.
fn stripe(id: i64) -> u64 {
    ((id as u64 - 1) / BLOCK) % 2
}

/// `n` IDs taken by 4 tasks at once.
async fn take(ids: &Arc<StripedHiLo>, n: usize) -> Vec<i64> {
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut out = Vec::new();
                for _ in 0..n / 4 {
                    out.push(ids.next_id().await.expect("an ID while one server is up"));
                }
                out
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ids_keep_coming_while_one_server_is_down_and_both_serve_after() {
    let db_a = idgen_testkit::local_server::postgres().await.unwrap();
    let db_b = idgen_testkit::local_server::postgres_second_server()
        .await
        .unwrap();
    let (proxy_a, pool_a) = through_proxy(&db_a).await;
    let (_proxy_b, pool_b) = through_proxy(&db_b).await;
    let a = PgStripe::new(&pool_a, "ticket_seq").unwrap();
    let b = PgStripe::new(&pool_b, "ticket_seq").unwrap();
    a.create(BLOCK, 2, 0).await.unwrap();
    b.create(BLOCK, 2, 1).await.unwrap();
    let ids = Arc::new(
        StripedHiLo::with_options(vec![a, b], BLOCK, |builder| {
            builder
                .max_buffered_blocks(2)
                .timeout(Duration::from_secs(5))
                .backoff(Duration::from_millis(20), Duration::from_millis(200))
        })
        .await
        .unwrap(),
    );

    let before = take(&ids, 2_000).await;
    assert_eq!(
        before
            .iter()
            .map(|&id| stripe(id))
            .collect::<HashSet<_>>()
            .len(),
        2,
        "both servers serve"
    );

    proxy_a.cut();
    let started = Instant::now();
    let during = take(&ids, 4_000).await;
    // A's buffer (at most a few blocks) drains; then every ID comes from B.
    let from_a = during.iter().filter(|&&id| stripe(id) == 0).count();
    assert!(
        from_a <= 4 * BLOCK as usize,
        "{from_a} IDs from the server that is down"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "IDs kept coming"
    );

    proxy_a.restore();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut after = Vec::new();
    while Instant::now() < deadline {
        after.extend(take(&ids, 400).await);
        if after.iter().rev().take(400).any(|&id| stripe(id) == 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    after.extend(take(&ids, 2_000).await);
    let last = &after[after.len() - 2_000..];
    assert_eq!(
        last.iter()
            .map(|&id| stripe(id))
            .collect::<HashSet<_>>()
            .len(),
        2,
        "both servers serve again"
    );

    let all: Vec<i64> = before.into_iter().chain(during).chain(after).collect();
    let distinct: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len(), "duplicate IDs");
}

#[tokio::test]
async fn overlapping_settings_are_refused_naming_both_counters() {
    let db_a = idgen_testkit::local_server::postgres().await.unwrap();
    let db_b = idgen_testkit::local_server::postgres_second_server()
        .await
        .unwrap();
    let a = PgStripe::new(db_a.pool(), "left_seq").unwrap();
    a.create(BLOCK, 2, 0).await.unwrap();
    // Half a block off: B's blocks would start inside A's.
    sqlx::raw_sql("CREATE SEQUENCE right_seq INCREMENT BY 100 START WITH 26")
        .execute(db_b.pool())
        .await
        .unwrap();
    let b = PgStripe::new(db_b.pool(), "right_seq").unwrap();
    let err = StripedHiLo::new(vec![a.clone(), b], BLOCK)
        .await
        .err()
        .unwrap();
    let Error::HiLoCountersOverlap { first, second, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!((first.as_str(), second.as_str()), ("left_seq", "right_seq"));
    assert!(err.to_string().contains("(start 1, step 100)"), "{err}");
    assert!(err.to_string().contains("(start 26, step 100)"), "{err}");

    // The same settings on both servers: every block of one is a block of the other.
    let twin = PgStripe::new(db_b.pool(), "twin_seq").unwrap();
    twin.create(BLOCK, 2, 0).await.unwrap();
    let err = StripedHiLo::new(vec![a, twin], BLOCK).await.err().unwrap();
    assert!(err.to_string().contains("block starts 0 apart"), "{err}");
}
