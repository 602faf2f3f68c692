//! The look-ahead: several blocks per round trip, several fetches in flight, and blocks that
//! arrive out of order (pure logic, in-memory sources, paused clock).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::tests::{assert_went_backwards, take};
use super::*;

const MS: Duration = Duration::from_millis(1);

/// Takes `per_ms` IDs, then lets a millisecond pass, `ms` times: a steady rate.
async fn steady(ids: &HiLo, per_ms: usize, ms: usize) -> Vec<i64> {
    let mut got = Vec::with_capacity(per_ms * ms);
    for _ in 0..ms {
        for _ in 0..per_ms {
            got.push(ids.next_id().await.unwrap());
        }
        tokio::time::sleep(MS).await;
    }
    got
}

fn assert_increasing(ids: &[i64]) {
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
}

#[tokio::test(start_paused = true)]
async fn a_source_giving_several_blocks_per_round_trip_is_asked_for_several() {
    // 100 IDs per ms = 100,000 per second, 5 ms per round trip, blocks of 100: one block per
    // round trip would fall behind (a block lasts 1 ms).
    let counter = MemorySource::sequence(100).with_latency(5 * MS);
    let ids = HiLo::new(counter.clone(), 100).await.unwrap();
    let mut got = steady(&ids, 100, 100).await;
    let warm = ids.stats();
    let calls = counter.calls();
    got.extend(steady(&ids, 100, 400).await);
    let stats = ids.stats();
    assert_increasing(&got);
    assert_eq!(stats.caller_waits, warm.caller_waits, "{stats:?}");
    let (blocks, round_trips) = (
        stats.blocks_fetched - warm.blocks_fetched,
        counter.calls() - calls,
    );
    assert!(blocks >= 390, "{blocks} blocks");
    assert!(
        round_trips * 3 <= blocks,
        "{round_trips} round trips for {blocks} blocks"
    );
    assert!(stats.low_water >= 1500, "{stats:?}"); // 3 × 100,000/s × 5 ms
}

/// A sequence that gives one block per round trip (no `allocate_blocks`), counting how many
/// of its calls overlap.
#[derive(Clone)]
struct OneBlockPerCall {
    counter: MemorySource,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl OneBlockPerCall {
    /// Over a sequence of blocks of 100, 5 ms per round trip.
    fn new() -> Self {
        OneBlockPerCall {
            counter: MemorySource::sequence(100).with_latency(5 * MS),
            running: Arc::default(),
            most: Arc::default(),
        }
    }

    /// Blocks of 100 from this source, with at most `fetches` fetches in flight.
    async fn hilo(&self, fetches: usize) -> HiLo {
        HiLo::builder(self.clone())
            .block(100)
            .max_fetches_in_flight(fetches)
            .build()
            .await
            .unwrap()
    }
}

impl HiLoSource for OneBlockPerCall {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let start = HiLoSource::allocate(&self.counter, size).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        start
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        HiLoSource::increment(&self.counter).await
    }
    fn name(&self) -> &str {
        "one-block-per-call"
    }
}

#[tokio::test(start_paused = true)]
async fn a_source_giving_one_block_per_round_trip_gets_several_fetches_at_once() {
    let source = OneBlockPerCall::new();
    let ids = source.hilo(4).await;
    let mut got = steady(&ids, 50, 100).await;
    let warm = ids.stats();
    got.extend(steady(&ids, 50, 400).await);
    let stats = ids.stats();
    assert_increasing(&got);
    // 50 IDs per ms with 5 ms round trips: 2.5 blocks per round trip, so 3 or more at once.
    let most = source.most.load(Ordering::SeqCst);
    assert!((3..=4).contains(&most), "at most {most} fetches at once");
    assert_eq!(stats.caller_waits, warm.caller_waits, "{stats:?}");
    assert_eq!(stats.blocks_discarded, 0, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn one_fetch_at_a_time_when_so_configured() {
    let source = OneBlockPerCall::new();
    let ids = source.hilo(1).await;
    assert_increasing(&steady(&ids, 50, 200).await);
    assert_eq!(source.most.load(Ordering::SeqCst), 1);
}

/// A sequence on one connection: calls wait for each other (as `PgSequence`'s dedicated
/// one-connection pool makes them).
#[derive(Clone)]
struct OneCallAtATime {
    inner: OneBlockPerCall,
    connection: Arc<tokio::sync::Mutex<()>>,
}

impl HiLoSource for OneCallAtATime {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let entered = self.inner.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.inner.most.fetch_max(entered, Ordering::SeqCst);
        let start = {
            let _connection = self.connection.lock().await;
            HiLoSource::allocate(&self.inner.counter, size).await
        };
        self.inner.running.fetch_sub(1, Ordering::SeqCst);
        start
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        HiLoSource::increment(&self.inner.counter).await
    }
    fn name(&self) -> &str {
        "one-call-at-a-time"
    }
}

#[tokio::test(start_paused = true)]
async fn a_source_that_serves_one_call_at_a_time_gets_one_fetch_at_a_time() {
    let source = OneCallAtATime {
        inner: OneBlockPerCall::new(),
        connection: Arc::default(),
    };
    let ids = HiLo::builder(source.clone())
        .block(100)
        .build()
        .await
        .unwrap();
    // 15,000 IDs per second with 5 ms per call: the look-ahead wants 3 blocks, so it first
    // sends fetches at once, which queue behind each other and take twice as long.
    let mut got = steady(&ids, 15, 1_000).await;
    let tried = source.inner.most.load(Ordering::SeqCst);
    assert!(tried >= 2, "never tried fetches at once: {tried}");
    source.inner.most.store(0, Ordering::SeqCst);
    let warm = ids.stats();
    got.extend(steady(&ids, 15, 5_000).await);
    assert_increasing(&got);
    // From then on one at a time (the next probe, a second fetch at once to see whether the
    // source changed, is due 10 s after the first, past this window).
    let most = source.inner.most.load(Ordering::SeqCst);
    assert_eq!(most, 1, "{most} calls at once");
    let stats = ids.stats();
    assert_eq!(stats.caller_waits, warm.caller_waits, "{stats:?}");
}

/// A sequence of blocks of 10 whose calls take their values in call order, as a database
/// does, but return only when the test opens their gate.
#[derive(Clone)]
struct Gated {
    values: Arc<Vec<i64>>,
    calls: Arc<AtomicUsize>,
    gates: Arc<Vec<Semaphore>>,
}

impl Gated {
    /// Calls from `open_from` on return at once.
    fn new(values: &[i64], open_from: usize) -> Gated {
        Gated {
            values: Arc::new(values.to_vec()),
            calls: Arc::default(),
            gates: Arc::new(
                (0..values.len())
                    .map(|i| Semaphore::new(usize::from(i >= open_from)))
                    .collect(),
            ),
        }
    }

    fn open(&self, call: usize) {
        self.gates[call].add_permits(1);
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl HiLoSource for Gated {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let value = *self.values.get(call).ok_or("script exhausted")?;
        self.gates[call].acquire().await?.forget();
        Ok(value)
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        Ok(Ok(Increment::Fixed(10)))
    }
    fn name(&self) -> &str {
        "gated"
    }
}

/// Lets spawned fetch tasks run until they wait on their gates.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

/// Blocks of 10; 25 IDs of low water and no rate yet: the start-up fetch is followed by a
/// second at once, and the block's trigger (its second ID) starts a third while the second is
/// out: a source of one block per call gets two calls at once.
async fn two_fetches_out(source: &Gated) -> HiLo {
    let ids = HiLo::builder(source.clone())
        .block(10)
        .min_low_water(25)
        .max_fetches_in_flight(2)
        .build()
        .await
        .unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    assert_eq!(ids.next_id().await.unwrap(), 2);
    settle().await;
    assert_eq!(source.calls(), 3, "the start-up call and two at once");
    assert_eq!(ids.stats().fetches_in_flight, 2);
    ids
}

#[tokio::test(start_paused = true)]
async fn a_block_overtaken_by_a_later_one_is_still_served_first() {
    // Call 1 takes 11, call 2 takes 21; call 2 returns first.
    let source = Gated::new(&[1, 11, 21, 31, 41, 51, 61, 71], 3);
    source.open(0);
    let ids = two_fetches_out(&source).await;
    source.open(2);
    settle().await;
    // [21, 31) is buffered but not staged while [11, 21), sent before it arrived, is out.
    source.open(1);
    settle().await;
    let mut got = vec![1, 2];
    got.extend(take(&ids, 38).await);
    assert_eq!(got, (1..=40).collect::<Vec<_>>());
    assert_eq!(ids.stats().blocks_discarded, 0);
}

#[tokio::test(start_paused = true)]
async fn a_block_arriving_below_one_already_in_use_is_dropped_not_served_out_of_order() {
    let source = Gated::new(&[1, 11, 21, 31, 41, 51, 61, 71], 3);
    source.open(0);
    let ids = two_fetches_out(&source).await;
    source.open(2); // [21, 31) arrives; [11, 21) is still out
    settle().await;
    let mut got = vec![1, 2];
    got.extend(take(&ids, 9).await);
    // The current block ran out: rather than wait for [11, 21), the caller moved on to 21.
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 21]);
    source.open(1);
    settle().await;
    got.extend(take(&ids, 20).await);
    assert_increasing(&got);
    assert!(!got.contains(&11), "the late block was served out of order");
    let stats = ids.stats();
    assert_eq!(stats.blocks_discarded, 1, "{stats:?}");
    assert_eq!(stats.caller_waits, 0, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn blocks_of_concurrent_fetches_that_overlap_fail_closed() {
    // Call 2 returns 11 as well, the same block as call 1's [11, 21): no sane counter does
    // that. (A start off the counter's grid, such as 15, is refused on its own: see below.)
    let source = Gated::new(&[1, 11, 11, 31], 3);
    source.open(0);
    let ids = two_fetches_out(&source).await;
    source.open(2); // [11, 21) arrives first and is accepted: above everything seen
    settle().await;
    source.open(1); // [11, 21) again overlaps it
    settle().await;
    let err = ids.stats().last_error.expect("failed closed");
    assert_went_backwards(&err, 11, 20);
}

#[tokio::test(start_paused = true)]
async fn a_block_off_the_grid_of_a_fixed_increment_fails_closed() {
    // Blocks of a sequence with INCREMENT BY 10 start at 1 + 10k; 15 means its increment or
    // value was changed while this ran (its blocks may meet other processes').
    let source = Gated::new(&[1, 11, 15, 31], 3);
    source.open(0);
    let ids = two_fetches_out(&source).await;
    source.open(2);
    settle().await;
    let err = ids.stats().last_error.expect("failed closed");
    assert!(
        matches!(
            err.kind(),
            crate::error::ErrorKind::HiLoBlockOffGrid {
                start: 15,
                origin: 1,
                step: 10,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(ids.next_id().await.is_err());
    assert_eq!(ids.stats().buffered, 0);
    assert!(ids.next_id().await.is_err());
    assert_eq!(ids.stats().buffered, 0);
}

#[tokio::test(start_paused = true)]
async fn a_concurrent_fetch_below_what_was_seen_when_it_was_sent_fails_closed() {
    // Call 2 is sent after [1, 11) arrived, so it must return above 10.
    let source = Gated::new(&[1, 11, 5, 31], 3);
    source.open(0);
    let ids = two_fetches_out(&source).await;
    source.open(2);
    settle().await;
    let err = ids.next_id().await.unwrap_err();
    assert_went_backwards(&err, 5, 10);
}

/// A sequence of blocks of 10,000 whose fetches take 1 ms (the paused clock's timers tick in
/// milliseconds), except every 10th from the 10th on, which takes 20 ms: a round trip 20 times
/// slower than any before it, as a real database gives now and then (measured: mean
/// 126–149 µs, max 1.5–3.1 ms).
#[derive(Clone)]
struct SometimesSlow {
    counter: MemorySource,
    calls: Arc<AtomicUsize>,
}

impl HiLoSource for SometimesSlow {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let latency = if call >= 10 && call.is_multiple_of(10) {
            20 * MS
        } else {
            MS
        };
        tokio::time::sleep(latency).await;
        self.counter.allocate(size).await
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        self.counter.increment().await
    }
    fn name(&self) -> &str {
        "sometimes_slow"
    }
}

/// Callers that waited for a block over 3 s at 100,000 IDs/s after a warm-up, with blocks of
/// 10,000 (100 ms each) from [`SometimesSlow`], built by `build`.
async fn boundary_waits(
    build: impl FnOnce(HiLoBuilder<SometimesSlow>) -> HiLoBuilder<SometimesSlow>,
) -> u64 {
    let source = SometimesSlow {
        counter: MemorySource::sequence(10_000),
        calls: Arc::default(),
    };
    let ids = build(HiLo::builder(source).block(10_000))
        .build()
        .await
        .unwrap();
    let mut got = steady(&ids, 100, 100).await;
    let warm = ids.stats();
    got.extend(steady(&ids, 100, 3_000).await);
    assert_increasing(&got);
    ids.stats().caller_waits - warm.caller_waits
}

/// Issue 27, item 4: with the defaults, a fetch 20 times slower than any before it makes no
/// caller wait at a block boundary (the next block is asked for when the one in use is all
/// that is left, so it has a whole block's time to land). A low-water mark from the rate and
/// the latency alone (`min_low_water(1)`, the old default) does make callers wait.
#[tokio::test(start_paused = true)]
async fn one_slow_fetch_among_fast_ones_makes_no_caller_wait_with_the_defaults() {
    assert_eq!(boundary_waits(|b| b).await, 0);
    let old = boundary_waits(|b| b.min_low_water(1)).await;
    assert!(
        old > 0,
        "the control waited {old} times: the case proves nothing"
    );
}
