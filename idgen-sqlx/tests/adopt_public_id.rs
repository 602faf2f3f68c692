//! `idgen adopt` giving an existing table public IDs, online, on real PostgreSQL and MariaDB
//! servers: writers insert throughout (some giving their own public ID, some not knowing the
//! column), the backfill is stopped midway and resumed, an invalid index left by a failed
//! `CONCURRENTLY` build is rebuilt, and a column of the wrong type is refused.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use idgen_sqlx::adopt::{self, AdoptError, AdoptOptions};
use idgen_sqlx::uuid;
use idgen_sqlx::{Layout, PublicId};

mod common;
use common::sql::{number, run, text};

/// Rows in the table before the adoption.
const ROWS: i64 = 20_000;

/// What the writers did while the adoption ran.
#[derive(Default)]
struct Written {
    /// Rows inserted with a public ID of the writer's own: key → that ID.
    own: std::sync::Mutex<HashMap<i64, uuid::Uuid>>,
    /// Rows inserted without one.
    without: AtomicU64,
    failed: AtomicU64,
}

macro_rules! public_id_cases {
    (
        $module:ident, $db:ty, $testdb:path,
        schema: [$($fill:expr),+],
        insert_plain: $plain:expr,
        insert_own: $own:expr,
        has_column: $has_column:expr,
        digest: $digest:expr,
        pid_text: $pid:expr,
        not_yet: $not_yet:expr,
        not_v4: $not_v4:expr,
        wrong_type: $wrong:expr $(,)?
    ) => {
        mod $module {
            use super::*;

            type Pool = sqlx::Pool<$db>;

            async fn database() -> (idgen_testkit::TestDb<$db>, Pool) {
                common::sql::database($testdb(), 8).await
            }

            async fn shop(pool: &Pool) {
                $(run(pool, $fill).await;)+
            }

            /// Two writers until `stop`: one that does not know the column, one that gives its
            /// own public ID from the moment the column exists.
            fn writers(pool: &Pool, stop: Arc<AtomicBool>, written: Arc<Written>) -> Vec<tokio::task::JoinHandle<()>> {
                let plain = {
                    let (pool, stop, written) = (pool.clone(), stop.clone(), written.clone());
                    tokio::spawn(async move {
                        while !stop.load(Ordering::Relaxed) {
                            match sqlx::query($plain).bind(7_i64).execute(&pool).await {
                                Ok(_) => written.without.fetch_add(1, Ordering::Relaxed),
                                Err(e) => { eprintln!("plain writer: {e}"); written.failed.fetch_add(1, Ordering::Relaxed) }
                            };
                            tokio::time::sleep(Duration::from_millis(2)).await;
                        }
                    })
                };
                let own = {
                    let (pool, stop, written) = (pool.clone(), stop.clone(), written.clone());
                    tokio::spawn(async move {
                        let mut knows = false;
                        let mut n = 0_u64;
                        while !stop.load(Ordering::Relaxed) {
                            if !knows && n % 20 == 0 {
                                knows = number(&pool, $has_column).await > 0;
                            }
                            n += 1;
                            if knows {
                                let id = PublicId::<()>::new().uuid();
                                match sqlx::query_scalar::<_, i64>($own).bind(8_i64).bind(id).fetch_one(&pool).await {
                                    Ok(key) => { written.own.lock().unwrap().insert(key, id); }
                                    Err(e) => { eprintln!("own writer: {e}"); written.failed.fetch_add(1, Ordering::Relaxed); }
                                }
                            } else {
                                match sqlx::query($plain).bind(8_i64).execute(&pool).await {
                                    Ok(_) => written.without.fetch_add(1, Ordering::Relaxed),
                                    Err(e) => { eprintln!("own writer (before the column): {e}"); written.failed.fetch_add(1, Ordering::Relaxed) }
                                };
                            }
                            tokio::time::sleep(Duration::from_millis(2)).await;
                        }
                    })
                };
                vec![plain, own]
            }

            /// Every row has a public ID, each distinct and a version-4 UUID; the column is
            /// `NOT NULL` and unique.
            async fn check_public_ids(pool: &Pool) {
                let rows = number(pool, "SELECT COUNT(*) FROM orders").await;
                assert_eq!(number(pool, "SELECT COUNT(*) FROM orders WHERE public_id IS NULL").await, 0);
                assert_eq!(number(pool, "SELECT COUNT(DISTINCT public_id) FROM orders").await, rows);
                assert_eq!(number(pool, $not_v4).await, 0, "every public ID is a random version-4 UUID");
                let null = sqlx::raw_sql("INSERT INTO orders (customer, public_id) VALUES (1, NULL)").execute(pool).await;
                assert!(null.is_err(), "the column is NOT NULL");
                let twin = sqlx::raw_sql("INSERT INTO orders (customer, public_id) SELECT 1, public_id FROM orders WHERE customer = 1 LIMIT 1")
                    .execute(pool).await;
                assert!(twin.is_err(), "the column is unique");
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn public_ids_are_added_online_while_writers_insert() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let stop = Arc::new(AtomicBool::new(false));
                let written = Arc::new(Written::default());
                let writers = writers(&pool, stop.clone(), written.clone());
                tokio::time::sleep(Duration::from_millis(200)).await;

                let options = AdoptOptions::keep_keys("orders").unwrap().public_id("public_id").unwrap().backfill_batch(700).unwrap();
                let plan = adopt::plan(&pool, &options).await.unwrap();
                let names: Vec<&str> = plan.steps.iter().map(|s| s.name).collect();
                assert_eq!(names, ["progress-table", "public-id-column", "public-id-backfill", "public-id-unique-index", "public-id-not-null"]);
                assert_eq!(number(&pool, $has_column).await, 0, "plan changed nothing");

                let mut reports = Vec::new();
                let applied = adopt::apply_with_progress(&pool, &options, |p| reports.push(p.clone())).await.unwrap();
                assert!(applied.finished(), "{applied}");
                tokio::time::sleep(Duration::from_millis(200)).await;
                stop.store(true, Ordering::Relaxed);
                for w in writers { w.await.unwrap(); }

                assert_eq!(written.failed.load(Ordering::Relaxed), 0, "no write failed");
                let own = written.own.lock().unwrap().clone();
                assert!(!own.is_empty() && written.without.load(Ordering::Relaxed) > 0, "both writers wrote during the adoption");
                // The backfill reported every batch and filled the rows that were there.
                assert!(reports.len() >= (ROWS / 700) as usize, "{} reports", reports.len());
                assert!(reports.windows(2).all(|w| w[0].rows <= w[1].rows));
                let last = reports.last().unwrap();
                assert!(last.rows >= ROWS as u64 && last.rows <= last.rows_expected, "{last}");
                check_public_ids(&pool).await;
                // A writer's own public ID was kept: the backfill never overwrote one.
                let stored: HashMap<i64, uuid::Uuid> = sqlx::query_as("SELECT id, public_id FROM orders")
                    .fetch_all(&pool).await.unwrap().into_iter().collect();
                for (key, id) in &own {
                    assert_eq!(stored.get(key), Some(id), "row {key}");
                }
                // Run again: nothing changes.
                let digest = text(&pool, $digest).await;
                assert!(adopt::apply(&pool, &options).await.unwrap().finished());
                assert_eq!(text(&pool, $digest).await, digest);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_backfill_stopped_midway_resumes_and_keeps_what_it_gave() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap().public_id("public_id").unwrap().backfill_batch(500).unwrap();
                let names: Vec<&str> = adopt::plan(&pool, &options).await.unwrap().steps.iter().map(|s| s.name).collect();
                assert_eq!(names, ["progress-table", "check-keys", "retire-default", "public-id-column", "public-id-backfill", "public-id-unique-index", "public-id-not-null"]);

                // Stopped (the call dropped, as a time-out or a shutdown does) once a third of
                // the rows have one.
                let (seen, mut rows) = tokio::sync::watch::channel(0_u64);
                let running = {
                    let (pool, options) = (pool.clone(), options.clone());
                    tokio::spawn(async move {
                        adopt::apply_with_progress(&pool, &options, move |p| { let _ = seen.send(p.rows); }).await
                    })
                };
                rows.wait_for(|r| *r >= ROWS as u64 / 3).await.unwrap();
                running.abort();
                assert!(running.await.unwrap_err().is_cancelled());
                // A row the backfill has not reached reads as `not_yet` (PostgreSQL NULL, MariaDB
                // the nil UUID, the column being NOT NULL from the start there).
                let given = number(&pool, &format!("SELECT COUNT(*) FROM orders WHERE NOT ({})", $not_yet)).await;
                assert!((ROWS / 3..ROWS).contains(&given), "{given} rows had a public ID when stopped");
                assert_eq!(number(&pool, &format!("SELECT COUNT(*) FROM orders WHERE {}", $not_yet)).await, ROWS - given);
                let before: Vec<(i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT id, {} FROM orders WHERE NOT ({}) ORDER BY id", $pid, $not_yet
                ))).fetch_all(&pool).await.unwrap();
                assert_eq!(before.len() as i64, given);
                let plan = adopt::plan(&pool, &options).await.unwrap();
                assert!(!plan.steps.iter().find(|s| s.name == "public-id-backfill").unwrap().done);

                let resumed = adopt::apply(&pool, &options).await.unwrap();
                assert!(resumed.finished(), "{resumed}");
                check_public_ids(&pool).await;
                let after: HashMap<i64, String> = sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT id, {} FROM orders", $pid)))
                    .fetch_all(&pool).await.unwrap().into_iter().collect();
                for (key, id) in before {
                    assert_eq!(after.get(&key), Some(&id), "row {key} kept the public ID the stopped run gave it");
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_column_of_another_type_is_refused_and_nothing_changes() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                run(&pool, $wrong).await;
                let options = AdoptOptions::keep_keys("orders").unwrap().public_id("public_id").unwrap();
                let err = adopt::apply(&pool, &options).await.unwrap_err();
                assert!(matches!(err, AdoptError::PublicIdColumnType { .. }), "{err:?}");
                assert!(err.to_string().contains("orders.public_id") && err.to_string().contains("a public ID is"), "{err}");
                let progress = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM idgen_adoption").fetch_one(&pool).await;
                assert!(progress.is_err(), "not even the progress table was created");
                assert!(matches!(AdoptOptions::keep_keys("orders").unwrap().public_id("public_id").unwrap().backfill_batch(0), Err(AdoptError::BackfillBatch { .. })));
                let nothing = adopt::plan(&pool, &AdoptOptions::keep_keys("orders").unwrap()).await.unwrap_err();
                assert!(nothing.to_string().contains("nothing to adopt"), "{nothing}");
            }
        }
    };
}

public_id_cases!(
    postgres, sqlx::Postgres, idgen_testkit::postgres,
    schema: [
        "CREATE TABLE orders (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)",
        "INSERT INTO orders (customer) SELECT 1 FROM generate_series(1, 20000)"
    ],
    insert_plain: "INSERT INTO orders (customer) VALUES ($1)",
    insert_own: "INSERT INTO orders (customer, public_id) VALUES ($1, $2) RETURNING id",
    has_column: "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'public_id'",
    digest: "SELECT string_agg(public_id::text, ',' ORDER BY id) FROM orders",
    pid_text: "public_id::text",
    not_yet: "public_id IS NULL",
    not_v4: "SELECT COUNT(*) FROM orders WHERE substr(public_id::text, 15, 1) <> '4' OR substr(public_id::text, 20, 1) NOT IN ('8', '9', 'a', 'b')",
    wrong_type: "ALTER TABLE orders ADD COLUMN public_id TEXT",
);

public_id_cases!(
    mariadb, sqlx::MySql, idgen_testkit::mysql,
    schema: [
        "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL) ENGINE = InnoDB",
        "INSERT INTO orders (customer) SELECT 1 FROM seq_1_to_20000"
    ],
    insert_plain: "INSERT INTO orders (customer) VALUES (?)",
    insert_own: "INSERT INTO orders (customer, public_id) VALUES (?, ?) RETURNING id",
    has_column: "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'public_id'",
    digest: "SELECT GROUP_CONCAT(HEX(public_id) ORDER BY id SEPARATOR ',') FROM orders",
    pid_text: "HEX(public_id)",
    not_yet: "public_id = 0x00000000000000000000000000000000",
    not_v4: "SELECT COUNT(*) FROM orders WHERE SUBSTR(HEX(public_id), 13, 1) <> '4' OR SUBSTR(HEX(public_id), 17, 1) NOT IN ('8', '9', 'A', 'B')",
    wrong_type: "ALTER TABLE orders ADD COLUMN public_id VARCHAR(36)",
);

/// PostgreSQL: an invalid index left by a `CREATE UNIQUE INDEX CONCURRENTLY` that failed is
/// found, dropped and built again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_invalid_index_left_by_a_failed_build_is_rebuilt() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = sqlx::PgPool::connect(db.url()).await.unwrap();
    for sql in [
        "CREATE TABLE orders (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)",
        "INSERT INTO orders (customer) SELECT 1 FROM generate_series(1, 2000)",
    ] {
        sqlx::raw_sql(sql).execute(&pool).await.unwrap();
    }
    let options = AdoptOptions::keep_keys("orders")
        .unwrap()
        .public_id("public_id")
        .unwrap();
    // Column and backfill done; then two rows made to share a public ID, so that a concurrent
    // build of the unique index fails and leaves an invalid index behind.
    adopt::apply_first(&pool, &options, 3).await.unwrap();
    sqlx::raw_sql(
        "UPDATE orders SET public_id = (SELECT public_id FROM orders WHERE id = 1) WHERE id = 2",
    )
    .execute(&pool)
    .await
    .unwrap();
    let failed = sqlx::raw_sql(
        "CREATE UNIQUE INDEX CONCURRENTLY orders_public_id_key ON orders (public_id)",
    )
    .execute(&pool)
    .await;
    assert!(failed.is_err(), "the build fails on the duplicate");
    let invalid = "SELECT COUNT(*) FROM pg_index WHERE indexrelid = to_regclass('orders_public_id_key') AND NOT indisvalid";
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(count(invalid).await, 1, "an invalid index is left");
    sqlx::raw_sql("UPDATE orders SET public_id = gen_random_uuid() WHERE id = 2")
        .execute(&pool)
        .await
        .unwrap();

    let applied = adopt::apply(&pool, &options).await.unwrap();
    assert!(applied.finished(), "{applied}");
    assert_eq!(count(invalid).await, 0);
    assert_eq!(
        count("SELECT COUNT(*) FROM pg_constraint WHERE conname = 'orders_public_id_key' AND contype = 'u'").await,
        1,
        "the rebuilt index became the UNIQUE constraint"
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'public_id' AND attnotnull").await,
        1
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM pg_constraint WHERE conname = 'orders_public_id_not_null'")
            .await,
        0,
        "the helper check is gone"
    );
}

/// MariaDB: the column is `NOT NULL` from its first step (rows already there read the nil UUID
/// until the backfill reaches them), so that `NOT NULL` costs no rebuild of the table: the
/// table's InnoDB id is the same after the adoption as before. A column an earlier version
/// added nullable (a run stopped after its first steps) is still filled and made `NOT NULL`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_the_column_is_not_null_from_its_first_step_and_no_step_rebuilds_the_table() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = sqlx::MySqlPool::connect(db.url()).await.unwrap();
    let run = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::raw_sql(sql).execute(&pool).await.unwrap() }
    };
    let number = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    let nullable = "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
                    AND TABLE_NAME = 'orders' AND COLUMN_NAME = 'public_id' AND IS_NULLABLE = 'YES'";
    let table_id = "SELECT CAST(TABLE_ID AS SIGNED) FROM information_schema.INNODB_SYS_TABLES WHERE NAME = CONCAT(DATABASE(), '/orders')";
    let nil = "SELECT COUNT(*) FROM orders WHERE public_id = 0x00000000000000000000000000000000";
    let not_v4 = "SELECT COUNT(*) FROM orders WHERE public_id IS NULL OR SUBSTR(HEX(public_id), 13, 1) <> '4' \
                  OR SUBSTR(HEX(public_id), 17, 1) NOT IN ('8', '9', 'A', 'B')";
    run("CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL) ENGINE = InnoDB").await;
    run("INSERT INTO orders (customer) SELECT 1 FROM seq_1_to_2000").await;
    let options = AdoptOptions::keep_keys("orders")
        .unwrap()
        .public_id("public_id")
        .unwrap();
    let before = number(table_id).await;

    // The progress table and the column.
    adopt::apply_first(&pool, &options, 2).await.unwrap();
    assert_eq!(
        number(nullable).await,
        0,
        "the column is NOT NULL from the start"
    );
    assert_eq!(
        number(nil).await,
        2000,
        "rows already there read the nil UUID"
    );
    run("INSERT INTO orders (customer) VALUES (2)").await;
    assert_eq!(
        number(nil).await,
        2000,
        "a new row takes the random default"
    );

    let applied = adopt::apply(&pool, &options).await.unwrap();
    assert!(applied.finished(), "{applied}");
    assert_eq!(number(nullable).await, 0);
    assert_eq!(
        number(not_v4).await,
        0,
        "every row has a version-4 public ID"
    );
    assert_eq!(
        number(table_id).await,
        before,
        "no step rebuilt the table (a rebuild gives it a new InnoDB id)"
    );

    // A column an earlier version added: nullable, its default set, some rows still NULL.
    run("DROP TABLE orders").await;
    run("DELETE FROM idgen_adoption").await;
    run("CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL, public_id BINARY(16) NULL) ENGINE = InnoDB").await;
    run("INSERT INTO orders (customer) SELECT 1 FROM seq_1_to_2000").await;
    run("UPDATE orders SET public_id = CONCAT(RANDOM_BYTES(6), CHAR(0x40 | (ASCII(RANDOM_BYTES(1)) & 15)), RANDOM_BYTES(1), \
         CHAR(0x80 | (ASCII(RANDOM_BYTES(1)) & 63)), RANDOM_BYTES(7)) WHERE id <= 10").await;
    let applied = adopt::apply(&pool, &options).await.unwrap();
    assert!(applied.finished(), "{applied}");
    assert_eq!(
        number(nullable).await,
        0,
        "the older nullable column was made NOT NULL"
    );
    assert_eq!(number(not_v4).await, 0);
    assert_eq!(
        number("SELECT COUNT(DISTINCT public_id) FROM orders").await,
        2000
    );
}
