//! [`Layout::plan`]: the layout for a node count, a rate and a lifetime, within a bit budget.
//!
//! ```
//! use idgen_core::snowflake::plan::Requirements;
//! use idgen_core::Layout;
//!
//! // 1,024 nodes, 100,000 IDs per second each, for 50 years from 2026-01-01, in 63 bits.
//! let needs = Requirements::new(1024, 100_000, 50).with_epoch_ms(1_767_225_600_000);
//! let plan = Layout::plan(&needs)?;
//! let layout = plan.layout;
//! assert!(layout.node_capacity() >= 1024);
//! assert!(layout.ids_per_second() >= 100_000);
//! assert!(layout.lifetime_years() >= 50.0);
//! // 1 ms ticks, 10 node bits, 7 sequence bits (128 per ms), and the 5 bits to spare went to
//! // the timestamp: 41 + 5.
//! assert_eq!((layout.unit_ms(), layout.node_bits(), layout.sequence_bits()), (1, 10, 7));
//! assert_eq!((plan.narrowest.timestamp_bits(), layout.timestamp_bits()), (41, 46));
//!
//! // Within 53 bits (IDs that JavaScript keeps exact) it cannot be done; the error says by
//! // how much, and what would fit.
//! let err = Layout::plan(&needs.with_max_bits(53)).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "53 bits cannot hold 1024 nodes × 100000 IDs/s per node for 50 years: that needs 58 bits \
//!      (node 10 + sequence 7 + timestamp 41, 1 ms ticks), 5 more than the 53 allowed; within 53 \
//!      bits: 1024 nodes × 100000 IDs/s last at most 2 years, 1024 nodes for 50 years allow at \
//!      most 5574 IDs/s per node, 100000 IDs/s for 50 years allow at most 32 nodes"
//! );
//! # Ok::<(), idgen_core::snowflake::plan::PlanError>(())
//! ```
//!
//! How a layout is chosen:
//!
//! 1. The node field gets the fewest bits that number `nodes` nodes (1 node: 0 bits).
//! 2. For each tick of [`PREFERRED_UNITS_MS`] (1 ms, 10 ms, 100 ms, 1 s), the sequence gets the
//!    fewest bits that issue `rate_per_node` IDs a second and the timestamp the fewest that
//!    last `years`. The unit that needs the fewest bits in all wins; on a tie, the finer one (a
//!    generator that uses up a tick's sequence waits for the next tick, and IDs carry their
//!    time to the tick). If none of these fits within `max_bits`, every other whole number of
//!    milliseconds is considered, so a refusal means that no [`Layout`] at all meets the three
//!    within the bits.
//! 3. The bits left over up to `max_bits` go to the timestamp: when it runs out, every node
//!    stops issuing at once, whereas a rate that is too low only makes a generator wait, and
//!    the node count is bounded by the fleet. (Up to the last instant an `i64` of milliseconds
//!    holds; any bits beyond that stay unused.)
//!
//! A year is 365.2425 days ([`YEAR_MS`]), the Gregorian calendar's average.

use crate::snowflake::Layout;

pub(crate) mod requirements;

pub use requirements::{PlanError, Requirements, TooWide, YEAR_MS};

/// The tick lengths the planner tries first, finest first: 1 ms (Twitter), 10 ms (Sonyflake),
/// 100 ms and 1 s.
///
/// ```
/// assert_eq!(idgen_core::snowflake::plan::PREFERRED_UNITS_MS, [1, 10, 100, 1000]);
/// ```
pub const PREFERRED_UNITS_MS: [u32; 4] = [1, 10, 100, 1000];

impl Requirements {
    /// Whether `layout` meets these requirements: its epoch, and its
    /// [`node_capacity`](Layout::node_capacity), [`ids_per_second`](Layout::ids_per_second),
    /// [`lifetime_ms`](Layout::lifetime_ms) and [`total_bits`](Layout::total_bits).
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::Requirements};
    /// let needs = Requirements::new(128, 25_600, 87).with_max_bits(53).with_epoch_ms(1_767_225_600_000);
    /// assert!(needs.is_met_by(&Layout::JS_SAFE));
    /// assert!(!needs.with_max_bits(52).is_met_by(&Layout::JS_SAFE));
    /// ```
    pub fn is_met_by(&self, layout: &Layout) -> bool {
        layout.epoch_ms() == self.epoch_ms
            && layout.total_bits() <= self.max_bits
            && layout.node_capacity() >= self.nodes
            && layout.ids_per_second() >= self.rate_per_node
            && layout.lifetime_ms() >= self.lifetime_ms()
    }
}

/// A planned layout: what [`Layout::plan`] returns.
///
/// ```
/// use idgen_core::{Layout, snowflake::plan::Requirements};
/// let plan = Layout::plan(&Requirements::new(128, 25_600, 80).with_max_bits(53).with_epoch_ms(1_767_225_600_000))?;
/// assert_eq!(plan.layout, Layout::JS_SAFE);
/// assert_eq!(plan.spare_bits(), 0);
/// # Ok::<(), idgen_core::snowflake::plan::PlanError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// The layout: [`narrowest`](Plan::narrowest) with the spare bits added to the timestamp.
    pub layout: Layout,
    /// The narrowest layout with the same tick that meets the requirements (no spare bits).
    pub narrowest: Layout,
}

impl Plan {
    /// The bits added to the timestamp beyond what the requirements need.
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::Requirements};
    /// let plan = Layout::plan(&Requirements::new(1024, 100_000, 50).with_epoch_ms(0))?;
    /// assert_eq!(plan.spare_bits(), 5);
    /// # Ok::<(), idgen_core::snowflake::plan::PlanError>(())
    /// ```
    pub fn spare_bits(&self) -> u8 {
        self.layout.total_bits() - self.narrowest.total_bits()
    }

    /// Whether the tick is one of [`PREFERRED_UNITS_MS`] (else no preferred tick fitted and
    /// another whole number of milliseconds did).
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::Requirements};
    /// let plan = Layout::plan(&Requirements::new(1, 1000, 1).with_epoch_ms(0))?;
    /// assert!(plan.preferred_unit());
    /// # Ok::<(), idgen_core::snowflake::plan::PlanError>(())
    /// ```
    pub fn preferred_unit(&self) -> bool {
        PREFERRED_UNITS_MS.contains(&self.layout.unit_ms())
    }
}

impl Layout {
    /// The layout for `requirements`: a node field for `nodes` nodes, a sequence for
    /// `rate_per_node` IDs per second per node, and a timestamp lasting `years` from
    /// `epoch_ms`, within `max_bits` bits; or why there is none. The
    /// [module documentation](crate::snowflake::plan) says how it chooses.
    ///
    /// The layout's fields are `timestamp | node | sequence`, with one node sub-field named
    /// `node`. The result is deterministic: the same requirements give the same layout.
    ///
    /// # Errors
    ///
    /// [`PlanError::ZeroNodes`], [`ZeroRate`](PlanError::ZeroRate),
    /// [`ZeroYears`](PlanError::ZeroYears), [`MaxBits`](PlanError::MaxBits) (0 or over 63),
    /// [`TooLong`](PlanError::TooLong) (past the year 292,278,994), or
    /// [`TooWide`](PlanError::TooWide) naming the bits needed and the most of each requirement
    /// that fits.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::Requirements};
    /// // 100 nodes, 1000 IDs/s each, 100 years, exact in JavaScript.
    /// let needs = Requirements::new(100, 1000, 100).with_max_bits(53).with_epoch_ms(1_767_225_600_000);
    /// let layout = Layout::plan(&needs)?.layout;
    /// assert!(needs.is_met_by(&layout));
    /// assert_eq!(layout.unit_ms(), 1); // 1 ID per ms needs no sequence bit at all
    /// assert_eq!((layout.node_bits(), layout.sequence_bits(), layout.timestamp_bits()), (7, 0, 46));
    /// # Ok::<(), idgen_core::snowflake::plan::PlanError>(())
    /// ```
    pub fn plan(requirements: &Requirements) -> Result<Plan, PlanError> {
        let r = requirements;
        if r.nodes == 0 {
            return Err(PlanError::ZeroNodes);
        }
        if r.rate_per_node == 0 {
            return Err(PlanError::ZeroRate);
        }
        if r.years == 0 {
            return Err(PlanError::ZeroYears);
        }
        if r.max_bits == 0 || r.max_bits > 63 {
            return Err(PlanError::MaxBits {
                max_bits: r.max_bits,
            });
        }
        let too_long = PlanError::TooLong {
            years: r.years,
            epoch_ms: r.epoch_ms,
        };
        let lifetime = u128::from(r.lifetime_ms());
        // The most milliseconds a layout from this epoch can span (validate()'s limit).
        let room = room_ms(r.epoch_ms);
        if lifetime > room {
            return Err(too_long);
        }
        let node_bits = bits_for(u128::from(r.nodes));
        let rate = u128::from(r.rate_per_node);
        let budget = u32::from(r.max_bits);

        // The preferred ticks, finest first; the fewest bits wins, a tie keeps the finer.
        let mut preferred: Option<Width> = None;
        for unit in PREFERRED_UNITS_MS {
            if let Some(w) = width_at(unit, rate, lifetime, room)
                && preferred.is_none_or(|b| w.bits() < b.bits())
            {
                preferred = Some(w);
            }
        }
        // The fewest bits over every whole number of milliseconds.
        let any = narrowest_any_unit(rate, lifetime, room).ok_or(too_long)?;
        let chosen = match preferred {
            Some(p) if node_bits + p.bits() <= budget || p.bits() == any.bits() => p,
            _ => any,
        };
        if node_bits + chosen.bits() > budget {
            return Err(PlanError::TooWide(Box::new(TooWide {
                requirements: *r,
                node_bits: node_bits as u8,
                sequence_bits: chosen.seq as u8,
                timestamp_bits: chosen.time as u8,
                unit_ms: chosen.unit,
                max_years: max_years(r, node_bits, room),
                max_rate_per_node: max_rate(r, node_bits, lifetime, room),
                max_nodes: max_nodes(r, rate, lifetime, room),
            })));
        }
        let narrowest = build(r, chosen, node_bits)?;
        // The spare bits to the timestamp, as far as the i64 milliseconds reach.
        let mut wide = chosen;
        for _ in 0..budget - node_bits - chosen.bits() {
            let next = Width {
                time: wide.time + 1,
                ..wide
            };
            if span(next.time, next.unit) > room {
                break;
            }
            wide = next;
        }
        let layout = build(r, wide, node_bits)?;
        Ok(Plan { layout, narrowest })
    }
}

/// A sequence and timestamp width at a tick length.
#[derive(Clone, Copy, Debug)]
struct Width {
    unit: u32,
    seq: u32,
    time: u32,
}

impl Width {
    fn bits(&self) -> u32 {
        self.seq + self.time
    }
}

/// The layout of these widths (all within 63 bits, within the i64 milliseconds: checked).
fn build(r: &Requirements, w: Width, node_bits: u32) -> Result<Layout, PlanError> {
    Layout::builder()
        .epoch_ms(r.epoch_ms)
        .unit_ms(w.unit)
        .timestamp_bits(w.time as u8)
        .node_bits(node_bits as u8)
        .sequence_bits(w.seq as u8)
        .build()
        // Not reached: the widths fit `max_bits` and the span fits the i64 milliseconds.
        .map_err(|_| PlanError::TooLong {
            years: r.years,
            epoch_ms: r.epoch_ms,
        })
}

/// The fewest bits that count `n` values (`0..n`): 1 → 0, 2 → 1, 1024 → 10, 1025 → 11.
fn bits_for(n: u128) -> u32 {
    if n <= 1 {
        0
    } else {
        128 - (n - 1).leading_zeros()
    }
}

/// The milliseconds a layout from `epoch_ms` may span: up to and including `i64::MAX`.
fn room_ms(epoch_ms: i64) -> u128 {
    (i128::from(i64::MAX) - i128::from(epoch_ms) + 1) as u128
}

/// The milliseconds `2^time` ticks of `unit` ms span.
fn span(time: u32, unit: u32) -> u128 {
    if time >= 96 {
        u128::MAX
    } else {
        (1u128 << time) * u128::from(unit)
    }
}

/// The fewest sequence and timestamp bits at tick `unit` for `rate` IDs/s and `lifetime` ms,
/// or `None` when the span would pass `room`.
fn width_at(unit: u32, rate: u128, lifetime: u128, room: u128) -> Option<Width> {
    // IDs per tick needed: rate × unit / 1000, rounded up.
    let per_tick = (rate * u128::from(unit)).div_ceil(1000);
    let seq = bits_for(per_tick);
    let ticks = lifetime.div_ceil(u128::from(unit));
    let time = bits_for(ticks).max(1);
    (span(time, unit) <= room).then_some(Width { unit, seq, time })
}

/// The tick lengths that give `seq` sequence bits and `time` timestamp bits the rate and the
/// lifetime: `lo..=hi` ms (empty when `lo > hi`).
fn units_for(seq: u32, time: u32, rate: u128, lifetime: u128, room: u128) -> (u128, u128) {
    // 2^seq × 1000 / unit ≥ rate  ⇔  unit ≤ 2^seq × 1000 / rate.
    let hi = ((1u128 << seq) * 1000 / rate)
        .min(u128::from(u32::MAX))
        // span ≤ room.
        .min(room >> time);
    // 2^time × unit ≥ lifetime.
    let lo = lifetime.div_ceil(1u128 << time).max(1);
    (lo, hi)
}

/// The fewest sequence + timestamp bits over every tick length; among splits with that many,
/// the fewest sequence bits, at the longest tick the rate allows (the longest lifetime).
fn narrowest_any_unit(rate: u128, lifetime: u128, room: u128) -> Option<Width> {
    for total in 1..=(63 + 63) {
        for seq in 0..total.min(64) {
            let time = total - seq;
            if time > 63 {
                continue;
            }
            let (lo, hi) = units_for(seq, time, rate, lifetime, room);
            if lo <= hi {
                return Some(Width {
                    unit: hi as u32,
                    seq,
                    time,
                });
            }
        }
    }
    None
}

/// The most whole years `nodes × rate` lasts within the bits, over every tick length.
fn max_years(r: &Requirements, node_bits: u32, room: u128) -> Option<u32> {
    let budget = u32::from(r.max_bits).checked_sub(node_bits)?;
    let rate = u128::from(r.rate_per_node);
    let mut best: u128 = 0;
    for seq in 0..budget {
        let time = budget - seq;
        let (_, hi) = units_for(seq, time, rate, 1, room);
        if hi >= 1 {
            best = best.max(span(time, hi as u32).min(room));
        }
    }
    let years = best / u128::from(YEAR_MS);
    (years >= 1).then(|| u32::try_from(years).unwrap_or(u32::MAX))
}

/// The most IDs per second per node for `nodes` over the lifetime within the bits.
fn max_rate(r: &Requirements, node_bits: u32, lifetime: u128, room: u128) -> Option<u64> {
    let budget = u32::from(r.max_bits).checked_sub(node_bits)?;
    let mut best: u128 = 0;
    for seq in 0..budget {
        let time = budget - seq;
        // The shortest tick that lasts: 2^time × unit ≥ lifetime.
        let unit = lifetime.div_ceil(1u128 << time).max(1);
        if unit <= u128::from(u32::MAX) && span(time, unit as u32) <= room {
            best = best.max((1u128 << seq) * 1000 / unit);
        }
    }
    (best >= 1).then(|| u64::try_from(best).unwrap_or(u64::MAX))
}

/// The most nodes at the rate over the lifetime within the bits (a power of two).
fn max_nodes(r: &Requirements, rate: u128, lifetime: u128, room: u128) -> Option<u64> {
    let need = narrowest_any_unit(rate, lifetime, room)?.bits();
    let node_bits = u32::from(r.max_bits).checked_sub(need)?;
    Some(1u64 << node_bits.min(63))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_for_counts() {
        let cases = [(1, 0), (2, 1), (3, 2), (4, 2), (1024, 10), (1025, 11)];
        for (n, bits) in cases {
            assert_eq!(bits_for(n), bits, "{n}");
        }
    }

    #[test]
    fn the_js_safe_preset_is_what_the_planner_gives() {
        let needs = Requirements::new(128, 25_600, 80)
            .with_max_bits(53)
            .with_epoch_ms(1_767_225_600_000);
        assert_eq!(Layout::plan(&needs).unwrap().layout, Layout::JS_SAFE);
    }
}
