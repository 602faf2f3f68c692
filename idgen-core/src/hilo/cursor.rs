//! The lock-free part of the allocator: one packed atomic cursor over a small ring of published
//! blocks.
//!
//! The cursor is a `u64` holding `(epoch, offset)`: the low [`OFFSET_BITS`] bits count the IDs
//! taken from the block published under `epoch` (the high bits). Taking an ID is one
//! `fetch_add(1)` on the cursor; the block's start and length are then read from the ring slot of
//! that epoch, which is written only by the (mutex-serialised) installer, under a seqlock.
//!
//! * An offset at or past the block's length means "exhausted": the caller goes to the slow path.
//!   Overshooting is harmless; the slow path compacts the offset long before it could carry into
//!   the epoch bits.
//! * A slot that was rewritten for a later epoch while a reader was between its `fetch_add` and
//!   its slot read is detected (seqlock plus epoch check); that reader's ID is dropped (a gap,
//!   never a duplicate) and it tries again. A false match would need 2^24 block installs during
//!   that one read.

use std::ops::Range;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering, fence};

/// The largest block (and the largest `reserve`) the cursor can address.
pub(crate) const MAX_BLOCK: u64 = 1 << 32;
const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
const EPOCH_MASK: u64 = (1 << (64 - OFFSET_BITS)) - 1;
/// Overshoot beyond which the slow path resets an exhausted cursor's offset to the block length.
pub(crate) const COMPACT_AT: u64 = 1 << 39;
const SLOTS: usize = 4;
/// A slot trigger that never fires.
pub(crate) const NO_TRIGGER: u64 = u64::MAX;
/// The slot epoch while the slot is being rewritten (a full epoch never reaches it).
const WRITING: u64 = u64::MAX;

/// A block of IDs `[start, start + len)` with `len >= 1` (or `len == 0` for "nothing").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) start: i64,
    pub(crate) len: u64,
}

impl Block {
    pub(crate) const EMPTY: Block = Block { start: 0, len: 0 };

    /// The IDs `[start + from, start + from + n)`; the caller keeps `from + n <= len`.
    pub(crate) fn range(&self, from: u64, n: u64) -> Range<i64> {
        // len <= MAX_BLOCK and start + len - 1 <= i64::MAX were checked when the block was accepted.
        let first = self.start + from as i64;
        first..first + n as i64
    }
}

/// What one attempt on the fast path gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// An ID; `kick` is set for exactly one taker when the block crosses its low-water mark.
    Id { id: i64, kick: bool },
    /// The block of `epoch` (masked) is used up.
    Exhausted { epoch: u64, offset: u64 },
    /// The slot was rewritten under us; the ordinal is dropped, try again.
    Lost,
}

#[derive(Default)]
struct Slot {
    epoch: AtomicU64,
    start: AtomicI64,
    len: AtomicU64,
    trigger: AtomicU64,
}

pub(crate) struct Cursor {
    packed: AtomicU64,
    slots: [Slot; SLOTS],
    /// Ordinals dropped because their slot was rewritten (test builds only).
    #[cfg(test)]
    pub(crate) lost: AtomicU64,
}

fn pack(epoch: u64, offset: u64) -> u64 {
    ((epoch & EPOCH_MASK) << OFFSET_BITS) | offset
}

fn unpack(packed: u64) -> (u64, u64) {
    (packed >> OFFSET_BITS, packed & OFFSET_MASK)
}

impl Cursor {
    /// A cursor on epoch 0 with an empty block: every take is `Exhausted`.
    pub(crate) fn new() -> Self {
        let slots: [Slot; SLOTS] = Default::default();
        for slot in &slots[1..] {
            slot.epoch.store(WRITING, Ordering::Relaxed);
        }
        slots[0].trigger.store(NO_TRIGGER, Ordering::Relaxed);
        Cursor {
            packed: AtomicU64::new(0),
            slots,
            #[cfg(test)]
            lost: AtomicU64::new(0),
        }
    }

    /// The fast path: one `fetch_add`, then a read of the published slot.
    #[inline]
    pub(crate) fn take(&self) -> Take {
        let (epoch, offset) = unpack(self.packed.fetch_add(1, Ordering::Acquire));
        let Some((block, trigger)) = self.read_slot(epoch) else {
            #[cfg(test)]
            self.lost.fetch_add(1, Ordering::Relaxed);
            return Take::Lost;
        };
        if offset < block.len {
            Take::Id {
                id: block.start + offset as i64,
                kick: offset == trigger,
            }
        } else {
            Take::Exhausted { epoch, offset }
        }
    }

    /// Takes exactly `n` IDs from the current block if it has them (a CAS loop, for `reserve`).
    pub(crate) fn take_exact(&self, n: u64) -> Option<Range<i64>> {
        let mut packed = self.packed.load(Ordering::Acquire);
        loop {
            let (epoch, offset) = unpack(packed);
            let (block, _) = self.read_slot(epoch)?;
            if offset >= block.len || block.len - offset < n {
                return None;
            }
            match self.packed.compare_exchange_weak(
                packed,
                packed + n,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(block.range(offset, n)),
                Err(now) => packed = now,
            }
        }
    }

    /// The masked epoch and offset now.
    pub(crate) fn position(&self) -> (u64, u64) {
        unpack(self.packed.load(Ordering::Acquire))
    }

    /// Seqlock read of the slot for `epoch` (masked); `None` if it holds another epoch.
    #[inline]
    fn read_slot(&self, epoch: u64) -> Option<(Block, u64)> {
        let slot = &self.slots[(epoch % SLOTS as u64) as usize];
        let before = slot.epoch.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Relaxed);
        let len = slot.len.load(Ordering::Relaxed);
        let trigger = slot.trigger.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let after = slot.epoch.load(Ordering::Relaxed);
        if before != after || before == WRITING || before & EPOCH_MASK != epoch {
            return None;
        }
        Some((Block { start, len }, trigger))
    }

    /// Publishes `block` as epoch `full_epoch` with `taken` IDs already handed out and returns
    /// the offset the previous block had reached. Only one caller at a time (the engine's mutex).
    pub(crate) fn publish(&self, full_epoch: u64, block: Block, taken: u64, trigger: u64) -> u64 {
        let slot = &self.slots[(full_epoch % SLOTS as u64) as usize];
        slot.epoch.store(WRITING, Ordering::Relaxed);
        fence(Ordering::Release);
        slot.start.store(block.start, Ordering::Relaxed);
        slot.len.store(block.len, Ordering::Relaxed);
        slot.trigger.store(trigger, Ordering::Relaxed);
        slot.epoch.store(full_epoch, Ordering::Release);
        let old = self.packed.swap(pack(full_epoch, taken), Ordering::AcqRel);
        unpack(old).1
    }

    /// Resets a far-overshot offset of an exhausted block back to its length, so the offset can
    /// never carry into the epoch bits. Only under the engine's mutex.
    pub(crate) fn compact(&self, epoch: u64, len: u64) {
        let mut packed = self.packed.load(Ordering::Acquire);
        loop {
            let (now_epoch, offset) = unpack(packed);
            if now_epoch != epoch & EPOCH_MASK || offset < COMPACT_AT {
                return;
            }
            match self.packed.compare_exchange_weak(
                packed,
                pack(epoch, len),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(now) => packed = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_cursor_is_exhausted() {
        let cursor = Cursor::new();
        assert_eq!(
            cursor.take(),
            Take::Exhausted {
                epoch: 0,
                offset: 0
            }
        );
    }

    #[test]
    fn takes_walk_the_published_block_then_report_exhaustion() {
        let cursor = Cursor::new();
        cursor.publish(1, Block { start: 10, len: 3 }, 0, 1);
        assert_eq!(
            cursor.take(),
            Take::Id {
                id: 10,
                kick: false
            }
        );
        assert_eq!(cursor.take(), Take::Id { id: 11, kick: true });
        assert_eq!(
            cursor.take(),
            Take::Id {
                id: 12,
                kick: false
            }
        );
        assert_eq!(
            cursor.take(),
            Take::Exhausted {
                epoch: 1,
                offset: 3
            }
        );
    }

    #[test]
    fn publish_reports_how_far_the_old_block_went() {
        let cursor = Cursor::new();
        cursor.publish(1, Block { start: 1, len: 5 }, 0, NO_TRIGGER);
        cursor.take();
        cursor.take();
        assert_eq!(
            cursor.publish(2, Block { start: 6, len: 5 }, 1, NO_TRIGGER),
            2
        );
        assert_eq!(cursor.take(), Take::Id { id: 7, kick: false });
    }

    #[test]
    fn take_exact_takes_only_a_range_that_fits() {
        let cursor = Cursor::new();
        cursor.publish(
            1,
            Block {
                start: 100,
                len: 10,
            },
            0,
            NO_TRIGGER,
        );
        assert_eq!(cursor.take_exact(4), Some(100..104));
        assert_eq!(cursor.take_exact(7), None);
        assert_eq!(cursor.take_exact(6), Some(104..110));
        assert_eq!(cursor.take_exact(1), None);
    }

    #[test]
    fn a_stale_slot_is_detected_not_misread() {
        let cursor = Cursor::new();
        cursor.publish(1, Block { start: 1, len: 5 }, 0, NO_TRIGGER);
        // Rewrite slot 1 for epoch 5 while the cursor still says epoch 1 (as if a reader stalled).
        let slot = &cursor.slots[1];
        slot.epoch.store(5, Ordering::Release);
        assert_eq!(cursor.take(), Take::Lost);
    }

    #[test]
    fn compaction_keeps_the_epoch_and_stops_overshoot() {
        let cursor = Cursor::new();
        cursor.publish(3, Block { start: 1, len: 2 }, 0, NO_TRIGGER);
        cursor
            .packed
            .store(pack(3, COMPACT_AT + 5), Ordering::Relaxed);
        cursor.compact(3, 2);
        assert_eq!(cursor.position(), (3, 2));
    }
}
