//! diesel's own insert paths as writers while `idgen adopt` switches `orders` from its identity
//! / `AUTO_INCREMENT` to the database-side generator (issue 38): PostgreSQL `insert_into(…)
//! .returning(id).get_result`, MySQL/MariaDB `insert_into(…).execute` then
//! `select(LAST_INSERT_ID())` (diesel has no `RETURNING` there). Each writer inserts an order
//! tagged with its own tag, reads its key back that way, and inserts two lines under it with
//! the same tag, in one transaction. Checked: no statement failed, every line is under the
//! order its writer inserted, and keys from the generator were read back after the switch.
//! (The adoption itself runs through idgen-sqlx, a dev-dependency; the scenario with kills,
//! public IDs and latencies is idgen-sqlx's `adopt_scenario`.)

#![allow(missing_docs)] // the items diesel's `table!` writes

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use diesel::prelude::*;
use idgen_sqlx::Layout;
use idgen_sqlx::adopt::{self, AdoptOptions};
use idgen_sqlx::db_generator::DbGenerator;

diesel::table! {
    orders (id) {
        id -> BigInt,
        customer -> BigInt,
    }
}

diesel::table! {
    order_lines (id) {
        id -> BigInt,
        order_id -> BigInt,
        tag -> BigInt,
    }
}

/// Orders before the adoption (each with one line).
const ROWS: i64 = 2000;

fn options() -> AdoptOptions {
    AdoptOptions::snowflake("orders", Layout::TWITTER)
        .unwrap()
        .db_generator(
            DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true),
        )
        // MariaDB: a multi-row insert's keys are no longer consecutive (no writer relies on it).
        .accept_lost_key_readback()
}

/// What one writer did: its keys in order, and the errors of the statements that failed.
type Written = (Vec<i64>, Vec<String>);

macro_rules! writers_case {
    ($name:ident, $testdb:path, $conn:ty, schema: [$($ddl:expr),+], insert_order: $insert:item) => {
        $insert

        /// One writer on its own connection, until `stop`: an order, its key, two lines.
        fn writer(url: String, writer: i64, stop: Arc<AtomicBool>) -> Written {
            let mut conn = <$conn>::establish(&url).expect("a diesel connection");
            let (mut keys, mut failed) = (Vec::new(), Vec::new());
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let tag = (writer + 1) * 1_000_000_000 + n;
                let written = conn.transaction(|c| {
                    let key = insert_order(c, tag)?;
                    let line = || (order_lines::order_id.eq(key), order_lines::tag.eq(tag));
                    diesel::insert_into(order_lines::table).values(&vec![line(), line()]).execute(c)?;
                    QueryResult::Ok(key)
                });
                match written {
                    Ok(key) => keys.push(key),
                    Err(e) => failed.push(e.to_string()),
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            (keys, failed)
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let db = $testdb().await.expect("a test database");
            let pool = db.pool().clone();
            $(sqlx::raw_sql($ddl).execute(&pool).await.unwrap();)+
            let stop = Arc::new(AtomicBool::new(false));
            let writers: Vec<_> = (0..2)
                .map(|w| {
                    let (url, stop) = (db.url().to_owned(), stop.clone());
                    std::thread::spawn(move || writer(url, w, stop))
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(adopt::apply(&pool, &options()).await.unwrap().finished());
            tokio::time::sleep(Duration::from_millis(500)).await;
            stop.store(true, Ordering::Relaxed);
            let mut all = Vec::new();
            for w in writers {
                let (keys, failed) = w.join().unwrap();
                assert!(failed.is_empty(), "failed statements: {failed:?}");
                assert!(keys.windows(2).all(|k| k[0] < k[1]), "a writer's keys increase");
                all.extend(keys);
            }
            let from_idgen = all.iter().filter(|k| **k > 1 << 32).count();
            assert!(from_idgen > 0, "writers read keys from the generator after the switch");
            eprintln!("{}: {} orders written, {from_idgen} with the generator's keys", stringify!($name), all.len());
            let count = |sql: &'static str| {
                let pool = pool.clone();
                async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
            };
            assert_eq!(count("SELECT COUNT(*) FROM orders").await, ROWS + all.len() as i64);
            assert_eq!(count("SELECT COUNT(*) FROM order_lines WHERE tag > 1000000").await, 2 * all.len() as i64);
            let wrong = "SELECT COUNT(*) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE l.tag <> o.customer";
            assert_eq!(count(wrong).await, 0, "every line is under the order its writer inserted");
        }
    };
}

mod postgres {
    use super::*;

    writers_case!(
        diesel_writers_keep_their_keys_through_the_switch,
        idgen_testkit::postgres,
        diesel::PgConnection,
        schema: [
            "CREATE TABLE orders (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)",
            "CREATE TABLE order_lines (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL REFERENCES orders (id), tag BIGINT NOT NULL)",
            "INSERT INTO orders (customer) SELECT g FROM generate_series(1, 2000) AS g",
            "INSERT INTO order_lines (order_id, tag) SELECT id, customer FROM orders"
        ],
        insert_order: fn insert_order(c: &mut diesel::PgConnection, tag: i64) -> QueryResult<i64> {
            diesel::insert_into(orders::table)
                .values(orders::customer.eq(tag))
                .returning(orders::id)
                .get_result(c)
        }
    );
}

mod mariadb {
    use super::*;

    writers_case!(
        diesel_writers_keep_their_keys_through_the_switch,
        idgen_testkit::mysql,
        diesel::MysqlConnection,
        schema: [
            "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL) ENGINE = InnoDB",
            "CREATE TABLE order_lines (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, tag BIGINT NOT NULL, \
             FOREIGN KEY (order_id) REFERENCES orders (id)) ENGINE = InnoDB",
            "INSERT INTO orders (customer) SELECT seq FROM seq_1_to_2000",
            "INSERT INTO order_lines (order_id, tag) SELECT id, customer FROM orders ORDER BY id"
        ],
        insert_order: fn insert_order(c: &mut diesel::MysqlConnection, tag: i64) -> QueryResult<i64> {
            use diesel::sql_types::{BigInt, Unsigned};
            diesel::insert_into(orders::table).values(orders::customer.eq(tag)).execute(c)?;
            let key: u64 = diesel::select(diesel::dsl::sql::<Unsigned<BigInt>>("LAST_INSERT_ID()")).get_result(c)?;
            Ok(key as i64)
        }
    );
}
