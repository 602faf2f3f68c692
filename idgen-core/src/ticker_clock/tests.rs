//! A ticker that never runs (the worst stall) must not break what a generator promises: unique,
//! increasing IDs, waits that end, and no tick at or beyond a fence's deadline.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::error::Error;
use crate::{Fence, Layout, ManualClock, Snowflake};

const T0: i64 = 1_800_000_000_000;
/// IDs per tick under `Layout::TWITTER`.
const PER_TICK: u64 = 4_096;

/// The cache stands at T0 while the source moves on: the generator fills T0's sequence, then
/// its wait reads the source and issues at the source's time, never ahead of it.
#[test]
fn a_stalled_ticker_fills_one_tick_then_waits_on_the_real_time() {
    let source = ManualClock::new(T0);
    let clock = TickerClock::stalled(source.clone());
    source.set(T0 + 50);
    let ids = Snowflake::with_clock(Layout::TWITTER, 1, clock.clone()).unwrap();
    let mut last = None;
    for n in 0..3 * PER_TICK + 10 {
        let id = ids.next_id().unwrap();
        assert!(last < Some(id), "ID {n} is not above the one before");
        last = Some(id);
        let ms = Layout::TWITTER.decompose(id).unwrap().unix_ms;
        assert!(
            ms <= source.now_ms(),
            "issued at {ms}, ahead of the real time"
        );
        if n < PER_TICK {
            assert_eq!(ms, T0, "the stale tick first");
        } else if n < 2 * PER_TICK {
            assert_eq!(ms, T0 + 50, "after the wait, the source's time");
        }
    }
    assert_eq!(
        clock.now_ms(),
        source.now_ms(),
        "the waits refreshed the cache"
    );
}

/// Threads sharing a generator on a real clock whose ticker never runs: every ID distinct,
/// each thread's increasing, none ahead of the system clock, and every wait ended.
#[test]
fn threads_on_a_stalled_ticker_get_distinct_ids() {
    let clock = TickerClock::stalled(SystemClock::new());
    let ids = Arc::new(Snowflake::with_clock(Layout::TWITTER, 1, clock).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let ids = Arc::clone(&ids);
            std::thread::spawn(move || {
                let got: Vec<_> = (0..3 * PER_TICK).map(|_| ids.next_id().unwrap()).collect();
                assert!(got.windows(2).all(|w| w[0] < w[1]));
                got
            })
        })
        .collect();
    let mut all = HashSet::new();
    for thread in threads {
        for id in thread.join().unwrap() {
            assert!(all.insert(id), "{id} issued twice");
        }
    }
    let now = SystemClock::new().now_ms();
    let newest = all.iter().max().unwrap();
    assert!(Layout::TWITTER.decompose(*newest).unwrap().unix_ms <= now);
    assert!(
        ids.stats().exhaustion_waits >= 2,
        "the stale tick ran out and was waited out"
    );
}

/// The lease's deadline passed in real time while the cache stands before it: the generator
/// issues only in the stale tick (below the deadline), and the wait that follows reads the real
/// time and the fence stops it.
#[test]
fn a_stalled_ticker_never_issues_at_or_beyond_the_fence() {
    let source = ManualClock::new(T0);
    let clock = TickerClock::stalled(source.clone());
    let fence = Fence::new(T0 + 1);
    let ids = Snowflake::builder()
        .layout(Layout::TWITTER)
        .node(1)
        .clock(clock)
        .fence(fence.clone())
        .build()
        .unwrap();
    source.set(T0 + 1_000); // the deadline is long past
    let mut issued = 0;
    let err = loop {
        match ids.next_id() {
            Ok(id) => {
                let ms = Layout::TWITTER.decompose(id).unwrap().unix_ms;
                assert!(
                    ms < fence.valid_until_ms(),
                    "issued at {ms}, at or past the deadline"
                );
                issued += 1;
            }
            Err(err) => break err,
        }
        assert!(issued <= PER_TICK, "issued past the stale tick");
    };
    assert!(matches!(err, Error::Fenced { .. }), "{err}");
    assert_eq!(issued, PER_TICK);
    assert_eq!(fence.revoke(), Some(T0), "the exact last tick");
}

/// The same on the async path: its wait loop reads the source, not the stalled cache.
#[cfg(feature = "tokio")]
#[tokio::test(flavor = "current_thread")]
async fn an_async_wait_on_a_stalled_ticker_ends() {
    let clock = TickerClock::stalled(SystemClock::new());
    let ids = Snowflake::with_clock(Layout::TWITTER, 1, clock).unwrap();
    let all = tokio::time::timeout(Duration::from_secs(10), async {
        let mut all = Vec::new();
        for _ in 0..3 * PER_TICK {
            all.push(ids.next_id_async().await.unwrap());
        }
        all
    })
    .await
    .expect("the waits ended");
    assert!(all.windows(2).all(|w| w[0] < w[1]));
}

/// The real ticker moves the cache, and stops once the last clock is gone.
#[test]
fn the_ticker_follows_the_system_clock_and_stops_with_its_last_clock() {
    let clock = TickerClock::new().unwrap();
    let start = clock.now_ms();
    assert!(start <= SystemClock::new().now_ms());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while clock.now_ms() < start + 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the ticker did not tick"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(clock.now_ms() <= SystemClock::new().now_ms());
    let same = TickerClock::new().unwrap();
    assert!(
        Arc::ptr_eq(&clock.cached, &same.cached),
        "one ticker per process"
    );
    let weak = Arc::downgrade(&clock.cached);
    drop((clock, same));
    // Gone with its last clock: the ticker thread's next round finds nothing and ends.
    assert!(weak.upgrade().is_none());
    let next = TickerClock::new().unwrap();
    assert!(
        !Weak::ptr_eq(&weak, &Arc::downgrade(&next.cached)),
        "a new ticker"
    );
}
