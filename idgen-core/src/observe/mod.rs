//! What operators watch: idgen's counters as metrics (feature `metrics`) and the events that
//! matter as `tracing` events (feature `tracing`). All names are listed here, in one place.
//!
//! Nothing here runs on the per-ID path of [`Snowflake::next_id`](crate::snowflake::Snowflake::next_id)
//! or `HiLo::next_id`: metrics are exported from `stats()` snapshots when you ask (e.g. when
//! Prometheus scrapes), and events are emitted on cold paths only (a clock step, a renewal's
//! outcome, a failed fetch, a claim).
//!
//! ## Metrics (feature `metrics`)
//!
//! [`export_snowflake`] (here), `export_hilo` and `export_lease` (idgen-engine's `observe`),
//! all in the `metrics` feature, set
//! these through the [`metrics`](https://docs.rs/metrics) facade, for whichever recorder the
//! application installed (e.g. `metrics-exporter-prometheus`). Counters are set to the
//! snapshot's absolute value; gauges to its current value.
//!
//! | name | kind | labels | from |
//! |---|---|---|---|
//! | `idgen_snowflake_ids_issued_total` | counter | `generator` | `Stats::ids_issued` |
//! | `idgen_snowflake_exhaustion_waits_total` | counter | `generator` | `Stats::exhaustion_waits`: waits for the next tick |
//! | `idgen_snowflake_clock_backwards_total` | counter | `generator` | `Stats::backwards_steps`: clock steps back |
//! | `idgen_snowflake_clock_backwards_max_seconds` | gauge | `generator` | `Stats::max_backwards`: the largest step back |
//! | `idgen_snowflake_waited_seconds` | gauge | `generator` | `Stats::waited`: time spent waiting, in total |
//! | `idgen_hilo_ids_issued_total` | counter | `counter` | `HiLoStats::ids_issued` |
//! | `idgen_hilo_blocks_fetched_total` | counter | `counter` | `HiLoStats::blocks_fetched` |
//! | `idgen_hilo_fetch_failures_total` | counter | `counter` | `HiLoStats::fetch_failures` |
//! | `idgen_hilo_caller_waits_total` | counter | `counter` | `HiLoStats::caller_waits`: callers that found the buffer empty |
//! | `idgen_hilo_fetch_latency_seconds` | gauge | `counter`, `stat` = `last`, `mean`, `max` | `HiLoStats::fetch_latency_*` |
//! | `idgen_hilo_buffered_ids` | gauge | `counter` | `HiLoStats::buffered` |
//! | `idgen_hilo_block_size` | gauge | `counter` | `HiLoStats::block_size` |
//! | `idgen_lease_renewals_total` | counter | `namespace`, `node` | `LeaseStatus::renewals` |
//! | `idgen_lease_failed_renewals_total` | counter | `namespace`, `node` | `LeaseStatus::failed_renewals` |
//! | `idgen_lease_valid_for_seconds` | gauge | `namespace`, `node` | `valid_until_ms` − now: negative while fenced |
//! | `idgen_lease_fenced` | gauge | `namespace`, `node` | 1 while the generator is fenced (or the lease lost), else 0 |
//! | `idgen_lease_lost` | gauge | `namespace`, `node` | 1 once another holder has the node ID |
//!
//! ## Events (feature `tracing`)
//!
//! Target `idgen`; each event has a field `event` with the name below, then its fields.
//!
//! | `event` | level | fields | when |
//! |---|---|---|---|
//! | `clock_stepped_back` | WARN | `behind_ms`, `now_ms` | a generator's clock read an earlier time than it already issued (once per step) |
//! | `lease_renewal_failed` | WARN | `namespace`, `node`, `failures`, `valid_until_ms`, `error` | a renewal failed or timed out |
//! | `lease_fenced` | ERROR | `namespace`, `node`, `valid_until_ms` | renewals failed past the fence deadline: the generator issues nothing (once per outage) |
//! | `lease_renewed` | INFO | `namespace`, `node`, `failures` | a renewal succeeded after failures (the generator resumes) |
//! | `lease_lost` | ERROR | `namespace`, `node`, `holder` | another holder has the node ID: the generator stops for good |
//! | `lease_takeover_wait` | WARN | `namespace`, `node`, `not_before_ms`, `wait_ms` | with `takeover_wait(true)`, a claim whose bound lies ahead of the clock (new row or key, lease taken over after expiry, a bound released ahead): `acquire` waits `wait_ms` for the clock to pass `not_before_ms` |
//! | `lease_takeover_lead` | INFO | `namespace`, `node`, `not_before_ms`, `lead_ms` | by default, such a claim issues at once above `not_before_ms`: IDs' time field leads the clock by up to `lead_ms` until it catches up |
//! | `node_capacity_nearly_used` | WARN | `namespace`, `node`, `capacity` | a claim got a node ID in the top tenth of the node space |
//! | `hilo_counter_unavailable` | WARN | `counter`, `failures`, `error` | a block fetch failed (retried with backoff) |
//! | `hilo_counter_available` | INFO | `counter`, `failures` | a fetch succeeded after failures |

pub(crate) mod events;
#[cfg(feature = "metrics")]
mod export;

#[cfg(feature = "metrics")]
pub use export::{describe_snowflake_metrics, export_snowflake};
