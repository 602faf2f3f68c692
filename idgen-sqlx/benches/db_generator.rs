//! Inserts per second into one table on real PostgreSQL and MariaDB servers, three ways of
//! giving rows their IDs, in one run:
//!
//! - **identity**: `GENERATED ALWAYS AS IDENTITY` (PostgreSQL), `AUTO_INCREMENT` (MariaDB);
//! - **idgen_next_id()**: idgen's database-side generator as the column's default (a
//!   `BEFORE INSERT` trigger on MariaDB), installed with `idgen_sqlx::db_generator::install`;
//! - **app-side**: a `Snowflake` with a `WorkerLease`, IDs bound as parameters.
//!
//! Each cell runs `SECONDS` seconds of single-row autocommit `INSERT`s from 1 or 8 connections
//! (one task each) into a fresh table with a `BIGINT` primary key and one payload column.
//!
//! ```text
//! IDGEN_TESTKIT_ROUTE=local cargo bench -p idgen-sqlx --features postgres,mysql --bench db_generator
//! ```
//!
//! The servers come from idgen-testkit's discovery (`IDGEN_POSTGRES_URL`/`IDGEN_MYSQL_URL`,
//! containers, or local binaries), one fresh database each.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use idgen_sqlx::Dialect as SqlDialect;
use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::lease::WorkerLease;
use idgen_sqlx::{Layout, Snowflake};
use sqlx::AssertSqlSafe;

const SECONDS: u64 = 3;
const CONNECTIONS: [usize; 2] = [1, 8];

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Identity,
    Function,
    AppSide,
}

const MODES: [(Mode, &str); 3] = [
    (Mode::Identity, "identity"),
    (Mode::Function, "idgen_next_id()"),
    (Mode::AppSide, "app-side"),
];

/// One row of the table: database, connections, inserts/s per mode.
type Row = (&'static str, usize, Vec<f64>);

macro_rules! bench_database {
    ($name:expr, $db:ty, $testdb:path, $dialect:expr, identity: $identity:expr, keyed: $keyed:expr, param: $p:expr) => {{
        let db = $testdb().await.expect("a database server");
        let pool: sqlx::Pool<$db> = sqlx::pool::PoolOptions::new()
            .max_connections(12)
            .connect(db.url())
            .await
            .expect("a pool");
        let layout = Layout::TWITTER;
        let generator = DbGenerator::new(layout);
        db_generator::install(&pool, &generator)
            .await
            .expect("installed");
        let lease = WorkerLease::acquire(&pool, &layout).await.expect("a lease");
        let ids = Arc::new(
            Snowflake::builder()
                .layout(layout)
                .lease(lease)
                .build()
                .unwrap(),
        );
        let mut rows: Vec<Row> = Vec::new();
        for connections in CONNECTIONS {
            let mut rates = Vec::new();
            for (mode, _) in MODES {
                sqlx::raw_sql("DROP TABLE IF EXISTS bench_t")
                    .execute(&pool)
                    .await
                    .unwrap();
                let create = if mode == Mode::Identity {
                    $identity
                } else {
                    $keyed
                };
                sqlx::raw_sql(create).execute(&pool).await.unwrap();
                let insert = match mode {
                    Mode::AppSide => {
                        format!("INSERT INTO bench_t (id, v) VALUES ({}, {})", $p(1), $p(2))
                    }
                    _ => format!("INSERT INTO bench_t (v) VALUES ({})", $p(1)),
                };
                if mode == Mode::Function {
                    let default = generator
                        .column_default_sql($dialect, "bench_t", "id")
                        .unwrap();
                    sqlx::raw_sql(AssertSqlSafe(default))
                        .execute(&pool)
                        .await
                        .unwrap();
                }
                let stop = Arc::new(AtomicBool::new(false));
                let done = Arc::new(AtomicU64::new(0));
                let started = Instant::now();
                let mut tasks = Vec::new();
                for _ in 0..connections {
                    let (pool, stop, done, ids, insert) = (
                        pool.clone(),
                        stop.clone(),
                        done.clone(),
                        ids.clone(),
                        insert.clone(),
                    );
                    tasks.push(tokio::spawn(async move {
                        let mut conn = pool.acquire().await.unwrap();
                        let mut n = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            let query = sqlx::query(AssertSqlSafe(insert.as_str()));
                            let query = if mode == Mode::AppSide {
                                query.bind(ids.next_id().unwrap()).bind(n as i64)
                            } else {
                                query.bind(n as i64)
                            };
                            query.execute(&mut *conn).await.unwrap();
                            n += 1;
                        }
                        done.fetch_add(n, Ordering::Relaxed);
                    }));
                }
                tokio::time::sleep(Duration::from_secs(SECONDS)).await;
                stop.store(true, Ordering::Relaxed);
                for task in tasks {
                    task.await.unwrap();
                }
                let elapsed = started.elapsed().as_secs_f64();
                let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM bench_t")
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                assert_eq!(count as u64, done.load(Ordering::Relaxed), "rows lost");
                rates.push(count as f64 / elapsed);
            }
            rows.push(($name, connections, rates));
        }
        rows
    }};
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let mut rows = runtime.block_on(async {
        bench_database!("PostgreSQL", sqlx::Postgres, idgen_testkit::postgres, SqlDialect::Postgres,
            identity: "CREATE TABLE bench_t (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v BIGINT NOT NULL)",
            keyed: "CREATE TABLE bench_t (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)",
            param: |n: usize| format!("${n}"))
    });
    rows.extend(runtime.block_on(async {
        bench_database!("MariaDB", sqlx::MySql, idgen_testkit::mysql, SqlDialect::MySql,
            identity: "CREATE TABLE bench_t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT NOT NULL) ENGINE = InnoDB",
            keyed: "CREATE TABLE bench_t (id BIGINT NOT NULL DEFAULT 0 PRIMARY KEY, v BIGINT NOT NULL) ENGINE = InnoDB",
            param: |_: usize| "?".to_owned())
    }));
    println!("\nsingle-row autocommit INSERTs per second, {SECONDS} s per cell\n");
    print!("| database   | connections |");
    for (_, name) in MODES {
        print!(" {name:>15} |");
    }
    println!();
    println!(
        "|------------|-------------|{}",
        "----------------:|".repeat(MODES.len())
    );
    for (database, connections, rates) in rows {
        print!("| {database:<10} | {connections:>11} |");
        for rate in rates {
            print!(" {rate:>15.0} |");
        }
        println!();
    }
}
