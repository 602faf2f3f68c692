//! The `tracing` events of leases and hi-lo (feature `tracing`; without it, these do nothing). Called on cold
//! paths only; names and fields are listed in the module above.

#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

/// A lease renewal failed.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_renewal_failed(
    namespace: &str,
    node: u64,
    failures: u64,
    valid_until_ms: i64,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "idgen", event = "lease_renewal_failed", namespace, node, failures,
        valid_until_ms, error = %error, "renewing the lease of node ID {node} failed");
}

/// Renewals failed past the fence deadline: the generator issues nothing.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_fenced(namespace: &str, node: u64, valid_until_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::error!(target: "idgen", event = "lease_fenced", namespace, node, valid_until_ms,
        "node ID {node} is fenced: its lease could not be renewed in time, no IDs until a renewal succeeds");
}

/// A renewal succeeded after `failures` failures.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_renewed(namespace: &str, node: u64, failures: u64) {
    #[cfg(feature = "tracing")]
    tracing::info!(target: "idgen", event = "lease_renewed", namespace, node, failures,
        "the lease of node ID {node} is renewed again");
}

/// Another holder has the node ID.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_lost(namespace: &str, node: u64, holder: &str) {
    #[cfg(feature = "tracing")]
    tracing::error!(target: "idgen", event = "lease_lost", namespace, node, holder,
        "the lease of node ID {node} was lost to another holder: the generator stops for good");
}

/// A claim got `node` of `capacity`; an event when it is in the top tenth (claims take the
/// lowest free node ID, so the node ID tells how much of the space is held).
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn node_claimed(namespace: &str, node: u64, capacity: u64) {
    if u128::from(node) * 10 + 10 >= u128::from(capacity) * 9 {
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "idgen", event = "node_capacity_nearly_used", namespace, node,
            capacity, "node ID {node} of {capacity} claimed: the node space is nearly used up");
    }
}

/// A claim the store could not prove free (a new row or key, or a lease taken over after it
/// expired): the lease issues only after `not_before_ms`, one TTL and the clock allowance after
/// the claim, so a holder the store may have forgotten has stopped first.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_takeover_wait(namespace: &str, node: u64, not_before_ms: i64, wait_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "idgen", event = "lease_takeover_wait", namespace, node, not_before_ms,
        wait_ms, "node ID {node} was claimed without a record of its release (a new row or key, or a lease taken over after it expired): issuing only after {wait_ms} ms (one TTL and the clock allowance), so that a holder the lease store may have forgotten has stopped first");
}

/// A claim whose bound lies ahead of the clock (a takeover, or a node ID released with a bound
/// ahead): the generator issues at once from the bound, its time field ahead of the clock.
#[cfg(feature = "lease")]
#[cold]
pub(crate) fn lease_takeover_lead(namespace: &str, node: u64, not_before_ms: i64, lead_ms: i64) {
    #[cfg(feature = "tracing")]
    tracing::info!(target: "idgen", event = "lease_takeover_lead", namespace, node, not_before_ms,
        lead_ms, "node ID {node} issues at once from its bound {not_before_ms}: the time field of its IDs leads the clock by up to {lead_ms} ms until the clock catches up (a claim without a record of a release, or a bound stored ahead)");
}

/// A block fetch failed (it is retried).
#[cfg(feature = "hilo")]
#[cold]
pub(crate) fn hilo_counter_unavailable(
    counter: &str,
    failures: u32,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    tracing::warn!(target: "idgen", event = "hilo_counter_unavailable", counter, failures,
        error = %error, "fetching a block from hi-lo counter {counter} failed");
}

/// A fetch succeeded after `failures` failures.
#[cfg(feature = "hilo")]
#[cold]
pub(crate) fn hilo_counter_available(counter: &str, failures: u32) {
    #[cfg(feature = "tracing")]
    tracing::info!(target: "idgen", event = "hilo_counter_available", counter, failures,
        "hi-lo counter {counter} answers again");
}
