//! The slow-path state of a [`HiLo`](super::HiLo): the buffer of fetched blocks, block
//! validation, the look-ahead (how many IDs to keep buffered, how many fetches to run) and the
//! bookkeeping behind `stats()`. Everything here runs under one mutex that is never held across
//! an `.await`.
//!
//! # Look-ahead
//!
//! The low-water mark is `low_water_factor × rate × fetch latency` IDs (the rate is sampled at
//! refills, the latency runs from the request to the block's arrival, scheduling included).
//! The engine keeps the buffered IDs plus those already requested above it (within
//! `max_buffered_blocks`), checking at each block's trigger (where the buffer behind the block
//! drops to the mark, at the latest halfway through it) and after each arrival. What is missing
//! is asked for in whole blocks: several per round trip from a source that can
//! ([`HiLoSource::allocate_blocks`], or one larger step of a counter table), else several
//! fetches at once (up to `max_fetches_in_flight`).
//!
//! # Several fetches in flight
//!
//! Only for a source that gives one block per round trip and answers calls in parallel: one
//! that serves one call at a time (fetches sent while another is out take markedly longer
//! than those sent alone) gets one at a time, and a second now and then as a probe.
//!
//! Their blocks may arrive in any order. Each fetch remembers the highest ID seen when it was
//! sent: the counter only moves forward, so its blocks must lie above that (else the counter
//! went backwards) and must not overlap blocks that arrived meanwhile. Blocks are served in
//! ascending order, so IDs keep increasing within one `HiLo`: a block is staged for the next
//! switch only once no fetch sent before it arrived is still out (such a fetch could still
//! return a lower block), unless the current block is used up and a caller would otherwise
//! wait; a block arriving below one already in use is then dropped (a gap, never a duplicate),
//! counted in `stats().blocks_discarded`.
//!
//! [`HiLoSource::allocate_blocks`]: super::HiLoSource::allocate_blocks

use std::collections::VecDeque;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::cursor::{Block, COMPACT_AT, Cursor, MAX_BLOCK};
use super::options::{Floor, Options};
use super::runtime::{self, Caller};
use super::source::{BoxError, DynSource, Increment};
use super::stats::HiLoStats;
use crate::error::{Error, ErrorKind};

/// How fast a fetch latency spike fades from the look-ahead: a database that answered in 8 ms
/// once in the last few seconds may do so again (a checkpoint, a busy host), and the buffer
/// should ride it out; one that has been fast for a minute is fast.
const PEAK_HALF_LIFE: Duration = Duration::from_secs(10);

/// Fetches sent while another is out taking this many times as long as fetches sent alone
/// mean the source serves one call at a time: a second caller waits for the first (about
/// twice as long); a source that runs calls in parallel answers both in about the same time.
const SERIAL_RATIO: f64 = 1.3;

/// How often a source found to serve one call at a time gets a second fetch at once anyway.
const PROBE_EVERY: Duration = Duration::from_secs(10);

/// Everything one `HiLo` and its clones share.
pub(crate) struct Shared {
    pub(crate) cursor: Cursor,
    inner: Mutex<Inner>,
    pub(crate) notify: Notify,
    pub(crate) source: Arc<dyn DynSource>,
    options: Options,
    increment: Increment,
    /// The block size in force (the configured one, or the database's when adopted).
    block: u64,
    pub(crate) counter: String,
    me: Weak<Shared>,
    /// The fetch task `kick` starts (`refill::task`): handed in by the generator, so this
    /// planner does not import the task that imports it.
    refill: RefillTask,
}

/// Makes the fetch task of a `Shared` (given weakly) kicked at an instant.
pub(crate) type RefillTask = fn(Weak<Shared>, Instant) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// A fetched block waiting to be served.
#[derive(Clone, Copy, Debug)]
struct Spare {
    block: Block,
    /// Its place in the order of arrival (`Inner::arrivals` when it was accepted).
    arrived: u64,
}

/// What one round trip asks the source for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    /// `allocate(size)`: one block of `size` (a table counter may be asked for several blocks'
    /// worth at once; the engine splits it).
    Allocate(u64),
    /// `allocate_blocks(size, count)`: up to `count` blocks of a sequence.
    AllocateBlocks(u64, u64),
}

/// A fetch in flight.
#[derive(Clone, Debug)]
pub(crate) struct Fetch {
    pub(crate) id: u64,
    pub(crate) call: Call,
    /// The length of each block it brings.
    len: u64,
    /// How many blocks it is counted on to bring (for the look-ahead).
    expected: u64,
    /// The highest ID seen when it was sent: everything it brings must lie above.
    floor: Option<i64>,
    /// `Inner::arrivals` when it was sent: blocks that arrived later may be concurrent with it.
    sent_after: u64,
    /// Sent while another fetch was out.
    overlapping: bool,
}

struct Inner {
    /// The full epoch of the block the cursor serves (as last synced; the cursor may have
    /// switched to `staged` since, see [`Shared::sync`]).
    epoch: u64,
    current: Block,
    /// The block in the slot of `epoch + 1`, which any caller may switch to without the mutex.
    staged: Option<Block>,
    /// Fetched blocks waiting behind `staged`, ascending.
    spares: VecDeque<Spare>,
    /// The highest ID of every block accepted so far (or the floor, if higher).
    highest: Option<i64>,
    /// A block start every block of a fixed-increment counter must be on the grid of.
    grid_origin: Option<i64>,
    /// Blocks accepted so far (each gets the next number as its `arrived`).
    arrivals: u64,
    /// Blocks accepted while a fetch was in flight that was sent before they arrived: what
    /// that fetch's blocks must not overlap.
    recent: Vec<Spare>,
    /// Fetch tasks running (each with at most one fetch in flight).
    tasks: usize,
    flights: Vec<Fetch>,
    next_fetch: u64,
    /// The most blocks one `allocate_blocks` call returned (1 until a source shows more).
    per_call: u64,
    /// The last fetch failed: one task retries with backoff, no others start.
    failing: bool,
    /// Moving averages of the latency of fetches sent while none was out, and of those sent
    /// while another was: a source that serves one call at a time (one connection) answers
    /// the second kind much later, and gets one fetch at a time.
    solo_latency: Option<Duration>,
    overlapping_latency: Option<Duration>,
    /// When a source found to serve one call at a time may next get a second fetch at once,
    /// to notice if that changed; and whether such a probe was granted and not yet sent.
    probe_at: Option<Instant>,
    probe_granted: bool,
    /// IDs handed out from blocks no longer current.
    issued_retired: u64,
    /// Consumption rate, IDs per second (moving average of samples taken at refills).
    rate: Option<f64>,
    sampled_at: Instant,
    sampled_issued: u64,
    /// The largest pending `reserve(n)` no buffered block can satisfy.
    reserve_request: u64,
    blocks_fetched: u64,
    blocks_discarded: u64,
    fetches: u64,
    fetch_failures: u64,
    latency_last: Option<Duration>,
    latency_sum: Duration,
    latency_max: Duration,
    /// The highest recent latency: it halves every `PEAK_HALF_LIFE`, so a spike keeps counting
    /// for a while whatever the fetch rate, and old ones fade.
    latency_peak: Duration,
    peak_at: Instant,
    caller_waits: u64,
    last_error: Option<Error>,
    /// Set once the generator failed closed; every later call returns it.
    fatal: Option<Error>,
}

impl Inner {
    /// IDs in the staged and spare blocks.
    fn buffered_blocks(&self) -> u64 {
        self.staged.map_or(0, |b| b.len) + self.spares.iter().map(|s| s.block.len).sum::<u64>()
    }

    fn buffered_count(&self) -> u64 {
        u64::from(self.staged.is_some()) + self.spares.len() as u64
    }

    /// IDs the fetches in flight are counted on to bring.
    fn pending(&self) -> u64 {
        self.flights.iter().map(|f| f.expected * f.len).sum()
    }

    fn pending_blocks(&self) -> u64 {
        self.flights.iter().map(|f| f.expected).sum()
    }

    /// The first ID a new block must start above to be served in order.
    fn frontier(&self) -> Option<i64> {
        let end = |b: Block| (b.len > 0).then(|| b.start + (b.len - 1) as i64);
        // `None` sorts below every `Some`.
        self.staged.and_then(end).max(end(self.current))
    }

    /// Whether the source serves one call at a time: fetches sent while another was out took
    /// markedly longer than those sent alone.
    fn serial(&self) -> bool {
        match (self.solo_latency, self.overlapping_latency) {
            (Some(solo), Some(overlapping)) => overlapping > solo.mul_f64(SERIAL_RATIO),
            _ => false,
        }
    }

    /// Whether every fetch in flight was sent after `spare` arrived, so none can bring a block
    /// below it.
    fn settled(&self, spare: &Spare) -> bool {
        self.flights.iter().all(|f| f.sent_after >= spare.arrived)
    }
}

/// What the slow path of `next_id` found.
pub(crate) enum Advance {
    /// The cursor moved, or a block is staged now; take again.
    Retry,
    /// Nothing buffered; a fetch was requested.
    Empty,
    /// The generator failed closed.
    Fatal(Error),
}

/// What one attempt of `reserve` found.
pub(crate) enum Reserved {
    Got(Range<i64>),
    Wait,
    Fatal(Error),
}

impl Shared {
    pub(crate) fn new(
        source: Arc<dyn DynSource>,
        options: Options,
        increment: Increment,
        block: u64,
        refill: RefillTask,
    ) -> Arc<Shared> {
        let counter = source.name().to_owned();
        Arc::new_cyclic(|me| Shared {
            cursor: Cursor::new(),
            inner: Mutex::new(Inner {
                epoch: 0,
                current: Block::EMPTY,
                staged: None,
                spares: VecDeque::new(),
                highest: None,
                grid_origin: options.grid.map(|(origin, _)| origin),
                arrivals: 0,
                recent: Vec::new(),
                tasks: 0,
                flights: Vec::new(),
                next_fetch: 0,
                per_call: 1,
                failing: false,
                solo_latency: None,
                overlapping_latency: None,
                probe_at: None,
                probe_granted: false,
                issued_retired: 0,
                rate: None,
                sampled_at: Instant::now(),
                sampled_issued: 0,
                reserve_request: 0,
                blocks_fetched: 0,
                blocks_discarded: 0,
                fetches: 0,
                fetch_failures: 0,
                latency_last: None,
                latency_sum: Duration::ZERO,
                latency_max: Duration::ZERO,
                latency_peak: Duration::ZERO,
                peak_at: Instant::now(),
                caller_waits: 0,
                last_error: None,
                fatal: None,
            }),
            notify: Notify::new(),
            source,
            options,
            increment,
            block,
            counter,
            me: me.clone(),
            refill,
        })
    }

    /// No block at or below `floor` is accepted from now on (a fetch sent before would still
    /// be checked against its own floor: call it before the first fetch).
    pub(crate) fn raise_highest(&self, floor: i64) {
        let mut inner = self.lock();
        inner.highest = Some(inner.highest.map_or(floor, |h| h.max(floor)));
    }

    /// The [`floor_from`](super::HiLoBuilder::floor_from) query, read again before every
    /// fetch; `None` without one (a fixed floor is already in `highest`).
    pub(crate) fn floor_query(&self) -> Option<Floor> {
        self.options.floor.clone().filter(Floor::is_query)
    }

    /// The grid block starts must be on: `(origin, step)`, for a fixed-increment counter once
    /// its first block arrived (or a striped counter's start and step).
    fn grid(&self, inner: &Inner) -> Option<(i64, u64)> {
        if let Some(grid) = self.options.grid {
            return Some(grid);
        }
        match self.increment {
            Increment::Fixed(_) => inner.grid_origin.map(|origin| (origin, self.block)),
            Increment::PerCall => None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        self.sync(&mut inner);
        inner
    }

    /// Catches up with a lock-free switch to the staged block.
    fn sync(&self, inner: &mut Inner) {
        let Some(staged) = inner.staged else { return };
        let (epoch, _) = self.cursor.position();
        if epoch == Cursor::masked(inner.epoch + 1) {
            // The switch happens only once the current block is used up.
            inner.issued_retired += inner.current.len;
            inner.current = staged;
            inner.staged = None;
            inner.epoch += 1;
        }
    }

    /// Stages the lowest spare block, if none is staged, so the next switch needs no lock.
    /// Unless `now`, only a settled block (see the module docs): `now` is for a caller that
    /// finds the current block used up and would otherwise wait.
    fn stage(&self, inner: &mut Inner, now: bool) {
        if inner.staged.is_some() || inner.fatal.is_some() {
            return;
        }
        let Some(first) = inner.spares.front() else {
            return;
        };
        if !now && !inner.settled(first) {
            return;
        }
        let Some(Spare { block, .. }) = inner.spares.pop_front() else {
            return;
        };
        let trigger = self.trigger_for(inner, block, 0);
        self.cursor.stage(inner.epoch + 1, block, trigger);
        inner.staged = Some(block);
    }

    /// The offset at which taking an ID from `block` asks for more: where the buffer behind it
    /// drops to the low-water mark, and at the latest halfway, so the next block gets staged
    /// in time; never below `taken`, and not at the first ID.
    fn trigger_for(&self, inner: &Inner, block: Block, taken: u64) -> u64 {
        let halfway = (block.len - 1) / 2;
        let behind = inner.buffered_blocks() + inner.pending();
        let low_water = self.low_water(inner);
        let at = match low_water.checked_sub(behind) {
            Some(deficit) if deficit > 0 => (block.len - 1).saturating_sub(deficit).min(halfway),
            _ => halfway,
        };
        // Not the first ID: the call that switches blocks should not also start fetches
        // (unless the block is too short to avoid it).
        at.max(taken).max(1.min(halfway))
    }

    /// Sets the current block's trigger where its remaining IDs plus the buffered blocks drop
    /// to the low-water mark as known now (rate and latency change after a block was staged).
    fn rearm(&self, inner: &Inner) {
        if !self.options.prefetch || inner.current.len == 0 {
            return;
        }
        let Some(deficit) = self
            .low_water(inner)
            .checked_sub(inner.buffered_blocks() + inner.pending())
        else {
            return;
        };
        let (_, offset) = self.cursor.position();
        let at = (inner.current.len - 1).saturating_sub(deficit);
        if deficit > 0 && at > offset {
            self.cursor.rearm(inner.epoch, at);
        }
    }

    /// Samples the consumption rate.
    fn sample_rate(&self, inner: &mut Inner) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(inner.sampled_at);
        if elapsed < Duration::from_millis(1) {
            return;
        }
        let issued = self.issued(inner);
        let sample = issued.saturating_sub(inner.sampled_issued) as f64 / elapsed.as_secs_f64();
        if sample > 0.0 || inner.rate.is_some() {
            inner.rate = Some(match inner.rate {
                Some(rate) => 0.5 * rate + 0.5 * sample,
                None => sample,
            });
        }
        inner.sampled_at = now;
        inner.sampled_issued = issued;
    }

    fn issued(&self, inner: &Inner) -> u64 {
        let (_, offset) = self.cursor.position();
        inner.issued_retired + offset.min(inner.current.len)
    }

    /// The largest contiguous range one fetch can give.
    pub(crate) fn reserve_limit(&self) -> u64 {
        match self.increment {
            Increment::Fixed(_) => self.block,
            Increment::PerCall => MAX_BLOCK,
        }
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.options.timeout
    }

    pub(crate) fn backoff(&self) -> (Duration, Duration) {
        (self.options.backoff_initial, self.options.backoff_max)
    }

    /// Asks for more if the buffer needs it: stages the next block, and starts as many fetch
    /// tasks as the look-ahead wants, on the runtime chosen for `caller`.
    #[inline(never)]
    pub(crate) fn kick(&self, caller: Caller) {
        let mut inner = self.lock();
        self.stage(&mut inner, false);
        let start = self.tasks_wanted(&mut inner);
        inner.tasks += start;
        self.rearm(&inner);
        drop(inner);
        self.start_tasks(start, caller);
    }

    fn start_tasks(&self, count: usize, caller: Caller) {
        let kicked_at = Instant::now();
        for _ in 0..count {
            if let Err(reason) = runtime::spawn(caller, (self.refill)(self.me.clone(), kicked_at)) {
                let mut inner = self.lock();
                inner.tasks -= 1;
                inner.last_error = Some(source_error(&self.counter, reason.into()));
            }
        }
    }

    /// How many more fetch tasks to start now.
    fn tasks_wanted(&self, inner: &mut Inner) -> usize {
        if inner.fatal.is_some() {
            return 0;
        }
        let deficit = self.deficit_blocks(inner);
        if deficit == 0 {
            return 0;
        }
        if inner.failing {
            return usize::from(inner.tasks == 0);
        }
        // A source that gives several blocks per round trip needs one fetch at a time: the
        // next one, sent when this one lands, takes everything missing by then.
        let batches = matches!(self.increment, Increment::PerCall) || inner.per_call > 1;
        if batches {
            return usize::from(inner.tasks == 0);
        }
        let room = self
            .options
            .max_fetches_in_flight
            .saturating_sub(inner.tasks);
        // A source that serves one call at a time gains nothing from a second fetch at once
        // (it waits, and the pool's queue costs time): one, and now and then a probe.
        if inner.serial() {
            if inner.tasks == 0 {
                return 1;
            }
            let now = Instant::now();
            if room > 0 && !inner.probe_granted && inner.probe_at.is_none_or(|at| now >= at) {
                inner.probe_at = Some(now + PROBE_EVERY);
                inner.probe_granted = true;
                return 1;
            }
            return 0;
        }
        // One block per round trip: as many fetches as blocks are missing. Tasks between two
        // fetches will plan again before anyone else.
        let idle = inner.tasks.saturating_sub(inner.flights.len()) as u64;
        let wanted = deficit.saturating_sub(idle);
        usize::try_from(wanted).unwrap_or(usize::MAX).min(room)
    }

    /// Blocks to ask for now, counting what is buffered and in flight: enough to stay above the
    /// low-water mark, within `max_buffered_blocks`; without prefetch, one whenever nothing is
    /// buffered or coming (and always at least that).
    fn deficit_blocks(&self, inner: &Inner) -> u64 {
        if inner.fatal.is_some() {
            return 0;
        }
        let len = self.next_block_len(inner);
        if self.reserve_waits(inner) {
            return u64::from(inner.flights.iter().all(|f| f.len < inner.reserve_request));
        }
        let (_, offset) = self.cursor.position();
        let have = inner.current.len.saturating_sub(offset) + inner.buffered_blocks();
        let coming = inner.pending();
        if have + coming == 0 {
            return 1;
        }
        if !self.options.prefetch {
            return 0;
        }
        // Just above the mark: at most one block more than it needs.
        let goal = self.low_water(inner) + 1;
        let Some(short) = goal.checked_sub(have + coming).filter(|&short| short > 0) else {
            return 0;
        };
        let room = (self.options.max_buffered_blocks as u64)
            .saturating_sub(inner.buffered_count() + inner.pending_blocks());
        short.div_ceil(len).min(room)
    }

    /// Whether a `reserve(n)` waits for a block that no buffered block can satisfy.
    fn reserve_waits(&self, inner: &Inner) -> bool {
        let n = inner.reserve_request;
        n > 0
            && inner.staged.is_none_or(|b| b.len < n)
            && !inner.spares.iter().any(|s| s.block.len >= n)
    }

    /// For a fetch task: the next fetch to make (recorded as in flight), or `None` after
    /// handing the task's slot back (under the mutex, so a caller that then finds the buffer
    /// empty starts a new task).
    pub(crate) fn plan_or_stop(&self) -> Option<Fetch> {
        let mut inner = self.lock();
        self.sample_rate(&mut inner);
        self.stage(&mut inner, false);
        // While fetches fail, and for a source that serves one call at a time (but for a
        // granted probe), a task that finds another fetch out stops.
        let one_at_a_time = (inner.failing || inner.serial()) && !inner.flights.is_empty();
        let probe = one_at_a_time && !inner.failing && inner.probe_granted;
        let deficit = if one_at_a_time && !probe {
            0
        } else {
            self.deficit_blocks(&inner)
        };
        if probe {
            inner.probe_granted = false;
        }
        if deficit == 0 {
            inner.tasks -= 1;
            self.rearm(&inner);
            return None;
        }
        let len = self.next_block_len(&inner);
        let (call, expected) = if self.reserve_waits(&inner) {
            let len = match self.increment {
                Increment::PerCall => len.max(inner.reserve_request),
                Increment::Fixed(_) => self.block,
            };
            (Call::Allocate(len), 1)
        } else {
            match self.increment {
                Increment::PerCall => (Call::Allocate(len * deficit), deficit),
                Increment::Fixed(_) if deficit == 1 => (Call::Allocate(len), 1),
                Increment::Fixed(_) => (
                    Call::AllocateBlocks(len, deficit),
                    deficit.min(inner.per_call),
                ),
            }
        };
        let len = match call {
            Call::Allocate(size) => size / expected,
            Call::AllocateBlocks(size, _) => size,
        };
        let fetch = Fetch {
            id: inner.next_fetch,
            call,
            len,
            expected,
            floor: inner.highest,
            sent_after: inner.arrivals,
            overlapping: !inner.flights.is_empty(),
        };
        inner.next_fetch += 1;
        inner.flights.push(fetch.clone());
        Some(fetch)
    }

    /// The slow path of taking an ID: the block of `epoch` is used up and nothing was staged.
    pub(crate) fn advance(&self, epoch: u64, caller: Caller) -> Advance {
        let mut inner = self.lock();
        if let Some(err) = &inner.fatal {
            return Advance::Fatal(err.clone());
        }
        let (now_epoch, now_offset) = self.cursor.position();
        if now_epoch != epoch || now_offset < inner.current.len || inner.staged.is_some() {
            return Advance::Retry;
        }
        if now_offset >= COMPACT_AT {
            self.cursor.compact(inner.epoch, inner.current.len);
        }
        self.stage(&mut inner, true);
        if inner.staged.is_some() {
            return Advance::Retry;
        }
        drop(inner);
        self.kick(caller);
        Advance::Empty
    }

    /// One attempt at `n` contiguous IDs.
    pub(crate) fn reserve(&self, n: u64, caller: Caller) -> Reserved {
        let mut inner = self.lock();
        loop {
            if let Some(err) = &inner.fatal {
                return Reserved::Fatal(err.clone());
            }
            if let Some(range) = self.cursor.take_exact(n) {
                // The range may have jumped over the block's trigger.
                drop(inner);
                self.kick(caller);
                return Reserved::Got(range);
            }
            self.stage(&mut inner, true);
            let Some(staged) = inner.staged else { break };
            // A fresh block: the rest of the current one is skipped (a gap), so IDs keep
            // increasing. A staged block too small for `n` is skipped whole.
            let taken = if staged.len >= n {
                n
            } else if inner.spares.iter().any(|s| s.block.len >= n) {
                staged.len
            } else {
                break;
            };
            match self.cursor.claim(inner.epoch, taken) {
                Some(offset) => {
                    inner.issued_retired += offset.min(inner.current.len);
                    inner.current = staged;
                    inner.staged = None;
                    inner.epoch += 1;
                    if taken == n {
                        if inner.reserve_request <= n {
                            inner.reserve_request = 0;
                        }
                        self.stage(&mut inner, false);
                        drop(inner);
                        self.kick(caller);
                        return Reserved::Got(staged.range(0, n));
                    }
                    while inner.spares.front().is_some_and(|s| s.block.len < n) {
                        inner.spares.pop_front();
                    }
                }
                // A caller switched to the staged block meanwhile: look again.
                None => self.sync(&mut inner),
            }
        }
        inner.reserve_request = inner.reserve_request.max(n);
        drop(inner);
        self.kick(caller);
        Reserved::Wait
    }

    fn latency_estimate(inner: &Inner) -> Option<Duration> {
        let last = inner.latency_last?;
        let count = u32::try_from(inner.fetches).unwrap_or(u32::MAX).max(1);
        Some(last.max(inner.latency_sum / count).max(inner.latency_peak))
    }

    /// How many buffered IDs should trigger a prefetch now.
    fn low_water(&self, inner: &Inner) -> u64 {
        if !self.options.prefetch {
            return 0;
        }
        let ids = match (inner.rate, Self::latency_estimate(inner)) {
            (Some(rate), Some(latency)) => {
                (rate * latency.as_secs_f64() * self.options.low_water_factor).ceil() as u64
            }
            // No rate yet: fetch a second block at once (double buffering until measured).
            _ => self.next_block_len(inner),
        };
        // By default never below one block: the next block is asked for as soon as the one in
        // use is all that is left, so a fetch has a whole block's time to land, not a few
        // mean latencies (one fetch several times slower than the mean is common).
        let floor = self
            .options
            .min_low_water
            .unwrap_or_else(|| self.next_block_len(inner));
        ids.max(floor)
    }

    /// The length of the next block to ask for.
    fn next_block_len(&self, inner: &Inner) -> u64 {
        match (self.options.adaptive, self.increment) {
            (Some((max_block, life)), Increment::PerCall) => match inner.rate {
                Some(rate) => {
                    ((rate * life.as_secs_f64()).ceil() as u64).clamp(self.block, max_block)
                }
                None => self.block,
            },
            _ => self.block,
        }
    }

    /// For a fetch task: checks and buffers what `fetch` brought; `floor` is what the floor
    /// query returned just before the fetch was sent, if there is one: every block must start
    /// above it. `Err` when it failed closed (the task's slot is then given back).
    pub(crate) fn land(
        &self,
        fetch: &Fetch,
        starts: Vec<i64>,
        latency: Duration,
        floor: Option<i64>,
    ) -> Result<(), ()> {
        let mut inner = self.lock();
        inner.flights.retain(|f| f.id != fetch.id);
        if inner.fatal.is_some() {
            // Failed closed while this fetch was out: its blocks are never served.
            inner.tasks -= 1;
            return Err(());
        }
        inner.fetches += 1;
        inner.latency_last = Some(latency);
        inner.latency_sum += latency;
        inner.latency_max = inner.latency_max.max(latency);
        let now = Instant::now();
        let halvings = now.saturating_duration_since(inner.peak_at).as_secs_f64()
            / PEAK_HALF_LIFE.as_secs_f64();
        inner.latency_peak = latency.max(inner.latency_peak.mul_f64(0.5f64.powf(halvings)));
        inner.peak_at = now;
        let average = if fetch.overlapping {
            &mut inner.overlapping_latency
        } else {
            &mut inner.solo_latency
        };
        *average = Some(average.map_or(latency, |a| a.mul_f64(0.75) + latency.mul_f64(0.25)));
        let verdict = self.blocks_of(fetch, &starts).and_then(|blocks| {
            self.check(&inner, fetch, floor, &blocks)?;
            Ok(blocks)
        });
        let result = match verdict {
            Ok(blocks) => {
                inner.failing = false;
                if let Call::AllocateBlocks(..) = fetch.call {
                    inner.per_call = inner.per_call.max(blocks.len() as u64);
                }
                if let Some(floor) = floor {
                    inner.highest = Some(inner.highest.map_or(floor, |h| h.max(floor)));
                }
                self.accept(&mut inner, blocks);
                self.stage(&mut inner, false);
                Ok(())
            }
            Err(err) => {
                self.fail_closed(&mut inner, err);
                inner.tasks -= 1;
                Err(())
            }
        };
        drop(inner);
        self.notify.notify_waiters();
        result
    }

    /// The blocks `starts` stand for, ascending; each must lie in `1..=i64::MAX`.
    fn blocks_of(&self, fetch: &Fetch, starts: &[i64]) -> Result<Vec<Block>, Error> {
        let mut blocks = Vec::with_capacity(starts.len());
        match fetch.call {
            Call::Allocate(size) => {
                let start = starts.first().copied().unwrap_or(0);
                self.in_range(start, size)?;
                // One step of a table counter, split into the blocks it was asked for.
                for k in 0..fetch.expected {
                    blocks.push(Block {
                        start: start + (k * fetch.len) as i64,
                        len: fetch.len,
                    });
                }
            }
            Call::AllocateBlocks(size, _) => {
                for &start in starts {
                    self.in_range(start, size)?;
                    blocks.push(Block { start, len: size });
                }
                blocks.sort_unstable_by_key(|b| b.start);
            }
        }
        Ok(blocks)
    }

    fn in_range(&self, start: i64, len: u64) -> Result<(), Error> {
        let fits = i64::try_from(len - 1)
            .ok()
            .and_then(|span| start.checked_add(span))
            .is_some();
        if start < 1 || !fits {
            return Err(ErrorKind::HiLoBlockOutOfRange {
                counter: self.counter.clone(),
                start,
                len,
            }
            .into());
        }
        Ok(())
    }

    /// The counter never goes backwards: every block lies above the highest ID seen when its
    /// fetch was sent and above the floor read just before (what other processes already
    /// handed out: the only check that catches a counter set back below another process's
    /// blocks), and overlaps neither another block of the same fetch nor one that arrived
    /// while the fetch was out.
    fn check(
        &self,
        inner: &Inner,
        fetch: &Fetch,
        floor: Option<i64>,
        blocks: &[Block],
    ) -> Result<(), Error> {
        let backwards = |start: i64, highest: i64| -> Error {
            ErrorKind::HiLoCounterWentBackwards {
                counter: self.counter.clone(),
                start,
                highest,
            }
            .into()
        };
        let last = |b: &Block| b.start + (b.len - 1) as i64;
        // `None` sorts below every `Some`.
        let mut below: Option<i64> = fetch.floor.max(floor);
        // A sequence's blocks lie on one grid; one off it means its increment or value was
        // changed while this ran, and its blocks may meet other processes' (or counters').
        let grid = self.grid(inner).or_else(|| match self.increment {
            Increment::Fixed(_) => blocks.first().map(|b| (b.start, self.block)),
            Increment::PerCall => None,
        });
        for block in blocks {
            if let Some(highest) = below
                && block.start <= highest
            {
                return Err(backwards(block.start, highest));
            }
            if let Some((origin, step)) = grid
                && (i128::from(block.start) - i128::from(origin)).rem_euclid(i128::from(step)) != 0
            {
                return Err(ErrorKind::HiLoBlockOffGrid {
                    counter: self.counter.clone(),
                    start: block.start,
                    origin,
                    step,
                }
                .into());
            }
            for other in inner.recent.iter().filter(|r| r.arrived > fetch.sent_after) {
                if block.start <= last(&other.block) && other.block.start <= last(block) {
                    return Err(backwards(block.start, last(&other.block)));
                }
            }
            below = Some(last(block));
        }
        Ok(())
    }

    /// Buffers checked blocks in ascending order; a block below one already in use is dropped.
    fn accept(&self, inner: &mut Inner, blocks: Vec<Block>) {
        if let (Increment::Fixed(_), None, Some(first)) =
            (self.increment, inner.grid_origin, blocks.first())
        {
            inner.grid_origin = Some(first.start);
        }
        for block in blocks {
            inner.blocks_fetched += 1;
            inner.arrivals += 1;
            let last = block.start + (block.len - 1) as i64;
            inner.highest = Some(inner.highest.map_or(last, |h| h.max(last)));
            let spare = Spare {
                block,
                arrived: inner.arrivals,
            };
            if !inner.flights.is_empty() {
                inner.recent.push(spare);
            }
            if inner.frontier().is_some_and(|f| block.start <= f) {
                inner.blocks_discarded += 1;
                continue;
            }
            let at = inner
                .spares
                .partition_point(|s| s.block.start < block.start);
            inner.spares.insert(at, spare);
        }
        // Only blocks that arrived after the oldest fetch still out was sent matter.
        let oldest = inner.flights.iter().map(|f| f.sent_after).min();
        match oldest {
            Some(oldest) => inner.recent.retain(|r| r.arrived > oldest),
            None => inner.recent.clear(),
        }
    }

    /// Stops handing out IDs for good, including the ones already buffered.
    fn fail_closed(&self, inner: &mut Inner, err: Error) {
        inner.fatal = Some(err);
        inner.spares.clear();
        inner.recent.clear();
        // Past any staged epoch, so no lock-free switch can reach a buffered block any more.
        inner.issued_retired = self.issued(inner);
        inner.staged = None;
        inner.epoch += 2;
        self.cursor.force(inner.epoch, Block::EMPTY);
        inner.current = Block::EMPTY;
    }

    /// For a fetch task that is being dropped without finishing: its runtime shut down, or the
    /// source panicked (`panicked`). Gives its slot (and its fetch, if one was out) back.
    pub(crate) fn task_lost(&self, fetch: Option<u64>, panicked: bool) {
        let mut inner = self.lock();
        inner.tasks -= 1;
        if let Some(id) = fetch {
            inner.flights.retain(|f| f.id != id);
        }
        if panicked {
            inner.fetch_failures += 1;
            inner.last_error = Some(source_error(
                &self.counter,
                "the source panicked while fetching a block".into(),
            ));
        }
        drop(inner);
        // Waiters look again, and start a new task on their own runtime.
        self.notify.notify_waiters();
    }

    /// For a fetch task: a fetch failed.
    pub(crate) fn record_failure(&self, fetch: &Fetch, err: BoxError) {
        let mut inner = self.lock();
        inner.flights.retain(|f| f.id != fetch.id);
        inner.fetch_failures += 1;
        inner.failing = true;
        inner.last_error = Some(source_error(&self.counter, err));
    }

    pub(crate) fn count_caller_wait(&self) {
        self.lock().caller_waits += 1;
    }

    /// Whether the first block arrived (`Ok(true)`), not yet (`Ok(false)`), or it failed closed.
    pub(crate) fn started(&self) -> Result<bool, Error> {
        let inner = self.lock();
        match &inner.fatal {
            Some(err) => Err(err.clone()),
            None => Ok(inner.current.len > 0 || inner.buffered_blocks() > 0),
        }
    }

    pub(crate) fn unavailable(&self, waited: Duration) -> Error {
        let inner = self.lock();
        ErrorKind::HiLoUnavailable {
            counter: self.counter.clone(),
            waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            last_error: inner.last_error.clone(),
        }
        .into()
    }

    pub(crate) fn stats(&self) -> HiLoStats {
        let inner = self.lock();
        let (_, offset) = self.cursor.position();
        let in_current = offset.min(inner.current.len);
        let fetches = u32::try_from(inner.fetches).unwrap_or(u32::MAX);
        HiLoStats {
            counter: self.counter.clone(),
            ids_issued: inner.issued_retired + in_current,
            blocks_fetched: inner.blocks_fetched,
            fetches: inner.fetches,
            blocks_discarded: inner.blocks_discarded,
            fetch_failures: inner.fetch_failures,
            fetch_latency_last: inner.latency_last,
            fetch_latency_mean: (fetches > 0).then(|| inner.latency_sum / fetches),
            fetch_latency_max: (fetches > 0).then_some(inner.latency_max),
            fetches_in_flight: inner.flights.len(),
            caller_waits: inner.caller_waits,
            last_error: inner.fatal.clone().or_else(|| inner.last_error.clone()),
            buffered: inner.current.len - in_current + inner.buffered_blocks(),
            block_size: self.block,
            next_block_size: self.next_block_len(&inner),
            low_water: self.low_water(&inner),
            rate_per_second: inner.rate,
        }
    }
}

pub(crate) fn source_error(counter: &str, err: BoxError) -> Error {
    ErrorKind::HiLoSource {
        counter: counter.to_owned(),
        source: Arc::from(err),
    }
    .into()
}
