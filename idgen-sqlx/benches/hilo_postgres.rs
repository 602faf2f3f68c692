//! Hi-lo against a real PostgreSQL server, in one run, beside one `nextval` per ID:
//!
//! - **(a)** `HiLo` over `PgSequence` with block 1000 and the defaults;
//! - **(a+)** the same over a wrapper that takes several blocks per round trip on a
//!   one-connection pool of its own (`SELECT nextval(…) FROM generate_series(1, n)`, see
//!   `BatchedSequence`): what the bench measured before `PgSequence` took several blocks in
//!   one statement itself (`HiLoSource::allocate_blocks`), kept as the reference for (a);
//! - **(b)** `PgSequence` with `prefetch(false)`: the call that finds the buffer empty waits;
//! - **(c)** `SELECT nextval('seq')` on a `PgPool`, one round trip per ID.
//!
//! ```text
//! IDGEN_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres \
//!     cargo bench -p idgen-sqlx --features postgres --bench hilo_postgres
//! ```
//!
//! "Flat out" calls `next_id()` in a loop, as fast as it returns; "100k IDs/s" takes 100 IDs,
//! then sleeps to the next millisecond (so every tenth call after a sleep starts a block). IDs/s comes from a pass without per-call timing (flat
//! out) or is the achieved rate (paced). Latencies are of single `next_id()` calls, from a
//! second pass that times every call: "boundary" calls returned the first ID of a block
//! (`(id - 1) % 1000 == 0`), "in-block" calls all others. "Waited" counts the calls that found
//! the buffer empty (`HiLoStats::caller_waits`) during that pass, as a share of the boundaries.
//! Creates and drops its own sequences `idgen_bench_*`.

use std::time::{Duration, Instant};

use idgen_sqlx::hilo::{BoxError, HiLo, HiLoSource, Increment, MissingCounter, PgSequence};
use sqlx::postgres::PgPoolOptions;
use sqlx::{AssertSqlSafe, PgPool};

const BLOCK: u64 = 1000;
/// IDs per flat-out pass (10,000 blocks).
const FLAT_OUT_IDS: usize = 10_000_000;
/// IDs per pass of one round trip per ID.
const ROUND_TRIP_IDS: usize = 20_000;
/// IDs per timed pass of the paced cases (5,000 blocks, 50 s at 100,000 IDs/s): enough
/// boundaries for their 99.9th percentile to be more than the largest few.
const PACED_IDS: usize = 5_000_000;

/// What `PgSequence` does, plus `allocate_blocks` in one statement on a one-connection pool of
/// its own (autocommit), as idgen-engine's `HiLoSource::allocate_blocks` describes.
struct BatchedSequence {
    sequence: PgSequence,
    allocator: PgPool,
    name: String,
}

impl HiLoSource for BatchedSequence {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.sequence.allocate(size).await
    }

    async fn allocate_blocks(&self, _size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        let sql = format!(
            "SELECT nextval('{}') FROM generate_series(1, $1)",
            self.name
        );
        Ok(sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
            .bind(i64::try_from(count)?)
            .fetch_all(&self.allocator)
            .await?)
    }

    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        self.sequence.increment().await
    }

    fn name(&self) -> &str {
        self.sequence.name()
    }
}

struct Row {
    case: &'static str,
    ids_per_second: f64,
    all: Percentiles,
    in_block: Percentiles,
    boundary: Option<Percentiles>,
    waited: Option<u64>,
    note: String,
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
            Duration::from_nanos(nanos.get(i).copied().unwrap_or(0))
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

#[derive(Clone, Copy, PartialEq)]
enum Source {
    Plain,
    /// `PgSequence` with one fetch at a time (`max_fetches_in_flight(1)`).
    PlainSerial,
    Batched,
}

/// `paced`: take this many IDs, then sleep until the next millisecond; `None`: flat out.
async fn hilo_case(
    pool: &PgPool,
    url: &str,
    case: &'static str,
    source: Source,
    prefetch: bool,
    paced: Option<usize>,
) -> Row {
    let name = "idgen_bench_hilo";
    fresh_sequence(pool, name, BLOCK).await;
    let sequence = PgSequence::new(pool, name).unwrap();
    let ids = match source {
        Source::Plain => {
            HiLo::builder(sequence)
                .block(BLOCK)
                .prefetch(prefetch)
                .build()
                .await
        }
        Source::PlainSerial => {
            HiLo::builder(sequence)
                .block(BLOCK)
                .prefetch(prefetch)
                .max_fetches_in_flight(1)
                .build()
                .await
        }
        Source::Batched => {
            let allocator = PgPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .unwrap();
            let batched = BatchedSequence {
                sequence,
                allocator,
                name: name.to_owned(),
            };
            HiLo::builder(batched)
                .block(BLOCK)
                .prefetch(prefetch)
                .build()
                .await
        }
    }
    .unwrap();
    // Warm-up: the rate and the fetch latency are measured.
    let warm_up = paced.map_or(FLAT_OUT_IDS / 10, |_| PACED_IDS / 10);
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    for i in 0..warm_up {
        if let Some(per_ms) = paced
            && i % per_ms == 0
        {
            tick.tick().await;
        }
        std::hint::black_box(ids.next_id().await.unwrap());
    }
    let mut ids_per_second = None;
    if paced.is_none() {
        let began = Instant::now();
        for _ in 0..FLAT_OUT_IDS {
            std::hint::black_box(ids.next_id().await.unwrap());
        }
        ids_per_second = Some(FLAT_OUT_IDS as f64 / began.elapsed().as_secs_f64());
    }

    let count = paced.map_or(FLAT_OUT_IDS, |_| PACED_IDS);
    let mut in_block = Vec::with_capacity(count);
    let mut boundary = Vec::with_capacity(count / BLOCK as usize + 1);
    let before = ids.stats();
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
        if (id - 1) % BLOCK as i64 == 0 {
            boundary.push(nanos);
        } else {
            in_block.push(nanos);
        }
    }
    let ids_per_second =
        ids_per_second.unwrap_or_else(|| count as f64 / began.elapsed().as_secs_f64());
    let after = ids.stats();
    let note = format!(
        "{} round trips for {} blocks, fetch latency mean {:?} max {:?}, low water {} IDs, blocks discarded {}",
        after.fetches - before.fetches,
        after.blocks_fetched - before.blocks_fetched,
        after.fetch_latency_mean.unwrap_or_default(),
        after.fetch_latency_max.unwrap_or_default(),
        after.low_water,
        after.blocks_discarded - before.blocks_discarded,
    );
    let mut all = in_block.clone();
    all.extend(&boundary);
    Row {
        case,
        ids_per_second,
        all: Percentiles::of(all),
        in_block: Percentiles::of(in_block),
        boundary: Some(Percentiles::of(boundary)),
        waited: Some(after.caller_waits - before.caller_waits),
        note,
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
        in_block: Percentiles::of(all.clone()),
        all: Percentiles::of(all),
        boundary: None,
        waited: None,
        note: String::new(),
    }
}

fn us(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let url = std::env::var("IDGEN_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect(&url)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    let version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&pool)
        .await
        .unwrap();
    use Source::{Batched, Plain, PlainSerial};
    let rows = [
        round_trip_case(&pool).await,
        hilo_case(&pool, &url, "(a) HiLo, flat out", Plain, true, None).await,
        hilo_case(
            &pool,
            &url,
            "(a1) one fetch at a time, flat out",
            PlainSerial,
            true,
            None,
        )
        .await,
        hilo_case(&pool, &url, "(a+) batched, flat out", Batched, true, None).await,
        hilo_case(&pool, &url, "(b) no prefetch, flat out", Plain, false, None).await,
        hilo_case(&pool, &url, "(a) HiLo, 100k IDs/s", Plain, true, Some(100)).await,
        hilo_case(
            &pool,
            &url,
            "(a+) batched, 100k IDs/s",
            Batched,
            true,
            Some(100),
        )
        .await,
        hilo_case(
            &pool,
            &url,
            "(b) no prefetch, 100k IDs/s",
            Plain,
            false,
            Some(100),
        )
        .await,
    ];
    for name in ["idgen_bench_hilo", "idgen_bench_nextval"] {
        sqlx::query(AssertSqlSafe(format!("DROP SEQUENCE IF EXISTS {name}")))
            .execute(&pool)
            .await
            .unwrap();
    }

    println!("PostgreSQL {version}; latencies of next_id() in µs; block {BLOCK}");
    println!(
        "| case | IDs/s | × nextval per ID | p50 | p99 | p99.9 | max | in-block p99.9 | boundaries | boundary p50 | boundary p99 | boundary p99.9 | boundary max | boundary p99.9 ÷ in-block p99.9 | waited |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let per_id = rows[0].ids_per_second;
    for row in &rows {
        let b = row.boundary.as_ref().map_or_else(
            || "| – | – | – | – | – | – |".to_owned(),
            |b| {
                format!(
                    "| {} | {} | {} | {} | {} | {:.1} |",
                    b.count,
                    us(b.p50),
                    us(b.p99),
                    us(b.p999),
                    us(b.max),
                    b.p999.as_secs_f64() / row.in_block.p999.as_secs_f64()
                )
            },
        );
        let waited = match (row.waited, &row.boundary) {
            (Some(w), Some(b)) => {
                format!("{w} ({:.1} %)", 100.0 * w as f64 / b.count.max(1) as f64)
            }
            _ => "–".to_owned(),
        };
        println!(
            "| {} | {:.0} | {:.0} | {} | {} | {} | {} | {} {b} {waited} |",
            row.case,
            row.ids_per_second,
            row.ids_per_second / per_id,
            us(row.all.p50),
            us(row.all.p99),
            us(row.all.p999),
            us(row.all.max),
            us(row.in_block.p999),
        );
    }
    for row in &rows {
        if !row.note.is_empty() {
            println!("{}: {}", row.case, row.note);
        }
    }
    println!(
        "samples per timed pass: flat out {FLAT_OUT_IDS} IDs, paced {PACED_IDS}, (c) {ROUND_TRIP_IDS}"
    );
}
