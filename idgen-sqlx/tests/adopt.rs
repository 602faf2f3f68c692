//! `idgen adopt` on real PostgreSQL and MariaDB servers: tables keyed by IDENTITY, BIGSERIAL,
//! AUTO_INCREMENT and a sequence default, with a child table holding a foreign key and a few
//! thousand rows. Plan refusals change nothing; apply keeps old keys, retires the default, is
//! idempotent and resumes after stopping at any step; hi-lo on an existing sequence hands no
//! value out twice while old writers call `nextval` during and after the change.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use idgen_sqlx::adopt::{self, AdoptError, AdoptOptions};
use idgen_sqlx::db_generator::DbGenerator;
use idgen_sqlx::hilo::HiLo;
use idgen_sqlx::{Layout, Snowflake};

mod common;
use common::sql::{number, run};

/// Rows in the parent table (and as many in the child).
const ROWS: i64 = 3000;

macro_rules! adopt_cases {
    (
        $module:ident, $db:ty, $testdb:path,
        schema: [$($fill:expr),+],
        sum: $sum:expr,
        lines_sequence: $lines_seq:expr,
        nextval: $nextval:expr,
        key_default: $key_default:expr,
        refused: [$(($name:literal, [$($setup:expr),+], $pattern:pat)),+ $(,)?],
        busy_holder: $busy:expr,
        begin: $begin:expr $(,)?
    ) => {
        mod $module {
            use super::*;

            type Pool = sqlx::Pool<$db>;

            async fn database() -> (idgen_testkit::TestDb<$db>, Pool) {
                common::sql::database($testdb(), 16).await
            }

            /// `orders` and `order_lines` (a foreign key to `orders`), ROWS rows each.
            async fn shop(pool: &Pool) {
                $(run(pool, $fill).await;)+
            }

            /// What an apply may change: the key columns' defaults, and the progress rows.
            async fn fingerprint(pool: &Pool) -> (String, i64, i64, i64) {
                let defaults: String = sqlx::query_scalar(sqlx::AssertSqlSafe($key_default.to_owned()))
                    .fetch_one(pool)
                    .await
                    .unwrap();
                let progress = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM idgen_adoption")
                    .fetch_one(pool)
                    .await
                    .unwrap_or(-1);
                let sum = number(pool, &$sum("id", "orders")).await;
                let lines = number(pool, &$sum("order_id", "order_lines")).await;
                (defaults, progress, sum, lines)
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn snowflake_adoption_keeps_old_keys_and_issues_above_them() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let before = fingerprint(&pool).await;
                let old_max = number(&pool, "SELECT MAX(id) FROM orders").await;
                assert_eq!(old_max, ROWS);

                let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap();
                let plan = adopt::plan(&pool, &options).await.unwrap();
                let names: Vec<&str> = plan.steps.iter().map(|s| s.name).collect();
                assert_eq!(names, ["progress-table", "check-keys", "retire-default"]);
                assert_eq!(plan.max_key, ROWS);
                assert!(!plan.finished());
                assert_eq!(fingerprint(&pool).await, before, "plan changed nothing");

                let applied = adopt::apply(&pool, &options).await.unwrap();
                assert!(applied.finished(), "{applied}");
                let after = fingerprint(&pool).await;
                assert_eq!((after.2, after.3), (before.2, before.3), "old keys and references unchanged");
                assert_ne!(after.0, before.0, "the default is retired: {}", after.0);
                assert!(!after.0.to_lowercase().contains("auto_increment") && !after.0.contains("orders:a"), "{}", after.0);

                // New orders get Snowflake keys above every old key; lines reference them.
                let ids = Snowflake::new(Layout::TWITTER, 7).unwrap();
                for _ in 0..100 {
                    let id = ids.next_id().unwrap().get();
                    assert!(id > old_max);
                    run(&pool, &format!("INSERT INTO orders (id, customer) VALUES ({id}, 1)")).await;
                    run(&pool, &format!("INSERT INTO order_lines (order_id, qty) VALUES ({id}, 2)")).await;
                }
                assert_eq!(number(&pool, "SELECT COUNT(*) FROM orders").await, ROWS + 100);
                assert_eq!(number(&pool, &format!("SELECT COUNT(*) FROM orders WHERE id <= {old_max}")).await, ROWS);
                let orphan = sqlx::raw_sql("INSERT INTO order_lines (order_id, qty) VALUES (-5, 1)").execute(&pool).await;
                assert!(orphan.is_err(), "the foreign key still holds");
                let keyless = sqlx::raw_sql("INSERT INTO orders (customer) VALUES (9)").execute(&pool).await;
                assert!(keyless.is_err(), "only idgen writes keys now");

                // A second apply changes nothing.
                let settled = fingerprint(&pool).await;
                let again = adopt::apply(&pool, &options).await.unwrap();
                assert!(again.finished());
                assert_eq!(fingerprint(&pool).await, settled);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn apply_stopped_after_each_step_resumes_to_the_same_result() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap();
                let steps = adopt::plan(&pool, &options).await.unwrap().steps.len();
                for done in 1..=steps {
                    let plan = adopt::apply_first(&pool, &options, 1).await.unwrap();
                    assert_eq!(plan.steps.iter().filter(|s| s.done).count(), done, "{plan}");
                }
                let resumed = fingerprint(&pool).await;

                // The same from scratch in one go, on another table pair.
                let (_db2, fresh) = database().await;
                shop(&fresh).await;
                adopt::apply(&fresh, &options).await.unwrap();
                assert_eq!(fingerprint(&fresh).await, resumed);

                // A step that ran but was not recorded (killed before its record) runs again.
                let (_db3, killed) = database().await;
                shop(&killed).await;
                let plan = adopt::apply_first(&killed, &options, 2).await.unwrap();
                let retire = plan.steps.iter().find(|s| s.name == "retire-default").unwrap();
                for sql in &retire.sql {
                    // The change itself, without the progress record and its transaction.
                    for statement in sql.split(";\n").filter(|s| s.contains("ALTER TABLE")) {
                        run(&killed, statement).await;
                    }
                }
                let finished = adopt::apply(&killed, &options).await.unwrap();
                assert!(finished.finished(), "{finished}");
                assert_eq!(fingerprint(&killed).await, resumed);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn plan_refuses_unsupported_tables_and_changes_nothing() {
                let (_db, pool) = database().await;
                $(
                    $(run(&pool, $setup).await;)+
                )+
                $(
                    let options = AdoptOptions::snowflake($name, Layout::TWITTER).unwrap();
                    let refused = adopt::plan(&pool, &options).await;
                    assert!(matches!(refused, Err($pattern)), "{}: {refused:?}", $name);
                    let message = refused.unwrap_err().to_string();
                    assert!(message.contains($name), "{message}");
                    let refused = adopt::apply(&pool, &options).await;
                    assert!(matches!(refused, Err($pattern)), "{}: {refused:?}", $name);
                )+
                let progress = sqlx::raw_sql("SELECT COUNT(*) FROM idgen_adoption").execute(&pool).await;
                assert!(progress.is_err(), "no progress table was created");
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn keys_above_the_layout_are_refused_naming_both_numbers() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let big = 1_i64 << 62;
                run(&pool, &format!("INSERT INTO orders (id, customer) OVERRIDING_PLACEHOLDER VALUES ({big}, 1)").replace(
                    "OVERRIDING_PLACEHOLDER ",
                    if stringify!($module) == "postgres" { "OVERRIDING SYSTEM VALUE " } else { "" },
                )).await;
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap();
                let err = adopt::plan(&pool, &options).await.unwrap_err();
                match &err {
                    AdoptError::KeysNotAbove { max_key, smallest, .. } => {
                        assert_eq!(*max_key, big);
                        assert!(err.to_string().contains(&big.to_string()));
                        assert!(err.to_string().contains(&smallest.to_string()));
                    }
                    other => panic!("{other:?}"),
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_database_generator_becomes_the_default() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER)
                    .unwrap()
                    .db_generator(DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true))
                    .accept_lost_key_readback();
                let plan = adopt::apply(&pool, &options).await.unwrap();
                assert!(plan.steps.iter().any(|s| s.name == "install-generator"), "{plan}");
                run(&pool, "INSERT INTO orders (customer) VALUES (-77)").await;
                let id = number(&pool, "SELECT id FROM orders WHERE customer = -77").await;
                assert!(id > ROWS, "{id}");
                Layout::TWITTER.decompose(idgen_sqlx::SnowflakeId::new(id).unwrap()).unwrap();
                let settled = fingerprint(&pool).await;
                assert!(adopt::apply(&pool, &options).await.unwrap().finished());
                assert_eq!(fingerprint(&pool).await, settled);
            }

            /// Writers that leave the key to the column's default insert throughout an
            /// adoption that makes the database-side generator the default: none fails, and
            /// every key written after it is above every old key.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn db_generator_adoption_under_concurrent_inserts_fails_no_write() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let stop = Arc::new(AtomicBool::new(false));
                let mut writers = Vec::new();
                for _ in 0..4 {
                    let (pool, stop) = (pool.clone(), stop.clone());
                    writers.push(tokio::spawn(async move {
                        let (mut written, mut failed) = (0_u32, Vec::new());
                        while !stop.load(Ordering::Relaxed) {
                            match sqlx::raw_sql("INSERT INTO orders (customer) VALUES (-1)").execute(&pool).await {
                                Ok(_) => written += 1,
                                Err(e) => failed.push(e.to_string()),
                            }
                        }
                        (written, failed)
                    }));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER)
                    .unwrap()
                    .db_generator(DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true))
                    .accept_lost_key_readback();
                assert!(adopt::apply(&pool, &options).await.unwrap().finished());
                let old_max = number(&pool, "SELECT MAX(id) FROM orders WHERE id < 1000000000").await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                stop.store(true, Ordering::Relaxed);
                let mut written = 0;
                for writer in writers {
                    let (w, failed) = writer.await.unwrap();
                    assert!(failed.is_empty(), "failed writes: {failed:?}");
                    written += w;
                }
                let rows = number(&pool, "SELECT COUNT(*) FROM orders").await;
                assert_eq!(rows, ROWS + i64::from(written));
                let idgen_keys = number(&pool, &format!("SELECT COUNT(*) FROM orders WHERE id > {old_max}")).await;
                assert!(idgen_keys > 0, "inserts after the adoption got idgen keys");
                assert!(old_max >= ROWS);
            }

            /// A long transaction that read the table keeps `retire-default` from its lock:
            /// the step tries briefly, again and again, then gives up; writers meanwhile never
            /// wait behind it for long (an `ALTER` waiting with a long time-out would hold
            /// every one of them up for that long).
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_step_waiting_for_its_lock_holds_writers_up_only_briefly() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let mut reader = pool.acquire().await.unwrap();
                for sql in [$begin, "SELECT COUNT(*) FROM orders"] {
                    sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut *reader).await.unwrap();
                }
                let stop = Arc::new(AtomicBool::new(false));
                let mut writers = Vec::new();
                for _ in 0..2 {
                    let (pool, stop) = (pool.clone(), stop.clone());
                    writers.push(tokio::spawn(async move {
                        let (mut written, mut slowest) = (0_u32, Duration::ZERO);
                        while !stop.load(Ordering::Relaxed) {
                            let started = std::time::Instant::now();
                            sqlx::raw_sql("INSERT INTO orders (customer) VALUES (-2)").execute(&pool).await.unwrap();
                            if written > 0 {
                                // (The first write also opened the connection.)
                                slowest = slowest.max(started.elapsed());
                            }
                            written += 1;
                        }
                        (written, slowest)
                    }));
                }
                let options = AdoptOptions::snowflake("orders", Layout::TWITTER)
                    .unwrap()
                    .lock_wait(Duration::from_millis(1500));
                let err = adopt::apply(&pool, &options).await.unwrap_err();
                assert!(matches!(err, AdoptError::Busy { step: "retire-default", tries: 3.., .. }), "{err:?}");
                stop.store(true, Ordering::Relaxed);
                for writer in writers {
                    let (written, slowest) = writer.await.unwrap();
                    assert!(written > 0);
                    eprintln!("{}: {written} writes, the slowest {slowest:?}", stringify!($module));
                    // Behind one ALTER waiting out the whole lock wait, they would wait 1.5 s.
                    // (Measured on a 2-core machine: PostgreSQL 0.18-0.31 s, MariaDB 24-41 ms,
                    // the same as with no step running at all.)
                    assert!(slowest < Duration::from_millis(1000), "a writer waited {slowest:?}");
                }
                sqlx::raw_sql("ROLLBACK").execute(&mut *reader).await.unwrap();
                drop(reader);
                assert!(adopt::apply(&pool, &options).await.unwrap().finished());
            }

            /// Old writers insert with the sequence's default (and call `nextval`) before,
            /// during and after the change; hi-lo writers start after it.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn hilo_on_the_existing_sequence_hands_out_no_value_twice() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let block = 100;
                let stop = Arc::new(AtomicBool::new(false));
                let mut writers = Vec::new();
                for _ in 0..4 {
                    let (pool, stop) = (pool.clone(), stop.clone());
                    writers.push(tokio::spawn(async move {
                        let mut keys = Vec::new();
                        while !stop.load(Ordering::Relaxed) {
                            let key: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe($nextval.to_owned()))
                                .fetch_one(&pool)
                                .await
                                .unwrap();
                            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                                "INSERT INTO order_lines (id, order_id, qty) VALUES ({key}, 1, 3)"
                            )))
                            .execute(&pool)
                            .await
                            .unwrap();
                            keys.push(key);
                        }
                        keys
                    }));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                let options = AdoptOptions::hilo("order_lines", block).unwrap();
                let plan = adopt::apply(&pool, &options).await.unwrap();
                assert!(plan.finished(), "{plan}");
                let ids = HiLo::builder(&pool)
                    .counter($lines_seq)
                    .block(block)
                    .build()
                    .await
                    .unwrap();
                let mut hilo = Vec::new();
                for _ in 0..1000 {
                    let key = ids.next_id().await.unwrap();
                    run(&pool, &format!("INSERT INTO order_lines (id, order_id, qty) VALUES ({key}, 1, 4)")).await;
                    hilo.push(key);
                }
                stop.store(true, Ordering::Relaxed);
                let mut old = Vec::new();
                for writer in writers {
                    old.extend(writer.await.unwrap());
                }
                let first_block = *hilo.iter().min().unwrap();
                assert!(old.iter().any(|k| *k < first_block), "old writers ran before the change");
                assert!(old.iter().any(|k| *k > first_block), "old writers ran after the change");
                let mut all: Vec<i64> = hilo.clone();
                all.extend(&old);
                let unique: HashSet<i64> = all.iter().copied().collect();
                assert_eq!(unique.len(), all.len(), "a value was handed out twice");
                assert!(hilo.iter().all(|k| *k > ROWS));
                assert_eq!(
                    number(&pool, "SELECT COUNT(*) FROM order_lines").await,
                    ROWS + i64::try_from(all.len()).unwrap()
                );
                assert!(adopt::apply(&pool, &options).await.unwrap().finished());
            }

            /// The hi-lo step ran (all of it, or on MariaDB any prefix of its statements)
            /// but was not recorded, as after a kill: apply runs it again, and the values
            /// handed out before and after stay distinct.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn hilo_step_killed_before_its_record_runs_again_safely() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let options = AdoptOptions::hilo("order_lines", 100).unwrap();
                adopt::apply_first(&pool, &options, 1).await.unwrap();
                let plan = adopt::plan(&pool, &options).await.unwrap();
                let step = plan.steps.iter().find(|s| s.name == "hilo-sequence").unwrap();
                let statements: Vec<String> = step
                    .sql
                    .iter()
                    .flat_map(|sql| sql.split(";\n"))
                    .filter(|s| !s.contains("idgen_adoption"))
                    .map(str::to_owned)
                    .collect();
                let mut handed_out = HashSet::new();
                for prefix in 1..=statements.len() {
                    let mut conn = pool.acquire().await.unwrap();
                    for sql in &statements[..prefix] {
                        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone())).execute(&mut *conn).await.unwrap();
                    }
                    if statements[..prefix].iter().any(|s| s == "BEGIN") && !statements[..prefix].iter().any(|s| s == "COMMIT") {
                        sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.unwrap();
                    }
                    drop(conn);
                    let key: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe($nextval.to_owned())).fetch_one(&pool).await.unwrap();
                    assert!(handed_out.insert(key), "{key} twice");
                }
                let plan = adopt::apply(&pool, &options).await.unwrap();
                assert!(plan.finished(), "{plan}");
                let ids = HiLo::builder(&pool).counter($lines_seq).block(100).build().await.unwrap();
                for _ in 0..300 {
                    let id = ids.next_id().await.unwrap();
                    assert!(id > ROWS && handed_out.insert(id), "{id}");
                    let key: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe($nextval.to_owned())).fetch_one(&pool).await.unwrap();
                    assert!(handed_out.insert(key), "{key} twice");
                }
            }

            /// A session that holds the sequence (its transaction called `nextval` and has not
            /// ended): the step gives up after its lock wait and changes nothing.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn hilo_refuses_while_another_session_holds_the_sequence() {
                let (_db, pool) = database().await;
                shop(&pool).await;
                let mut holder = pool.acquire().await.unwrap();
                for sql in $busy {
                    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned())).execute(&mut *holder).await.unwrap();
                }
                let started = std::time::Instant::now();
                let options = AdoptOptions::hilo("order_lines", 100).unwrap().lock_wait(Duration::from_secs(1));
                let err = adopt::apply(&pool, &options).await.unwrap_err();
                assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
                assert!(matches!(err, AdoptError::Busy { step: "hilo-sequence", .. }), "{err:?}");
                let sequence = $lines_seq.rsplit('.').next().unwrap();
                assert!(err.to_string().contains(&format!("lock on ")) && err.to_string().contains(sequence), "{err}");
                assert!(matches!(err, AdoptError::Busy { tries: 3.., .. }), "{err:?}");
                sqlx::raw_sql("ROLLBACK").execute(&mut *holder).await.unwrap();
                drop(holder);
                let plan = adopt::plan(&pool, &AdoptOptions::hilo("order_lines", 100).unwrap()).await.unwrap();
                assert!(!plan.steps.iter().find(|s| s.name == "hilo-sequence").unwrap().done);
                assert!(plan.steps.iter().find(|s| s.name == "hilo-sequence").unwrap().description.contains("(now 1)"));
                assert!(adopt::apply(&pool, &AdoptOptions::hilo("order_lines", 100).unwrap()).await.unwrap().finished());
            }
        }
    };
}

adopt_cases!(
    postgres, sqlx::Postgres, idgen_testkit::postgres,
    schema: [
        "CREATE TABLE orders (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)",
        "CREATE TABLE order_lines (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL REFERENCES orders (id), qty INT NOT NULL)",
        "INSERT INTO orders (customer) SELECT g FROM generate_series(1, 3000) AS g",
        "INSERT INTO order_lines (order_id, qty) SELECT id, 1 FROM orders"
    ],
    sum: |c: &str, t: &str| format!("SELECT SUM({c} % 1000003)::bigint FROM {t}"),
    lines_sequence: "public.order_lines_id_seq",
    nextval: "SELECT nextval('order_lines_id_seq')",
    key_default: "SELECT string_agg(c.relname || ':' || a.attidentity::text || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY c.relname) \
                  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
                  WHERE c.relname IN ('orders', 'order_lines') AND a.attname = 'id'",
    refused: [
        ("pairs", ["CREATE TABLE pairs (a BIGINT, b BIGINT, PRIMARY KEY (a, b))"], AdoptError::CompositeKey { .. }),
        ("tokens", ["CREATE TABLE tokens (id UUID PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("slugs", ["CREATE TABLE slugs (id TEXT PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("narrow", ["CREATE TABLE narrow (id SERIAL PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("heap", ["CREATE TABLE heap (id BIGINT)"], AdoptError::NoPrimaryKey { .. }),
        ("missing_table", ["SELECT 1"], AdoptError::TableNotFound { .. }),
        ("stamped", [
            "CREATE TABLE stamped (id BIGSERIAL PRIMARY KEY)",
            "CREATE FUNCTION stamp_id() RETURNS trigger AS $$ BEGIN NEW.id := 42; RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER stamp BEFORE INSERT ON stamped FOR EACH ROW EXECUTE FUNCTION stamp_id()"
        ], AdoptError::TriggerWritesKey { .. }),
    ],
    busy_holder: ["BEGIN", "SELECT nextval('order_lines_id_seq')"],
    begin: "BEGIN",
);

adopt_cases!(
    mariadb, sqlx::MySql, idgen_testkit::mysql,
    schema: [
        "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL) ENGINE = InnoDB",
        "CREATE SEQUENCE order_lines_seq START WITH 1 INCREMENT BY 1",
        "CREATE TABLE order_lines (id BIGINT NOT NULL DEFAULT NEXTVAL(order_lines_seq) PRIMARY KEY, order_id BIGINT NOT NULL, qty INT NOT NULL, \
         FOREIGN KEY (order_id) REFERENCES orders (id)) ENGINE = InnoDB",
        "INSERT INTO orders (customer) SELECT seq FROM seq_1_to_3000",
        "INSERT INTO order_lines (order_id, qty) SELECT id, 1 FROM orders ORDER BY id"
    ],
    sum: |c: &str, t: &str| format!("SELECT CAST(SUM({c} % 1000003) AS SIGNED) FROM {t}"),
    lines_sequence: "order_lines_seq",
    nextval: "SELECT NEXTVAL(order_lines_seq)",
    key_default: "SELECT GROUP_CONCAT(CONCAT(TABLE_NAME, ':', EXTRA, ':', REPLACE(COALESCE(COLUMN_DEFAULT, ''), DATABASE(), 'db')) ORDER BY TABLE_NAME) \
                  FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('orders', 'order_lines') AND COLUMN_NAME = 'id'",
    refused: [
        ("pairs", ["CREATE TABLE pairs (a BIGINT, b BIGINT, PRIMARY KEY (a, b))"], AdoptError::CompositeKey { .. }),
        ("tokens", ["CREATE TABLE tokens (id UUID PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("slugs", ["CREATE TABLE slugs (id VARCHAR(40) PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("narrow", ["CREATE TABLE narrow (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY)"], AdoptError::UnsupportedKeyType { .. }),
        ("heap", ["CREATE TABLE heap (id BIGINT)"], AdoptError::NoPrimaryKey { .. }),
        ("missing_table", ["SELECT 1"], AdoptError::TableNotFound { .. }),
        ("stamped", [
            "CREATE TABLE stamped (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY)",
            "CREATE TRIGGER stamp BEFORE INSERT ON stamped FOR EACH ROW SET NEW.id = 42"
        ], AdoptError::TriggerWritesKey { .. }),
    ],
    busy_holder: ["START TRANSACTION", "SELECT NEXTVAL(order_lines_seq)"],
    begin: "START TRANSACTION",
);

/// PostgreSQL: a user who may read the table but does not own it cannot alter it; the plan
/// says so, naming both, before any step runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_plan_refuses_a_table_the_user_does_not_own() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    for sql in [
        "CREATE TABLE owned (id BIGSERIAL PRIMARY KEY)",
        "DO $$ BEGIN CREATE ROLE adopt_guest LOGIN PASSWORD 'guest'; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        "GRANT SELECT ON owned TO adopt_guest",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .unwrap();
    }
    let url = db.url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.split_once('@').unwrap().1;
    let guest = sqlx::PgPool::connect(&format!("{scheme}://adopt_guest:guest@{host}"))
        .await
        .unwrap();
    let options = AdoptOptions::snowflake("owned", Layout::TWITTER).unwrap();
    let err = adopt::plan(&guest, &options).await.unwrap_err();
    assert!(matches!(err, AdoptError::NotOwner { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("user adopt_guest may not alter owned: it is owned by "),
        "{message}"
    );
}

/// PostgreSQL: hi-lo on a `GENERATED ALWAYS` identity first lets writers give keys (`SET
/// GENERATED BY DEFAULT`), then hi-lo writers insert beside the identity's old writers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_hilo_on_an_always_identity_lets_hilo_writers_give_keys() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    for sql in [
        "CREATE TABLE orders (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)",
        "INSERT INTO orders (customer) SELECT g FROM generate_series(1, 3000) AS g",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .unwrap();
    }
    let options = AdoptOptions::hilo("orders", 50).unwrap();
    let plan = adopt::apply(pool, &options).await.unwrap();
    let names: Vec<&str> = plan.steps.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["progress-table", "identity-by-default", "hilo-sequence"]
    );
    let ids = HiLo::builder(pool)
        .counter("public.orders_id_seq")
        .block(50)
        .build()
        .await
        .unwrap();
    for _ in 0..120 {
        let id = ids.next_id().await.unwrap();
        assert!(id > ROWS);
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "INSERT INTO orders (id, customer) VALUES ({id}, 0)"
        )))
        .execute(pool)
        .await
        .unwrap();
        // An old writer that leaves the key to the identity.
        sqlx::raw_sql("INSERT INTO orders (customer) VALUES (-1)")
            .execute(pool)
            .await
            .unwrap();
    }
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(count, ROWS + 240);
    assert!(adopt::plan(pool, &options).await.unwrap().finished());
}

/// MariaDB: `AUTO_INCREMENT` is no sequence; hi-lo on it is refused, saying what to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_hilo_on_auto_increment_is_refused() {
    let db = idgen_testkit::mysql().await.expect("a database");
    sqlx::raw_sql("CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY)")
        .execute(db.pool())
        .await
        .unwrap();
    let err = adopt::plan(db.pool(), &AdoptOptions::hilo("orders", 50).unwrap())
        .await
        .unwrap_err();
    assert!(matches!(err, AdoptError::Unsupported { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("orders.id is AUTO_INCREMENT, which is not a sequence"),
        "{err}"
    );
}

/// A trigger that only reads the key (`IF NEW.id = …`) is no reason to refuse; one that sets it
/// after `THEN` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_trigger_that_reads_the_key_is_not_refused() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    for sql in [
        "CREATE TABLE audited (id BIGSERIAL PRIMARY KEY, note TEXT)",
        "CREATE FUNCTION audit() RETURNS trigger AS $$ BEGIN IF NEW.id = 0 THEN RAISE NOTICE 'zero'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER audit BEFORE INSERT ON audited FOR EACH ROW EXECUTE FUNCTION audit()",
        "CREATE TABLE fixed (id BIGSERIAL PRIMARY KEY)",
        "CREATE FUNCTION fix() RETURNS trigger AS $$ BEGIN IF NEW.id < 0 THEN NEW.id = 1; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER fix BEFORE INSERT ON fixed FOR EACH ROW EXECUTE FUNCTION fix()",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .unwrap();
    }
    let snowflake = |t| AdoptOptions::snowflake(t, Layout::TWITTER).unwrap();
    adopt::plan(pool, &snowflake("audited")).await.unwrap();
    let err = adopt::plan(pool, &snowflake("fixed")).await.unwrap_err();
    assert!(
        matches!(err, AdoptError::TriggerWritesKey { .. }),
        "{err:?}"
    );
}

/// MariaDB: the same with `SET NEW.id = …`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_a_trigger_that_reads_the_key_is_not_refused() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = db.pool();
    for sql in [
        "CREATE TABLE audited (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, note TEXT)",
        "CREATE TRIGGER audit BEFORE INSERT ON audited FOR EACH ROW BEGIN IF NEW.id = 0 THEN SET NEW.note = 'zero'; END IF; END",
        "CREATE TABLE fixed (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, note TEXT)",
        "CREATE TRIGGER fix BEFORE INSERT ON fixed FOR EACH ROW BEGIN IF NEW.id < 0 THEN SET NEW.note = 'x', NEW.id = 1; END IF; END",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(pool)
            .await
            .unwrap();
    }
    let snowflake = |t| AdoptOptions::snowflake(t, Layout::TWITTER).unwrap();
    adopt::plan(pool, &snowflake("audited")).await.unwrap();
    let err = adopt::plan(pool, &snowflake("fixed")).await.unwrap_err();
    assert!(
        matches!(err, AdoptError::TriggerWritesKey { .. }),
        "{err:?}"
    );
}
