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

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::snowflake::Layout;

/// One year of 365.2425 days (the Gregorian average), in milliseconds: what the planner and
/// [`Layout::lifetime_years`] count years in.
///
/// ```
/// assert_eq!(idgen_core::snowflake::plan::YEAR_MS, 31_556_952_000);
/// ```
pub const YEAR_MS: u64 = 31_556_952_000;

/// The tick lengths the planner tries first, finest first: 1 ms (Twitter), 10 ms (Sonyflake),
/// 100 ms and 1 s.
///
/// ```
/// assert_eq!(idgen_core::snowflake::plan::PREFERRED_UNITS_MS, [1, 10, 100, 1000]);
/// ```
pub const PREFERRED_UNITS_MS: [u32; 4] = [1, 10, 100, 1000];

/// What a planned layout must meet: see [`Layout::plan`].
///
/// ```
/// use idgen_core::snowflake::plan::Requirements;
/// let needs = Requirements::new(64, 1000, 30).with_max_bits(53).with_epoch_ms(0);
/// assert_eq!((needs.nodes, needs.rate_per_node, needs.years), (64, 1000, 30));
/// assert_eq!((needs.max_bits, needs.epoch_ms), (53, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Requirements {
    /// How many nodes issue IDs at once (node IDs `0..nodes`); at least 1.
    pub nodes: u64,
    /// How many IDs one node must be able to issue per second, sustained; at least 1. Per
    /// node, because that is what a Snowflake sequence limits: a fleet issues up to
    /// `nodes × rate_per_node`.
    pub rate_per_node: u64,
    /// How many years (of 365.2425 days) from the epoch the layout must last; at least 1.
    pub years: u32,
    /// The most bits an ID may use, 1 to 63 (63 by default; 53 keeps IDs exact in JavaScript).
    pub max_bits: u8,
    /// The layout's epoch, in milliseconds since the Unix epoch.
    pub epoch_ms: i64,
}

impl Requirements {
    /// `nodes` nodes, `rate_per_node` IDs per second each, for `years` years, in up to 63 bits,
    /// from the start of the current year in UTC (`2026-01-01T00:00:00Z` during 2026).
    ///
    /// ```
    /// use idgen_core::snowflake::plan::Requirements;
    /// let needs = Requirements::new(1024, 4096, 69);
    /// assert_eq!(needs.max_bits, 63);
    /// assert_eq!(needs.epoch_ms % 86_400_000, 0); // a midnight, UTC
    /// ```
    pub fn new(nodes: u64, rate_per_node: u64, years: u32) -> Requirements {
        let now_ms = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(_) => 0,
        };
        Requirements {
            nodes,
            rate_per_node,
            years,
            max_bits: 63,
            epoch_ms: crate::fmt_time::start_of_utc_year(now_ms),
        }
    }

    /// These requirements within `max_bits` bits.
    ///
    /// ```
    /// # use idgen_core::snowflake::plan::Requirements;
    /// assert_eq!(Requirements::new(1, 1, 1).with_max_bits(53).max_bits, 53);
    /// ```
    pub fn with_max_bits(self, max_bits: u8) -> Requirements {
        Requirements { max_bits, ..self }
    }

    /// These requirements from another epoch (milliseconds since the Unix epoch).
    ///
    /// ```
    /// # use idgen_core::snowflake::plan::Requirements;
    /// assert_eq!(Requirements::new(1, 1, 1).with_epoch_ms(0).epoch_ms, 0);
    /// ```
    pub fn with_epoch_ms(self, epoch_ms: i64) -> Requirements {
        Requirements { epoch_ms, ..self }
    }

    /// The lifetime asked for, in milliseconds (`years` × [`YEAR_MS`], saturating at `u64::MAX`:
    /// far past what any layout can last).
    ///
    /// ```
    /// # use idgen_core::snowflake::plan::Requirements;
    /// assert_eq!(Requirements::new(1, 1, 2).lifetime_ms(), 63_113_904_000);
    /// ```
    pub fn lifetime_ms(&self) -> u64 {
        u64::from(self.years).saturating_mul(YEAR_MS)
    }

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

/// Why [`Layout::plan`] found no layout.
///
/// ```
/// use idgen_core::{Layout, snowflake::plan::{PlanError, Requirements}};
/// let err = Layout::plan(&Requirements::new(0, 1000, 10)).unwrap_err();
/// assert_eq!(err, PlanError::ZeroNodes);
/// assert_eq!(err.to_string(), "0 nodes: a layout is planned for at least 1 node");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// `nodes` is 0.
    #[error("0 nodes: a layout is planned for at least 1 node")]
    ZeroNodes,
    /// `rate_per_node` is 0.
    #[error(
        "a rate of 0 IDs per second: a layout is planned for at least 1 ID per second per node"
    )]
    ZeroRate,
    /// `years` is 0.
    #[error("a lifetime of 0 years: a layout is planned for at least 1 year")]
    ZeroYears,
    /// `max_bits` is 0 or above 63.
    #[error("max bits {max_bits}: an ID has 1 to 63 bits (the sign bit stays 0)")]
    MaxBits {
        /// The rejected number of bits.
        max_bits: u8,
    },
    /// The lifetime reaches past the last instant an `i64` of milliseconds holds, so no layout
    /// can last that long from this epoch, whatever its width.
    #[error(
        "{years} years from {} reach past {}, the last instant a layout can carry",
        crate::fmt_time::UnixMs(*.epoch_ms),
        crate::fmt_time::UnixMs(i64::MAX)
    )]
    TooLong {
        /// The years asked for.
        years: u32,
        /// The epoch, in milliseconds since the Unix epoch.
        epoch_ms: i64,
    },
    /// The three requirements together need more bits than `max_bits`.
    #[error("{0}")]
    TooWide(Box<TooWide>),
}

/// The details of [`PlanError::TooWide`]: how many bits the requirements need, and the most of
/// each that fits within the bits while the other two stay as asked.
///
/// ```
/// use idgen_core::{Layout, snowflake::plan::{PlanError, Requirements}};
/// let needs = Requirements::new(1024, 100_000, 50).with_max_bits(53).with_epoch_ms(0);
/// let PlanError::TooWide(w) = Layout::plan(&needs).unwrap_err() else { panic!() };
/// assert_eq!((w.needs_bits(), w.over_by()), (58, 5));
/// assert_eq!((w.max_years, w.max_rate_per_node, w.max_nodes), (Some(2), Some(5574), Some(32)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TooWide {
    /// What was asked.
    pub requirements: Requirements,
    /// The node bits of the narrowest layout that meets the requirements, ignoring `max_bits`.
    pub node_bits: u8,
    /// Its sequence bits.
    pub sequence_bits: u8,
    /// Its timestamp bits.
    pub timestamp_bits: u8,
    /// Its tick length, in milliseconds.
    pub unit_ms: u32,
    /// The most years `nodes` × `rate_per_node` last within `max_bits` (`None`: not one).
    pub max_years: Option<u32>,
    /// The most IDs per second per node for `nodes` over `years` within `max_bits` (`None`:
    /// not one).
    pub max_rate_per_node: Option<u64>,
    /// The most nodes at `rate_per_node` over `years` within `max_bits` (`None`: not one).
    pub max_nodes: Option<u64>,
}

impl TooWide {
    /// The bits the requirements need: node + sequence + timestamp bits of the narrowest layout.
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::{PlanError, Requirements}};
    /// let needs = Requirements::new(2, 1, 1).with_max_bits(20).with_epoch_ms(0);
    /// let PlanError::TooWide(w) = Layout::plan(&needs).unwrap_err() else { panic!() };
    /// assert_eq!(w.needs_bits(), 1 + 25); // 2^25 s > 1 year
    /// ```
    pub fn needs_bits(&self) -> u8 {
        self.node_bits + self.sequence_bits + self.timestamp_bits
    }

    /// How many bits more than `max_bits` the requirements need.
    ///
    /// ```
    /// use idgen_core::{Layout, snowflake::plan::{PlanError, Requirements}};
    /// let needs = Requirements::new(2, 1, 1).with_max_bits(20).with_epoch_ms(0);
    /// let PlanError::TooWide(w) = Layout::plan(&needs).unwrap_err() else { panic!() };
    /// assert_eq!(w.over_by(), 6);
    /// ```
    pub fn over_by(&self) -> u8 {
        self.needs_bits() - self.requirements.max_bits
    }
}

impl fmt::Display for TooWide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.requirements;
        let nodes = counted(r.nodes, "node", "nodes");
        let rate = counted(r.rate_per_node, "ID/s", "IDs/s");
        let years = counted(u64::from(r.years), "year", "years");
        write!(
            f,
            "{} bits cannot hold {nodes} × {rate} per node for {years}: that needs {} bits \
             (node {} + sequence {} + timestamp {}, {} ticks), {} more than the {} allowed; ",
            r.max_bits,
            self.needs_bits(),
            self.node_bits,
            self.sequence_bits,
            self.timestamp_bits,
            unit_text(self.unit_ms),
            self.over_by(),
            r.max_bits,
        )?;
        let mut options = Vec::new();
        if let Some(y) = self.max_years {
            let y = counted(u64::from(y), "year", "years");
            options.push(format!("{nodes} × {rate} last at most {y}"));
        }
        if let Some(v) = self.max_rate_per_node {
            let v = counted(v, "ID/s", "IDs/s");
            options.push(format!("{nodes} for {years} allow at most {v} per node"));
        }
        if let Some(n) = self.max_nodes {
            let n = counted(n, "node", "nodes");
            options.push(format!("{rate} for {years} allow at most {n}"));
        }
        if options.is_empty() {
            write!(
                f,
                "within {} bits not one of the three can be met with the other two as asked",
                r.max_bits
            )
        } else {
            write!(f, "within {} bits: {}", r.max_bits, options.join(", "))
        }
    }
}

/// `1 node`, `2 nodes`.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1 ms`, `10 ms`, `1 s`, `1500 ms`: a tick length for messages.
fn unit_text(unit_ms: u32) -> String {
    if unit_ms >= 1000 && unit_ms.is_multiple_of(1000) {
        format!("{} s", unit_ms / 1000)
    } else {
        format!("{unit_ms} ms")
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
