//! The lock-free part of the allocator: one packed atomic cursor over a small ring of published
//! blocks.
//!
//! The cursor is a `u64` holding `(epoch, offset)`: the low [`OFFSET_BITS`] bits count the IDs
//! taken from the block published under `epoch` (the high bits). Taking an ID is one
//! `fetch_add(1)` on the cursor; the block's start and length are then read from the ring slot of
//! that epoch, which is written only by the (mutex-serialised) installer, under a seqlock.
//!
//! * The next block is *staged* in the slot of the next epoch before the current one runs out;
//!   the caller that finds the current block used up moves the cursor to it with one CAS
//!   ([`Cursor::switch`]), so a block boundary takes no lock either. Only when nothing is staged
//!   does a caller go to the engine's mutex.
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
/// The slot epoch while the slot is being rewritten (above every masked epoch).
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

    /// The fast path: one `fetch_add`, then a read of the published slot. The ID when the
    /// ordinal lies in the block and is not its trigger; else the fetched cursor word, which
    /// [`resolve`](Self::resolve) turns into what the take gave (out of line, so the path of an
    /// ID builds no [`Take`] and passes nothing through memory).
    #[inline(always)]
    pub(crate) fn take_id(&self) -> Result<i64, u64> {
        let packed = self.packed.fetch_add(1, Ordering::Acquire);
        let (epoch, offset) = unpack(packed);
        match self.read_slot(epoch) {
            Some((block, trigger)) if offset < block.len && offset != trigger => {
                Ok(block.start + offset as i64)
            }
            _ => Err(packed),
        }
    }

    /// What the ordinal `packed` (fetched by [`take_id`](Self::take_id), which did not give an
    /// ID) gave: the slot is read again, and says the same. A block's start and length never
    /// change under its epoch, and a slot rewritten for a later epoch since stays so (`Lost`);
    /// only the trigger may have been moved by [`rearm`](Self::rearm), which readers may see
    /// either side of anyway.
    #[cold]
    #[inline(never)]
    pub(crate) fn resolve(&self, packed: u64) -> Take {
        self.classify(packed)
    }

    /// One `fetch_add`, then a read of the published slot (the slow path's loop, and tests).
    pub(crate) fn take(&self) -> Take {
        self.classify(self.packed.fetch_add(1, Ordering::Acquire))
    }

    /// What the ordinal `packed` gives, from the slot of its epoch.
    fn classify(&self, packed: u64) -> Take {
        let (epoch, offset) = unpack(packed);
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

    /// `full_epoch` as the cursor stores it.
    pub(crate) fn masked(full_epoch: u64) -> u64 {
        full_epoch & EPOCH_MASK
    }

    /// The masked epoch and offset now.
    pub(crate) fn position(&self) -> (u64, u64) {
        unpack(self.packed.load(Ordering::Acquire))
    }

    /// Seqlock read of the slot for `epoch` (masked); `None` if it holds another epoch or is
    /// being rewritten. A slot holds its masked epoch, and `WRITING` is no masked epoch, so two
    /// comparisons check all three conditions (unchanged, not being written, this epoch).
    #[inline]
    fn read_slot(&self, epoch: u64) -> Option<(Block, u64)> {
        let slot = &self.slots[(epoch % SLOTS as u64) as usize];
        let before = slot.epoch.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Relaxed);
        let len = slot.len.load(Ordering::Relaxed);
        let trigger = slot.trigger.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        let after = slot.epoch.load(Ordering::Relaxed);
        if before != epoch || after != epoch {
            return None;
        }
        Some((Block { start, len }, trigger))
    }

    /// Writes `block` into the slot of `full_epoch` (the epoch after the current one) without
    /// touching the cursor: from then on, a caller that finds the current block used up may
    /// switch to it with [`switch`](Self::switch). Only under the engine's mutex, and only for a
    /// slot no switch can currently target.
    pub(crate) fn stage(&self, full_epoch: u64, block: Block, trigger: u64) {
        let slot = &self.slots[(full_epoch % SLOTS as u64) as usize];
        slot.epoch.store(WRITING, Ordering::Relaxed);
        fence(Ordering::Release);
        slot.start.store(block.start, Ordering::Relaxed);
        slot.len.store(block.len, Ordering::Relaxed);
        slot.trigger.store(trigger, Ordering::Relaxed);
        slot.epoch
            .store(Self::masked(full_epoch), Ordering::Release);
    }

    /// The lock-free block switch: the block of `epoch` (masked) is used up; if the next epoch's
    /// block is staged, move the cursor to it with one CAS and take its first ID. `None` when
    /// nothing is staged; `Some(Take::Lost)` when the cursor already moved on (take again).
    pub(crate) fn switch(&self, epoch: u64) -> Option<Take> {
        let next = (epoch + 1) & EPOCH_MASK;
        let (block, trigger) = self.read_slot(next)?;
        if block.len == 0 {
            return None;
        }
        let mut packed = self.packed.load(Ordering::Acquire);
        loop {
            if unpack(packed).0 != epoch {
                return Some(Take::Lost);
            }
            match self.packed.compare_exchange_weak(
                packed,
                pack(next, 1),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Some(Take::Id {
                        id: block.start,
                        kick: trigger == 0,
                    });
                }
                Err(now) => packed = now,
            }
        }
    }

    /// Moves the cursor from `full_epoch` to the staged `full_epoch + 1` with `taken` IDs of it
    /// already handed out, whatever is left of the current block (skipped). Returns the offset
    /// the current block had reached, or `None` if the cursor is no longer on `full_epoch` (a
    /// lock-free [`switch`](Self::switch) got there first). Only under the engine's mutex.
    pub(crate) fn claim(&self, full_epoch: u64, taken: u64) -> Option<u64> {
        let mut packed = self.packed.load(Ordering::Acquire);
        loop {
            let (epoch, offset) = unpack(packed);
            if epoch != full_epoch & EPOCH_MASK {
                return None;
            }
            match self.packed.compare_exchange_weak(
                packed,
                pack(full_epoch + 1, taken),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(offset),
                Err(now) => packed = now,
            }
        }
    }

    /// Stages `block` as `full_epoch` and moves the cursor there unconditionally (used to stop
    /// the generator: `full_epoch` must be past any staged epoch). Only under the engine's mutex.
    pub(crate) fn force(&self, full_epoch: u64, block: Block) {
        self.stage(full_epoch, block, NO_TRIGGER);
        self.packed.swap(pack(full_epoch, 0), Ordering::AcqRel);
    }

    /// Moves the trigger of the block in `full_epoch`'s slot (the current one). Readers may see
    /// the old or the new trigger; either is consistent. Only under the engine's mutex.
    pub(crate) fn rearm(&self, full_epoch: u64, trigger: u64) {
        let slot = &self.slots[(full_epoch % SLOTS as u64) as usize];
        if slot.epoch.load(Ordering::Acquire) == Self::masked(full_epoch) {
            slot.trigger.store(trigger, Ordering::Relaxed);
        }
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

    /// The next take finds the block of `epoch` used up at `offset`.
    fn assert_exhausted(cursor: &Cursor, epoch: u64, offset: u64) {
        assert_eq!(cursor.take(), Take::Exhausted { epoch, offset });
    }

    #[test]
    fn a_fresh_cursor_is_exhausted() {
        assert_exhausted(&Cursor::new(), 0, 0);
    }

    #[test]
    fn takes_walk_the_published_block_then_report_exhaustion() {
        let cursor = Cursor::new();
        cursor.force(1, Block { start: 10, len: 3 });
        cursor.stage(1, Block { start: 10, len: 3 }, 1);
        // The trigger is the second ID: its take asks for the next block.
        for (id, kick) in [(10, false), (11, true), (12, false)] {
            assert_eq!(cursor.take(), Take::Id { id, kick });
        }
        assert_exhausted(&cursor, 1, 3);
    }

    #[test]
    fn a_staged_block_is_switched_to_lock_free_exactly_once() {
        let cursor = Cursor::new();
        cursor.force(1, Block { start: 1, len: 2 });
        assert!(matches!(cursor.take(), Take::Id { id: 1, .. }));
        assert!(matches!(cursor.take(), Take::Id { id: 2, .. }));
        let Take::Exhausted { epoch, .. } = cursor.take() else {
            panic!("should be used up")
        };
        assert_eq!(cursor.switch(epoch), None, "nothing staged yet");
        cursor.stage(2, Block { start: 10, len: 5 }, 0);
        assert_eq!(cursor.switch(epoch), Some(Take::Id { id: 10, kick: true }));
        // A second caller that saw the same exhausted epoch does not switch again.
        assert_eq!(cursor.switch(epoch), Some(Take::Lost));
        assert_eq!(
            cursor.take(),
            Take::Id {
                id: 11,
                kick: false
            }
        );
    }

    #[test]
    fn claim_skips_the_rest_and_reports_the_offset_reached() {
        let cursor = Cursor::new();
        cursor.force(1, Block { start: 1, len: 5 });
        cursor.take();
        cursor.take();
        cursor.stage(2, Block { start: 6, len: 5 }, NO_TRIGGER);
        assert_eq!(cursor.claim(1, 3), Some(2));
        assert_eq!(cursor.take(), Take::Id { id: 9, kick: false });
        assert_eq!(cursor.claim(1, 0), None, "the cursor is on epoch 2 now");
    }

    #[test]
    fn take_exact_takes_only_a_range_that_fits() {
        let cursor = Cursor::new();
        cursor.force(
            1,
            Block {
                start: 100,
                len: 10,
            },
        );
        assert_eq!(cursor.take_exact(4), Some(100..104));
        assert_eq!(cursor.take_exact(7), None);
        assert_eq!(cursor.take_exact(6), Some(104..110));
        assert_eq!(cursor.take_exact(1), None);
    }

    #[test]
    fn a_stale_slot_is_detected_not_misread() {
        let cursor = Cursor::new();
        cursor.force(1, Block { start: 1, len: 5 });
        // Rewrite slot 1 for epoch 5 while the cursor still says epoch 1 (as if a reader stalled).
        let slot = &cursor.slots[1];
        slot.epoch.store(5, Ordering::Release);
        assert_eq!(cursor.take(), Take::Lost);
    }

    #[test]
    fn compaction_keeps_the_epoch_and_stops_overshoot() {
        let cursor = Cursor::new();
        cursor.force(3, Block { start: 1, len: 2 });
        cursor
            .packed
            .store(pack(3, COMPACT_AT + 5), Ordering::Relaxed);
        cursor.compact(3, 2);
        assert_eq!(cursor.position(), (3, 2));
    }

    /// Threads taking IDs while another stages tiny blocks as fast as they are switched to:
    /// switches, stale slots and lost ordinals all happen, and no ID is ever taken twice.
    #[test]
    fn racing_takers_and_a_stager_never_take_an_id_twice() {
        use std::sync::atomic::AtomicBool;
        let cursor = Cursor::new();
        let done = AtomicBool::new(false);
        let blocks = 30_000u64;
        let mut taken: Vec<i64> = std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut start = 1i64;
                for epoch in 1..=blocks {
                    let len = 1 + epoch % 3;
                    cursor.stage(epoch, Block { start, len }, NO_TRIGGER);
                    start += len as i64;
                    // Wait until a taker switched to it before staging the next one.
                    while cursor.position().0 != Cursor::masked(epoch) {
                        std::thread::yield_now();
                    }
                }
                done.store(true, Ordering::Release);
            });
            let takers: Vec<_> = (0..3)
                .map(|_| {
                    scope.spawn(|| {
                        let mut got = Vec::new();
                        while !done.load(Ordering::Acquire) {
                            match cursor.take() {
                                Take::Id { id, .. } => got.push(id),
                                Take::Lost => {}
                                Take::Exhausted { epoch, .. } => match cursor.switch(epoch) {
                                    Some(Take::Id { id, .. }) => got.push(id),
                                    _ => std::thread::yield_now(),
                                },
                            }
                        }
                        got
                    })
                })
                .collect();
            takers.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        let total = taken.len();
        taken.sort_unstable();
        taken.dedup();
        assert_eq!(taken.len(), total, "an ID was taken twice");
        // Every block was switched to, so its first ID was taken.
        assert!(total as u64 >= blocks, "{total}");
        let last = (1..=blocks).map(|e| 1 + e % 3).sum::<u64>() as i64;
        assert!(taken.iter().all(|&id| (1..=last).contains(&id)));
    }
}
