//! Time sources for generators: [`Clock`], [`SystemClock`] and [`ManualClock`].

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
#[cfg(not(any(target_os = "linux", target_os = "android")))]
use std::time::Instant;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long [`Clock::wait_until`] sleeps at a time in the last millisecond of a wait.
pub(crate) const LAST_MS_STEP: Duration = Duration::from_micros(50);

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
    /// The provided method sleeps for all but the last millisecond, and through the last one in
    /// steps of 50 µs, so a waiter wakes within about 0.1 ms of the target
    /// (the step and the timer's slack) without keeping a CPU busy: on a loaded machine a
    /// thread that left the CPU between ticks gets it back at the tick, where one that yielded
    /// in a loop has used its share and misses ticks (a capped Snowflake generator at load 7
    /// on 2 cores: 96.4 % of the cap against 84.3 %, idgen-core/BENCHMARKS.md).
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
                std::thread::sleep(LAST_MS_STEP);
            }
        }
    }

    /// The current time read from the clock's source, for loops that wait for a time: the same
    /// as [`now_ms`](Clock::now_ms) except for a clock that caches its time
    /// ([`TickerClock`](crate::TickerClock)), which reads its source (and refreshes its cache),
    /// so a waiter never depends on the cache being refreshed.
    fn fresh_ms(&self) -> i64 {
        self.now_ms()
    }

    /// `true` when [`wait_until`](Clock::wait_until) moves a simulated time instead of waiting.
    ///
    /// Async callers use this to decide between calling `wait_until` directly (simulated) and
    /// sleeping on their runtime (real time).
    fn is_simulated(&self) -> bool {
        false
    }
}

/// `Clock` for pointers to a clock (`Arc<C>`, `&C`): every method is the pointee's.
macro_rules! clock_through_pointer {
    ($($pointer:ty),+) => {$(
        impl<C: Clock + ?Sized> Clock for $pointer {
            fn now_ms(&self) -> i64 {
                (**self).now_ms()
            }
            fn wait_until(&self, target_ms: i64) {
                (**self).wait_until(target_ms)
            }
            fn fresh_ms(&self) -> i64 {
                (**self).fresh_ms()
            }
            fn is_simulated(&self) -> bool {
                (**self).is_simulated()
            }
        }
    )+};
}

clock_through_pointer!(Arc<C>, &C);

/// The real time, anchored once per process to the wall clock and then advanced by the
/// monotonic clock.
///
/// The first `SystemClock` of a process reads `SystemTime` once; from then on every
/// `SystemClock` of the process adds the time elapsed on the monotonic clock to that one
/// anchor. So inside one process it never steps backwards, even when NTP or an operator steps
/// the wall clock; it does not follow such steps either. And every `SystemClock` of a process
/// reads the same time, whenever it was made: the deadline of a `WorkerLease` (idgen-engine)
/// and the [`Fence`](crate::snowflake::Fence) check of a generator built on it are measured on one
/// time base, in whichever order the two were made, even with a wall-clock step between them
/// (which would otherwise become a permanent offset between the deadline and the check).
/// Across restarts the wall clock is read anew: a restart while the wall clock is behind is the
/// case that [`ClockPolicy`](crate::snowflake::ClockPolicy) and a database-leased node ID's last timestamp
/// guard against.
///
/// ```
/// use idgen_core::{Clock, SystemClock};
///
/// let clock = SystemClock::new();
/// let unix_ms = std::time::SystemTime::now()
///     .duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
/// assert!((clock.now_ms() - unix_ms).abs() < 1_000);
///
/// // Made later, read first: still the same time base.
/// let later = SystemClock::new();
/// let (b, a) = (later.now_ms(), clock.now_ms());
/// assert!(a >= b && a - b < 1_000);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    inner: Monotonic,
}

impl SystemClock {
    /// The process's clock: anchored to the wall clock when the first `SystemClock` of the
    /// process was made, and shared by every later one.
    pub fn new() -> Self {
        static ANCHOR: OnceLock<Monotonic> = OnceLock::new();
        SystemClock {
            inner: *ANCHOR.get_or_init(Monotonic::anchored),
        }
    }
}

const NS_PER_MS: i128 = 1_000_000;

fn unix_now_ns() -> i128 {
    let ns = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    #[cfg(any(test, feature = "__test-clock-step"))]
    let ns = ns + wall_clock_step::on_this_thread();
    ns
}

/// Tests only: a wall-clock step seen by this thread's reads of the wall clock, as NTP or
/// `date -s` would make it, without touching the real clock.
#[cfg(any(test, feature = "__test-clock-step"))]
pub mod wall_clock_step {
    use std::cell::Cell;
    use std::time::Duration;

    thread_local! {
        static STEP_NS: Cell<i128> = const { Cell::new(0) };
    }

    pub(super) fn on_this_thread() -> i128 {
        STEP_NS.with(Cell::get)
    }

    /// Steps this thread's wall clock forward (`forward`) or back by `by`, until the guard is
    /// dropped.
    #[must_use]
    pub fn step(forward: bool, by: Duration) -> Stepped {
        let ns = by.as_nanos() as i128;
        STEP_NS.with(|s| s.set(s.get() + if forward { ns } else { -ns }));
        Stepped(if forward { ns } else { -ns })
    }

    /// Undoes its step when dropped.
    pub struct Stepped(i128);

    impl Drop for Stepped {
        fn drop(&mut self) {
            STEP_NS.with(|s| s.set(s.get() - self.0));
        }
    }
}

/// On Linux: `clock_gettime(CLOCK_MONOTONIC)` (the clock `std::time::Instant` reads there,
/// through the vDSO: no system call) plus one offset. `Instant::elapsed()` normalises a
/// `Duration` on the way, which costs more instructions than the read itself.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[derive(Clone, Copy, Debug)]
struct Monotonic {
    /// Unix time in ns at the monotonic clock's zero: `now_ns = unix_at_zero_ns + monotonic_ns`.
    unix_at_zero_ns: i64,
    /// The same instant as `anchor_monotonic_ns`, for reading the clock through `std` instead
    /// should a direct read ever fail.
    anchor: std::time::Instant,
    anchor_monotonic_ns: i64,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl Monotonic {
    fn anchored() -> Self {
        let anchor = std::time::Instant::now();
        let anchor_monotonic_ns = read_monotonic_ns().unwrap_or(0);
        let unix = unix_now_ns();
        // Fits an i64 for any date between 1678 and 2262; clamped to ±2^62 beyond, so adding a
        // monotonic reading (below 2^62 ns: 146 years of uptime) never overflows.
        let at_zero = (unix - i128::from(anchor_monotonic_ns)).clamp(-(1 << 62), 1 << 62);
        Monotonic {
            unix_at_zero_ns: at_zero as i64,
            anchor,
            anchor_monotonic_ns,
        }
    }

    #[inline(always)]
    fn now_ms(&self) -> i64 {
        let monotonic = match read_monotonic_ns() {
            Some(ns) => ns,
            None => self.monotonic_ns_from_std(),
        };
        // No overflow: `unix_at_zero_ns` is at most ~2^61 (a date before 2262) and the monotonic
        // clock counts from boot.
        let ns = self.unix_at_zero_ns.wrapping_add(monotonic);
        if ns >= 0 {
            // After 1970 (always, in practice): an unsigned division by a constant.
            (ns as u64 / NS_PER_MS as u64) as i64
        } else {
            ns.div_euclid(NS_PER_MS as i64)
        }
    }

    fn until_next_ms(&self) -> Duration {
        let monotonic = read_monotonic_ns().unwrap_or_else(|| self.monotonic_ns_from_std());
        let ns = self.unix_at_zero_ns.wrapping_add(monotonic);
        Duration::from_nanos((NS_PER_MS as i64 - ns.rem_euclid(NS_PER_MS as i64)) as u64)
    }

    /// CLOCK_MONOTONIC cannot fail on Linux (std's `Instant` panics if it does); should it ever,
    /// read the same clock through `Instant`, from the anchor, rather than make a time up.
    #[cold]
    fn monotonic_ns_from_std(&self) -> i64 {
        let elapsed = i64::try_from(self.anchor.elapsed().as_nanos()).unwrap_or(i64::MAX);
        self.anchor_monotonic_ns.saturating_add(elapsed)
    }
}

/// Nanoseconds on `CLOCK_MONOTONIC`, `None` if the read failed.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline(always)]
#[allow(unsafe_code)]
fn read_monotonic_ns() -> Option<i64> {
    let mut t = std::mem::MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `t` is live, writable memory for a `timespec` for the whole call, the only memory
    // `clock_gettime` writes; it keeps no pointer to it afterwards. It is read only when the
    // call returned 0, which means it wrote the whole `timespec`. (Not zeroed first: two
    // instructions on the path of every ID. Tested in this module:
    // `the_direct_monotonic_read_agrees_with_instant`.)
    let status = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, t.as_mut_ptr()) };
    if status != 0 {
        return None;
    }
    // SAFETY: initialised by the successful call above.
    let t = unsafe { t.assume_init() };
    // Seconds since boot: far below 2^63 ns (292 years). (`time_t` and `c_long` are 32 bits
    // on some targets, hence the conversions.)
    #[allow(clippy::useless_conversion)]
    Some(
        i64::from(t.tv_sec)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(i64::from(t.tv_nsec)),
    )
}

/// Elsewhere: `Instant` from an anchor.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[derive(Clone, Copy, Debug)]
struct Monotonic {
    /// The wall-clock time at `anchor`, split as `anchor_unix_ms * 1_000_000 + anchor_sub_ms_ns`
    /// with `0 <= anchor_sub_ms_ns < 1_000_000`, so `now_ms` needs no 128-bit division.
    anchor_unix_ms: i64,
    anchor_sub_ms_ns: u32,
    anchor: Instant,
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl Monotonic {
    fn anchored() -> Self {
        let anchor = Instant::now();
        let anchor_unix_ns = unix_now_ns();
        Monotonic {
            anchor_unix_ms: anchor_unix_ns.div_euclid(NS_PER_MS) as i64,
            anchor_sub_ms_ns: anchor_unix_ns.rem_euclid(NS_PER_MS) as u32,
            anchor,
        }
    }

    fn until_next_ms(&self) -> Duration {
        Duration::from_millis(1)
    }

    #[inline]
    fn now_ms(&self) -> i64 {
        unix_ms_after(
            self.anchor_unix_ms,
            self.anchor_sub_ms_ns,
            self.anchor.elapsed(),
        )
    }
}

impl SystemClock {
    /// The time until this clock's next whole millisecond (at most 1 ms): how long the ticker
    /// of [`TickerClock`](crate::TickerClock) sleeps.
    pub(crate) fn until_next_ms(&self) -> Duration {
        self.inner.until_next_ms()
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    #[inline(always)]
    fn now_ms(&self) -> i64 {
        self.inner.now_ms()
    }
}

/// `floor((anchor_ms * 1e6 + anchor_sub_ms_ns + elapsed_ns) / 1e6)` in 64-bit arithmetic: whole
/// seconds of `elapsed` are whole milliseconds, so only the sub-millisecond parts are divided.
/// The same value as a 128-bit division, which costs ~15 ns per ID.
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
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

    /// The direct `clock_gettime` read is the clock `Instant` reads: between two `Instant`
    /// reads, it moves by no more than they do.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_direct_monotonic_read_agrees_with_instant() {
        for _ in 0..1000 {
            let a = std::time::Instant::now();
            let direct_a = read_monotonic_ns().expect("CLOCK_MONOTONIC reads");
            std::hint::black_box(0);
            let direct_b = read_monotonic_ns().expect("CLOCK_MONOTONIC reads");
            let b = std::time::Instant::now();
            assert!(direct_b >= direct_a);
            let around = b.duration_since(a).as_nanos() as i64;
            assert!(
                direct_b - direct_a <= around,
                "{} > {around}",
                direct_b - direct_a
            );
        }
        let clock = Monotonic::anchored();
        assert_eq!(
            clock.monotonic_ns_from_std() / 1_000_000_000,
            read_monotonic_ns().unwrap() / 1_000_000_000,
            "the std route reads the same clock"
        );
    }

    #[test]
    fn system_clock_follows_the_wall_clock_and_never_steps_back() {
        let clock = SystemClock::new();
        let mut last = clock.now_ms();
        for _ in 0..100_000 {
            let now = clock.now_ms();
            assert!(now >= last);
            last = now;
        }
        let wall = (unix_now_ns() / NS_PER_MS) as i64;
        assert!(
            (clock.now_ms() - wall).abs() <= 2,
            "{} vs {wall}",
            clock.now_ms()
        );
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
