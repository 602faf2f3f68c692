//! What [`Layout::plan`](crate::snowflake::Layout::plan) is asked for and why it refuses:
//! [`Requirements`], [`PlanError`], [`TooWide`] and the year they count in. A file of its own
//! that imports no layout, so that the crate's error can hold a [`PlanError`] without an
//! import circle through [`Layout`](crate::snowflake::Layout).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// One year of 365.2425 days (the Gregorian average), in milliseconds: what the planner and
/// [`Layout::lifetime_years`](crate::snowflake::Layout::lifetime_years) count years in.
///
/// ```
/// assert_eq!(idgen_core::snowflake::plan::YEAR_MS, 31_556_952_000);
/// ```
pub const YEAR_MS: u64 = 31_556_952_000;

/// What a planned layout must meet: see [`Layout::plan`](crate::snowflake::Layout::plan).
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
}

/// Why [`Layout::plan`](crate::snowflake::Layout::plan) found no layout.
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
