//! The database-side generator on a real MariaDB server, where MariaDB differs from PostgreSQL:
//! a claim made through a transaction of idgen's own (not one `UPDATE … RETURNING`), the jump
//! lock (a named lock, `GET_LOCK`, which a killed statement keeps), literals parsed under the
//! session's `sql_mode`, and the in-transaction check of a pooled connection.

use std::time::Duration;

use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::lease::{ClaimRequest, LeaseStore, SqlxLeaseStore};
use idgen_sqlx::{Dialect, Layout, SnowflakeId};

type Pool = sqlx::MySqlPool;

/// A fresh database and a pool of up to 8 connections to it.
async fn database() -> (idgen_testkit::TestDb<sqlx::MySql>, Pool) {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = sqlx::mysql::MySqlPoolOptions::new()
        .max_connections(8)
        .connect(db.url())
        .await
        .expect("a pool");
    (db, pool)
}

/// `n` IDs from the function; the last one.
async fn issue(pool: &Pool, generator: &DbGenerator, n: usize) -> i64 {
    let sql = generator.next_id_sql(Dialect::MySql).unwrap();
    let mut last = 0;
    for _ in 0..n {
        last = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .fetch_one(pool)
            .await
            .unwrap();
    }
    last
}

fn unix_ms(layout: &Layout, id: i64) -> i64 {
    layout
        .decompose(SnowflakeId::try_from(id).unwrap())
        .unwrap()
        .unix_ms
}

/// Issue 36, item 5: the fence trigger raises the row's last timestamp as a claim takes the
/// database's row (an operator ended its lease, holder kept); the claim must start after it.
/// On MariaDB the claim locks the row, then updates it: the last timestamp it read with the
/// lock is the one from before the trigger ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_of_the_databases_row_starts_after_what_the_function_issued() {
    let (_db, pool) = database().await;
    let layout = Layout::TWITTER;
    let generator = DbGenerator::new(layout);
    let node = db_generator::install(&pool, &generator).await.unwrap();
    assert_eq!(node, 0, "a fresh lease table: the lowest node ID");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let issued_ms = unix_ms(&layout, issue(&pool, &generator, 20).await);

    // An operator ends the database's lease by hand, its holder kept: the trigger leaves such
    // an update alone, and the row is now expired, the lowest one.
    sqlx::query(
        "UPDATE idgen_worker_lease SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND \
         WHERE namespace = 'default' AND node = ?",
    )
    .bind(node as i64)
    .execute(&pool)
    .await
    .unwrap();
    let store = SqlxLeaseStore::new(pool.clone());
    let stored = store.rows("default").await.unwrap()[0].last_timestamp_ms;
    assert!(
        stored.is_none_or(|ms| ms < issued_ms),
        "the premise: the row's last timestamp ({stored:?}) is below the last ID's ({issued_ms})"
    );

    let claim = LeaseStore::claim(
        &store,
        ClaimRequest {
            namespace: "default",
            capacity: layout.node_capacity(),
            holder: "app-1",
            ttl: Duration::from_secs(10),
        },
    )
    .await
    .unwrap()
    .expect("a node ID");
    assert_eq!(claim.node, node, "the database's expired row");
    let row = store.rows("default").await.unwrap()[0].last_timestamp_ms;
    assert!(
        row.is_some_and(|ms| ms >= issued_ms),
        "the trigger raised the row to {row:?}, at or above {issued_ms}"
    );
    assert!(
        claim.last_timestamp_ms.is_some_and(|ms| ms >= issued_ms),
        "the claim starts from {:?}, below the function's last ID at {issued_ms} ms: its IDs \
         could repeat the function's",
        claim.last_timestamp_ms
    );
}
