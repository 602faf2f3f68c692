//! The generator's fence, as the lease moves it: what a renewal grants it, fencing at once when the
//! clock is certainly too far from the store's, revoking it when the node ID is lost, and the clock
//! check ([`LeaseOptions::clock_allowance`](crate::lease::LeaseOptions::clock_allowance)).

use std::time::Duration;

use crate::error::{ErrorKind, Result};
use crate::lease::options::{Timing, millis};
use crate::lease::shared::Shared;
use crate::lease::store::{DynLeaseStore, timed};
use idgen_core::Clock;

/// What a successful renewal grants the fence: the deadline the clock must read before, and
/// the ceiling of the ticks issued (at or above the deadline; what the renewal stored).
#[derive(Clone, Copy, Debug)]
pub(super) struct Grant {
    pub(super) deadline: i64,
    pub(super) ceiling: i64,
}

impl Shared {
    /// Stops the generator now, until a renewal extends the fence again: the clock is
    /// certainly too far from the store's ([`ErrorKind::ClockSkew`]), so the ticks it would issue
    /// until its deadline are not the ones a later holder's bound covers.
    pub(super) fn fence_now(&self) {
        if self.fence.extend(i64::MIN + 1, i64::MIN + 1) {
            self.update(|s| s.valid_until_ms = i64::MIN + 1);
        }
    }

    /// Another holder has the node ID: marked lost before the fence is revoked, so whoever
    /// sees the generator refuse sees the lease lost too.
    pub(super) fn lose(&self) {
        self.update(|s| {
            s.lost = true;
            s.valid_until_ms = i64::MIN;
        });
        self.fence.revoke();
        crate::observe::events::lease_lost(&self.namespace, self.node, &self.holder);
    }
}

/// How many times [`check_clock`] reads the store's clock at most, when only a slow round trip
/// leaves a reading unsure.
pub(super) const CLOCK_READINGS: u32 = 3;

/// Reads the store's clock ([`LeaseStore::clock_ms`]) between two readings of `clock` and
/// compares them ([`compare_clocks`]); nothing to compare when the store reports no clock.
///
/// A reading refused only because its round trip was slow (not `certain`) is taken again, up to
/// [`CLOCK_READINGS`] in all, each within the store time-out: the first that proves the clocks
/// within the allowance accepts (each reading is a proof on its own, so a slow one proves
/// nothing against a quick one), and the last one's error stands when none does. A certain one
/// (even the best case exceeds the allowance) is refused at once, never taken again.
pub(super) async fn check_clock<S: DynLeaseStore + ?Sized>(
    store: &S,
    clock: &dyn Clock,
    t: Timing,
    operation: &'static str,
) -> Result<()> {
    let mut readings = 0;
    loop {
        readings += 1;
        let sent = clock.now_ms();
        let store_ms = timed("read the clock", t.store_timeout, store.clock_ms()).await?;
        let received = clock.now_ms();
        let Some(store_ms) = store_ms else {
            return Ok(());
        };
        match compare_clocks(sent, store_ms, received, t.clock_allowance, operation) {
            Err(e)
                if readings < CLOCK_READINGS
                    && matches!(e.kind(), ErrorKind::ClockSkew { certain: false, .. }) => {}
            checked => return checked,
        }
    }
}

/// The check of [`LeaseOptions::clock_allowance`]: the store read its clock (`store_ms`) at
/// some moment between `sent` and `received` (this clock), so this clock may lead it by up to
/// `received − store_ms` and lag it by up to `store_ms − sent`; both must be within the
/// allowance. [`ErrorKind::ClockSkew`] names the worst case, and whether even the best case
/// (`sent − store_ms`, `store_ms − received`) exceeds it.
pub(crate) fn compare_clocks(
    sent: i64,
    store_ms: i64,
    received: i64,
    allowance: Duration,
    operation: &'static str,
) -> Result<()> {
    let allowed = millis(allowance);
    let most_ahead = received.saturating_sub(store_ms);
    let most_behind = store_ms.saturating_sub(sent);
    if most_ahead <= allowed && most_behind <= allowed {
        return Ok(());
    }
    let (lead_ms, certain) = if most_ahead >= most_behind {
        (most_ahead, sent.saturating_sub(store_ms) > allowed)
    } else {
        (
            most_behind.saturating_neg(),
            store_ms.saturating_sub(received) > allowed,
        )
    };
    Err(ErrorKind::ClockSkew {
        operation,
        lead_ms,
        round_trip_ms: received.saturating_sub(sent),
        allowance,
        certain,
    }
    .into())
}
