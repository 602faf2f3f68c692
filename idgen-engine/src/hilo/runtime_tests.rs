//! Where fetches run: a `HiLo` outlives the runtime it was built on, works from threads with
//! no runtime (`next_id_blocking`, `build_blocking`) and from every kind of blocking section.

use std::collections::HashSet;
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};

use super::tests::{
    assert_increasing_per_caller_and_distinct, assert_increment_mismatch_1000_vs_50, take,
};
use super::*;
use crate::error::ErrorKind;

fn current_thread() -> Runtime {
    Builder::new_current_thread().enable_all().build().unwrap()
}

fn multi_thread() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Blocks of 10, fetched only when empty: every tenth ID needs a fetch.
fn small_blocks(counter: &MemorySource) -> HiLoBuilder<MemorySource> {
    HiLo::builder(counter.clone())
        .block(10)
        .prefetch(false)
        .timeout(Duration::from_secs(5))
}

fn assert_increasing_and_unique(ids: &[i64]) {
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "not increasing: {ids:?}"
    );
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
}

/// Issue 12, item 8: the fetch used to be spawned on the runtime captured at build time, so
/// once that runtime was dropped the buffer ran out and every call returned `HiLoUnavailable`
/// (with no `last_error`) forever.
#[test]
fn a_hilo_built_on_a_dropped_runtime_keeps_working_on_another() {
    for built_on in [current_thread(), multi_thread()] {
        let counter = MemorySource::new();
        let ids = built_on.block_on(small_blocks(&counter).build()).unwrap();
        let mut got = built_on.block_on(take(&ids, 5));
        drop(built_on);

        let other = current_thread();
        got.extend(other.block_on(take(&ids, 45)));
        assert_eq!(got, (1..=50).collect::<Vec<_>>());
        assert_eq!(counter.calls(), 5);
    }
}

#[test]
fn a_hilo_built_on_a_dropped_runtime_keeps_working_on_a_thread_without_one() {
    let counter = MemorySource::new();
    let built_on = multi_thread();
    let ids = built_on.block_on(small_blocks(&counter).build()).unwrap();
    drop(built_on);
    let got: Vec<i64> =
        std::thread::spawn(move || (0..35).map(|_| ids.next_id_blocking().unwrap()).collect())
            .join()
            .unwrap();
    assert_eq!(got, (1..=35).collect::<Vec<_>>());
}

/// A fetch task spawned on a runtime that is dropped before it ever runs gives its slot back:
/// with a slot held by a task that will never run, a counter table (one fetch at a time) would
/// never be asked again.
#[test]
fn a_fetch_task_its_runtime_never_ran_is_given_back() {
    let counter = MemorySource::new();
    let first = current_thread();
    let ids = first
        .block_on(HiLo::builder(counter.clone()).block(10).build())
        .unwrap();
    // Let the start-up prefetch land, then take IDs until one starts a fetch, and drop the
    // runtime before that fetch's task is ever polled.
    first.block_on(async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let blocks = ids.stats().blocks_fetched;
        let mut taken = 0;
        while ids.stats().blocks_fetched == blocks && taken < 20 {
            ids.try_next_id().unwrap();
            taken += 1;
        }
    });
    drop(first);
    let second = current_thread();
    let got = second.block_on(async {
        let mut got = Vec::new();
        for _ in 0..100 {
            got.push(
                tokio::time::timeout(Duration::from_secs(2), ids.next_id())
                    .await
                    .expect("stuck: a dead task still holds the fetch slot")
                    .unwrap(),
            );
        }
        got
    });
    assert_increasing_and_unique(&got);
}

/// A runtime that shuts down while its task is fetching drops that task: the fetch is given
/// back, and the next caller, on another runtime, fetches again.
#[test]
fn a_fetch_cut_off_by_its_runtime_shutting_down_is_given_back() {
    let counter = MemorySource::new().with_latency(Duration::from_millis(300));
    let first = current_thread();
    let ids = first.block_on(small_blocks(&counter).build()).unwrap();
    first.block_on(async {
        for _ in 0..10 {
            ids.next_id().await.unwrap();
        }
        // The buffer is empty: this call starts a fetch on `first`, then gives up waiting.
        let waited = tokio::time::timeout(Duration::from_millis(50), ids.next_id()).await;
        assert!(waited.is_err(), "the fetch takes 300 ms");
    });
    assert_eq!(ids.stats().fetches_in_flight, 1);
    drop(first); // cancels the task in the middle of its round trip
    assert_eq!(ids.stats().fetches_in_flight, 0, "the fetch was given back");
    assert_eq!(counter.calls(), 1, "the cut-off fetch took nothing");

    let second = current_thread();
    let next = second.block_on(ids.next_id()).unwrap();
    assert_eq!(next, 11);
    assert_eq!(counter.calls(), 2);
}

/// `next_id_blocking` takes IDs across several fetches from every kind of thread.
fn blocking_ids(ids: &HiLo, n: usize) -> Vec<i64> {
    (0..n).map(|_| ids.next_id_blocking().unwrap()).collect()
}

/// Small blocks from a counter 2 ms away, built on `runtime`.
fn slow_small_blocks_on(runtime: &Runtime) -> HiLo {
    let counter = MemorySource::new().with_latency(Duration::from_millis(2));
    runtime.block_on(small_blocks(&counter).build()).unwrap()
}

/// `n` IDs by `next_id_blocking` in `runtime`'s blocking pool.
fn in_blocking_pool(runtime: &Runtime, ids: &HiLo, n: usize) -> Vec<i64> {
    let ids = ids.clone();
    let task = runtime.spawn_blocking(move || blocking_ids(&ids, n));
    runtime.block_on(task).unwrap()
}

#[test]
fn next_id_blocking_works_on_a_thread_without_a_runtime() {
    let counter = MemorySource::new().with_latency(Duration::from_millis(2));
    let ids = small_blocks(&counter).build_blocking().unwrap();
    let got = blocking_ids(&ids, 45);
    assert_eq!(got, (1..=45).collect::<Vec<_>>());
    assert_eq!(ids.stats().caller_waits, 4);
}

#[test]
fn next_id_blocking_works_in_spawn_blocking_and_block_in_place_on_a_multi_thread_runtime() {
    let runtime = multi_thread();
    let ids = slow_small_blocks_on(&runtime);
    let in_blocking_pool = in_blocking_pool(&runtime, &ids, 25);
    let task = runtime.spawn({
        let ids = ids.clone();
        async move { tokio::task::block_in_place(|| blocking_ids(&ids, 25)) }
    });
    let in_place = runtime.block_on(task).unwrap();
    assert_eq!(in_blocking_pool, (1..=25).collect::<Vec<_>>());
    assert_eq!(in_place, (26..=50).collect::<Vec<_>>());
}

#[test]
fn next_id_blocking_works_on_a_current_thread_runtime_even_on_its_own_thread() {
    let runtime = current_thread();
    let ids = slow_small_blocks_on(&runtime);
    // The runtime's only thread waits on the blocking task: the fetches cannot run on it.
    let in_blocking_pool = in_blocking_pool(&runtime, &ids, 25);
    // Called from inside `block_on` itself (sync code under async code): the runtime's thread
    // is the one that blocks, so the fetches run on idgen's background runtime.
    let on_its_own_thread = runtime.block_on(async { blocking_ids(&ids, 25) });
    let mut all = in_blocking_pool;
    all.extend(on_its_own_thread);
    assert_eq!(all, (1..=50).collect::<Vec<_>>());
}

#[test]
fn next_id_blocking_times_out_with_the_cause_then_recovers() {
    let counter = MemorySource::new();
    let ids = small_blocks(&counter)
        .timeout(Duration::from_millis(200))
        .backoff(Duration::from_millis(10), Duration::from_millis(50))
        .build_blocking()
        .unwrap();
    let mut got = blocking_ids(&ids, 10);
    counter.set_failing(true);
    let began = std::time::Instant::now();
    let err = ids.next_id_blocking().unwrap_err();
    assert!(began.elapsed() >= Duration::from_millis(200));
    match err.kind() {
        ErrorKind::HiLoUnavailable { last_error, .. } => {
            let cause = last_error.as_ref().expect("the cause is kept").to_string();
            assert!(cause.contains("simulated outage"), "{cause}");
        }
        other => panic!("unexpected {other:?}"),
    }
    counter.set_failing(false);
    got.extend(blocking_ids(&ids, 15));
    assert_increasing_and_unique(&got);
    assert_eq!(got[..10], (1..=10).collect::<Vec<_>>());
}

#[test]
fn threads_with_and_without_runtimes_share_one_hilo() {
    let counter = MemorySource::new();
    let ids = HiLo::builder(counter.clone())
        .block(50)
        .build_blocking()
        .unwrap();
    let runtime = multi_thread();
    let mut threads = Vec::new();
    for t in 0..4 {
        let blocking = ids.clone();
        threads.push(std::thread::spawn(move || -> Vec<i64> {
            (0..5_000)
                .map(|_| blocking.next_id_blocking().unwrap())
                .collect()
        }));
        if t < 2 {
            let ids = ids.clone();
            let handle = runtime.spawn(async move { take(&ids, 5_000).await });
            threads.push(std::thread::spawn(move || {
                current_thread().block_on(handle).unwrap()
            }));
        }
    }
    let all =
        assert_increasing_per_caller_and_distinct(threads.into_iter().map(|t| t.join().unwrap()));
    assert_eq!(all.len(), 30_000);
}

#[test]
fn build_blocking_reports_start_up_errors_like_build() {
    let err = HiLo::builder(MemorySource::sequence(50))
        .block(1000)
        .build_blocking()
        .unwrap_err();
    assert_increment_mismatch_1000_vs_50(&err);
    let err = HiLo::builder(MemorySource::new())
        .block(0)
        .build_blocking()
        .unwrap_err();
    assert!(err.to_string().contains("block = 0"), "{err}");
}
