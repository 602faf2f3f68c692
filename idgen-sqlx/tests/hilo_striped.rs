//! Hi-lo over two PostgreSQL servers (Flickr's ticket servers) through idgen-testkit: one
//! server stopped mid-run, IDs keep coming from the other, both used again once it is started
//! again, no duplicates; overlapping settings refused at start-up, naming both counters.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use idgen_sqlx::ErrorKind;
use idgen_sqlx::hilo::{PgStripe, StripedHiLo};
use idgen_testkit::local_server::StoppablePostgres;

const BLOCK: u64 = 50;

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
    let mut server_a = StoppablePostgres::launch().await.unwrap();
    let db_a = server_a.database().await.unwrap();
    let db_b = idgen_testkit::local_server::postgres().await.unwrap();
    let a = PgStripe::new(db_a.pool(), "ticket_seq").unwrap();
    let b = PgStripe::new(db_b.pool(), "ticket_seq").unwrap();
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

    server_a.stop().await.unwrap();
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

    server_a.start().await.unwrap();
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
    let server_a = StoppablePostgres::launch().await.unwrap();
    let db_a = server_a.database().await.unwrap();
    let db_b = idgen_testkit::local_server::postgres().await.unwrap();
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
    let ErrorKind::HiLoCountersOverlap { first, second, .. } = err.kind() else {
        panic!("{err}");
    };
    // Each counter is named with its server, as the same name is typical on every server.
    let at = |db: &idgen_testkit::TestDb<sqlx::Postgres>| {
        let o = db.pool().connect_options();
        format!(
            "{}:{}/{}",
            o.get_host(),
            o.get_port(),
            o.get_database().unwrap()
        )
    };
    assert_eq!(
        (first.as_str(), second.as_str()),
        (
            format!("left_seq on {}", at(&db_a)).as_str(),
            format!("right_seq on {}", at(&db_b)).as_str()
        )
    );
    assert!(err.to_string().contains("(start 1, step 100)"), "{err}");
    assert!(err.to_string().contains("(start 26, step 100)"), "{err}");

    // The same settings on both servers: every block of one is a block of the other.
    let twin = PgStripe::new(db_b.pool(), "twin_seq").unwrap();
    twin.create(BLOCK, 2, 0).await.unwrap();
    let err = StripedHiLo::new(vec![a, twin], BLOCK).await.err().unwrap();
    assert!(err.to_string().contains("block starts 0 apart"), "{err}");
}

/// A `setval` on one server while the striped hi-lo runs moves that counter into the other's
/// stripe: its next block is refused (off its grid, `start + k × step`), never served, so no ID
/// is handed out twice.
#[tokio::test]
async fn a_block_moved_into_the_other_stripe_is_refused_not_served() {
    let db_a = idgen_testkit::local_server::postgres().await.unwrap();
    let db_b = idgen_testkit::local_server::postgres().await.unwrap();
    let a = PgStripe::new(db_a.pool(), "moved_seq").unwrap();
    let b = PgStripe::new(db_b.pool(), "moved_seq").unwrap();
    a.create(BLOCK, 2, 0).await.unwrap();
    b.create(BLOCK, 2, 1).await.unwrap();
    let ids = StripedHiLo::with_options(vec![a, b], BLOCK, |builder| {
        builder.prefetch(false).timeout(Duration::from_secs(5))
    })
    .await
    .unwrap();
    // Both servers' first blocks: A's 1..=50, B's 51..=100.
    let mut seen = Vec::new();
    for _ in 0..2 * BLOCK {
        seen.push(ids.next_id().await.unwrap());
    }
    // An operator sets A's sequence to B's next block start (a `setval` on the wrong server).
    sqlx::raw_sql("SELECT setval('moved_seq', 151, false)")
        .execute(db_a.pool())
        .await
        .unwrap();
    let err = loop {
        match ids.next_id().await {
            Ok(id) => seen.push(id),
            Err(err) => break err,
        }
        assert!(
            seen.len() < 20 * BLOCK as usize,
            "A's moved block was never refused"
        );
    };
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoBlockOffGrid {
                start: 151,
                origin: 1,
                step: 100,
                ..
            }
        ),
        "{err:?}"
    );
    let distinct: HashSet<i64> = seen.iter().copied().collect();
    assert_eq!(distinct.len(), seen.len(), "duplicate IDs");
    assert!(
        seen.iter()
            .all(|&id| id <= 2 * BLOCK as i64 || stripe(id) == 1),
        "an ID of A's moved block was served: {seen:?}"
    );
}
