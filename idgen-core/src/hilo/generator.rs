//! [`HiLo`]: the allocator callers use.

use std::ops::Range;
use std::pin::pin;
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::time::Instant;

use super::builder::{HiLoBuilder, Options};
use super::cursor::{MAX_BLOCK, Take};
use super::source::{DynSource, HiLoSource, Increment, IntoHiLoSource};
use super::state::{Advance, Reserved, Shared, source_error};
use super::stats::HiLoStats;
use crate::{Error, Result};

/// Hands out `i64` IDs from blocks taken from a central counter, one round trip per block.
///
/// * **Unique** across every process and host sharing the counter: each block is the counter's
///   atomic increment, with pooled-lo meaning (value `v` is the block `[v, v + block)`), so even
///   a writer calling `nextval` directly only takes a whole block of its own.
/// * **Increasing** within one `HiLo` (and its clones), **not** across processes: processes
///   interleave block by block, and every restart leaves a gap (the unused rest of its blocks).
/// * **Positive**: the counter starts at 1; a block outside `1..=i64::MAX` is an error.
/// * **Fail closed**: a block at or below one already seen (restored backup, lagging replica)
///   stops the generator for good with [`Error::HiLoCounterWentBackwards`].
///
/// Taking an ID is one atomic `fetch_add`, without lock or allocation. The next block is fetched
/// by a background task before the current one runs out (see
/// [`low_water_factor`](HiLoBuilder::low_water_factor)), one fetch at a time, with no lock held
/// across the round trip; a dropped `next_id()` future loses nothing, since the fetch belongs to
/// that task. When the counter is down, buffered IDs keep coming; then `next_id()` returns
/// [`Error::HiLoUnavailable`] after the [timeout](HiLoBuilder::timeout); the task retries with
/// backoff and the generator recovers on its own.
///
/// `HiLo` is cheap to clone (an `Arc`); clones share the buffer. It needs a tokio runtime.
/// On a current-thread runtime the prefetch runs when the calling task yields.
///
/// ```
/// use idgen_core::hilo::{HiLo, MemorySource};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::new(MemorySource::new(), 1000).await?;
/// let a = ids.next_id().await?;
/// let b = ids.next_id().await?;
/// assert!(a >= 1 && b > a);
/// # Ok::<(), idgen_core::Error>(()) }).unwrap();
/// ```
#[derive(Clone)]
pub struct HiLo {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HiLo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HiLo")
            .field("counter", &self.shared.counter)
            .finish_non_exhaustive()
    }
}

impl HiLo {
    /// Starts a generator taking blocks of `block` IDs from `source`: a [`HiLoSource`], or in
    /// the adapter crates a connection pool (`HiLo::new(pool, 1000)`). Reads the counter's
    /// increment and refuses to start when it differs from `block`
    /// ([`Error::HiLoIncrementMismatch`]), then fetches the first block.
    ///
    /// ```
    /// use idgen_core::{Error, hilo::{HiLo, MemorySource}};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let err = HiLo::new(MemorySource::sequence(1), 50).await.unwrap_err();
    /// assert!(matches!(err, Error::HiLoIncrementMismatch { configured: 50, database: 1, .. }));
    /// # });
    /// ```
    pub async fn new<M>(source: impl IntoHiLoSource<M>, block: u64) -> Result<HiLo> {
        HiLo::builder(source).block(block).build().await
    }

    /// A builder for the other options.
    ///
    /// ```
    /// use idgen_core::hilo::{HiLo, MemorySource};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(50).build().await?;
    /// assert_eq!(ids.stats().block_size, 50);
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub fn builder<T: IntoHiLoSource<M>, M>(source: T) -> HiLoBuilder<T, M> {
        HiLoBuilder::new(source)
    }

    pub(crate) async fn start<S: HiLoSource>(source: S, options: Options) -> Result<HiLo> {
        let runtime = Handle::try_current().map_err(|_| Error::HiLoNoRuntime)?;
        let source: Arc<dyn DynSource> = Arc::new(source);
        let counter = source.name().to_owned();
        let increment = source
            .increment()
            .await
            .map_err(|err| source_error(&counter, err))?;
        let block = match increment {
            Increment::Fixed(database) if database != options.block => {
                if !options.adopt_database_increment {
                    return Err(Error::HiLoIncrementMismatch {
                        counter,
                        configured: options.block,
                        database,
                    });
                }
                if database == 0 || database > MAX_BLOCK {
                    return Err(Error::HiLoInvalidOption {
                        option: "database increment",
                        value: database.to_string(),
                        reason: "a block holds between 1 and 4294967296 (2^32) IDs",
                    });
                }
                database
            }
            _ => options.block,
        };
        let shared = Shared::new(source, options, increment, block, runtime);
        let began = Instant::now();
        let deadline = began + shared.timeout();
        let started = loop {
            let mut notified = pin!(shared.notify.notified());
            notified.as_mut().enable();
            if shared.started()? {
                break true;
            }
            shared.kick();
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break shared.started()?;
            }
        };
        if started {
            Ok(HiLo { shared })
        } else {
            Err(shared.unavailable(began.elapsed()))
        }
    }

    /// The next ID. Waits only when the buffer is empty (a fetch is late or failing), at most
    /// the [timeout](HiLoBuilder::timeout), then returns [`Error::HiLoUnavailable`]. Cancelling
    /// the future is safe: no ID or block is lost or handed out twice.
    ///
    /// ```
    /// # use idgen_core::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::new(), 3).await?;
    /// let mut got = Vec::new();
    /// for _ in 0..7 {
    ///     got.push(ids.next_id().await?);
    /// }
    /// assert_eq!(got, [1, 2, 3, 4, 5, 6, 7]); // blocks [1, 4), [4, 7), [7, 10)
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub async fn next_id(&self) -> Result<i64> {
        if let Some(id) = self.try_next_id()? {
            return Ok(id);
        }
        self.next_id_slow().await
    }

    #[cold]
    async fn next_id_slow(&self) -> Result<i64> {
        let began = Instant::now();
        let deadline = began + self.shared.timeout();
        let mut counted = false;
        loop {
            let mut notified = pin!(self.shared.notify.notified());
            notified.as_mut().enable();
            if let Some(id) = self.try_next_id()? {
                return Ok(id);
            }
            if !counted {
                counted = true;
                self.shared.count_caller_wait();
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return match self.try_next_id()? {
                    Some(id) => Ok(id),
                    None => Err(self.shared.unavailable(began.elapsed())),
                };
            }
        }
    }

    /// The next ID if one is buffered, else `Ok(None)` at once (a fetch is started). Never
    /// waits; errors only when the generator failed closed.
    ///
    /// ```
    /// # use idgen_core::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(2).prefetch(false).build().await?;
    /// assert_eq!(ids.try_next_id()?, Some(1));
    /// assert_eq!(ids.try_next_id()?, Some(2));
    /// assert_eq!(ids.try_next_id()?, None); // the next block is on its way
    /// assert_eq!(ids.next_id().await?, 3);
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<i64>> {
        loop {
            match self.shared.cursor.take() {
                Take::Id { id, kick } => {
                    if kick {
                        self.shared.kick();
                    }
                    return Ok(Some(id));
                }
                Take::Lost => {}
                Take::Exhausted { epoch, offset } => match self.shared.cursor.switch(epoch) {
                    Some(Take::Id { id, kick }) => {
                        if kick {
                            self.shared.kick();
                        }
                        return Ok(Some(id));
                    }
                    Some(_) => {}
                    None => match self.shared.advance(epoch, offset) {
                        Advance::Retry => {}
                        Advance::Empty => return Ok(None),
                        Advance::Fatal(err) => return Err(err),
                    },
                },
            }
        }
    }

    /// `n` contiguous IDs (`start..start + n`), for a bulk insert. Taken from the current block
    /// when it has `n` left; otherwise the rest of the current block is skipped (a gap) and the
    /// range starts a new block, fetching one if needed. IDs keep increasing.
    ///
    /// `n` may exceed the block size only for counters that take any step per call
    /// ([`Increment::PerCall`]; one fetch of `n` IDs); for a sequence ([`Increment::Fixed`])
    /// that is [`Error::HiLoReserveTooLarge`], since its blocks are not contiguous.
    ///
    /// ```
    /// # use idgen_core::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(10).prefetch(false).build().await?;
    /// assert_eq!(ids.reserve(4).await?, 1..5);
    /// assert_eq!(ids.reserve(8).await?, 11..19); // 5..11 did not fit: skipped
    /// assert_eq!(ids.next_id().await?, 19);
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub async fn reserve(&self, n: u64) -> Result<Range<i64>> {
        let max = self.shared.reserve_limit();
        if n == 0 {
            return Err(Error::HiLoInvalidOption {
                option: "reserve n",
                value: n.to_string(),
                reason: "reserve at least 1 ID",
            });
        }
        if n > max {
            return Err(Error::HiLoReserveTooLarge { requested: n, max });
        }
        let began = Instant::now();
        let deadline = began + self.shared.timeout();
        let mut counted = false;
        loop {
            let mut notified = pin!(self.shared.notify.notified());
            notified.as_mut().enable();
            match self.shared.reserve(n) {
                Reserved::Got(range) => return Ok(range),
                Reserved::Fatal(err) => return Err(err),
                Reserved::Wait => {}
            }
            if !counted {
                counted = true;
                self.shared.count_caller_wait();
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return match self.shared.reserve(n) {
                    Reserved::Got(range) => Ok(range),
                    Reserved::Fatal(err) => Err(err),
                    Reserved::Wait => Err(self.shared.unavailable(began.elapsed())),
                };
            }
        }
    }

    /// A snapshot of what this generator (and its clones) did so far.
    ///
    /// ```
    /// # use idgen_core::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::named("orders"), 100).await?;
    /// ids.next_id().await?;
    /// let stats = ids.stats();
    /// assert_eq!((stats.counter.as_str(), stats.ids_issued), ("orders", 1));
    /// assert!(stats.fetch_latency_last.is_some());
    /// # Ok::<(), idgen_core::Error>(()) }).unwrap();
    /// ```
    pub fn stats(&self) -> HiLoStats {
        self.shared.stats()
    }

    #[cfg(test)]
    pub(crate) fn lost_ordinals(&self) -> u64 {
        self.shared
            .cursor
            .lost
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}
