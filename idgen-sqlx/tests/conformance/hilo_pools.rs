//! Hi-lo over sqlx pools: what only idgen-sqlx's sources do (pool conversions, their own
//! connection). In the conformance binary, so its database servers are started once.

use std::time::Duration;

use idgen_sqlx::hilo::{HiLo, MySqlCounter, MySqlMode, PgSequence};
use sqlx::postgres::PgPoolOptions;

/// `HiLo::new(pool, block)` on each pool type, with the default counter `hilo`; the builder
/// names another, or creates the counter it uses (`create_if_missing`). Blocks follow pooled-lo
/// arithmetic exactly.
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
    let detected = MySqlCounter::new(my.pool(), "orders").unwrap();
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
    let ids = HiLo::builder(lite.pool().clone())
        .block(7)
        .prefetch(false)
        .create_if_missing(true)
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
