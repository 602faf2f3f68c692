//! The cost of what a lease store and a hi-lo counter do, on etcd, Redis and PostgreSQL in one
//! run, each over one client on the loopback: a node-ID claim (`LeaseStore::claim`, followed by
//! an untimed release), a renewal (`LeaseStore::renew` of a held node ID, raising its bound) and
//! a hi-lo block (`HiLoSource::allocate(1000)`).
//!
//! ```text
//! cargo run --release -p store-round-trips            # 500 calls per case
//! cargo run --release -p store-round-trips -- 2000    # more
//! ```
//!
//! Servers come from idgen-testkit's discovery order (`IDGEN_POSTGRES_URL`,
//! `IDGEN_ETCD_ENDPOINTS`, `IDGEN_REDIS_URL`; else containers; else throwaway local servers),
//! each case on a fresh database or key prefix. Prints p50 / p99 / mean per call in µs.
//!
//! On PostgreSQL also what a `floor_from` query costs (issue 37, item 6: it is read again
//! before every fetch): the query alone (`SELECT COALESCE(MAX(id), 0)` over an indexed table of
//! 100,000 rows), the query and a block together (one fetch with a floor), and `HiLo` flat out
//! (blocks of 1000, the defaults) without and with the floor: IDs/s, mean fetch latency, and
//! the calls that found the buffer empty.

use std::future::Future;
use std::time::{Duration, Instant};

use idgen_sqlx::hilo::HiLoSource;
use idgen_sqlx::lease::{ClaimRequest, LeaseStore, RenewRequest};

const BLOCK: u64 = 1000;

fn claim(holder: &str) -> ClaimRequest<'_> {
    ClaimRequest {
        namespace: "bench",
        capacity: 1024,
        holder,
        ttl: Duration::from_secs(30),
    }
}

fn renewal(node: u64, holder: &str, last: i64) -> RenewRequest<'_> {
    RenewRequest {
        namespace: "bench",
        node,
        holder,
        ttl: Duration::from_secs(30),
        last_timestamp_ms: Some(last),
    }
}

struct Row {
    store: &'static str,
    case: &'static str,
    nanos: Vec<u64>,
}

impl Row {
    fn print(&mut self) {
        self.nanos.sort_unstable();
        let at = |q: f64| self.nanos[((self.nanos.len() - 1) as f64 * q).round() as usize];
        let mean = self.nanos.iter().sum::<u64>() / self.nanos.len() as u64;
        println!(
            "| {:<10} | {:<28} | {:>8.0} | {:>8.0} | {:>8.0} | {:>6} |",
            self.store,
            self.case,
            at(0.5) as f64 / 1e3,
            at(0.99) as f64 / 1e3,
            mean as f64 / 1e3,
            self.nanos.len()
        );
    }
}

async fn time<F: Future<Output = ()>>(mut call: impl FnMut(usize) -> F, n: usize) -> Vec<u64> {
    for i in 0..n / 10 {
        call(i).await; // warm-up
    }
    let mut nanos = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        call(n + i).await;
        nanos.push(started.elapsed().as_nanos() as u64);
    }
    nanos
}

/// The three cases on one store and one counter.
async fn measure<S, H>(name: &'static str, store: S, source: H, n: usize) -> Vec<Row>
where
    S: LeaseStore + Clone,
    H: HiLoSource,
{
    // Claims are timed without their release (which keeps node ID 0 free for the next).
    let mut claim_nanos = Vec::with_capacity(n);
    for i in 0..n {
        let holder = format!("claim-{i}");
        let started = Instant::now();
        let got = store
            .claim(claim(&holder))
            .await
            .expect("claim")
            .expect("a node");
        claim_nanos.push(started.elapsed().as_nanos() as u64);
        store
            .release(renewal(got.node, &holder, 1))
            .await
            .expect("release");
    }
    let held = store
        .claim(claim("renewer"))
        .await
        .expect("claim")
        .expect("a node");
    let renew_nanos = time(
        |i| {
            let store = store.clone();
            async move {
                let renewed = store
                    .renew(renewal(held.node, "renewer", 1_700_000_000_000 + i as i64))
                    .await
                    .expect("renew");
                assert!(renewed);
            }
        },
        n,
    )
    .await;
    let source = &source;
    let block_nanos = time(
        |_| async move {
            source.allocate(BLOCK).await.expect("a block");
        },
        n,
    )
    .await;
    [
        ("claim", claim_nanos),
        ("renewal", renew_nanos),
        ("hi-lo block of 1000", block_nanos),
    ]
    .into_iter()
    .map(|(case, nanos)| Row {
        store: name,
        case,
        nanos,
    })
    .collect()
}

#[tokio::main(worker_threads = 2)]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("calls per case"))
        .unwrap_or(500);
    let mut rows = Vec::new();

    let pg = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    let store = idgen_sqlx::lease::SqlxLeaseStore::new(pg.pool().clone());
    store.create_table().await.expect("the lease table");
    let sequence = idgen_sqlx::hilo::PgSequence::new(pg.pool(), "bench").unwrap();
    sequence.create(BLOCK).await.expect("the sequence");
    rows.extend(measure("PostgreSQL", store, sequence.clone(), n).await);
    let floor_rows = floor_cost(pg.pool(), &sequence, n).await;
    rows.extend(floor_rows.0);

    let etcd_keys = idgen_testkit::etcd().await.expect("an etcd server");
    let etcd = idgen_etcd::Etcd::new(etcd_keys.server_url().split(','));
    let prefix = etcd_keys.prefix();
    let store = idgen_etcd::lease::EtcdLeaseStore::new(&etcd)
        .with_prefix(&format!("{prefix}leases"))
        .unwrap();
    let counter = idgen_etcd::hilo::EtcdCounter::new(&etcd, "bench")
        .unwrap()
        .with_prefix(&format!("{prefix}hilo"))
        .unwrap();
    counter.create(BLOCK).await.expect("the counter");
    rows.extend(measure("etcd", store, counter, n).await);

    let redis_keys = idgen_testkit::redis().await.expect("a Redis server");
    let client = redis::Client::open(redis_keys.server_url()).unwrap();
    let prefix = redis_keys.prefix();
    let store = idgen_redis::lease::RedisLeaseStore::new(client.clone())
        .with_prefix(&format!("{prefix}leases"))
        .unwrap();
    let counter = idgen_redis::hilo::RedisCounter::new(&client, "bench")
        .unwrap()
        .with_prefix(&format!("{prefix}hilo"))
        .unwrap();
    counter.create().await.expect("the counter");
    rows.extend(measure("Redis", store, counter, n).await);

    println!(
        "\n| store      | case                         | p50 (µs) | p99 (µs) | mean (µs) | calls |"
    );
    println!(
        "|------------|------------------------------|---------:|---------:|---------:|------:|"
    );
    for row in &mut rows {
        row.print();
    }
    println!(
        "\n| PostgreSQL HiLo, flat out | IDs | IDs/s | fetches | mean fetch (µs) | caller waits |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for line in floor_rows.1 {
        println!("{line}");
    }
}

/// IDs per flat-out pass of `HiLo` with and without the floor.
const FLAT_OUT_IDS: usize = 2_000_000;

/// The floor query alone and with a block (as a fetch with `floor_from` makes them), and
/// `HiLo` flat out without and with the floor.
async fn floor_cost(
    pool: &sqlx::PgPool,
    sequence: &idgen_sqlx::hilo::PgSequence,
    n: usize,
) -> (Vec<Row>, Vec<String>) {
    use idgen_sqlx::hilo::HiLo;
    sqlx::query("CREATE TABLE bench_orders (id BIGINT PRIMARY KEY)")
        .execute(pool)
        .await
        .expect("the orders table");
    sqlx::query("INSERT INTO bench_orders SELECT generate_series(1, 100000)")
        .execute(pool)
        .await
        .expect("its rows");
    let query = move |pool: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>("SELECT COALESCE(MAX(id), 0) FROM bench_orders")
            .fetch_one(&pool)
            .await
    };
    let alone = time(
        |_| {
            let pool = pool.clone();
            async move {
                query(pool).await.expect("the floor");
            }
        },
        n,
    )
    .await;
    let with_block = time(
        |_| {
            let pool = pool.clone();
            async move {
                query(pool).await.expect("the floor");
                sequence.allocate(BLOCK).await.expect("a block");
            }
        },
        n,
    )
    .await;
    let mut lines = Vec::new();
    for floor in [false, true] {
        let builder = HiLo::builder(sequence.clone()).block(BLOCK);
        let builder = if floor {
            let pool = pool.clone();
            builder.floor_from(move || {
                let pool = pool.clone();
                async move { Ok(query(pool).await?) }
            })
        } else {
            builder
        };
        let ids = builder.build().await.expect("hi-lo");
        let started = Instant::now();
        for _ in 0..FLAT_OUT_IDS {
            ids.next_id().await.expect("an ID");
        }
        let took = started.elapsed();
        let stats = ids.stats();
        lines.push(format!(
            "| {} | {FLAT_OUT_IDS} | {:.0} | {} | {:.0} | {} |",
            if floor {
                "with floor_from"
            } else {
                "without floor"
            },
            FLAT_OUT_IDS as f64 / took.as_secs_f64(),
            stats.fetches,
            stats
                .fetch_latency_mean
                .map_or(0.0, |d| d.as_secs_f64() * 1e6),
            stats.caller_waits,
        ));
    }
    let rows = vec![
        Row {
            store: "PostgreSQL",
            case: "floor query (MAX(id))",
            nanos: alone,
        },
        Row {
            store: "PostgreSQL",
            case: "floor query + block of 1000",
            nanos: with_block,
        },
    ];
    (rows, lines)
}
