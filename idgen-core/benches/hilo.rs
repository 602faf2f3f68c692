//! Hi-lo engine benchmarks with the in-memory source.
//!
//! 1. Criterion: the per-ID cost of `next_id()` with and without background prefetch, for a
//!    source without latency and one with a simulated 1 ms round trip; four tasks sharing one
//!    `HiLo` (time per ID of the group); `try_next_id()`; a bare `fetch_add` for scale.
//! 2. A printed table: p50/p99/p99.9/max latency of single `next_id()` calls for a paced
//!    consumer (about 2 µs of work per ID), overall and at block boundaries (the first ID of
//!    each block), with and without prefetch.
//!
//! Run: `cargo bench -p idgen-core --features hilo --bench hilo` (set `HILO_BENCH_NO_TABLE=1`
//! to skip the table).
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use idgen_core::hilo::{HiLo, MemorySource};
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

fn latency_table(ids_per_run: usize) {
    let rt = runtime();
    let block = 1000u64;
    let work = Duration::from_micros(2);
    println!();
    println!(
        "next_id() latency, one consumer doing ~{}us of work per ID, block {block}, {ids_per_run} IDs per row (ns)",
        work.as_micros()
    );
    println!(
        "| source latency | prefetch | all p50 | all p99 | all p99.9 | boundary p50 | boundary p99 | boundary p99.9 | boundary max | caller waits |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for latency in [Duration::ZERO, Duration::from_millis(1)] {
        for prefetch in [true, false] {
            let ids = start(&rt, latency, block, prefetch);
            let (mut all, mut boundary) = rt.block_on(async {
                let mut all = Vec::with_capacity(ids_per_run);
                let mut boundary = Vec::new();
                for _ in 0..ids_per_run {
                    let t = Instant::now();
                    let id = ids.next_id().await.expect("id");
                    let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    all.push(ns);
                    if (id - 1) % block as i64 == 0 {
                        boundary.push(ns);
                    }
                    spin(work);
                }
                (all, boundary)
            });
            all.sort_unstable();
            boundary.sort_unstable();
            println!(
                "| {} ms | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                latency.as_millis(),
                if prefetch { "yes" } else { "no" },
                percentile(&all, 50.0),
                percentile(&all, 99.0),
                percentile(&all, 99.9),
                percentile(&boundary, 50.0),
                percentile(&boundary, 99.0),
                percentile(&boundary, 99.9),
                boundary.last().copied().unwrap_or(0),
                ids.stats().caller_waits,
            );
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
        latency_table(if full { 300_000 } else { 5_000 });
    }
}
