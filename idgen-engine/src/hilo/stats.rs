//! [`HiLoStats`]: what a [`HiLo`](super::HiLo) has done so far.

use std::time::Duration;

use crate::error::Error;

/// A snapshot of a [`HiLo`](super::HiLo)'s counters, from [`HiLo::stats`](super::HiLo::stats).
///
/// ```
/// use idgen_engine::hilo::{HiLo, MemorySource};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::builder(MemorySource::new()).block(10).prefetch(false).build().await?;
/// for _ in 0..15 {
///     ids.next_id().await?;
/// }
/// let stats = ids.stats();
/// assert_eq!(stats.ids_issued, 15);
/// assert_eq!(stats.blocks_fetched, 2);
/// assert_eq!(stats.buffered, 5);
/// assert!(stats.last_error.is_none());
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HiLoStats {
    /// The counter's name.
    pub counter: String,
    /// IDs handed out (by `next_id`, `try_next_id` and `reserve`).
    pub ids_issued: u64,
    /// Blocks fetched from the counter.
    pub blocks_fetched: u64,
    /// Successful round trips to the counter (each brings one block or several).
    pub fetches: u64,
    /// Fetched blocks dropped unused because they arrived below a block already in use (only
    /// possible with several fetches in flight; a gap, never a duplicate).
    pub blocks_discarded: u64,
    /// Fetches that failed (each retried with backoff).
    pub fetch_failures: u64,
    /// The latency of the last successful fetch (one round trip, which may bring several
    /// blocks), from the request to the arrival.
    pub fetch_latency_last: Option<Duration>,
    /// The mean latency of successful fetches.
    pub fetch_latency_mean: Option<Duration>,
    /// The largest latency of a successful fetch.
    pub fetch_latency_max: Option<Duration>,
    /// Fetches running now.
    pub fetches_in_flight: usize,
    /// Calls to `next_id`, `next_id_blocking` or `reserve` that found the buffer empty and had to wait for a fetch.
    /// With prefetch working, this stays at zero.
    pub caller_waits: u64,
    /// The error that stopped the generator, or else the last fetch error (even if a later
    /// fetch succeeded).
    pub last_error: Option<Error>,
    /// IDs buffered: the rest of the current block plus fetched blocks waiting.
    pub buffered: u64,
    /// The block size in force (the database's when adopted).
    pub block_size: u64,
    /// The size of the next block to fetch (differs from `block_size` when adaptive).
    pub next_block_size: u64,
    /// The low-water mark now: a prefetch starts when fewer IDs are buffered.
    pub low_water: u64,
    /// The measured consumption rate, IDs per second, once a block has been used up.
    pub rate_per_second: Option<f64>,
}
