//! Hi-lo engine benchmarks with the in-memory source.
//!
//! 1. Criterion: the per-ID cost of `next_id()` with and without background prefetch, for a
//!    source without latency and one with a simulated 1 ms round trip; four tasks sharing one
//!    `HiLo` (time per ID of the group); `try_next_id()`; a bare `fetch_add` for scale.
//! 2. A printed table: latency of single `next_id()` calls in a block and at block boundaries
//!    (the call that returned a block's first ID), and how many calls found the buffer empty
//!    (caller waits), for a consumer flat out (the next call right away) or doing about 2 µs of
//!    work per ID, with an instant source and one with a 1 ms round trip, with and without
//!    prefetch. The source is `MemorySource::new()`, a counter table: one round trip brings as
//!    many blocks as the look-ahead wants.
//!
//! Run: `cargo bench -p idgen-engine --features hilo --bench hilo` (set `HILO_BENCH_NO_TABLE=1`
//! to skip the table).
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use idgen_engine::hilo::{HiLo, MemorySource};
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn start(rt: &Runtime, latency: Duration, block: u64, prefetch: bool) -> HiLo {
    rt.block_on(
        HiLo::builder(MemorySource::new().with_latency(latency))
            .block(block)
            .prefetch(prefetch)
            .build(),
    )
    .expect("start")
}

fn per_id_cost(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("hilo_next_id");
    group.bench_function("baseline_atomic_fetch_add", |b| {
        let counter = AtomicI64::new(1);
        b.iter(|| black_box(counter.fetch_add(1, Ordering::Relaxed)));
    });
    for (latency, block) in [(Duration::ZERO, 1000), (Duration::from_millis(1), 100_000)] {
        for prefetch in [true, false] {
            let name = format!(
                "{}/latency_{}us/block_{block}",
                if prefetch { "prefetch" } else { "no_prefetch" },
                latency.as_micros()
            );
            let ids = start(&rt, latency, block, prefetch);
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let began = Instant::now();
                        for _ in 0..iters {
                            black_box(ids.next_id().await.expect("id"));
                        }
                        began.elapsed()
                    })
                });
            });
        }
    }
    let ids = start(&rt, Duration::ZERO, 1000, true);
    group.bench_function("prefetch/latency_0us/block_1000/4_tasks_sharing", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let began = Instant::now();
                let tasks: Vec<_> = (0..4)
                    .map(|_| {
                        let ids = ids.clone();
                        tokio::spawn(async move {
                            for _ in 0..iters.div_ceil(4) {
                                black_box(ids.next_id().await.expect("id"));
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("task");
                }
                began.elapsed()
            })
        });
    });
    group.bench_function("try_next_id/prefetch/latency_0us/block_1000", |b| {
        b.iter(|| black_box(ids.try_next_id().expect("no error")));
    });
    group.bench_function("next_id_blocking/prefetch/latency_0us/block_1000", |b| {
        b.iter(|| black_box(ids.next_id_blocking().expect("id")));
    });
    group.finish();
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// One row of the table: `work` per ID (`None`: flat out, the next call right away).
fn latency_row(
    rt: &Runtime,
    latency: Duration,
    prefetch: bool,
    work: Option<Duration>,
    ids: usize,
) {
    let block = 1000u64;
    let hilo = start(rt, latency, block, prefetch);
    let (mut in_block, mut boundary, before, after) = rt.block_on(async {
        // Warm-up: the rate and the fetch latency are measured.
        for _ in 0..ids / 10 {
            black_box(hilo.next_id().await.expect("id"));
            if let Some(work) = work {
                spin(work);
            }
        }
        let before = hilo.stats();
        let mut in_block = Vec::with_capacity(ids);
        let mut boundary = Vec::with_capacity(ids / block as usize + 1);
        for _ in 0..ids {
            let t = Instant::now();
            let id = hilo.next_id().await.expect("id");
            let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
            if (id - 1) % block as i64 == 0 {
                boundary.push(ns);
            } else {
                in_block.push(ns);
            }
            if let Some(work) = work {
                spin(work);
            }
        }
        (in_block, boundary, before, hilo.stats())
    });
    in_block.sort_unstable();
    boundary.sort_unstable();
    let waits = after.caller_waits - before.caller_waits;
    println!(
        "| {} ms | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ({:.1} %) | {} |",
        latency.as_millis(),
        if prefetch { "yes" } else { "no" },
        work.map_or("flat out".to_owned(), |w| format!("{} µs", w.as_micros())),
        percentile(&in_block, 50.0),
        percentile(&in_block, 99.9),
        boundary.len(),
        percentile(&boundary, 50.0),
        percentile(&boundary, 99.0),
        percentile(&boundary, 99.9),
        boundary.last().copied().unwrap_or(0),
        waits,
        100.0 * waits as f64 / boundary.len().max(1) as f64,
        after.fetches - before.fetches,
    );
}

fn latency_table(ids_per_run: usize) {
    let rt = runtime();
    println!();
    println!(
        "next_id() latency (ns), one consumer, blocks of 1000, {ids_per_run} timed IDs per row after {} of warm-up; in-memory source with the given round trip",
        ids_per_run / 10
    );
    println!(
        "| source latency | prefetch | work per ID | in-block p50 | in-block p99.9 | boundaries | boundary p50 | boundary p99 | boundary p99.9 | boundary max | caller waits | round trips |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for latency in [Duration::ZERO, Duration::from_millis(1)] {
        for work in [None, Some(Duration::from_micros(2))] {
            for prefetch in [true, false] {
                latency_row(&rt, latency, prefetch, work, ids_per_run);
            }
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    per_id_cost(&mut c);
    c.final_summary();
    // `cargo test --benches` runs this without `--bench`: keep that run short.
    let full = std::env::args().any(|a| a == "--bench");
    if std::env::var_os("HILO_BENCH_NO_TABLE").is_none() {
        latency_table(if full { 3_000_000 } else { 5_000 });
    }
}
