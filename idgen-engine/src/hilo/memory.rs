//! [`MemorySource`]: an in-process counter, for tests, examples and benchmarks.

use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::source::{BoxError, HiLoSource, Increment, MissingCounter};

/// An in-memory counter with pooled-lo meaning: a test double for a database sequence or
/// counter table. Clones share one counter, so several [`HiLo`](crate::hilo::HiLo)s on clones
/// behave like several processes on one database.
///
/// It can simulate what databases do to an allocator: latency ([`with_latency`](Self::with_latency)),
/// an outage ([`set_failing`](Self::set_failing)) and a restore from an old backup
/// ([`set_next`](Self::set_next)).
///
/// ```
/// use idgen_engine::hilo::{HiLo, MemorySource};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let counter = MemorySource::new();
/// let a = HiLo::builder(counter.clone()).block(10).prefetch(false).build().await?;
/// let b = HiLo::builder(counter.clone()).block(10).prefetch(false).build().await?;
/// assert_eq!(a.next_id().await?, 1); // a holds [1, 11)
/// assert_eq!(b.next_id().await?, 11); // b holds [11, 21)
/// assert_eq!(counter.peek_next(), 21);
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
#[derive(Clone)]
pub struct MemorySource {
    shared: Arc<Shared>,
}

struct Shared {
    name: String,
    increment: Increment,
    next: Mutex<i64>,
    latency_ns: AtomicU64,
    failing: AtomicBool,
    calls: AtomicU64,
}

impl fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySource")
            .field("name", &self.shared.name)
            .field("increment", &self.shared.increment)
            .field("next", &self.peek_next())
            .finish_non_exhaustive()
    }
}

/// The error a failing [`MemorySource`] returns.
#[derive(Debug)]
struct Simulated(&'static str);

impl fmt::Display for Simulated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Simulated {}

impl MemorySource {
    /// A counter table named `hilo` starting at 1: any step per call ([`Increment::PerCall`]).
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// assert_eq!(MemorySource::new().peek_next(), 1);
    /// ```
    pub fn new() -> Self {
        Self::build("hilo", Increment::PerCall)
    }

    /// A counter table with the given name, starting at 1.
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// assert_eq!(format!("{:?}", MemorySource::named("orders")).contains("orders"), true);
    /// ```
    pub fn named(name: &str) -> Self {
        Self::build(name, Increment::PerCall)
    }

    /// A sequence named `hilo_seq` starting at 1 whose every call advances it by `increment`,
    /// whatever size is asked ([`Increment::Fixed`]), like `CREATE SEQUENCE … INCREMENT BY n`.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let err = HiLo::new(MemorySource::sequence(50), 1000).await.unwrap_err();
    /// assert!(err.to_string().contains("50"));
    /// # }) ;
    /// ```
    pub fn sequence(increment: u64) -> Self {
        Self::build("hilo_seq", Increment::Fixed(increment))
    }

    fn build(name: &str, increment: Increment) -> Self {
        MemorySource {
            shared: Arc::new(Shared {
                name: name.to_owned(),
                increment,
                next: Mutex::new(1),
                latency_ns: AtomicU64::new(0),
                failing: AtomicBool::new(false),
                calls: AtomicU64::new(0),
            }),
        }
    }

    /// Makes every later call wait this long first (on the tokio timer), like a round trip.
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    /// use std::time::Duration;
    ///
    /// let slow = MemorySource::new().with_latency(Duration::from_millis(2));
    /// # let _ = slow;
    /// ```
    pub fn with_latency(self, latency: Duration) -> Self {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.shared.latency_ns.store(ns, Ordering::Relaxed);
        self
    }

    /// Simulates an outage: while `true`, every call fails with "simulated outage".
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// let counter = MemorySource::new();
    /// counter.set_failing(true);
    /// # counter.set_failing(false);
    /// ```
    pub fn set_failing(&self, failing: bool) {
        self.shared.failing.store(failing, Ordering::SeqCst);
    }

    /// Sets the value the next call returns, e.g. lower than before to simulate a restored
    /// backup or a lagging replica.
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// let counter = MemorySource::new();
    /// counter.set_next(500);
    /// assert_eq!(counter.peek_next(), 500);
    /// ```
    pub fn set_next(&self, next: i64) {
        *self.lock() = next;
    }

    /// The value the next call would return.
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// assert_eq!(MemorySource::sequence(10).peek_next(), 1);
    /// ```
    pub fn peek_next(&self) -> i64 {
        *self.lock()
    }

    /// How many successful calls (round trips: `allocate`, or `allocate_blocks` for any number
    /// of blocks) the counter has served.
    ///
    /// ```
    /// use idgen_engine::hilo::MemorySource;
    ///
    /// assert_eq!(MemorySource::new().calls(), 0);
    /// ```
    pub fn calls(&self) -> u64 {
        self.shared.calls.load(Ordering::SeqCst)
    }

    /// One step of the counter (one `nextval`), after the simulated latency.
    fn take(&self, size: u64) -> Result<i64, BoxError> {
        if self.shared.failing.load(Ordering::SeqCst) {
            return Err(Box::new(Simulated("simulated outage")));
        }
        let step = match self.shared.increment {
            Increment::Fixed(step) => step,
            Increment::PerCall => size,
        };
        let mut next = self.lock();
        let start = *next;
        *next = i64::try_from(step)
            .ok()
            .and_then(|step| start.checked_add(step))
            .ok_or(Simulated("the counter reached i64::MAX"))?;
        Ok(start)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, i64> {
        self.shared
            .next
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for MemorySource {
    fn default() -> Self {
        Self::new()
    }
}

impl HiLoSource for MemorySource {
    /// Nothing to create: the counter exists from [`MemorySource::new`].
    async fn create_if_missing(&self, _block: u64) -> Result<(), BoxError> {
        Ok(())
    }

    /// `true`: the counter lives and dies with the process that reads it.
    fn create_if_missing_by_default(&self) -> bool {
        true
    }

    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let latency = self.shared.latency_ns.load(Ordering::Relaxed);
        if latency > 0 {
            tokio::time::sleep(Duration::from_nanos(latency)).await;
        }
        let start = self.take(size)?;
        self.shared.calls.fetch_add(1, Ordering::SeqCst);
        Ok(start)
    }

    /// Several blocks in one call, like `SELECT nextval(…) FROM generate_series(1, n)`.
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        let latency = self.shared.latency_ns.load(Ordering::Relaxed);
        if latency > 0 {
            tokio::time::sleep(Duration::from_nanos(latency)).await;
        }
        let mut starts = Vec::new();
        for _ in 0..count.max(1) {
            starts.push(self.take(size)?);
        }
        self.shared.calls.fetch_add(1, Ordering::SeqCst);
        Ok(starts)
    }

    /// One call: the counter moves to the first value above `floor` on its grid (a
    /// sequence), or to `floor + 1` (a counter table); never backwards.
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        if self.shared.failing.load(Ordering::SeqCst) {
            return Err(Box::new(Simulated("simulated outage")));
        }
        let mut next = self.lock();
        if *next <= floor {
            *next = match self.shared.increment {
                Increment::Fixed(step) => above_on_grid(*next, step, floor),
                Increment::PerCall => floor.checked_add(1),
            }
            .ok_or(Simulated("the counter reached i64::MAX"))?;
        }
        drop(next);
        self.shared.calls.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }

    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        if self.shared.failing.load(Ordering::SeqCst) {
            return Err(Box::new(Simulated("simulated outage")));
        }
        Ok(Ok(self.shared.increment))
    }

    fn name(&self) -> &str {
        &self.shared.name
    }
}

/// The first value `next + k × step` (`k ≥ 1`) above `floor`, for a counter at `next <= floor`
/// that must stay on its grid; `None` past `i64::MAX`.
fn above_on_grid(next: i64, step: u64, floor: i64) -> Option<i64> {
    let step = i128::from(step.max(1));
    let k = (i128::from(floor) - i128::from(next)).div_euclid(step) + 1;
    i64::try_from(i128::from(next) + k * step).ok()
}
