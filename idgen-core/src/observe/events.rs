//! The `tracing` events (feature `tracing`; without it, these do nothing). Called on cold
//! paths only; names and fields are listed in the module above.

#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

/// A generator's clock stepped back `behind_ms` behind what it issued (once per step).
#[cold]
pub(crate) fn clock_stepped_back(behind_ms: u64, now_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "idgen", event = "clock_stepped_back", behind_ms, now_ms,
        "the clock stepped back {behind_ms} ms behind the last issued ID");
}
