//! [`HiLo`]: the allocator callers use.

use std::future::Future;
use std::ops::Range;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::runtime::Handle;
use tokio::time::Instant;

use super::cursor::{MAX_BLOCK, Take};
use super::options::Options;
use super::planner::{Advance, Reserved, Shared, source_error};
use super::refill;
use super::runtime::{self, Caller};
use super::source::{DynSource, HiLoSource, Increment, IntoHiLoSource, MissingCounter};
use super::stats::HiLoStats;
use crate::error::{Error, ErrorKind, Result};
use idgen_core::BoxError;

/// Hands out `i64` IDs from blocks taken from a central counter, one round trip per block (or
/// per several blocks).
///
/// * **Unique** across every process and host sharing the counter: each block is the counter's
///   atomic increment, with pooled-lo meaning (value `v` is the block `[v, v + block)`), so even
///   a writer calling `nextval` directly only takes a whole block of its own.
/// * **Increasing** within one `HiLo` (and its clones), **not** across processes: processes
///   interleave block by block, and every restart leaves a gap (the unused rest of its blocks).
///   When several fetches run at once their blocks may arrive in any order; blocks are still
///   served in ascending order, and one that arrives below a block already in use is dropped
///   (a gap, counted in [`HiLoStats::blocks_discarded`]).
/// * **Positive**: the counter starts at 1; a block outside `1..=i64::MAX` is an error.
/// * **Fail closed**: a block at or below one already seen when its fetch was sent (restored
///   backup, lagging replica), overlapping one that arrived meanwhile, or at or below what a
///   [`floor_from`](crate::hilo::HiLoBuilder::floor_from) query returned just before it was taken (IDs other
///   processes handed out and stored), stops the generator for good with
///   [`ErrorKind::HiLoCounterWentBackwards`]. Without a floor query, a counter set back to a point
///   above this generator's blocks (between its blocks and another process's) goes unnoticed
///   here.
///
/// Taking an ID is one atomic `fetch_add`, without lock or allocation; moving to the next
/// block is one compare-and-swap. Blocks are fetched in the background before the buffer runs
/// out, looking as far ahead as the measured consumption rate and fetch latency need (see
/// [`low_water_factor`](crate::hilo::HiLoBuilder::low_water_factor)): several blocks per round trip from a
/// source that can give them ([`HiLoSource::allocate_blocks`]), else several fetches at once
/// ([`max_fetches_in_flight`](crate::hilo::HiLoBuilder::max_fetches_in_flight)). No lock is held across a
/// round trip, and a dropped `next_id()` future loses nothing, since fetches belong to their
/// tasks. When the counter is down, buffered IDs keep coming; then `next_id()` returns
/// [`ErrorKind::HiLoUnavailable`] after the [timeout](crate::hilo::HiLoBuilder::timeout); a task retries with
/// backoff and the generator recovers on its own.
///
/// Fetches run on the tokio runtime of the caller that needs them, so a `HiLo` keeps working
/// after the runtime it was built on is gone and can be shared between runtimes; callers
/// without a runtime use [`next_id_blocking`](Self::next_id_blocking), whose fetches run on a
/// small background runtime of idgen's own (one thread per process). On a current-thread
/// runtime an async caller's prefetch runs when the calling task yields.
///
/// `HiLo` is cheap to clone (an `Arc`); clones share the buffer.
///
/// **After `fork()`** (without `exec`), the child's copy refuses with [`idgen_core::Error::Forked`]: its
/// buffered blocks are the parent's, which the parent keeps handing out. The child may start a
/// `HiLo` of its own, on a connection pool it opened (the parent's connections are not the
/// child's to use).
///
/// ```
/// use idgen_engine::hilo::{HiLo, MemorySource};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::new(MemorySource::new(), 1000).await?;
/// let a = ids.next_id().await?;
/// let b = ids.next_id().await?;
/// assert!(a >= 1 && b > a);
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
///
/// [`HiLoStats::blocks_discarded`]: super::HiLoStats::blocks_discarded
#[derive(Clone)]
pub struct HiLo {
    shared: Arc<Shared>,
    /// The fork count this generator was started under: a copy in a forked child sees another
    /// count and refuses to hand out the parent's buffered IDs (see `idgen_core::fork`).
    forks: u64,
}

impl std::fmt::Debug for HiLo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HiLo")
            .field("counter", &self.shared.counter)
            .finish_non_exhaustive()
    }
}

/// The refusal of a missing counter that start-up does not create, naming the migration.
fn not_created<S: HiLoSource>(
    source: &S,
    counter: &str,
    missing: MissingCounter,
    block: u64,
) -> Error {
    let remedy = match source.migration_sql(block) {
        Some(sql) => format!(
            "run its migration first:\n{sql};\n(or let start-up create it: `create_if_missing(true)` on the HiLo builder)"
        ),
        None => "create it once with the counter's `create` (or `create_if_missing(true)` on the HiLo builder), \
             but only where it never existed: a counter created again after the store lost it \
             starts at 1 and hands out IDs already issued; restore it above the highest ID in use instead"
            .to_owned(),
    };
    ErrorKind::HiLoCounterNotCreated {
        counter: counter.to_owned(),
        missing: missing.into_string(),
        remedy,
    }
    .into()
}

impl HiLo {
    /// Starts a generator taking blocks of `block` IDs from `source`: a [`HiLoSource`], or in
    /// the adapter crates a connection pool (`HiLo::new(pool, 1000)`). Reads the counter's
    /// increment and refuses to start when it differs from `block`
    /// ([`ErrorKind::HiLoIncrementMismatch`]), then fetches the first block.
    ///
    /// ```
    /// use idgen_engine::{ErrorKind, hilo::{HiLo, MemorySource}};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let err = HiLo::new(MemorySource::sequence(1), 50).await.unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::HiLoIncrementMismatch { configured: 50, database: 1, .. }));
    /// # });
    /// ```
    pub async fn new<M>(source: impl IntoHiLoSource<M>, block: u64) -> Result<HiLo> {
        HiLo::builder(source).block(block).build().await
    }

    /// Start-up, bounded as a whole by the builder's timeout: the counter's creation, the
    /// increment check and the first block each get what is left of it.
    pub(crate) async fn start<S: HiLoSource>(source: S, options: Options) -> Result<HiLo> {
        Handle::try_current().map_err(|_| ErrorKind::HiLoNoRuntime)?;
        idgen_core::fork::protected()?;
        let forks = idgen_core::fork::generation();
        let deadline = Instant::now() + options.timeout;
        let counter = source.name().to_owned();
        let timeout_ms = u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX);
        let timed_out = |waiting_for: &'static str| ErrorKind::HiLoStartTimeout {
            counter: counter.clone(),
            timeout_ms,
            waiting_for,
        };
        let create = options
            .create_if_missing
            .unwrap_or_else(|| source.create_if_missing_by_default());
        let check = || async {
            tokio::time::timeout_at(deadline, source.increment())
                .await
                .map_err(|_| timed_out("the counter's increment check"))
        };
        // Looked for first, created only when missing: an existing counter is never touched.
        let looked = |found: Result<Result<Increment, MissingCounter>, BoxError>| {
            found.map_err(|err| source_error(&counter, err))
        };
        let increment = match looked(check().await?)? {
            Ok(increment) => increment,
            Err(_) if create => {
                tokio::time::timeout_at(deadline, source.create_if_missing(options.block))
                    .await
                    .map_err(|_| timed_out("the counter's creation"))?
                    .map_err(|err| source_error(&counter, err))?;
                // Created, by this process or another: a counter still missing now was
                // dropped again at once.
                looked(check().await?)?.map_err(|missing| ErrorKind::HiLoCounterMissing {
                    counter: counter.clone(),
                    missing: missing.into_string(),
                })?
            }
            Err(missing) => return Err(not_created(&source, &counter, missing, options.block)),
        };
        let source: Arc<dyn DynSource> = Arc::new(source);
        let block = match increment {
            Increment::Fixed(database) if database != options.block => {
                if !options.adopt_database_increment {
                    return Err(ErrorKind::HiLoIncrementMismatch {
                        counter,
                        configured: options.block,
                        database,
                    }
                    .into());
                }
                if database == 0 || database > MAX_BLOCK {
                    return Err(ErrorKind::HiLoInvalidOption {
                        option: "database increment",
                        value: database.to_string(),
                        reason: "a block holds between 1 and 4294967296 (2^32) IDs",
                    }
                    .into());
                }
                database
            }
            _ => options.block,
        };
        let floor = match &options.floor {
            Some(floor) => {
                // Both bounded by what is left of the timeout: a floor query behind another
                // session's lock must not hold start-up for ever.
                let floor = tokio::time::timeout_at(deadline, floor.read())
                    .await
                    .map_err(|_| timed_out("the floor query"))?
                    .map_err(|err| source_error(&counter, err))?;
                tokio::time::timeout_at(deadline, raise_above(&*source, increment, block, floor))
                    .await
                    .map_err(|_| timed_out("moving the counter above the floor"))?
                    .map_err(|err| source_error(&counter, err))?;
                Some(floor)
            }
            None => None,
        };
        let shared = Shared::new(source, options, increment, block, refill::boxed_task);
        if let Some(floor) = floor {
            // Every block from here on must lie above it, or the generator fails closed.
            shared.raise_highest(floor);
        }
        // Each wait kicks a fetch (the first block), and is no caller's wait; the wait gets
        // what is left of the timeout.
        within_deadline(
            &shared,
            deadline,
            || Ok(shared.started()?.then_some(())),
            || shared.kick(Caller::Async),
        )
        .await?;
        Ok(HiLo { shared, forks })
    }

    /// The error of a copy of this generator in a forked child; checked before every take.
    #[cold]
    #[inline(never)]
    fn forked() -> Error {
        ErrorKind::Id(idgen_core::Error::Forked {
            what: "hi-lo buffer",
        })
        .into()
    }

    /// The next ID. Waits only when the buffer is empty (a fetch is late or failing), at most
    /// the [timeout](crate::hilo::HiLoBuilder::timeout), then returns [`ErrorKind::HiLoUnavailable`]. Cancelling
    /// the future is safe: no ID or block is lost or handed out twice. Needs a tokio runtime
    /// (with its timer) only when it has to wait; without one, use
    /// [`next_id_blocking`](Self::next_id_blocking).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::new(), 3).await?;
    /// let mut got = Vec::new();
    /// for _ in 0..7 {
    ///     got.push(ids.next_id().await?);
    /// }
    /// assert_eq!(got, [1, 2, 3, 4, 5, 6, 7]); // blocks [1, 4), [4, 7), [7, 10)
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    // Not an `async fn`: the future takes the ID on its first poll without an async state
    // machine around it, and builds the waiting one only when it has to wait.
    #[inline]
    pub fn next_id(&self) -> impl Future<Output = Result<i64>> + Send + Sync + '_ {
        NextId {
            hilo: self,
            waiting: None,
        }
    }

    #[cold]
    async fn next_id_slow(&self) -> Result<i64> {
        within_timeout(
            &self.shared,
            || self.take(Caller::Async),
            count_first_wait(&self.shared),
        )
        .await
    }

    /// The next ID, blocking this thread while the buffer is empty: for callers without an
    /// async runtime (a diesel application, a plain thread), at most the
    /// [timeout](crate::hilo::HiLoBuilder::timeout), then [`ErrorKind::HiLoUnavailable`].
    ///
    /// Works on any thread: one with no runtime (the fetch then runs on a small background
    /// runtime of idgen's own), a multi-thread runtime's blocking section
    /// (`spawn_blocking`, `block_in_place`), or a current-thread runtime's blocking thread.
    /// Never call it from async code on a runtime thread: that blocks the runtime; `.await`
    /// [`next_id`](Self::next_id) there.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// // No runtime anywhere: build and take IDs from a plain thread.
    /// let ids = HiLo::builder(MemorySource::new()).block(10).build_blocking()?;
    /// let got: Vec<i64> = (0..25).map(|_| ids.next_id_blocking()).collect::<Result<_, _>>()?;
    /// assert_eq!(got, (1..=25).collect::<Vec<_>>());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn next_id_blocking(&self) -> Result<i64> {
        if let Some(id) = self.take(Caller::Blocking)? {
            return Ok(id);
        }
        let mut attempt = || self.take(Caller::Blocking);
        let began = std::time::Instant::now();
        let waited = runtime::wait_until(
            pin!(until_ready(
                &self.shared,
                &mut attempt,
                count_first_wait(&self.shared),
            )),
            began + self.shared.timeout(),
        );
        match waited {
            Some(result) => result,
            None => last_attempt(&self.shared, attempt, began.elapsed()),
        }
    }

    /// The next ID if one is buffered, else `Ok(None)` at once (a fetch is started). Never
    /// waits; errors only when the generator failed closed.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(2).prefetch(false).build().await?;
    /// assert_eq!(ids.try_next_id()?, Some(1));
    /// assert_eq!(ids.try_next_id()?, Some(2));
    /// assert_eq!(ids.try_next_id()?, None); // the next block is on its way
    /// assert_eq!(ids.next_id().await?, 3);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<i64>> {
        self.take(Caller::Async)
    }

    /// The fast path: one ID from the current block, else the slow path.
    #[inline(always)]
    fn take(&self, caller: Caller) -> Result<Option<i64>> {
        if idgen_core::fork::is_forked_since(self.forks) {
            return Err(Self::forked());
        }
        match self.shared.cursor.take_id() {
            Ok(id) => Ok(Some(id)),
            Err(packed) => self.take_slow(self.shared.cursor.resolve(packed), caller),
        }
    }

    /// A take that crossed the block's trigger, found the block used up, or lost a race.
    #[cold]
    #[inline(never)]
    fn take_slow(&self, mut taken: Take, caller: Caller) -> Result<Option<i64>> {
        loop {
            match taken {
                Take::Id { id, kick } => {
                    if kick {
                        self.shared.kick(caller);
                    }
                    return Ok(Some(id));
                }
                Take::Lost => {}
                Take::Exhausted { epoch, .. } => match self.shared.cursor.switch(epoch) {
                    Some(Take::Id { id, kick }) => {
                        if kick {
                            self.shared.kick(caller);
                        }
                        return Ok(Some(id));
                    }
                    Some(_) => {}
                    None => match self.shared.advance(epoch, caller) {
                        Advance::Retry => {}
                        Advance::Empty => return Ok(None),
                        Advance::Fatal(err) => return Err(err),
                    },
                },
            }
            taken = self.shared.cursor.take();
        }
    }

    /// `n` contiguous IDs (`start..start + n`), for a bulk insert. Taken from the current block
    /// when it has `n` left; otherwise the rest of the current block is skipped (a gap) and the
    /// range starts a new block, fetching one if needed. IDs keep increasing.
    ///
    /// `n` may exceed the block size only for counters that take any step per call
    /// ([`Increment::PerCall`]; one fetch of `n` IDs); for a sequence ([`Increment::Fixed`])
    /// that is [`ErrorKind::HiLoReserveTooLarge`], since its blocks are not contiguous.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(10).prefetch(false).build().await?;
    /// assert_eq!(ids.reserve(4).await?, 1..5);
    /// assert_eq!(ids.reserve(8).await?, 11..19); // 5..11 did not fit: skipped
    /// assert_eq!(ids.next_id().await?, 19);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub async fn reserve(&self, n: u64) -> Result<Range<i64>> {
        let max = self.shared.reserve_limit();
        if n == 0 {
            return Err(ErrorKind::HiLoInvalidOption {
                option: "reserve n",
                value: n.to_string(),
                reason: "reserve at least 1 ID",
            }
            .into());
        }
        if n > max {
            return Err(ErrorKind::HiLoReserveTooLarge { requested: n, max }.into());
        }
        if idgen_core::fork::is_forked_since(self.forks) {
            return Err(Self::forked());
        }
        let attempt = || match self.shared.reserve(n, Caller::Async) {
            Reserved::Got(range) => Ok(Some(range)),
            Reserved::Fatal(err) => Err(err),
            Reserved::Wait => Ok(None),
        };
        within_timeout(&self.shared, attempt, count_first_wait(&self.shared)).await
    }

    /// A snapshot of what this generator (and its clones) did so far.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::new(MemorySource::named("orders"), 100).await?;
    /// ids.next_id().await?;
    /// let stats = ids.stats();
    /// assert_eq!((stats.counter.as_str(), stats.ids_issued), ("orders", 1));
    /// assert!(stats.fetch_latency_last.is_some());
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
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

/// Calls `attempt` until it gives a value or fails, calling `before_wait` and then waiting for
/// the engine's notification between tries. The notification is registered before each try,
/// so one sent meanwhile is not missed.
async fn until_ready<T>(
    shared: &Shared,
    mut attempt: impl FnMut() -> Result<Option<T>>,
    mut before_wait: impl FnMut(),
) -> Result<T> {
    loop {
        let mut notified = pin!(shared.notify.notified());
        notified.as_mut().enable();
        if let Some(value) = attempt()? {
            return Ok(value);
        }
        before_wait();
        notified.await;
    }
}

/// [`until_ready`] for at most the [timeout](crate::hilo::HiLoBuilder::timeout), on the caller's runtime.
async fn within_timeout<T>(
    shared: &Shared,
    attempt: impl FnMut() -> Result<Option<T>>,
    before_wait: impl FnMut(),
) -> Result<T> {
    within_deadline(
        shared,
        Instant::now() + shared.timeout(),
        attempt,
        before_wait,
    )
    .await
}

/// [`until_ready`] until `deadline`, on the caller's runtime.
async fn within_deadline<T>(
    shared: &Shared,
    deadline: Instant,
    mut attempt: impl FnMut() -> Result<Option<T>>,
    before_wait: impl FnMut(),
) -> Result<T> {
    let began = Instant::now();
    let waited = tokio::time::timeout_at(deadline, until_ready(shared, &mut attempt, before_wait));
    match waited.await {
        Ok(result) => result,
        Err(_) => last_attempt(shared, attempt, began.elapsed()),
    }
}

/// The try after the timeout: its value, else [`ErrorKind::HiLoUnavailable`] naming how long the
/// caller waited.
fn last_attempt<T>(
    shared: &Shared,
    mut attempt: impl FnMut() -> Result<Option<T>>,
    waited: std::time::Duration,
) -> Result<T> {
    attempt()?.ok_or_else(|| shared.unavailable(waited))
}

/// A caller's `before_wait`: counts the caller's first wait in the stats (a caller that waits
/// again is still one waiting caller).
fn count_first_wait(shared: &Shared) -> impl FnMut() + Send + Sync + '_ {
    let mut counted = false;
    move || {
        if !counted {
            counted = true;
            shared.count_caller_wait();
        }
    }
}

/// The future of [`HiLo::next_id`]: takes an ID on its first poll; only a caller that has to
/// wait gets the waiting state machine, boxed.
struct NextId<'a> {
    hilo: &'a HiLo,
    waiting: Option<Pin<Box<dyn Future<Output = Result<i64>> + Send + Sync + 'a>>>,
}

impl Future for NextId<'_> {
    type Output = Result<i64>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<i64>> {
        let this = &mut *self;
        // The fast path returns from here; everything else (a forked copy, a take that gave no
        // ID, a caller already waiting) goes out of line as one call, so the common case
        // builds no `Result` with an `Error` in it and merges with nothing.
        let mut taken = None;
        if this.waiting.is_none() && !idgen_core::fork::is_forked_since(this.hilo.forks) {
            match this.hilo.shared.cursor.take_id() {
                Ok(id) => return Poll::Ready(Ok(id)),
                Err(packed) => taken = Some(packed),
            }
        }
        this.poll_slow(taken, cx)
    }
}

impl NextId<'_> {
    /// Everything but the first poll's fast path: `taken` is the ordinal that fast path
    /// fetched without getting an ID; `None` when it did not run (a caller already waiting,
    /// or a copy in a forked child).
    #[cold]
    #[inline(never)]
    fn poll_slow(&mut self, taken: Option<u64>, cx: &mut Context<'_>) -> Poll<Result<i64>> {
        if let Some(packed) = taken {
            let taken = self.hilo.shared.cursor.resolve(packed);
            return match self.hilo.take_slow(taken, Caller::Async) {
                Ok(Some(id)) => Poll::Ready(Ok(id)),
                Err(err) => Poll::Ready(Err(err)),
                Ok(None) => self.poll_waiting(cx),
            };
        }
        if self.waiting.is_none() {
            // Not waiting, and the fast path did not run: a forked copy.
            return Poll::Ready(Err(HiLo::forked()));
        }
        self.poll_waiting(cx)
    }

    fn poll_waiting(&mut self, cx: &mut Context<'_>) -> Poll<Result<i64>> {
        let hilo = self.hilo;
        self.waiting
            .get_or_insert_with(|| Box::pin(hilo.next_id_slow()))
            .as_mut()
            .poll(cx)
    }
}

/// The most blocks one round trip takes while a sequence is moved above a floor.
const RAISE_BLOCKS_PER_CALL: u64 = 10_000;

/// Moves the counter above `floor` before anything is served: in one forward-only step where
/// the source can ([`HiLoSource::raise_above`]); else (or after its error: the step is atomic,
/// so a failed one moved nothing or everything) takes one block to see where the counter is
/// (never served), then, while its last ID is at or below the floor, one step of the missing
/// size for a counter table, or blocks in batches for a sequence. Other processes advancing
/// the counter meanwhile only help; nothing here moves it back.
async fn raise_above(
    source: &dyn DynSource,
    increment: Increment,
    block: u64,
    floor: i64,
) -> std::result::Result<(), BoxError> {
    if let Ok(true) = source.raise_above(floor).await {
        return Ok(());
    }
    let span = |len: u64| i64::try_from(len.saturating_sub(1)).unwrap_or(i64::MAX);
    let start = source.allocate(block).await?;
    let mut last = start.saturating_add(span(block));
    while last <= floor {
        // IDs up to the floor, past the counter's last: one more than the gap.
        let missing = u64::try_from(floor.saturating_sub(last).saturating_add(1)).unwrap_or(1);
        last = match increment {
            Increment::PerCall => {
                let start = source.allocate(missing).await?;
                start.saturating_add(span(missing))
            }
            Increment::Fixed(step) => {
                let count = missing
                    .div_ceil(step.max(1))
                    .clamp(1, RAISE_BLOCKS_PER_CALL);
                let starts = source.allocate_blocks(step, count).await?;
                let top = starts.into_iter().max().ok_or_else(|| {
                    BoxError::from("the counter returned no block while moving above the floor")
                })?;
                top.saturating_add(span(step))
            }
        };
    }
    Ok(())
}
