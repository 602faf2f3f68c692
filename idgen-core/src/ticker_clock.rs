//! [`TickerClock`]: the process's [`SystemClock`] time, read from a cache that a background
//! thread refreshes once per millisecond, so reading the clock costs one memory load.

use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use crate::clock::{Clock, SystemClock};

/// An opt-in cheaper clock for a [`Snowflake`](crate::Snowflake) generator: the time of the
/// [`SystemClock`], cached in one atomic word that a ticker thread refreshes once per
/// millisecond. Reading it is one load (no `clock_gettime`), which takes about a third off the
/// cost of an ID (see `BENCHMARKS.md`: 52 instead of 77 instructions per ID).
///
/// **What it costs, and what it promises:**
///
/// * **A thread.** One ticker thread per process, shared by every `TickerClock`, started by the
///   first [`TickerClock::new`] and ended within a millisecond after the last `TickerClock` is
///   dropped. It wakes 1,000 times a second (a few microseconds of CPU each time).
/// * **Resolution.** The cached time trails the [`SystemClock`] by up to about a millisecond
///   (the sleep's slack), more while the ticker thread waits for a CPU: an ID's time field is
///   then that much older. It is always a time the `SystemClock` read (the same time base, so a
///   lease's deadline and the [`Fence`](crate::Fence) check agree), never ahead of it, and it
///   never steps back.
/// * **A stalled ticker** (starved of CPU, or absent: threads do not survive `fork()`, so build a
///   new `TickerClock` in a forked child) only makes the time stand still. IDs stay unique and
///   increasing: the generator's state word, not the clock, decides the tick and sequence; a
///   standing clock fills one tick's sequence and then waits for the next, and
///   [`wait_until`](Clock::wait_until) reads the `SystemClock` itself (and stores what it read
///   in the cache), so waiting never depends on the ticker. A generator with a fence never
///   issues a tick at or beyond the lease's bound: the tick comes from a time that is not ahead
///   of the real one and that the fence checked, and once a wait reads the real time, the fence
///   stops the generator (tested with a ticker that never runs).
///
/// ```
/// use idgen_core::{Layout, Snowflake, TickerClock};
///
/// let ids = Snowflake::builder().layout(Layout::TWITTER).node(1).clock(TickerClock::new()?).build()?;
/// let (a, b) = (ids.next_id()?, ids.next_id()?);
/// assert!(b > a);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct TickerClock<C: Clock = SystemClock> {
    cached: Arc<Cached<C>>,
}

/// The cached time, on a cache line of its own (only the ticker and waiters write it).
#[repr(align(128))]
struct Cached<C> {
    ms: AtomicI64,
    source: C,
    /// The fork count when the ticker was started: a child has no ticker thread.
    forks: u64,
}

impl<C: Clock> Cached<C> {
    fn new(source: C) -> Self {
        Cached {
            ms: AtomicI64::new(source.now_ms()),
            source,
            forks: crate::fork::generation(),
        }
    }

    /// Reads the source and raises the cache to it; the time now (never below the cache).
    fn refresh(&self) -> i64 {
        let now = self.source.now_ms();
        self.ms.fetch_max(now, Relaxed).max(now)
    }
}

/// The process's ticker, while some `TickerClock` holds it.
static TICKER: Mutex<Weak<Cached<SystemClock>>> = Mutex::new(Weak::new());

impl TickerClock<SystemClock> {
    /// A clock on the process's ticker, starting the ticker thread if none runs.
    ///
    /// # Errors
    ///
    /// The operating system's error when the ticker thread cannot be started.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::{Clock, SystemClock, TickerClock};
    /// let clock = TickerClock::new()?;
    /// let (cached, system) = (clock.now_ms(), SystemClock::new().now_ms());
    /// assert!(cached <= system && system - cached < 1_000);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new() -> std::io::Result<Self> {
        let mut slot = TICKER.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cached) = slot.upgrade()
            && !crate::fork::is_forked_since(cached.forks)
        {
            return Ok(TickerClock { cached });
        }
        let cached = Arc::new(Cached::new(SystemClock::new()));
        let weak = Arc::downgrade(&cached);
        std::thread::Builder::new()
            .name("idgen-ticker".into())
            .spawn(move || tick(&weak))?;
        *slot = Arc::downgrade(&cached);
        Ok(TickerClock { cached })
    }
}

/// The ticker thread: refreshes the cache at every millisecond until no clock holds it.
fn tick(cached: &Weak<Cached<SystemClock>>) {
    while let Some(cached) = cached.upgrade() {
        cached.refresh();
        let pause = cached.source.until_next_ms();
        drop(cached);
        std::thread::sleep(pause);
    }
}

impl<C: Clock> TickerClock<C> {
    /// A clock on `source` whose ticker never runs: the worst stall, for tests. Only waits move
    /// it.
    #[cfg(test)]
    pub(crate) fn stalled(source: C) -> Self {
        TickerClock {
            cached: Arc::new(Cached::new(source)),
        }
    }
}

impl<C: Clock> Clock for TickerClock<C> {
    /// The cached time: one load.
    #[inline(always)]
    fn now_ms(&self) -> i64 {
        self.cached.ms.load(Relaxed)
    }

    /// Waits on the source clock itself, storing each reading in the cache, so a stalled ticker
    /// never makes a waiter wait longer.
    fn wait_until(&self, target_ms: i64) {
        if self.cached.source.is_simulated() {
            self.cached.source.wait_until(target_ms);
            self.cached.refresh();
            return;
        }
        loop {
            let now = self.cached.refresh();
            if now >= target_ms {
                return;
            }
            if target_ms - now >= 2 {
                std::thread::sleep(Duration::from_millis((target_ms - now - 1) as u64));
            } else {
                // As the provided `Clock::wait_until`: off the CPU between ticks.
                std::thread::sleep(crate::clock::LAST_MS_STEP);
            }
        }
    }

    /// Reads the source and refreshes the cache with it.
    fn fresh_ms(&self) -> i64 {
        self.cached.refresh()
    }

    fn is_simulated(&self) -> bool {
        self.cached.source.is_simulated()
    }
}

impl<C: Clock> std::fmt::Debug for TickerClock<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TickerClock")
            .field("cached_ms", &self.now_ms())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
