//! Hi-lo against a real PostgreSQL server, in one run:
//! (a) `HiLo` with block 1000 and background prefetch, (b) the same without prefetch,
//! (c) one `nextval` round trip per ID.
//!
//! ```text
//! IDGEN_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p idgen-sqlx --features postgres --bench hilo_postgres
//! ```
//!
//! Prints IDs per second (a pass without per-call timing) and the latency of `next_id()`
//! (p50 / p99 / p99.9 / max, from a second pass timing every call), plus for (a) and (b) the
//! latency of the calls that crossed into a new block. (a) and (b) run twice: flat out (one
//! task calling `next_id()` in a loop, faster than one fetch at a time can refill) and paced
//! at 500,000 and 100,000 IDs/s (500 or 100 IDs, then a sleep to the next millisecond). Creates and drops its own sequences
//! `idgen_bench_*`.

use std::time::{Duration, Instant};

use idgen_sqlx::hilo::{HiLo, PgSequence};
use sqlx::postgres::PgPoolOptions;
use sqlx::{AssertSqlSafe, PgPool};

const BLOCK: u64 = 1000;
/// IDs per pass for the hi-lo cases (2000 blocks).
const HILO_IDS: usize = 2_000_000;
/// IDs per pass for one round trip per ID.
const ROUND_TRIP_IDS: usize = 20_000;
/// IDs per timed pass of the paced cases.
const PACED_IDS: usize = 1_000_000;

struct Row {
    case: &'static str,
    ids_per_second: f64,
    all: Percentiles,
    boundary: Option<Percentiles>,
}

struct Percentiles {
    p50: Duration,
    p99: Duration,
    p999: Duration,
    max: Duration,
    count: usize,
}

impl Percentiles {
    fn of(mut nanos: Vec<u64>) -> Percentiles {
        nanos.sort_unstable();
        let at = |q: f64| {
            let i = ((nanos.len() as f64 - 1.0) * q).round() as usize;
            Duration::from_nanos(nanos[i])
        };
        Percentiles {
            p50: at(0.50),
            p99: at(0.99),
            p999: at(0.999),
            max: at(1.0),
            count: nanos.len(),
        }
    }
}

async fn fresh_sequence(pool: &PgPool, name: &str, increment: u64) {
    sqlx::query(AssertSqlSafe(format!("DROP SEQUENCE IF EXISTS {name}")))
        .execute(pool)
        .await
        .unwrap();
    PgSequence::new(pool, name)
        .unwrap()
        .create(increment)
        .await
        .unwrap();
}

/// `paced`: take this many IDs, then sleep until the next millisecond (a steady load below
/// what one fetch at a time can sustain); `None`: as fast as possible.
async fn hilo_case(
    pool: &PgPool,
    case: &'static str,
    name: &str,
    prefetch: bool,
    paced: Option<usize>,
    min_low_water: u64,
) -> Row {
    fresh_sequence(pool, name, BLOCK).await;
    let ids = HiLo::builder(PgSequence::new(pool, name).unwrap())
        .block(BLOCK)
        .prefetch(prefetch)
        .min_low_water(min_low_water)
        .build()
        .await
        .unwrap();
    // Warm-up.
    for _ in 0..HILO_IDS / 10 {
        std::hint::black_box(ids.next_id().await.unwrap());
    }
    let mut ids_per_second = None;
    if paced.is_none() {
        // Throughput without per-call timing.
        let began = Instant::now();
        for _ in 0..HILO_IDS {
            std::hint::black_box(ids.next_id().await.unwrap());
        }
        ids_per_second = Some(HILO_IDS as f64 / began.elapsed().as_secs_f64());
    }

    // Latency of every call; a call whose ID starts a block crossed a block boundary.
    let count = if paced.is_some() { PACED_IDS } else { HILO_IDS };
    let mut all = Vec::with_capacity(count);
    let mut boundary = Vec::with_capacity(count / BLOCK as usize + 1);
    let waits_before = ids.stats().caller_waits;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    let began = Instant::now();
    for i in 0..count {
        if let Some(per_ms) = paced
            && i % per_ms == 0
        {
            tick.tick().await;
        }
        let t = Instant::now();
        let id = ids.next_id().await.unwrap();
        let nanos = t.elapsed().as_nanos() as u64;
        all.push(nanos);
        if (id - 1) % BLOCK as i64 == 0 {
            boundary.push(nanos);
        }
    }
    let ids_per_second =
        ids_per_second.unwrap_or_else(|| count as f64 / began.elapsed().as_secs_f64());
    let stats = ids.stats();
    eprintln!(
        "{case}: {} caller waits in the timed pass ({} blocks), fetch latency mean {:?}",
        stats.caller_waits - waits_before,
        count / BLOCK as usize,
        stats.fetch_latency_mean
    );
    Row {
        case,
        ids_per_second,
        all: Percentiles::of(all),
        boundary: Some(Percentiles::of(boundary)),
    }
}

async fn round_trip_case(pool: &PgPool) -> Row {
    let name = "idgen_bench_nextval";
    fresh_sequence(pool, name, 1).await;
    let sql = format!("SELECT nextval('{name}')");
    let next = || async {
        sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.as_str()))
            .fetch_one(pool)
            .await
            .unwrap()
    };
    for _ in 0..ROUND_TRIP_IDS / 10 {
        std::hint::black_box(next().await);
    }
    let began = Instant::now();
    for _ in 0..ROUND_TRIP_IDS {
        std::hint::black_box(next().await);
    }
    let ids_per_second = ROUND_TRIP_IDS as f64 / began.elapsed().as_secs_f64();
    let mut all = Vec::with_capacity(ROUND_TRIP_IDS);
    for _ in 0..ROUND_TRIP_IDS {
        let t = Instant::now();
        std::hint::black_box(next().await);
        all.push(t.elapsed().as_nanos() as u64);
    }
    Row {
        case: "(c) nextval per ID",
        ids_per_second,
        all: Percentiles::of(all),
        boundary: None,
    }
}

fn us(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}

fn main() {
    let url = std::env::var("IDGEN_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .connect(&url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
        let (a, b) = ("idgen_bench_prefetch", "idgen_bench_no_prefetch");
        let rows = [
            hilo_case(&pool, "(a) HiLo block 1000, flat out", a, true, None, 1).await,
            hilo_case(&pool, "(b) no prefetch, flat out", b, false, None, 1).await,
            round_trip_case(&pool).await,
            hilo_case(&pool, "(a) 500k IDs/s", a, true, Some(500), 1).await,
            hilo_case(&pool, "(b) 500k IDs/s", b, false, Some(500), 1).await,
            hilo_case(&pool, "(a) 100k IDs/s", a, true, Some(100), 1).await,
            hilo_case(&pool, "(b) 100k IDs/s", b, false, Some(100), 1).await,
            hilo_case(&pool, "(a) 100k IDs/s, min_low_water 3000", a, true, Some(100), 3000).await,
        ];
        for name in [
            "idgen_bench_prefetch",
            "idgen_bench_no_prefetch",
            "idgen_bench_nextval",
        ] {
            sqlx::query(AssertSqlSafe(format!("DROP SEQUENCE IF EXISTS {name}")))
                .execute(&pool)
                .await
                .unwrap();
        }

        println!("latencies of next_id() in µs");
        println!(
            "| case | IDs/s | p50 | p99 | p99.9 | max | boundary calls | boundary p50 | boundary p99 | boundary p99.9 | boundary max |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for row in &rows {
            let b = row.boundary.as_ref().map_or_else(
                || "| – | – | – | – | – |".to_owned(),
                |b| {
                    format!(
                        "| {} | {} | {} | {} | {} |",
                        b.count,
                        us(b.p50),
                        us(b.p99),
                        us(b.p999),
                        us(b.max)
                    )
                },
            );
            println!(
                "| {} | {:.0} | {} | {} | {} | {} {b}",
                row.case,
                row.ids_per_second,
                us(row.all.p50),
                us(row.all.p99),
                us(row.all.p999),
                us(row.all.max),
            );
        }
        let ratio = rows[0].ids_per_second / rows[2].ids_per_second;
        println!(
            "(a) / (c) throughput: {ratio:.0}x; samples per timed pass: flat out {HILO_IDS} IDs, paced {PACED_IDS}, (c) {ROUND_TRIP_IDS}"
        );
    });
}
