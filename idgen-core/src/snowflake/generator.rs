//! [`Snowflake`]: the lock-free ID generator.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Result;
use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crate::snowflake::fence::{CLOCKS_AGREE_WITHIN_MS, Fence, IssueState, NodeLease, REVOKED};
use crate::snowflake::{ClockPolicy, Layout, NodeId, SnowflakeId};
use crate::sync::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// A Snowflake ID generator for one node ID: `Send + Sync`, used through `&self` from any number
/// of threads, lock-free: one clock read and one compare-and-swap per ID, nothing else shared is
/// written (the issue count is kept per tick, not per ID).
///
/// Every ID it returns is strictly greater than every ID it returned before, across threads.
/// When a tick's sequence is used up it waits for the next tick (counted in [`stats`]); the
/// async [`next_id_async`](Snowflake::next_id_async) (feature `tokio`) waits without blocking a
/// runtime thread, and [`try_next_id`](Snowflake::try_next_id) never waits. When the clock is
/// behind the last issued timestamp, the [`ClockPolicy`] decides. A timestamp past the layout's
/// range, or before its epoch, is an error, never a wrap-around.
///
/// Two generators with the same layout and node ID produce the same IDs: give each process its
/// own node ID (a fixed value, [`NodeId`] sources, or a database lease).
///
/// **After `fork()`** (without `exec`), the child's copy of a generator refuses to issue with
/// [`Error::Forked`], whatever its node ID came from: a copy with a fixed node ID would repeat
/// the parent's IDs just as a leased one would. The parent's generator is unaffected. A child
/// that needs IDs builds a generator of its own, on a node ID of its own (a new lease, over a
/// connection pool the child opened).
///
/// ```
/// use idgen_core::{Layout, Snowflake};
///
/// let ids = Snowflake::new(Layout::TWITTER, 7)?;
/// let a = ids.next_id()?;
/// let b = ids.next_id()?;
/// assert!(b > a);
/// assert_eq!(Layout::TWITTER.decompose(b)?.node, 7);
/// # Ok::<(), idgen_core::Error>(())
/// ```
///
/// [`stats`]: Snowflake::stats
pub struct Snowflake<C: Clock = SystemClock> {
    hot: Arc<IssueState>,
    /// The layout's time parameters, copied here for the path of every ID.
    epoch_ms: i64,
    unit_ms: u64,
    max_ticks: u64,
    /// The layout's last ms after its epoch: `last_unix_ms - epoch_ms`.
    span_ms: u64,
    /// `span_ms` if ticks are 1 ms long, else 0 (the short path's one range check).
    ms_span_if_unit_1: u64,
    /// IDs per tick: `seq_mask + 1`.
    per_tick: u64,
    /// The state word before the first ID (0, or a floor's "tick used up"): not an issued ID.
    initial_word: u64,
    layout: Layout,
    node: u64,
    encode: Encode,
    seq_bits: u32,
    seq_mask: u64,
    clock: C,
    policy: ClockPolicy,
    /// How far ahead of the clock IDs may be issued beyond the policy (see
    /// [`SnowflakeBuilder::lead`]), in ms.
    lead_ms: u64,
    fence: Option<Fence>,
    /// The fork count this generator (or its fence) was made under: a copy in a forked child
    /// sees another count and refuses to issue (see `crate::fork`).
    forks: u64,
    counters: Counters,
    _lease: Option<Box<dyn NodeLease>>,
}

/// A caller lost the compare-and-swap to another thread: step aside before trying again. When
/// more threads than cores share one generator, the thread that just won keeps its core and
/// the state's cache line for a run of IDs, instead of every caller bouncing the line between
/// cores on each attempt (as ferroid's `next_id` does with its `yield_now` backoff). Out of line:
/// the path of an uncontended ID does not see it.
#[cold]
#[inline(never)]
fn contended() {
    std::thread::yield_now();
}

/// How a state word `tick << seq_bits | seq` becomes an ID, for either field order, without a
/// branch: `tick << time_shift | node_part | seq << seq_shift`.
#[derive(Clone, Copy)]
struct Encode {
    /// `seq_bits + node_bits`.
    time_shift: u32,
    /// 0 for `ticks | node | seq`, `node_bits` for `ticks | seq | node`.
    seq_shift: u32,
    /// The node, shifted to its place.
    node_part: u64,
}

#[derive(Default)]
struct Counters {
    /// IDs issued in ticks that are over (added once per tick, by the caller that moved on).
    completed_ticks_ids: AtomicU64,
    exhaustion_waits: AtomicU64,
    backwards_steps: AtomicU64,
    max_backwards_ms: AtomicU64,
    last_step_tick: AtomicU64,
    waited_ns: AtomicU64,
    high_clock_ms: AtomicI64,
}

/// Counters of a generator, from [`Snowflake::stats`].
///
/// ```
/// use idgen_core::{Layout, ManualClock, Snowflake};
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let ids = Snowflake::with_clock(Layout::SONYFLAKE, 1, clock)?;
/// for _ in 0..300 { ids.next_id()?; } // 256 per tick: one wait for the next tick
/// let stats = ids.stats();
/// assert_eq!(stats.ids_issued, 300);
/// assert_eq!(stats.exhaustion_waits, 1);
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// IDs returned.
    pub ids_issued: u64,
    /// Times a caller waited for the next tick because the sequence was used up.
    pub exhaustion_waits: u64,
    /// Steps back of the clock seen (each counted once, however many callers met it).
    pub backwards_steps: u64,
    /// The largest step back seen.
    pub max_backwards: Duration,
    /// Total time callers spent waiting (for the next tick, or for the clock to catch up).
    pub waited: Duration,
}

enum Step {
    Issued(u64),
    Wait { until_ms: i64, exhausted: bool },
}

/// A wait a step asked for: until the clock reads `until_ms`; begun at `started` (the
/// instant and the clock's time).
struct Wait {
    until_ms: i64,
    started: (Instant, i64),
}

/// What the [`ClockPolicy`] says when the clock reads an earlier tick than the last issued one.
enum Behind {
    Issue(u64),
    WaitUntil(i64),
}

impl Snowflake<SystemClock> {
    /// A generator for `node` under `layout`, on the [`SystemClock`] and the default
    /// [`ClockPolicy`]. Fails when `node` does not fit the layout's node field.
    ///
    /// ```
    /// use idgen_core::{Layout, Snowflake};
    /// assert!(Snowflake::new(Layout::TWITTER, 1023).is_ok());
    /// let err = Snowflake::new(Layout::TWITTER, 1024).err().unwrap();
    /// assert_eq!(err.to_string(), "node 1024 does not fit in 10 bits: the largest node is 1023");
    /// ```
    pub fn new(layout: Layout, node: u64) -> Result<Self> {
        Self::builder().layout(layout).node(node).build()
    }

    /// A builder for every option; see [`SnowflakeBuilder`].
    ///
    /// ```
    /// use idgen_core::{ClockPolicy, Layout, Snowflake};
    /// let ids = Snowflake::builder()
    ///     .layout(Layout::SONYFLAKE)
    ///     .node(2565)
    ///     .clock_policy(ClockPolicy::Refuse)
    ///     .build()?;
    /// assert_eq!(ids.node(), 2565);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn builder() -> SnowflakeBuilder<SystemClock> {
        SnowflakeBuilder::new(SystemClock::new())
    }
}

impl<C: Clock> Snowflake<C> {
    /// A generator on a clock of your choice (a [`ManualClock`](crate::clock::ManualClock) in tests).
    ///
    /// ```
    /// use idgen_core::{Layout, ManualClock, Snowflake};
    /// let ids = Snowflake::with_clock(Layout::TWITTER, 1, ManualClock::new(1_288_834_975_657))?;
    /// assert_eq!(ids.next_id()?.get(), 4194308096); // 1000 ms after the epoch, node 1, sequence 0
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn with_clock(layout: Layout, node: u64, clock: C) -> Result<Self> {
        SnowflakeBuilder::new(clock)
            .layout(layout)
            .node(node)
            .build()
    }

    /// The next ID. Waits for the next tick when this tick's sequence is used up, and applies the
    /// [`ClockPolicy`] when the clock is behind.
    ///
    /// # Errors
    ///
    /// [`Error::ClockMovedBackwards`], [`Error::TimeOverflow`], [`Error::BeforeEpoch`],
    /// [`Error::Fenced`].
    ///
    /// # Examples
    ///
    /// ```
    /// let ids = idgen_core::Snowflake::new(idgen_core::Layout::TWITTER, 1)?;
    /// let id = ids.next_id()?;
    /// assert!(id.get() > 0);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn next_id(&self) -> Result<SnowflakeId> {
        match self.issue_at_once() {
            Some(id) => Ok(id),
            None => self.next_id_after(),
        }
    }

    /// The rest of [`next_id`](Snowflake::next_id) when the short path did not issue: the full
    /// step (the fork, fence and range checks again, the clock policy), waits, errors. Out of
    /// line, so the path of an ID stays short.
    #[cold]
    #[inline(never)]
    fn next_id_after(&self) -> Result<SnowflakeId> {
        let mut attempt = self.step();
        loop {
            let wait = match self.issued_or_wait(attempt?) {
                ControlFlow::Break(id) => return Ok(id),
                ControlFlow::Continue(wait) => wait,
            };
            self.clock.wait_until(wait.until_ms);
            self.count_waited(wait.started);
            attempt = self.step();
        }
    }

    /// The next ID if one can be issued without waiting, `Ok(None)` when the caller would have
    /// to wait (sequence used up, or the clock behind within the policy's bound).
    ///
    /// ```
    /// use idgen_core::{Layout, ManualClock, Snowflake};
    /// let ids = Snowflake::with_clock(Layout::SONYFLAKE, 1, ManualClock::new(1_800_000_000_000))?;
    /// for _ in 0..256 { assert!(ids.try_next_id()?.is_some()); }
    /// assert_eq!(ids.try_next_id()?, None); // 256 per 10 ms tick
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn try_next_id(&self) -> Result<Option<SnowflakeId>> {
        if let Some(id) = self.issue_at_once() {
            return Ok(Some(id));
        }
        match self.step()? {
            Step::Issued(state) => Ok(Some(self.encode(state))),
            Step::Wait { .. } => Ok(None),
        }
    }

    /// Like [`next_id`](Snowflake::next_id), but waits on the tokio runtime instead of blocking
    /// the thread: it sleeps for whole milliseconds and yields to the runtime for the last one.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_core::Error> {
    /// let ids = idgen_core::Snowflake::new(idgen_core::Layout::SONYFLAKE, 1)?;
    /// let mut last = ids.next_id_async().await?;
    /// for _ in 0..600 { // more than two ticks' worth: waits without blocking the runtime
    ///     let id = ids.next_id_async().await?;
    ///     assert!(id > last);
    ///     last = id;
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    pub async fn next_id_async(&self) -> Result<SnowflakeId> {
        loop {
            let wait = match self.issued_or_wait(self.step()?) {
                ControlFlow::Break(id) => return Ok(id),
                ControlFlow::Continue(wait) => wait,
            };
            if self.clock.is_simulated() {
                self.clock.wait_until(wait.until_ms);
            } else {
                loop {
                    let remaining = wait.until_ms - self.clock.fresh_ms();
                    if remaining <= 0 {
                        break;
                    } else if remaining >= 2 {
                        tokio::time::sleep(Duration::from_millis(remaining as u64 - 1)).await;
                    } else {
                        tokio::task::yield_now().await;
                    }
                }
            }
            self.count_waited(wait.started);
        }
    }

    /// The layout this generator issues IDs under.
    ///
    /// ```
    /// # use idgen_core::{Layout, Snowflake};
    /// assert_eq!(Snowflake::new(Layout::SONYFLAKE, 1)?.layout(), &Layout::SONYFLAKE);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The node ID in every ID of this generator.
    ///
    /// ```
    /// # use idgen_core::{Layout, Snowflake};
    /// assert_eq!(Snowflake::new(Layout::TWITTER, 12)?.node(), 12);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn node(&self) -> u64 {
        self.node
    }

    /// The clock policy.
    ///
    /// ```
    /// # use idgen_core::{ClockPolicy, Layout, Snowflake};
    /// assert_eq!(Snowflake::new(Layout::TWITTER, 1)?.clock_policy(), ClockPolicy::default());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn clock_policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The clock.
    ///
    /// ```
    /// # use idgen_core::{Clock, Layout, ManualClock, Snowflake};
    /// let ids = Snowflake::with_clock(Layout::TWITTER, 1, ManualClock::new(1_800_000_000_000))?;
    /// assert_eq!(ids.clock().now_ms(), 1_800_000_000_000);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The start of the tick of the last ID issued (Unix ms), or of the floor set by
    /// [`SnowflakeBuilder::not_before_ms`]; `None` when neither exists yet.
    ///
    /// ```
    /// use idgen_core::{Layout, ManualClock, Snowflake};
    /// let ids = Snowflake::with_clock(Layout::TWITTER, 1, ManualClock::new(1_800_000_000_000))?;
    /// assert_eq!(ids.last_timestamp_ms(), None);
    /// ids.next_id()?;
    /// assert_eq!(ids.last_timestamp_ms(), Some(1_800_000_000_000));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn last_timestamp_ms(&self) -> Option<i64> {
        let state = self.hot.word.load(Relaxed) & !REVOKED;
        (state != 0).then(|| self.layout.tick_start_ms(state >> self.seq_bits))
    }

    /// A snapshot of the generator's counters.
    ///
    /// ```
    /// # use idgen_core::{Layout, Snowflake};
    /// let ids = Snowflake::new(Layout::TWITTER, 1)?;
    /// ids.next_id()?;
    /// assert_eq!(ids.stats().ids_issued, 1);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        Stats {
            ids_issued: self.ids_issued(),
            exhaustion_waits: c.exhaustion_waits.load(Relaxed),
            backwards_steps: c.backwards_steps.load(Relaxed),
            max_backwards: Duration::from_millis(c.max_backwards_ms.load(Relaxed)),
            waited: Duration::from_nanos(c.waited_ns.load(Relaxed)),
        }
    }

    /// IDs issued so far: those of finished ticks, and the current tick's sequence + 1.
    fn ids_issued(&self) -> u64 {
        let word = self.hot.word.load(Relaxed) & !REVOKED;
        let in_tick = if word == self.initial_word {
            0
        } else {
            (word & self.seq_mask) + 1
        };
        self.counters.completed_ticks_ids.load(Relaxed) + in_tick
    }

    /// The tick containing `now_ms`, `None` outside the layout's range. The same as
    /// [`Layout::ticks_at`] without building an error on the path of every ID, and without a
    /// division for a 1 ms tick.
    #[inline(always)]
    fn tick_at(&self, now_ms: i64) -> Option<u64> {
        if now_ms < self.epoch_ms {
            return None;
        }
        let ms = now_ms.abs_diff(self.epoch_ms);
        let tick = if self.unit_ms == 1 {
            ms
        } else {
            ms / self.unit_ms
        };
        (tick <= self.max_ticks).then_some(tick)
    }

    /// The path of an ID: issues when the clock reads the last issued tick (with sequence
    /// left) or a later one, in range, in the fence and not in a forked child; `None` for
    /// everything else (exhausted, behind, revoked, fenced, out of range, forked), which
    /// [`step`](Self::step) then decides. Issues exactly what `step` would in those cases.
    ///
    /// The clock is read once: on a lost compare-and-swap the reading is still a time that has
    /// passed, so issuing at it (or at the last tick, if later) stays correct.
    #[inline(always)]
    fn issue_at_once(&self) -> Option<SnowflakeId> {
        if crate::fork::is_forked_since(self.forks) {
            return None;
        }
        let now_ms = self.clock.now_ms();
        if let Some(fence) = &self.fence
            && !fence.is_open_at(now_ms)
        {
            return None;
        }
        // `epoch_ms <= now_ms <= last_ms` in one unsigned compare (exact with wrapping); with
        // 1 ms ticks that compare is all (`ms_span_if_unit_1` is the span, else 0).
        let ms = now_ms.wrapping_sub(self.epoch_ms) as u64;
        let tick = if ms <= self.ms_span_if_unit_1 {
            ms
        } else if self.unit_ms != 1 && ms <= self.span_ms {
            ms / self.unit_ms
        } else {
            return None;
        };
        let floor = tick << self.seq_bits;
        // The first state word of the next tick: at or above it, `step` decides.
        let ceiling = floor + self.per_tick;
        let mut current = self.hot.word.load(Relaxed);
        loop {
            // The next sequence of the last tick, or the clock's tick if later. Any other tick
            // (the sequence used up, the clock behind, the REVOKED bit set) is at or above
            // `ceiling`.
            let next = current.wrapping_add(1).max(floor);
            if next >= ceiling {
                return None;
            }
            // Fails, and so re-checks, if `Fence::revoke` set the REVOKED bit since `current`
            // was read: no ID is ever issued after a revoke returned.
            match self
                .hot
                .word
                .compare_exchange_weak(current, next, Relaxed, Relaxed)
            {
                Ok(_) => {
                    if current < floor {
                        self.on_new_tick(now_ms, current, tick);
                    }
                    let e = self.encode;
                    let raw =
                        (tick << e.time_shift) | e.node_part | ((next - floor) << e.seq_shift);
                    return Some(SnowflakeId::from_raw(raw));
                }
                Err(actual) => {
                    current = actual;
                    contended();
                }
            }
        }
    }

    /// One attempt: issue, or say how long to wait, or fail.
    #[inline(always)]
    fn step(&self) -> Result<Step> {
        if crate::fork::is_forked_since(self.forks) {
            return Err(Self::forked());
        }
        let mut current = self.hot.word.load(Relaxed);
        loop {
            if current & REVOKED != 0 {
                return Err(self.revoked());
            }
            let now_ms = self.clock.now_ms();
            if let Some(fence) = &self.fence
                && !fence.is_open_at(now_ms)
            {
                return Err(self.fenced(now_ms));
            }
            let Some(now_tick) = self.tick_at(now_ms) else {
                return Err(self.out_of_range(now_ms));
            };
            let last_tick = current >> self.seq_bits;
            let next = if now_tick > last_tick {
                now_tick << self.seq_bits
            } else if now_tick == last_tick {
                if current & self.seq_mask == self.seq_mask {
                    let until_ms = self.layout.tick_start_ms(last_tick + 1);
                    return Ok(Step::Wait {
                        until_ms,
                        exhausted: true,
                    });
                }
                current + 1
            } else {
                match self.behind(now_ms, last_tick, current)? {
                    Behind::Issue(next) => next,
                    Behind::WaitUntil(until_ms) => {
                        return Ok(Step::Wait {
                            until_ms,
                            exhausted: false,
                        });
                    }
                }
            };
            // Fails, and so re-checks the fence, if `Fence::revoke` set the REVOKED bit since
            // `current` was read: no ID is ever issued after a revoke returned.
            match self
                .hot
                .word
                .compare_exchange_weak(current, next, Relaxed, Relaxed)
            {
                Ok(_) => {
                    if next >> self.seq_bits != last_tick {
                        self.on_new_tick(now_ms, current, next >> self.seq_bits);
                    }
                    return Ok(Step::Issued(next));
                }
                Err(actual) => current = actual,
            }
        }
    }

    /// The clock reads an earlier tick than the last issued one: the policy's answer, or, beyond
    /// the policy's bound and within the lead, the next tick ahead of the clock.
    #[cold]
    fn behind(&self, now_ms: i64, last_tick: u64, current: u64) -> Result<Behind> {
        let last_ms = self.layout.tick_start_ms(last_tick);
        let behind_ms = last_ms.saturating_sub(now_ms).max(0) as u64;
        self.count_backwards(last_tick, now_ms);
        let tolerance = self.policy.tolerance_ms();
        let allowed = tolerance.max(self.lead_ms);
        if behind_ms > allowed {
            return Err(Error::ClockMovedBackwards {
                behind_ms,
                allowed_ms: allowed,
                policy: self.policy.name(),
            });
        }
        // Within the policy's bound, the policy decides; beyond it (within the lead), the
        // generator issues ahead of the clock, as `Borrow` does.
        let borrowing = matches!(self.policy, ClockPolicy::Borrow { .. }) || behind_ms > tolerance;
        if !borrowing {
            // Wait for the clock to reach the last tick. (Refuse has tolerance 0, so it never
            // gets here with the clock behind.)
            return Ok(Behind::WaitUntil(last_ms));
        }
        if current & self.seq_mask != self.seq_mask {
            return Ok(Behind::Issue(current + 1));
        }
        // The last tick is used up: borrow the next one, as long as its start stays within the
        // bound ahead of the clock; else wait until it does.
        let ahead = match self.policy {
            ClockPolicy::Borrow { .. } => allowed,
            _ => self.lead_ms,
        };
        let next_tick = last_tick + 1;
        if next_tick > self.layout.max_ticks() {
            return Err(Error::TimeOverflow {
                unix_ms: self.layout.tick_start_ms(next_tick),
                last_ms: self.layout.last_unix_ms(),
            });
        }
        let next_ms = self.layout.tick_start_ms(next_tick);
        if next_ms.saturating_sub(now_ms) as u64 > ahead {
            return Ok(Behind::WaitUntil(
                next_ms.saturating_sub(i64::try_from(ahead).unwrap_or(i64::MAX)),
            ));
        }
        // A tick ahead of the clock: the lease's bound (the fence's ceiling) must cover it too.
        if let Some(fence) = &self.fence
            && !fence.allows_tick_at(next_ms)
        {
            return Err(Error::Fenced {
                now_ms: next_ms,
                valid_until_ms: fence.ceiling_ms(),
            });
        }
        Ok(Behind::Issue(next_tick << self.seq_bits))
    }

    #[cold]
    #[inline(never)]
    fn fenced(&self, now_ms: i64) -> Error {
        Error::Fenced {
            now_ms,
            valid_until_ms: self.fence.as_ref().map_or(i64::MIN, Fence::valid_until_ms),
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, now_ms: i64) -> Error {
        match self.layout.ticks_at(now_ms) {
            Err(e) => e,
            // Unreachable: `tick_at` and `ticks_at` agree. An error still, never a panic.
            Ok(_) => Error::TimeOverflow {
                unix_ms: now_ms,
                last_ms: self.layout.last_unix_ms(),
            },
        }
    }

    /// The error of a copy of this generator in a forked child.
    #[cold]
    #[inline(never)]
    fn forked() -> Error {
        Error::Forked {
            what: "Snowflake generator",
        }
    }

    /// The error of a generator whose fence was revoked.
    #[cold]
    #[inline(never)]
    fn revoked(&self) -> Error {
        Error::Fenced {
            now_ms: self.clock.now_ms(),
            valid_until_ms: i64::MIN,
        }
    }

    /// After a caller moved the state from `previous` to a new `tick`: count the finished tick's
    /// IDs, note the clock and the tick.
    #[cold]
    #[inline(never)]
    fn on_new_tick(&self, now_ms: i64, previous: u64, tick: u64) {
        if previous != self.initial_word {
            let ids = (previous & self.seq_mask) + 1;
            self.counters.completed_ticks_ids.fetch_add(ids, Relaxed);
        }
        self.counters.high_clock_ms.fetch_max(now_ms, Relaxed);
        if let Some(fence) = &self.fence {
            fence.note_issued_ms(self.layout.tick_start_ms(tick));
        }
    }

    fn count_backwards(&self, last_tick: u64, now_ms: i64) {
        let c = &self.counters;
        let step = (c.high_clock_ms.load(Relaxed) - now_ms).max(0) as u64;
        // One step is met by every caller until the clock catches up: count it once.
        if c.last_step_tick.swap(last_tick, Relaxed) != last_tick {
            c.backwards_steps.fetch_add(1, Relaxed);
            crate::observe::events::clock_stepped_back(step, now_ms);
        }
        c.max_backwards_ms.fetch_max(step, Relaxed);
    }

    /// `Break` with the ID of an issued step; `Continue` with the wait a step asks for, counted
    /// as begun (an exhausted sequence's wait counted as such).
    fn issued_or_wait(&self, step: Step) -> ControlFlow<SnowflakeId, Wait> {
        match step {
            Step::Issued(state) => ControlFlow::Break(self.encode(state)),
            Step::Wait {
                until_ms,
                exhausted,
            } => {
                if exhausted {
                    self.counters.exhaustion_waits.fetch_add(1, Relaxed);
                }
                let started = (Instant::now(), self.clock.now_ms());
                ControlFlow::Continue(Wait { until_ms, started })
            }
        }
    }

    /// Adds a finished wait's time (on a simulated clock, the clock's time) to the stats.
    fn count_waited(&self, (instant, clock_ms): (Instant, i64)) {
        let ns = if self.clock.is_simulated() {
            (self.clock.now_ms() - clock_ms).max(0) as u64 * 1_000_000
        } else {
            instant.elapsed().as_nanos() as u64
        };
        self.counters.waited_ns.fetch_add(ns, Relaxed);
    }

    #[inline(always)]
    fn encode(&self, state: u64) -> SnowflakeId {
        let e = self.encode;
        let raw = ((state >> self.seq_bits) << e.time_shift)
            | e.node_part
            | ((state & self.seq_mask) << e.seq_shift);
        SnowflakeId::from_raw(raw)
    }
}

impl<C: Clock> Drop for Snowflake<C> {
    /// Hands the exact last tick to the fence, so a lease released after this generator is gone
    /// still stores what it issued.
    fn drop(&mut self) {
        // A copy in a forked child leaves the fence alone: it is the parent's (and its lock
        // may have been held by a parent thread at the fork).
        if crate::fork::is_forked_since(self.forks) {
            return;
        }
        if let Some(fence) = &self.fence {
            fence.unregister(&self.hot);
        }
    }
}

impl<C: Clock> std::fmt::Debug for Snowflake<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snowflake")
            .field("layout", &self.layout)
            .field("node", &self.node)
            .field("policy", &self.policy)
            .field("fenced", &self.fence.is_some())
            .field("stats", &self.stats())
            .finish()
    }
}

/// Builds a [`Snowflake`] generator: layout, node ID (or a lease), clock, clock policy.
///
/// ```
/// use std::time::Duration;
/// use idgen_core::{ClockPolicy, Layout, ManualClock, NodeId, Snowflake};
///
/// let ids = Snowflake::builder()
///     .layout(Layout::TWITTER)
///     .node_id(NodeId::Fixed(33))
///     .clock(ManualClock::new(1_800_000_000_000))
///     .clock_policy(ClockPolicy::Borrow { max: Duration::from_millis(50) })
///     .build()?;
/// assert_eq!(ids.node(), 33);
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub struct SnowflakeBuilder<C: Clock> {
    layout: Layout,
    node: Option<NodeId>,
    clock: C,
    policy: ClockPolicy,
    not_before_ms: Option<i64>,
    lead: Duration,
    fence: Option<Fence>,
    lease: Option<Box<dyn NodeLease>>,
    conflict: Option<String>,
}

impl<C: Clock> SnowflakeBuilder<C> {
    fn new(clock: C) -> Self {
        SnowflakeBuilder {
            layout: Layout::TWITTER,
            node: None,
            clock,
            policy: ClockPolicy::default(),
            not_before_ms: None,
            lead: Duration::ZERO,
            fence: None,
            lease: None,
            conflict: None,
        }
    }

    /// The layout ([`Layout::TWITTER`] unless set).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// A fixed node ID. Not together with [`lease`](Self::lease), which brings its own.
    pub fn node(self, node: u64) -> Self {
        self.node_id(NodeId::Fixed(node))
    }

    /// A node ID from a [`NodeId`] source, resolved and checked by [`build`](Self::build). Not
    /// together with [`lease`](Self::lease), which brings its own.
    pub fn node_id(mut self, node: NodeId) -> Self {
        self.node = Some(node);
        self
    }

    /// The clock ([`SystemClock`] unless set).
    pub fn clock<C2: Clock>(self, clock: C2) -> SnowflakeBuilder<C2> {
        SnowflakeBuilder {
            layout: self.layout,
            node: self.node,
            clock,
            policy: self.policy,
            not_before_ms: self.not_before_ms,
            lead: self.lead,
            fence: self.fence,
            lease: self.lease,
            conflict: self.conflict,
        }
    }

    /// What to do when the clock is behind the last issued timestamp.
    pub fn clock_policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Issue IDs only at ticks after the one containing `unix_ms`: the last timestamp this node
    /// ID issued before (in another process, before a restart). A clock behind it is handled by
    /// the [`ClockPolicy`]: waited out within the bound, else an error; never reissued.
    pub fn not_before_ms(mut self, unix_ms: i64) -> Self {
        self.not_before_ms = Some(self.not_before_ms.map_or(unix_ms, |ms| ms.max(unix_ms)));
        self
    }

    /// May issue up to `max` ahead of the clock when the last timestamp (or the
    /// [floor](Self::not_before_ms)) is ahead of it, beyond the [`ClockPolicy`]'s bound
    /// (default zero: the policy alone decides). Within the policy's bound the policy applies;
    /// beyond it, up to `max`, the generator issues at once from the last tick and then from
    /// the following ticks, as [`ClockPolicy::Borrow`] does: IDs stay unique and increasing,
    /// their time field runs ahead of the clock by at most `max` (and by less as the clock
    /// catches up). With a [`Fence`], every tick issued ahead must also lie below its
    /// [ceiling](Fence::ceiling_ms). A lease that took a node ID over sets it
    /// ([`NodeLease::lead`]), so its generator starts at once above the takeover's bound.
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_core::{Layout, ManualClock, Snowflake};
    ///
    /// let clock = ManualClock::new(1_800_000_000_000);
    /// let floor = 1_800_000_031_000; // 31 s ahead of the clock
    /// let ids = Snowflake::builder().clock(clock.clone()).node(1).not_before_ms(floor)
    ///     .lead(Duration::from_secs(32)).build()?;
    /// let id = ids.next_id()?; // at once
    /// assert!(Layout::TWITTER.decompose(id)?.unix_ms > floor);
    ///
    /// // Without a lead, the default policy (wait up to 10 ms) refuses a floor 31 s ahead.
    /// let ids = Snowflake::builder().clock(clock).node(1).not_before_ms(floor).build()?;
    /// assert!(ids.next_id().is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn lead(mut self, max: Duration) -> Self {
        self.lead = self.lead.max(max);
        self
    }

    /// Stop issuing when the [`Fence`]'s deadline passes, or at once when it is revoked. Not
    /// together with [`lease`](Self::lease), which brings its own.
    pub fn fence(mut self, fence: Fence) -> Self {
        self.fence = Some(fence);
        self
    }

    /// Take the node ID, fence and last timestamp from a lease, and keep the lease alive as long
    /// as the generator. A leased generator must not also be given [`node`](Self::node),
    /// [`node_id`](Self::node_id) or [`fence`](Self::fence): [`build`](Self::build) refuses
    /// that, in whichever order the calls came, rather than issue on a node ID the lease does
    /// not hold or without the lease's fence.
    ///
    /// ```
    /// use idgen_core::{Error, Fence, Layout, NodeLease, Snowflake};
    /// # struct Fixed(Fence);
    /// # impl NodeLease for Fixed {
    /// #     fn node(&self) -> u64 { 9 }
    /// #     fn fence(&self) -> Fence { self.0.clone() }
    /// #     fn not_before_ms(&self) -> Option<i64> { None }
    /// # }
    /// let lease = Fixed(Fence::new(i64::MAX)); // a WorkerLease in an application
    /// let err = Snowflake::builder().lease(lease).node(3).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidOptions { .. }));
    /// assert!(err.to_string().contains("node ID 9 comes from the lease"));
    /// ```
    pub fn lease(mut self, lease: impl NodeLease) -> Self {
        if self.lease.is_some() {
            self.conflict = Some("lease() was called twice".into());
        }
        self.lease = Some(Box::new(lease));
        self
    }

    /// The generator. Fails when no node ID was given, the node ID source fails, the node ID
    /// does not fit the layout, or a lease was combined with a node ID or fence of its own.
    ///
    /// # Errors
    ///
    /// [`Error::MissingNode`]; the [`NodeId`] source's error; [`Error::FieldOutOfRange`] for a
    /// node ID too wide; [`Error::InvalidOptions`] for a lease combined with a node ID or fence,
    /// or whose clock reads more than
    /// [`CLOCKS_AGREE_WITHIN_MS`](crate::snowflake::CLOCKS_AGREE_WITHIN_MS) away from the
    /// generator's; [`Error::Forked`] for a lease or fence made before a `fork()`, in the child;
    /// [`Error::ForkHandler`] if the fork handler could not be registered.
    pub fn build(mut self) -> Result<Snowflake<C>> {
        let layout = self.layout;
        if let Some(reason) = self.conflict.take() {
            return Err(Error::InvalidOptions { reason });
        }
        let mut node = self.node.take();
        let mut fence = self.fence.take();
        if let Some(lease) = &self.lease {
            if node.is_some() || fence.is_some() {
                let given = match (node.is_some(), fence.is_some()) {
                    (true, true) => "a node ID and a fence",
                    (true, false) => "a node ID",
                    _ => "a fence",
                };
                return Err(Error::InvalidOptions {
                    reason: format!(
                        "the generator was given a lease and also {given}: with a lease, the node ID {} comes from the lease, and so does its fence (remove the .node()/.node_id()/.fence() call)",
                        lease.node()
                    ),
                });
            }
            if let Some(lease_ms) = lease.clock_now_ms() {
                let own_ms = self.clock.now_ms();
                if lease_ms.abs_diff(own_ms) > CLOCKS_AGREE_WITHIN_MS.unsigned_abs() {
                    return Err(Error::InvalidOptions {
                        reason: format!(
                            "the lease's clock reads {} but the generator's reads {}: the lease's deadline would be checked on another time base, so the generator could stop for good or issue past its lease (build the generator with the lease's clock, `.clock(...)`, or give neither a clock of its own)",
                            crate::fmt_time::UnixMs(lease_ms),
                            crate::fmt_time::UnixMs(own_ms)
                        ),
                    });
                }
            }
            node = Some(NodeId::Fixed(lease.node()));
            fence = Some(lease.fence());
            let lead = lease.lead();
            if let Some(ms) = lease.not_before_ms() {
                self = self.not_before_ms(ms);
            }
            self.lead = self.lead.max(lead);
        }
        let node = node.ok_or(Error::MissingNode)?.resolve(&layout)?;
        let (time_shift, node_shift, seq_shift) = layout.shifts();
        let seq_bits = u32::from(layout.sequence_bits());
        let seq_mask = layout.max_sequence();
        let encode = Encode {
            time_shift,
            seq_shift,
            node_part: node << node_shift,
        };
        // The state is the last issued (tick, sequence); a floor is "tick used up".
        let state = match self.not_before_ms {
            Some(ms) if ms >= layout.epoch_ms() => {
                let tick = layout.ticks_at(ms.min(layout.last_unix_ms()))?;
                (tick << seq_bits) | seq_mask
            }
            _ => 0,
        };
        crate::fork::protected()?;
        // A fence (and so a lease) made before a fork belongs to the parent: a generator built
        // on it in the child is a copy too.
        let forks = fence
            .as_ref()
            .map_or_else(crate::fork::generation, Fence::fork_generation);
        if crate::fork::is_forked_since(forks) {
            return Err(Error::Forked {
                what: if self.lease.is_some() {
                    "node ID lease"
                } else {
                    "fence"
                },
            });
        }
        let hot = Arc::new(IssueState::new(state));
        if let Some(fence) = &fence {
            fence.register(&hot, layout);
        }
        Ok(Snowflake {
            hot,
            epoch_ms: layout.epoch_ms(),
            unit_ms: u64::from(layout.unit_ms()),
            max_ticks: layout.max_ticks(),
            span_ms: layout.last_unix_ms().abs_diff(layout.epoch_ms()),
            ms_span_if_unit_1: if layout.unit_ms() == 1 {
                layout.last_unix_ms().abs_diff(layout.epoch_ms())
            } else {
                0
            },
            per_tick: seq_mask + 1,
            initial_word: state,
            layout,
            node,
            encode,
            seq_bits,
            seq_mask,
            clock: self.clock,
            policy: self.policy,
            lead_ms: u64::try_from(self.lead.as_millis()).unwrap_or(u64::MAX),
            fence,
            forks,
            counters: Counters::default(),
            _lease: self.lease,
        })
    }
}
