//! The validated options of a [`HiLo`](crate::hilo::HiLo), as its builder gathers them and its
//! planner reads them: block, counter, buffering, retries, adaptive sizing, the floor.

use std::sync::Arc;
use std::time::Duration;

use super::cursor::MAX_BLOCK;
use super::source::BoxFuture;
use crate::error::{Error, ErrorKind, Result};
use idgen_core::BoxError;

/// The counter name a connection pool gets when
/// [`HiLoBuilder::counter`](crate::hilo::HiLoBuilder::counter) is not called.
pub const DEFAULT_COUNTER: &str = "hilo";

/// The validated options of a [`HiLo`](crate::hilo::HiLo).
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) counter: String,
    pub(crate) block: u64,
    pub(crate) adopt_database_increment: bool,
    /// `None`: the source's own default
    /// ([`HiLoSource::create_if_missing_by_default`](crate::hilo::HiLoSource::create_if_missing_by_default)).
    pub(crate) create_if_missing: Option<bool>,
    pub(crate) prefetch: bool,
    pub(crate) low_water_factor: f64,
    /// `None`: one block (the next block's length).
    pub(crate) min_low_water: Option<u64>,
    pub(crate) max_buffered_blocks: usize,
    pub(crate) max_fetches_in_flight: usize,
    pub(crate) timeout: Duration,
    pub(crate) backoff_initial: Duration,
    pub(crate) backoff_max: Duration,
    /// `(max_block, target block life)` when adaptive sizing is on.
    pub(crate) adaptive: Option<(u64, Duration)>,
    /// The largest ID handed out before, as the application knows it: read at start-up, the
    /// counter is moved above it before any ID is served.
    pub(crate) floor: Option<Floor>,
    /// `(origin, step)`: every block start must be `origin + k × step` (a striped counter's
    /// start and real step). Fixed-increment counters without it keep to the grid of their
    /// first block.
    pub(crate) grid: Option<(i64, u64)>,
}

/// A floor of [`HiLoBuilder::floor`](crate::hilo::HiLoBuilder::floor) or
/// [`HiLoBuilder::floor_from`](crate::hilo::HiLoBuilder::floor_from).
#[derive(Clone)]
pub(crate) enum Floor {
    Value(i64),
    Query(Arc<FloorQuery>),
}

pub(crate) type FloorQuery =
    dyn Fn() -> BoxFuture<'static, std::result::Result<i64, BoxError>> + Send + Sync + 'static;

impl std::fmt::Debug for Floor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Floor::Value(v) => write!(f, "Floor({v})"),
            Floor::Query(_) => f.write_str("Floor(query)"),
        }
    }
}

impl Floor {
    pub(crate) async fn read(&self) -> std::result::Result<i64, BoxError> {
        match self {
            Floor::Value(v) => Ok(*v),
            Floor::Query(query) => query()
                .await
                .map_err(|e| Box::new(FloorQueryFailed(e)).into()),
        }
    }

    /// Whether it is a query, read again before every fetch (a value is known once).
    pub(crate) fn is_query(&self) -> bool {
        matches!(self, Floor::Query(_))
    }
}

/// The error of a [`HiLoBuilder::floor_from`](crate::hilo::HiLoBuilder::floor_from) query, named as
/// such: its message is the query's, its source the query's source (so a chain printed in full says
/// each once).
#[derive(Debug)]
pub(crate) struct FloorQueryFailed(pub(crate) BoxError);

impl std::fmt::Display for FloorQueryFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the floor query (floor_from) failed: {}", self.0)
    }
}

impl std::error::Error for FloorQueryFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            counter: DEFAULT_COUNTER.to_owned(),
            block: 1000,
            adopt_database_increment: false,
            create_if_missing: None,
            prefetch: true,
            low_water_factor: 3.0,
            min_low_water: None,
            max_buffered_blocks: 256,
            max_fetches_in_flight: 4,
            timeout: Duration::from_secs(5),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_secs(5),
            adaptive: None,
            floor: None,
            grid: None,
        }
    }
}

fn invalid(option: &'static str, value: impl ToString, reason: &'static str) -> Error {
    ErrorKind::HiLoInvalidOption {
        option,
        value: value.to_string(),
        reason,
    }
    .into()
}

impl Options {
    pub(crate) fn validate(&self) -> Result<()> {
        if self.block == 0 || self.block > MAX_BLOCK {
            return Err(invalid(
                "block",
                self.block,
                "a block holds between 1 and 4294967296 (2^32) IDs",
            ));
        }
        if !(self.low_water_factor.is_finite() && self.low_water_factor >= 0.0) {
            return Err(invalid(
                "low_water_factor",
                self.low_water_factor,
                "the factor is a finite number >= 0",
            ));
        }
        if self.max_buffered_blocks == 0 {
            return Err(invalid(
                "max_buffered_blocks",
                self.max_buffered_blocks,
                "at least 1 block must fit in the buffer",
            ));
        }
        if self.max_fetches_in_flight == 0 {
            return Err(invalid(
                "max_fetches_in_flight",
                self.max_fetches_in_flight,
                "at least 1 fetch must be allowed",
            ));
        }
        if self.backoff_initial.is_zero() {
            return Err(invalid(
                "backoff initial",
                format!("{:?}", self.backoff_initial),
                "the first retry delay must be above zero (a zero delay would spin)",
            ));
        }
        if self.backoff_max < self.backoff_initial {
            return Err(invalid(
                "backoff max",
                format!("{:?}", self.backoff_max),
                "the largest retry delay must be at least the first one",
            ));
        }
        if let Some((max_block, life)) = self.adaptive {
            if max_block < self.block || max_block > MAX_BLOCK {
                return Err(invalid(
                    "adaptive max_block",
                    max_block,
                    "between the block size and 4294967296 (2^32)",
                ));
            }
            if life.is_zero() {
                return Err(invalid(
                    "adaptive target_life",
                    format!("{life:?}"),
                    "a block's target life must be above zero",
                ));
            }
        }
        Ok(())
    }
}
