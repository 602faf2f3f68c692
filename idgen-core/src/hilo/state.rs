//! The slow-path state of a [`HiLo`](super::HiLo): the buffer of fetched blocks, block
//! validation, the low-water mark and the bookkeeping behind `stats()`. Everything here runs
//! under one mutex that is never held across an `.await`.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::builder::Options;
use super::cursor::{Block, COMPACT_AT, Cursor};
use super::refill;
use super::source::{BoxError, DynSource, Increment};
use super::stats::HiLoStats;
use crate::Error;

/// Everything one `HiLo` and its clones share.
pub(crate) struct Shared {
    pub(crate) cursor: Cursor,
    inner: Mutex<Inner>,
    pub(crate) notify: Notify,
    refilling: AtomicBool,
    pub(crate) source: Arc<dyn DynSource>,
    options: Options,
    increment: Increment,
    /// The block size in force (the configured one, or the database's when adopted).
    block: u64,
    pub(crate) counter: String,
    runtime: Handle,
    me: Weak<Shared>,
}

struct Inner {
    /// The full epoch of the block the cursor serves (as last synced; the cursor may have
    /// switched to `staged` since, see [`Shared::sync`]).
    epoch: u64,
    current: Block,
    /// The block in the slot of `epoch + 1`, which any caller may switch to without the mutex.
    staged: Option<Block>,
    /// Fetched blocks waiting behind `staged`, ascending.
    spares: VecDeque<Block>,
    /// The highest ID of every block accepted so far (regression check).
    highest: Option<i64>,
    /// IDs handed out from blocks no longer current.
    issued_retired: u64,
    /// Consumption rate, IDs per second (moving average of samples taken at refills).
    rate: Option<f64>,
    sampled_at: Instant,
    sampled_issued: u64,
    /// The largest pending `reserve(n)` no buffered block can satisfy.
    reserve_request: u64,
    blocks_fetched: u64,
    fetch_failures: u64,
    latency_last: Option<Duration>,
    latency_sum: Duration,
    latency_max: Duration,
    /// A peak that decays by a quarter per fetch: recent latency spikes count, old ones fade.
    latency_peak: Duration,
    caller_waits: u64,
    last_error: Option<Error>,
    /// Set once the generator failed closed; every later call returns it.
    fatal: Option<Error>,
}

impl Inner {
    fn buffered_blocks(&self) -> u64 {
        self.staged.map_or(0, |b| b.len) + self.spares.iter().map(|b| b.len).sum::<u64>()
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
        runtime: Handle,
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
                issued_retired: 0,
                rate: None,
                sampled_at: Instant::now(),
                sampled_issued: 0,
                reserve_request: 0,
                blocks_fetched: 0,
                fetch_failures: 0,
                latency_last: None,
                latency_sum: Duration::ZERO,
                latency_max: Duration::ZERO,
                latency_peak: Duration::ZERO,
                caller_waits: 0,
                last_error: None,
                fatal: None,
            }),
            notify: Notify::new(),
            refilling: AtomicBool::new(false),
            source,
            options,
            increment,
            block,
            counter,
            runtime,
            me: me.clone(),
        })
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

    /// Stages the next spare block, if none is staged, so the next switch needs no lock.
    fn stage(&self, inner: &mut Inner) {
        if inner.staged.is_some() || inner.fatal.is_some() {
            return;
        }
        let Some(block) = inner.spares.pop_front() else {
            return;
        };
        let trigger = self.trigger_for(inner, block, 0);
        self.cursor.stage(inner.epoch + 1, block, trigger);
        inner.staged = Some(block);
    }

    /// The offset at which taking an ID from `block` starts the refill task: where the buffer
    /// behind it drops to the low-water mark, and at the latest halfway, so the task stages the
    /// block after it in time. Never below `taken`.
    fn trigger_for(&self, inner: &Inner, block: Block, taken: u64) -> u64 {
        let halfway = (block.len - 1) / 2;
        let behind = inner.buffered_blocks();
        let low_water = self.low_water(inner);
        let at = match low_water.checked_sub(behind) {
            Some(deficit) if deficit > 0 => (block.len - 1).saturating_sub(deficit).min(halfway),
            _ => halfway,
        };
        at.max(taken)
    }

    /// Sets the current block's trigger where its remaining IDs plus the buffered blocks drop
    /// to the low-water mark as known now (rate and latency change after a block was staged).
    fn rearm(&self, inner: &Inner) {
        if !self.options.prefetch || inner.current.len == 0 {
            return;
        }
        let Some(deficit) = self.low_water(inner).checked_sub(inner.buffered_blocks()) else {
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
            Increment::PerCall => super::cursor::MAX_BLOCK,
        }
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.options.timeout
    }

    pub(crate) fn backoff(&self) -> (Duration, Duration) {
        (self.options.backoff_initial, self.options.backoff_max)
    }

    /// Starts the refill task unless it is already running (single flight).
    pub(crate) fn kick(&self) {
        if !self.refilling.swap(true, Ordering::AcqRel) {
            self.runtime
                .spawn(refill::run(self.me.clone(), Instant::now()));
        }
    }

    /// The slow path of taking an ID: the block of `epoch` is used up and nothing was staged.
    pub(crate) fn advance(&self, epoch: u64, _offset: u64) -> Advance {
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
        self.stage(&mut inner);
        if inner.staged.is_some() {
            return Advance::Retry;
        }
        drop(inner);
        self.kick();
        Advance::Empty
    }

    /// One attempt at `n` contiguous IDs.
    pub(crate) fn reserve(&self, n: u64) -> Reserved {
        let mut inner = self.lock();
        loop {
            if let Some(err) = &inner.fatal {
                return Reserved::Fatal(err.clone());
            }
            if let Some(range) = self.cursor.take_exact(n) {
                // The range may have jumped over the block's trigger.
                drop(inner);
                self.kick();
                return Reserved::Got(range);
            }
            self.stage(&mut inner);
            let Some(staged) = inner.staged else { break };
            // A fresh block: the rest of the current one is skipped (a gap), so IDs keep
            // increasing. A staged block too small for `n` is skipped whole.
            let taken = if staged.len >= n {
                n
            } else if inner.spares.iter().any(|b| b.len >= n) {
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
                        self.stage(&mut inner);
                        drop(inner);
                        self.kick();
                        return Reserved::Got(staged.range(0, n));
                    }
                    while inner.spares.front().is_some_and(|b| b.len < n) {
                        inner.spares.pop_front();
                    }
                }
                // A caller switched to the staged block meanwhile: look again.
                None => self.sync(&mut inner),
            }
        }
        inner.reserve_request = inner.reserve_request.max(n);
        drop(inner);
        self.kick();
        Reserved::Wait
    }

    fn latency_estimate(inner: &Inner) -> Option<Duration> {
        let last = inner.latency_last?;
        let count = u32::try_from(inner.blocks_fetched)
            .unwrap_or(u32::MAX)
            .max(1);
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
        ids.max(self.options.min_low_water)
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

    /// Whether the buffer wants another block, and how large.
    fn next_request(&self, inner: &Inner) -> Option<u64> {
        if inner.fatal.is_some() {
            return None;
        }
        let len = self.next_block_len(inner);
        let satisfied = |b: &Block| b.len >= inner.reserve_request;
        if inner.reserve_request > 0
            && !inner.staged.iter().any(satisfied)
            && !inner.spares.iter().any(satisfied)
        {
            return Some(match self.increment {
                Increment::PerCall => len.max(inner.reserve_request),
                Increment::Fixed(_) => self.block,
            });
        }
        if inner.spares.len() + usize::from(inner.staged.is_some())
            >= self.options.max_buffered_blocks
        {
            return None;
        }
        let (_, offset) = self.cursor.position();
        let available = inner.current.len.saturating_sub(offset) + inner.buffered_blocks();
        if available == 0 || (self.options.prefetch && available <= self.low_water(inner)) {
            Some(len)
        } else {
            None
        }
    }

    /// For the refill task: the next block length to fetch, or `None` after marking the task
    /// stopped (under the mutex, so a caller that then finds the buffer empty starts a new one).
    pub(crate) fn next_request_or_stop(&self) -> Option<u64> {
        let mut inner = self.lock();
        self.sample_rate(&mut inner);
        self.stage(&mut inner);
        let request = self.next_request(&inner);
        if request.is_none() {
            self.rearm(&inner);
            self.refilling.store(false, Ordering::Release);
        }
        request
    }

    /// For the refill task: checks and buffers a fetched block. `Err` when it failed closed.
    pub(crate) fn accept(&self, start: i64, len: u64, latency: Duration) -> Result<(), ()> {
        let mut inner = self.lock();
        inner.blocks_fetched += 1;
        inner.latency_last = Some(latency);
        inner.latency_sum += latency;
        inner.latency_max = inner.latency_max.max(latency);
        inner.latency_peak = latency.max(inner.latency_peak.mul_f64(0.75));
        let last = i64::try_from(len - 1)
            .ok()
            .and_then(|span| start.checked_add(span));
        let verdict = match (last, inner.highest) {
            (Some(_), _) if start < 1 => Err(self.out_of_range(start, len)),
            (None, _) => Err(self.out_of_range(start, len)),
            (Some(_), Some(highest)) if start <= highest => Err(Error::HiLoCounterWentBackwards {
                counter: self.counter.clone(),
                start,
                highest,
            }),
            (Some(last), _) => Ok(last),
        };
        let result = match verdict {
            Ok(last) => {
                inner.highest = Some(last);
                inner.spares.push_back(Block { start, len });
                self.stage(&mut inner);
                Ok(())
            }
            Err(err) => {
                self.fail_closed(&mut inner, err);
                Err(())
            }
        };
        drop(inner);
        self.notify.notify_waiters();
        result
    }

    fn out_of_range(&self, start: i64, len: u64) -> Error {
        Error::HiLoBlockOutOfRange {
            counter: self.counter.clone(),
            start,
            len,
        }
    }

    /// Stops handing out IDs for good, including the ones already buffered.
    fn fail_closed(&self, inner: &mut Inner, err: Error) {
        inner.fatal = Some(err);
        inner.spares.clear();
        // Past any staged epoch, so no lock-free switch can reach a buffered block any more.
        inner.issued_retired = self.issued(inner);
        inner.staged = None;
        inner.epoch += 2;
        self.cursor.force(inner.epoch, Block::EMPTY);
        inner.current = Block::EMPTY;
    }

    /// For the refill task: it is unwinding from a panic in the source.
    pub(crate) fn task_panicked(&self) {
        let mut inner = self.lock();
        inner.fetch_failures += 1;
        inner.last_error = Some(source_error(
            &self.counter,
            "the source panicked while fetching a block".into(),
        ));
        self.refilling.store(false, Ordering::Release);
    }

    /// For the refill task: a fetch failed.
    pub(crate) fn record_failure(&self, err: BoxError) {
        let mut inner = self.lock();
        inner.fetch_failures += 1;
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
        Error::HiLoUnavailable {
            counter: self.counter.clone(),
            waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            last_error: inner.last_error.clone().map(Box::new),
        }
    }

    pub(crate) fn stats(&self) -> HiLoStats {
        let inner = self.lock();
        let (_, offset) = self.cursor.position();
        let in_current = offset.min(inner.current.len);
        let fetched = u32::try_from(inner.blocks_fetched).unwrap_or(u32::MAX);
        HiLoStats {
            counter: self.counter.clone(),
            ids_issued: inner.issued_retired + in_current,
            blocks_fetched: inner.blocks_fetched,
            fetch_failures: inner.fetch_failures,
            fetch_latency_last: inner.latency_last,
            fetch_latency_mean: (fetched > 0).then(|| inner.latency_sum / fetched),
            fetch_latency_max: (fetched > 0).then_some(inner.latency_max),
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
    Error::HiLoSource {
        counter: counter.to_owned(),
        source: Arc::from(err),
    }
}
