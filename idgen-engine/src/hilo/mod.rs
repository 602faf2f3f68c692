//! Hi-lo: blocks of IDs from one central database counter, handed out from memory.
//!
//! [`HiLo`] takes blocks of IDs from a [`HiLoSource`] (a database sequence or counter table;
//! the sources live in the adapter crates, plus an in-memory [`MemorySource`] here) and hands
//! them out with one atomic operation each, fetching the next blocks in the background, as far
//! ahead as the measured rate and fetch latency need, before the current one runs out. Async
//! callers `.await` [`HiLo::next_id`]; callers without a runtime (diesel applications) use
//! [`HiLoBuilder::build_blocking`] and [`HiLo::next_id_blocking`].
//!
//! Semantics are **pooled-lo**: a counter value `v` is the block `[v, v + block)`; the counter
//! starts at 1, so IDs are positive, with no special first call. IDs are unique across all
//! processes sharing the counter, increase within one `HiLo`, and interleave with gaps across
//! processes and restarts.
//!
//! ```
//! use idgen_engine::hilo::{HiLo, MemorySource};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let counter = MemorySource::new(); // stands in for a database sequence
//! let ids = HiLo::new(counter, 1000).await?;
//! let id: i64 = ids.next_id().await?;
//! assert_eq!(id, 1);
//! let rows = ids.reserve(100).await?; // contiguous, for a bulk insert
//! assert_eq!(rows.end - rows.start, 100);
//! # Ok::<(), idgen_engine::Error>(()) }).unwrap();
//! ```

mod builder;
mod cursor;
mod generator;
mod memory;
mod options;
mod planner;
mod refill;
mod runtime;
mod source;
mod stats;
mod striped;
mod typed;

pub use crate::borrowed::Borrowed;
pub use builder::HiLoBuilder;
pub use generator::HiLo;
pub use memory::MemorySource;
pub use options::DEFAULT_COUNTER;
pub use source::{BoxError, HiLoSource, Increment, IntoHiLoSource, MissingCounter};
pub use stats::HiLoStats;
pub use striped::{CounterSettings, CounterStart, Stripe, StripedHiLo, check_no_overlap};

#[cfg(test)]
mod lookahead_tests;
#[cfg(test)]
mod runtime_tests;
#[cfg(test)]
mod tests;
