//! Engine tests with in-memory sources (pure logic; no database). The helpers marked
//! `pub(super)` serve the other test modules of `hilo` as well.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::error::{Error, ErrorKind};

const MS: Duration = Duration::from_millis(1);

async fn plain(source: &MemorySource, block: u64) -> HiLo {
    HiLo::builder(source.clone())
        .block(block)
        .prefetch(false)
        .build()
        .await
        .unwrap()
}

/// The next `n` IDs of `ids`, one `next_id` call each.
pub(super) async fn take(ids: &HiLo, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(ids.next_id().await.unwrap());
    }
    out
}

/// Checks what concurrent callers got: each caller's IDs strictly increasing, and no ID handed
/// out twice. Returns all of them, sorted.
#[track_caller]
pub(super) fn assert_increasing_per_caller_and_distinct(
    per_caller: impl IntoIterator<Item = Vec<i64>>,
) -> Vec<i64> {
    let mut all = Vec::new();
    for got in per_caller {
        assert!(got.windows(2).all(|w| w[0] < w[1]), "increasing per caller");
        all.extend(got);
    }
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "an ID was handed out twice");
    all
}

/// A multi-thread runtime with four workers.
fn four_workers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
}

/// `err` is the refusal of a block starting at `start` after blocks up to `highest`: the
/// counter went backwards (or a block overlapped one before it).
#[track_caller]
pub(super) fn assert_went_backwards(err: &Error, start: i64, highest: i64) {
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoCounterWentBackwards { start: s, highest: h, .. }
                if (*s, *h) == (start, highest)
        ),
        "{err:?}"
    );
}

/// `err` is the refusal to start with blocks of 1000 on a sequence that increments by 50.
#[track_caller]
pub(super) fn assert_increment_mismatch_1000_vs_50(err: &Error) {
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoIncrementMismatch {
                configured: 1000,
                database: 50,
                ..
            }
        ),
        "{err:?}"
    );
}

/// A source that returns scripted block starts, for values a sane counter never produces; and,
/// if so set, panics on one call, as a source with a bug would.
struct Scripted {
    starts: Mutex<VecDeque<i64>>,
    calls: std::sync::atomic::AtomicUsize,
    panics_on_call: Option<usize>,
}

impl Scripted {
    fn new(starts: &[i64]) -> Self {
        Scripted {
            starts: Mutex::new(starts.iter().copied().collect()),
            calls: Default::default(),
            panics_on_call: None,
        }
    }

    /// Panics on call `call` (counted from 0), after taking that call's start from the script.
    fn panicking_on_call(self, call: usize) -> Self {
        Scripted {
            panics_on_call: Some(call),
            ..self
        }
    }
}

impl HiLoSource for Scripted {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        let call = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let start = self.starts.lock().unwrap().pop_front();
        assert_ne!(Some(call), self.panics_on_call, "simulated bug in a source");
        start.ok_or_else(|| "script exhausted".into())
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        Ok(Ok(Increment::PerCall))
    }
    fn name(&self) -> &str {
        "scripted"
    }
}

#[tokio::test(start_paused = true)]
async fn blocks_are_pooled_lo_ranges_starting_at_one() {
    let table = MemorySource::new();
    let ids = plain(&table, 3).await;
    assert_eq!(take(&ids, 9).await, (1..=9).collect::<Vec<_>>());
    assert_eq!(table.peek_next(), 10);
    assert_eq!(table.calls(), 3);

    let sequence = MemorySource::sequence(3);
    let ids = plain(&sequence, 3).await;
    assert_eq!(take(&ids, 7).await, (1..=7).collect::<Vec<_>>());
    assert_eq!(sequence.peek_next(), 10);
}

#[tokio::test(start_paused = true)]
async fn generators_sharing_a_counter_and_a_direct_writer_never_collide() {
    let counter = MemorySource::sequence(4);
    let a = plain(&counter, 4).await; // [1, 5)
    let b = plain(&counter, 4).await; // [5, 9)
    // A script calling nextval directly takes [9, 13) and uses 9.
    let direct = HiLoSource::allocate(&counter, 4).await.unwrap();
    assert_eq!(direct, 9);
    let from_a = take(&a, 6).await;
    let from_b = take(&b, 6).await;
    assert_eq!(from_a, [1, 2, 3, 4, 13, 14]);
    assert_eq!(from_b, [5, 6, 7, 8, 17, 18]);
    let all: HashSet<i64> = from_a
        .iter()
        .chain(&from_b)
        .copied()
        .chain([direct])
        .collect();
    assert_eq!(all.len(), 13);
}

#[tokio::test(start_paused = true)]
async fn prefetch_fetches_before_the_block_runs_out_so_nobody_waits() {
    let counter = MemorySource::new().with_latency(10 * MS);
    let ids = HiLo::new(counter.clone(), 100).await.unwrap();
    assert_eq!(ids.stats().blocks_fetched, 1);
    // Before any rate is known the second block is fetched as soon as the first is in use.
    take(&ids, 60).await;
    tokio::time::sleep(20 * MS).await; // the background fetch lands
    assert_eq!(ids.stats().blocks_fetched, 2);
    let next = take(&ids, 100).await;
    assert_eq!(next, (61..=160).collect::<Vec<_>>());
    assert_eq!(ids.stats().caller_waits, 0);

    // Without prefetch the caller at the boundary waits for the round trip.
    let ids = plain(&MemorySource::new().with_latency(10 * MS), 100).await;
    take(&ids, 101).await;
    assert_eq!(ids.stats().caller_waits, 1);
    assert_eq!(ids.stats().blocks_fetched, 2);
}

#[tokio::test(start_paused = true)]
async fn only_one_fetch_is_in_flight() {
    let counter = MemorySource::new().with_latency(50 * MS);
    let ids = plain(&counter, 10).await;
    take(&ids, 10).await;
    // 20 callers find the buffer empty at once; one fetch serves them all.
    let waiters: Vec<_> = (0..20)
        .map(|_| {
            let ids = ids.clone();
            tokio::spawn(async move { ids.next_id().await.unwrap() })
        })
        .collect();
    let mut got = Vec::new();
    for w in waiters {
        got.push(w.await.unwrap());
    }
    got.sort_unstable();
    assert_eq!(got, (11..=30).collect::<Vec<_>>());
    assert_eq!(counter.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_next_id_loses_no_block_and_duplicates_none() {
    let counter = MemorySource::new().with_latency(100 * MS);
    let ids = plain(&counter, 10).await;
    take(&ids, 10).await;
    // Cancel the caller while its refill is in flight.
    let cancelled = tokio::time::timeout(30 * MS, ids.next_id()).await;
    assert!(cancelled.is_err(), "the call should still be waiting");
    assert_eq!(counter.calls(), 1, "the fetch has not landed yet");
    // The fetch still lands and its block is served from its first ID.
    assert_eq!(ids.next_id().await.unwrap(), 11);
    assert_eq!(counter.calls(), 2, "exactly one fetch for that block");
    assert_eq!(take(&ids, 9).await, (12..=20).collect::<Vec<_>>());

    // Many cancellations at random points: still every ID exactly once.
    let mut seen = HashSet::new();
    for round in 0..50u32 {
        let deadline = Duration::from_millis(u64::from(round % 7) * 20);
        if let Ok(Ok(id)) = tokio::time::timeout(deadline, ids.next_id()).await {
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
    for id in take(&ids, 30).await {
        assert!(seen.insert(id), "duplicate {id}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_outage_serves_the_buffer_then_a_typed_error_then_recovers() {
    let counter = MemorySource::new();
    let ids = HiLo::builder(counter.clone())
        .block(10)
        .timeout(Duration::from_secs(1))
        .backoff(10 * MS, 100 * MS)
        .build()
        .await
        .unwrap();
    tokio::time::sleep(MS).await; // the start-up prefetch settles
    let buffered = ids.stats().buffered;
    assert!(buffered >= 10, "{buffered}");
    counter.set_failing(true);
    // The buffer keeps serving (further prefetches fail in the background).
    let mut issued = take(&ids, buffered as usize).await;
    assert_eq!(issued, (1..=buffered as i64).collect::<Vec<_>>());
    // Then: nothing buffered, so a typed error after the timeout, never a sentinel.
    let started = tokio::time::Instant::now();
    let err = ids.next_id().await.unwrap_err();
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    match err.kind() {
        ErrorKind::HiLoUnavailable {
            waited_ms,
            last_error,
            ..
        } => {
            assert_eq!(*waited_ms, 1000);
            let last = last_error.as_ref().expect("the cause is kept");
            assert!(last.to_string().contains("simulated outage"), "{last}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(ids.try_next_id().unwrap(), None);
    let stats = ids.stats();
    assert!(stats.fetch_failures >= 2, "{stats:?}");
    assert!(stats.last_error.is_some());
    // The backoff is bounded: retries stay spaced out, no spinning.
    assert!(stats.fetch_failures < 40, "{stats:?}");

    // The database comes back: the generator recovers on its own.
    counter.set_failing(false);
    issued.extend(take(&ids, 25).await);
    let distinct: HashSet<i64> = issued.iter().copied().collect();
    assert_eq!(distinct.len(), issued.len(), "no duplicates");
    assert!(issued.windows(2).all(|w| w[0] < w[1]), "increasing");
}

#[tokio::test(start_paused = true)]
async fn a_counter_that_goes_backwards_fails_closed() {
    let counter = MemorySource::new();
    let ids = plain(&counter, 10).await;
    take(&ids, 10).await;
    counter.set_next(5); // a restored backup
    let err = ids.next_id().await.unwrap_err();
    assert_went_backwards(&err, 5, 10);
    assert!(err.to_string().contains("block start 5"), "{err}");
    // Never again, even when the counter looks fine later.
    counter.set_next(1_000);
    assert!(ids.next_id().await.is_err());
    assert!(ids.try_next_id().is_err());
    assert!(ids.reserve(3).await.is_err());
    assert!(ids.stats().last_error.is_some());
}

#[tokio::test(start_paused = true)]
async fn a_block_overlapping_the_last_one_fails_closed_and_drops_the_buffer() {
    // Block 10: the first block is [1, 11); a counter answering 10 overlaps it.
    let ids = HiLo::builder(Scripted::new(&[1, 21, 10]))
        .block(10)
        .min_low_water(5)
        .build()
        .await
        .unwrap();
    take(&ids, 6).await; // passes the low-water mark: [21, 31) is fetched
    tokio::time::sleep(MS).await;
    assert_eq!(take(&ids, 4).await, [7, 8, 9, 10]);
    // [21, 31) is installed; near its end the next fetch returns 10, inside [1, 11).
    let mut served = Vec::new();
    let err = loop {
        tokio::time::sleep(MS).await;
        match ids.next_id().await {
            Ok(id) => served.push(id),
            Err(err) => break err,
        }
        assert!(served.len() <= 10, "never failed closed: {served:?}");
    };
    assert_went_backwards(&err, 10, 30);
    // The rest of [21, 31) was still buffered when the bad block came; it is dropped too.
    assert!(!served.is_empty() && served.len() < 10, "{served:?}");
    assert_eq!(served, (21..21 + served.len() as i64).collect::<Vec<_>>());
    assert!(ids.next_id().await.is_err());
    assert_eq!(ids.stats().buffered, 0);
}

#[tokio::test(start_paused = true)]
async fn blocks_outside_one_to_i64_max_are_refused() {
    let err = HiLo::new(Scripted::new(&[0]), 10).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoBlockOutOfRange {
                start: 0,
                len: 10,
                ..
            }
        ),
        "{err:?}"
    );
    let err = HiLo::new(Scripted::new(&[-50]), 10).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoBlockOutOfRange { start: -50, .. }
        ),
        "{err:?}"
    );
    // The last ID may be i64::MAX, not one more.
    let ids = HiLo::new(Scripted::new(&[i64::MAX - 9]), 10).await.unwrap();
    assert_eq!(take(&ids, 10).await.last(), Some(&i64::MAX));
    let err = HiLo::new(Scripted::new(&[i64::MAX - 8]), 10)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::HiLoBlockOutOfRange { .. }),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_increment_mismatch_refuses_to_start_unless_adopted() {
    let err = HiLo::new(MemorySource::sequence(50), 1000)
        .await
        .unwrap_err();
    assert_increment_mismatch_1000_vs_50(&err);
    let message = err.to_string();
    assert!(
        message.contains("1000") && message.contains("50"),
        "{message}"
    );
    assert!(message.contains("hilo_seq"), "{message}");

    let counter = MemorySource::sequence(50);
    let ids = HiLo::builder(counter.clone())
        .block(1000)
        .adopt_database_increment(true)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    assert_eq!(ids.stats().block_size, 50);
    let got = take(&ids, 51).await;
    assert_eq!(got, (1..=51).collect::<Vec<_>>());
    assert_eq!(counter.peek_next(), 101);
}

#[tokio::test(start_paused = true)]
async fn reserve_gives_contiguous_increasing_ranges() {
    let counter = MemorySource::new();
    let ids = plain(&counter, 10).await;
    assert_eq!(ids.reserve(3).await.unwrap(), 1..4);
    assert_eq!(ids.next_id().await.unwrap(), 4);
    assert_eq!(ids.reserve(6).await.unwrap(), 5..11); // exactly the rest
    assert_eq!(ids.reserve(5).await.unwrap(), 11..16);
    assert_eq!(ids.reserve(10).await.unwrap(), 21..31); // 16..21 skipped
    // Larger than a block: one fetch of exactly that size from a counter table.
    assert_eq!(ids.reserve(25).await.unwrap(), 31..56);
    assert_eq!(ids.next_id().await.unwrap(), 56);
    assert_eq!(ids.stats().ids_issued, 3 + 1 + 6 + 5 + 10 + 25 + 1);

    let err = ids.reserve(0).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::HiLoInvalidOption { .. }),
        "{err:?}"
    );

    // A sequence's blocks are not contiguous with each other: at most one block.
    let sequence = plain(&MemorySource::sequence(10), 10).await;
    assert_eq!(sequence.reserve(10).await.unwrap(), 1..11);
    let err = sequence.reserve(11).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoReserveTooLarge {
                requested: 11,
                max: 10
            }
        ),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn try_next_id_never_waits() {
    let counter = MemorySource::new().with_latency(10 * MS);
    let ids = plain(&counter, 2).await;
    assert_eq!(ids.try_next_id().unwrap(), Some(1));
    assert_eq!(ids.try_next_id().unwrap(), Some(2));
    assert_eq!(ids.try_next_id().unwrap(), None);
    assert_eq!(ids.try_next_id().unwrap(), None);
    tokio::time::sleep(20 * MS).await;
    assert_eq!(ids.try_next_id().unwrap(), Some(3));
    assert_eq!(
        counter.calls(),
        2,
        "repeated None did not start more fetches"
    );
}

#[tokio::test(start_paused = true)]
async fn adaptive_blocks_grow_with_the_rate_and_stay_within_bounds() {
    let counter = MemorySource::new();
    let ids = HiLo::builder(counter.clone())
        .block(100)
        .adaptive(5_000, Duration::from_secs(1))
        .build()
        .await
        .unwrap();
    assert_eq!(ids.stats().next_block_size, 100);
    // 100 IDs per 10 ms = 10,000 per second: a one-second block would be 10,000, capped at 5,000.
    for _ in 0..5 {
        take(&ids, 100).await;
        tokio::time::sleep(10 * MS).await;
    }
    let stats = ids.stats();
    assert_eq!(stats.next_block_size, 5_000, "{stats:?}");
    // Slow consumption shrinks it again, never below the block size.
    let mut got = take(&ids, 1).await;
    while ids.stats().blocks_fetched < stats.blocks_fetched + 3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        got.extend(take(&ids, 1000).await);
    }
    let later = ids.stats();
    assert!(later.next_block_size < 5_000, "{later:?}");
    assert!(later.next_block_size >= 100, "{later:?}");
    assert!(got.windows(2).all(|w| w[0] < w[1]));
}

#[tokio::test(start_paused = true)]
async fn invalid_options_are_refused_with_the_value() {
    for (block, value) in [(0, "block = 0"), ((1 << 32) + 1, "4294967297")] {
        let err = HiLo::new(MemorySource::new(), block).await.unwrap_err();
        assert!(err.to_string().contains(value), "{err}");
    }
    let builder = || HiLo::builder(MemorySource::new());
    for (options, name) in [
        (
            builder().backoff(Duration::ZERO, Duration::from_secs(1)),
            "backoff initial",
        ),
        (builder().low_water_factor(f64::NAN), "low_water_factor"),
        (
            builder().block(100).adaptive(50, Duration::from_secs(1)),
            "adaptive max_block",
        ),
    ] {
        let err = options.build().await.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::HiLoInvalidOption { option, .. } if *option == name),
            "{err:?}"
        );
    }
}

#[test]
fn starting_outside_a_runtime_is_an_error_not_a_panic() {
    let mut build = std::pin::pin!(HiLo::new(MemorySource::new(), 10));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match build.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Err(e)) if matches!(e.kind(), ErrorKind::HiLoNoRuntime) => {}
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn eight_tasks_take_100k_ids_each_all_distinct_and_increasing_per_task() {
    let runtime = four_workers();
    runtime.block_on(async {
        let ids = HiLo::new(MemorySource::new(), 1000).await.unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let ids = ids.clone();
                tokio::spawn(async move { take(&ids, 100_000).await })
            })
            .collect();
        let mut per_task = Vec::new();
        for task in tasks {
            per_task.push(task.await.unwrap());
        }
        let all = assert_increasing_per_caller_and_distinct(per_task);
        assert_eq!(all.len(), 800_000);
        assert!(all[0] >= 1);
        // A caller preempted across four block switches drops its ordinal and retries. An
        // ordinal dropped inside its block is a gap the stats count as issued; one dropped past
        // the block's end was never an ID. So the count is the IDs handed out plus at most the
        // dropped ordinals.
        let lost = ids.lost_ordinals();
        let issued = ids.stats().ids_issued;
        assert!(
            (800_000..=800_000 + lost).contains(&issued),
            "issued {issued}, lost {lost}"
        );
    });
}

#[tokio::test(start_paused = true)]
async fn a_panicking_source_does_not_wedge_the_generator() {
    // Blocks of 5 at 1, 6, 11: the second call panics.
    let source = Scripted::new(&[1, 6, 11]).panicking_on_call(1);
    let ids = HiLo::builder(source)
        .block(5)
        .prefetch(false)
        .timeout(Duration::from_secs(1))
        .build()
        .await
        .unwrap();
    assert_eq!(take(&ids, 5).await, [1, 2, 3, 4, 5]);
    // The fetch for the next block panics; the dead task wakes the waiting caller, whose next
    // look starts a fresh fetch, which works: no wait for the timeout.
    let began = tokio::time::Instant::now();
    assert_eq!(ids.next_id().await.unwrap(), 11);
    assert!(began.elapsed() < Duration::from_secs(1));
    let stats = ids.stats();
    assert_eq!(stats.fetch_failures, 1, "{stats:?}");
    let cause = stats.last_error.expect("the panic is recorded").to_string();
    assert!(cause.contains("panicked"), "{cause}");
    assert_eq!(take(&ids, 4).await, [12, 13, 14, 15]);
}

#[test]
fn reserve_and_next_id_racing_on_many_threads_never_overlap() {
    let runtime = four_workers();
    runtime.block_on(async {
        // Small blocks, so switches, stagings and reserve claims race all the time.
        let ids = HiLo::new(MemorySource::new(), 100).await.unwrap();
        let mut tasks = Vec::new();
        for t in 0..6u64 {
            let ids = ids.clone();
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                for i in 0..10_000u64 {
                    if t < 2 {
                        let n = 1 + (i * 7 + t) % 150; // sometimes more than a block
                        let range = ids.reserve(n).await.unwrap();
                        assert_eq!(range.end - range.start, n as i64);
                        got.extend(range);
                    } else {
                        got.push(ids.next_id().await.unwrap());
                    }
                }
                got
            }));
        }
        let mut per_task = Vec::new();
        for task in tasks {
            per_task.push(task.await.unwrap());
        }
        let all = assert_increasing_per_caller_and_distinct(per_task);
        assert!(all[0] >= 1);
    });
}

/// A floor above a counter that was set back or re-created: the start-up moves the counter
/// above it (one step for a counter table, blocks for a sequence) before serving, and a block
/// at or below it later fails closed.
#[tokio::test]
async fn a_floor_moves_the_counter_above_it_before_serving() {
    for source in [MemorySource::new(), MemorySource::sequence(10)] {
        let ids = HiLo::builder(source)
            .block(10)
            .prefetch(false)
            .floor(5_000)
            .build()
            .await
            .unwrap();
        let first = ids.next_id().await.unwrap();
        assert!(first > 5_000, "{first}");
        assert!(first <= 5_021, "moved far past the floor: {first}");
    }
    let ids = HiLo::builder(MemorySource::new())
        .block(10)
        .floor_from(|| async { Err("the orders table is unreachable".into()) })
        .build()
        .await
        .unwrap_err();
    assert!(ids.to_string().contains("unreachable"), "{ids}");
}

/// The application's table of handed-out IDs, as a floor query reads it (`MAX(id)`).
#[derive(Clone, Default)]
struct IssuedTable(std::sync::Arc<Mutex<std::collections::BTreeSet<i64>>>);

impl IssuedTable {
    /// Takes `n` IDs from `ids` and stores them; each must be new to the table.
    async fn take_and_store(&self, ids: &HiLo, n: usize) -> Result<(), Error> {
        for _ in 0..n {
            let id = ids.next_id().await?;
            assert!(
                self.0.lock().unwrap().insert(id),
                "ID {id} handed out by both"
            );
        }
        Ok(())
    }

    fn max(&self) -> i64 {
        self.0.lock().unwrap().last().copied().unwrap_or(0)
    }

    /// A generator of blocks of 10 on `source` whose floor query reads this table.
    async fn generator(&self, source: &MemorySource) -> HiLo {
        let table = self.clone();
        HiLo::builder(source.clone())
            .block(10)
            .prefetch(false)
            .floor_from(move || {
                let table = table.clone();
                async move { Ok(table.max()) }
            })
            .build()
            .await
            .unwrap()
    }
}

/// Issue 37, item 6: a counter set back to a point between two generators' blocks. With a
/// floor query, the lower generator's next block (which the higher one still serves) is
/// refused: it fails closed, and no ID is handed out by both. Processes that interleave
/// normally never trip the re-read floor (the floor is read before each block is taken).
#[tokio::test]
async fn a_counter_set_back_between_two_generators_is_caught_by_the_lower_one_with_a_floor() {
    for source in [MemorySource::sequence(10), MemorySource::new()] {
        let table = IssuedTable::default();
        let low = table.generator(&source).await; // [1, 11)
        let high = table.generator(&source).await; // [11, 21)
        table.take_and_store(&low, 5).await.unwrap();
        table.take_and_store(&high, 5).await.unwrap();
        assert_eq!(table.max(), 15);
        // Restored to the start of `high`'s block, which `high` still serves.
        source.set_next(11);
        let err = table.take_and_store(&low, 20).await.unwrap_err();
        assert_went_backwards(&err, 11, 15);
        table.take_and_store(&high, 5).await.unwrap(); // the rest of its block
    }

    // Interleaving normally, many blocks each: never refused.
    let source = MemorySource::sequence(10);
    let table = IssuedTable::default();
    let (a, b) = (
        table.generator(&source).await,
        table.generator(&source).await,
    );
    for _ in 0..50 {
        table.take_and_store(&a, 7).await.unwrap();
        table.take_and_store(&b, 13).await.unwrap();
    }
}

/// What holds without a floor (documented in the README): the generator that was ahead
/// notices only a block at or below its own; the lower one takes the restored block silently,
/// handing out IDs the higher one already handed out.
#[tokio::test]
async fn without_a_floor_a_counter_set_back_between_two_generators_goes_unnoticed() {
    let source = MemorySource::sequence(10);
    let low = plain(&source, 10).await; // [1, 11)
    let high = plain(&source, 10).await; // [11, 21)
    let mut seen: Vec<i64> = take(&low, 5).await;
    seen.extend(take(&high, 5).await); // 11..=15
    source.set_next(11);
    seen.extend(take(&low, 10).await); // 6..=10, then the restored block: 11..=15 again
    let mut distinct = seen.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(seen.len() - distinct.len(), 5, "{seen:?}");
}

/// Issue 37, item 7: a floor query that never answers (behind another session's lock) does not
/// hold `build()` for ever: the typed time-out error, naming the floor query, within about the
/// timeout.
#[tokio::test]
async fn build_with_a_floor_query_that_never_answers_returns_within_its_timeout() {
    let began = std::time::Instant::now();
    let build = HiLo::builder(MemorySource::new())
        .block(10)
        .timeout(200 * MS)
        .floor_from(std::future::pending)
        .build();
    // The guard turns a build that waits for ever (as it did) into a failure, not a hang.
    let err = tokio::time::timeout(5_000 * MS, build)
        .await
        .expect("build() still waited 5 s after its timeout of 200 ms")
        .unwrap_err();
    let took = began.elapsed();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoStartTimeout {
                timeout_ms: 200,
                waiting_for: "the floor query",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(took < 1_000 * MS, "{took:?}");
}

/// Issue 37, item 7: a floor 10⁹ above a sequence of blocks of 1,000 is reached in one jump
/// (one call), not 10⁶ blocks; the first ID is just above it.
#[tokio::test]
async fn a_floor_far_above_the_counter_is_reached_in_one_jump() {
    for source in [MemorySource::sequence(1000), MemorySource::new()] {
        let ids = HiLo::builder(source.clone())
            .block(1000)
            .prefetch(false)
            .floor(1_000_000_000)
            .build()
            .await
            .unwrap();
        let first = ids.next_id().await.unwrap();
        assert!((1_000_000_001..=1_000_001_000).contains(&first), "{first}");
        // The jump and the first block.
        assert_eq!(source.calls(), 2);
    }
}

/// A source that never answers its increment check.
#[derive(Clone)]
struct Silent;

impl HiLoSource for Silent {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        std::future::pending().await
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        std::future::pending().await
    }
    fn name(&self) -> &str {
        "silent"
    }
}

impl CounterStart for Silent {
    async fn start(&self) -> Result<i64, BoxError> {
        Ok(1)
    }
}

/// Issue 37, item 7: `StripedHiLo` start-up is bounded by the time-out too.
#[tokio::test]
async fn a_striped_start_up_returns_within_its_timeout_when_a_counter_never_answers() {
    let began = std::time::Instant::now();
    let start = StripedHiLo::with_options(vec![Silent, Silent], 10, |b| b.timeout(200 * MS));
    let err = tokio::time::timeout(5_000 * MS, start)
        .await
        .expect("StripedHiLo::with_options still waited 5 s after its timeout of 200 ms")
        .err()
        .expect("refused");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoStartTimeout {
                timeout_ms: 200,
                waiting_for: "the counter's increment check",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(began.elapsed() < 1_000 * MS, "{:?}", began.elapsed());
}

/// A counter that is missing until `create_if_missing` is called, and created then unless
/// `creation_works` is false (a counter dropped again at once).
struct Absent {
    created: std::sync::atomic::AtomicBool,
    creations: Arc<std::sync::atomic::AtomicUsize>,
    creation_works: bool,
    allocations: std::sync::atomic::AtomicI64,
}

impl Absent {
    /// The source, and the count of its creations.
    fn new(creation_works: bool) -> (Absent, Arc<std::sync::atomic::AtomicUsize>) {
        let creations = Arc::default();
        let source = Absent {
            created: Default::default(),
            creations: Arc::clone(&creations),
            creation_works,
            allocations: Default::default(),
        };
        (source, creations)
    }
}

impl HiLoSource for Absent {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let size = i64::try_from(size)?;
        Ok(1 + size
            * self
                .allocations
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst))
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        Ok(if self.created.load(std::sync::atomic::Ordering::SeqCst) {
            Ok(Increment::PerCall)
        } else {
            Err(MissingCounter::new("no row 'absent' in table t"))
        })
    }
    fn name(&self) -> &str {
        "absent"
    }
    async fn create_if_missing(&self, _block: u64) -> Result<(), BoxError> {
        self.creations
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.created
            .store(self.creation_works, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// Starts a hi-lo on an [`Absent`] counter; the count of its creations.
async fn start_absent(
    creation_works: bool,
    create: bool,
) -> (Result<HiLo, Error>, Arc<std::sync::atomic::AtomicUsize>) {
    let (source, creations) = Absent::new(creation_works);
    let ids = HiLo::builder(source)
        .block(10)
        .create_if_missing(create)
        .build()
        .await;
    (ids, creations)
}

/// Start-up reads the source's typed answer: a missing counter is created once (when asked),
/// refused naming what is missing (when not), and one still missing after its creation is
/// `HiLoCounterMissing`, never taken for a counter that exists.
#[tokio::test(start_paused = true)]
async fn a_missing_counter_is_created_once_or_refused_naming_what_is_missing() {
    let (ids, creations) = start_absent(true, true).await;
    let ids = ids.unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    assert_eq!(creations.load(std::sync::atomic::Ordering::SeqCst), 1);

    let (ids, creations) = start_absent(true, false).await;
    let err = ids.unwrap_err();
    let ErrorKind::HiLoCounterNotCreated { missing, .. } = err.kind() else {
        panic!("expected HiLoCounterNotCreated, got {err:?}");
    };
    assert_eq!(missing, "no row 'absent' in table t");
    assert_eq!(creations.load(std::sync::atomic::Ordering::SeqCst), 0);

    let (ids, creations) = start_absent(false, true).await;
    let err = ids.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::HiLoCounterMissing { missing, .. } if missing == "no row 'absent' in table t"),
        "{err:?}"
    );
    assert_eq!(creations.load(std::sync::atomic::Ordering::SeqCst), 1);
}
