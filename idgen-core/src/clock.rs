//! Time sources for generators: [`Clock`], [`SystemClock`] and [`ManualClock`].

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// Generators read the clock on every ID, so `now_ms` must be cheap. The provided
/// [`wait_until`](Clock::wait_until) waits on the real time; a simulated clock such as
/// [`ManualClock`] overrides it to move its own time instead, so tests never sleep.
///
/// ```
/// use idgen_core::{Clock, SystemClock};
///
/// let clock = SystemClock::new();
/// let a = clock.now_ms();
/// clock.wait_until(a + 2);
/// assert!(clock.now_ms() >= a + 2);
/// ```
pub trait Clock: Send + Sync {
    /// The current time, in milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> i64;

    /// Returns once `now_ms() >= target_ms`.
    ///
    /// The provided method sleeps for all but the last millisecond and spins (yielding the
    /// thread) for the rest, so a waiter wakes within microseconds of the target instead of
    /// oversleeping by the scheduler's granularity.
    fn wait_until(&self, target_ms: i64) {
        loop {
            let now = self.now_ms();
            if now >= target_ms {
                return;
            }
            let remaining = target_ms - now;
            if remaining >= 2 {
                std::thread::sleep(Duration::from_millis((remaining - 1) as u64));
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// `true` when [`wait_until`](Clock::wait_until) moves a simulated time instead of waiting.
    ///
    /// Async callers use this to decide between calling `wait_until` directly (simulated) and
    /// sleeping on their runtime (real time).
    fn is_simulated(&self) -> bool {
        false
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
    fn wait_until(&self, target_ms: i64) {
        (**self).wait_until(target_ms)
    }
    fn is_simulated(&self) -> bool {
        (**self).is_simulated()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
    fn wait_until(&self, target_ms: i64) {
        (**self).wait_until(target_ms)
    }
    fn is_simulated(&self) -> bool {
        (**self).is_simulated()
    }
}

/// The real time, anchored once to the wall clock and then advanced by the monotonic clock.
///
/// It reads `SystemTime` once, when created, and from then on adds the time elapsed on
/// `Instant`. So inside one process it never steps backwards, even when NTP or an operator steps
/// the wall clock; it does not follow such steps either. Across restarts the wall clock is read
/// anew: a restart while the wall clock is behind is the case that
/// [`ClockPolicy`](crate::ClockPolicy) and a database-leased node ID's last timestamp guard against.
///
/// ```
/// use idgen_core::{Clock, SystemClock};
///
/// let clock = SystemClock::new();
/// let unix_ms = std::time::SystemTime::now()
///     .duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
/// assert!((clock.now_ms() - unix_ms).abs() < 1_000);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    /// The wall-clock time at `anchor`, split as `anchor_unix_ms * 1_000_000 + anchor_sub_ms_ns`
    /// with `0 <= anchor_sub_ms_ns < 1_000_000`, so `now_ms` needs no 128-bit division.
    anchor_unix_ms: i64,
    anchor_sub_ms_ns: u32,
    anchor: Instant,
}

impl SystemClock {
    /// Anchors a new clock to the current wall-clock time.
    pub fn new() -> Self {
        let anchor = Instant::now();
        let anchor_unix_ns = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        };
        Self {
            anchor_unix_ms: anchor_unix_ns.div_euclid(NS_PER_MS) as i64,
            anchor_sub_ms_ns: anchor_unix_ns.rem_euclid(NS_PER_MS) as u32,
            anchor,
        }
    }
}

const NS_PER_MS: i128 = 1_000_000;

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        unix_ms_after(
            self.anchor_unix_ms,
            self.anchor_sub_ms_ns,
            self.anchor.elapsed(),
        )
    }
}

/// `floor((anchor_ms * 1e6 + anchor_sub_ms_ns + elapsed_ns) / 1e6)` in 64-bit arithmetic: whole
/// seconds of `elapsed` are whole milliseconds, so only the sub-millisecond parts are divided.
/// The same value as a 128-bit division, which costs ~15 ns per ID.
#[inline]
fn unix_ms_after(anchor_ms: i64, anchor_sub_ms_ns: u32, elapsed: Duration) -> i64 {
    let sub_ms_ns = u64::from(anchor_sub_ms_ns) + u64::from(elapsed.subsec_nanos());
    anchor_ms + elapsed.as_secs() as i64 * 1_000 + (sub_ms_ns / NS_PER_MS as u64) as i64
}

/// A clock that only moves when told to: for tests of clock steps and sequence exhaustion.
///
/// Clones share one time, so a test keeps a handle while the generator owns another.
/// [`wait_until`](Clock::wait_until) moves the time forward to the target at once (a simulated
/// wait), so a generator that waits for the next tick, or waits out a small backwards step, does so
/// without sleeping.
///
/// ```
/// use std::time::Duration;
/// use idgen_core::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// let handle = clock.clone();
/// handle.advance(Duration::from_millis(5));
/// assert_eq!(clock.now_ms(), 1_005);
/// handle.step_back(Duration::from_millis(3));
/// assert_eq!(clock.now_ms(), 1_002);
/// clock.wait_until(1_010);
/// assert_eq!(handle.now_ms(), 1_010);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    ms: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock that reads `unix_ms` until moved.
    pub fn new(unix_ms: i64) -> Self {
        Self {
            ms: Arc::new(AtomicI64::new(unix_ms)),
        }
    }

    /// Sets the time to `unix_ms`, forwards or backwards.
    pub fn set(&self, unix_ms: i64) {
        self.ms.store(unix_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `by` (whole milliseconds).
    pub fn advance(&self, by: Duration) {
        self.ms.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }

    /// Moves the time backwards by `by` (whole milliseconds), as an NTP step would.
    pub fn step_back(&self, by: Duration) {
        self.ms.fetch_sub(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.ms.load(Ordering::SeqCst)
    }

    fn wait_until(&self, target_ms: i64) {
        self.ms.fetch_max(target_ms, Ordering::SeqCst);
    }

    fn is_simulated(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn unix_ms_after_equals_the_128_bit_division(
            anchor_ns in -4_000_000_000_000_000_000i128..4_000_000_000_000_000_000i128,
            elapsed_ns in 0u64..1_000_000_000_000_000_000,
        ) {
            let expected = (anchor_ns + i128::from(elapsed_ns)).div_euclid(NS_PER_MS) as i64;
            let got = unix_ms_after(
                anchor_ns.div_euclid(NS_PER_MS) as i64,
                anchor_ns.rem_euclid(NS_PER_MS) as u32,
                Duration::from_nanos(elapsed_ns),
            );
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn unix_ms_after_rounds_down_before_and_after_1970() {
        let at = |anchor_ns: i128, elapsed_ns: u64| {
            unix_ms_after(
                anchor_ns.div_euclid(NS_PER_MS) as i64,
                anchor_ns.rem_euclid(NS_PER_MS) as u32,
                Duration::from_nanos(elapsed_ns),
            )
        };
        assert_eq!(at(1_999_999, 0), 1);
        assert_eq!(at(1_999_999, 1), 2);
        assert_eq!(at(-1, 0), -1);
        assert_eq!(at(-1, 1), 0);
        assert_eq!(at(-1_500_000, 2_000_000_000), 1_998);
    }
}
