//! The takeover bound: a claim the store cannot prove free issues only above its claim time +
//! TTL + twice the clock allowance, ahead of the clock at once or after a wait for it
//! ([`LeaseOptions::takeover_wait`](crate::lease::LeaseOptions::takeover_wait)).

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::lease::Claim;
use crate::lease::options::{Timing, millis};
use crate::lease::shared::Shared;
use crate::lease::worker::WorkerLease;
use idgen_core::{Clock, Layout};

/// The bound below which a fresh claim must not issue: the stored last tick when the store proved
/// the node ID released (or the bound is skipped for tests), else the takeover bound below.
pub(super) fn claim_floor(
    claim: &Claim,
    skip_bound: bool,
    t: Timing,
    clock: &dyn Clock,
) -> Option<i64> {
    if claim.exact || skip_bound {
        return claim.last_timestamp_ms;
    }
    // The store cannot prove the node ID free: no row or key for it, or a lease taken
    // over after it expired. It may have forgotten a holder that still issues (a
    // restart without persistence, a restore, a failover to a lagging replica, a
    // database back empty). Why waiting until `now + ttl + 2 × allowance` is enough:
    //
    // * A holder H issues only ticks up to the fence deadline of its last renewal the
    //   store acknowledged (the fence refuses later ticks, whatever the clock policy;
    //   an unacknowledged renewal never moves the fence). H computed that deadline
    //   before sending the renewal: H's clock then + TTL − safety margin.
    // * The store acknowledged that renewal before it forgot it, and this claim
    //   returned after the store forgot: so H read its clock before this host reads
    //   `now` below (real time), and a host's clock does not step back (`Clock`).
    // * Checked (`check_clock`, on stores that report their clock): H's clock was within
    //   `clock_allowance` of the store's at that renewal, and this host's is within it at
    //   this claim; the store's clock does not step back. So H's clock then was at most
    //   2 × allowance ahead of this host's now (the safety margin covers the clocks'
    //   rate difference over one TTL). On a store without a clock (etcd) that is the
    //   assumption: every host within the allowance of true time (NTP). Then H's
    //   deadline ≤ this host's `now` + 2 × allowance + TTL: every tick H can issue is at
    //   or below the bound, and this lease issues only after it.
    // * A row's stored last timestamp is kept too (`max`): a previous holder whose
    //   clock ran far ahead, or that issued ahead of its clock after a takeover, is still
    //   never reissued.
    // * Issuing from the bound at once (ahead of the clock) instead of waiting for the clock
    //   to pass it keeps all of the above: only the ticks matter, not when they are issued.
    //   This lease's own renewals then store bounds that cover its ticks ahead.
    //
    // A node ID given back with `release` carries the exact last tick (`exact`): it is
    // free at once.
    let bound = clock
        .now_ms()
        .saturating_add(millis(t.ttl))
        .saturating_add(millis(t.clock_allowance).saturating_mul(2));
    Some(
        claim
            .last_timestamp_ms
            .map_or(bound, |last| last.max(bound)),
    )
}

impl WorkerLease {
    /// Waits until the clock reads `until` (the takeover bound + 1, or the bound less the
    /// longest lead), logging why once; returns early if the lease is lost meanwhile.
    pub(super) async fn wait_until(&self, until: i64) {
        let clock = &self.shared.clock;
        let wait_ms = until - clock.now_ms();
        if wait_ms <= 0 {
            return;
        }
        crate::observe::events::lease_takeover_wait(
            &self.shared.namespace,
            self.shared.node,
            until - 1,
            wait_ms,
        );
        if clock.is_simulated() {
            // A simulated clock jumps: renew once after it, as the heartbeat would have meanwhile.
            clock.wait_until(until);
            let _calls = self.shared.store_calls.lock().await;
            match self.shared.renew().await {
                (Ok(true), grant) => {
                    if self.shared.fence.extend(grant.deadline, grant.ceiling) {
                        self.shared.update(|s| s.valid_until_ms = grant.deadline);
                    }
                }
                (Ok(false), _) => self.shared.lose(),
                (Err(_), _) => {}
            }
            return;
        }
        // Looks every retry interval whether the heartbeat found the lease lost.
        let step = (self.shared.options.renew_every / 4).max(Duration::from_millis(10));
        loop {
            let remaining = until - clock.now_ms();
            if remaining <= 0 || self.shared.fence.is_revoked() {
                return;
            }
            let nap = Duration::from_millis(remaining.unsigned_abs()).min(step);
            tokio::time::sleep(nap).await;
        }
    }
}

/// After a claim: stores the lead of the generator ahead of the clock (without the takeover
/// wait), and answers the clock reading `acquire` waits for, if any.
pub(super) fn lead_or_wait(
    shared: &Shared,
    takeover_wait: bool,
    t: Timing,
    layout: &Layout,
) -> Option<i64> {
    // How far the bound lies ahead of the clock decides the lead (or, with the takeover
    // wait, how long to wait). A bound ahead by more than `max_lead` (a previous holder on
    // a host whose clock ran far ahead) is waited down to it.
    let max_lead = millis(t.ttl)
        .saturating_mul(2)
        .saturating_add(millis(t.clock_allowance).saturating_mul(2));
    let wait_until = shared.floor_ms.and_then(|floor| {
        let now = shared.clock.now_ms();
        // With the wait, a floor in this very millisecond is the generator's to wait for
        // (its clock policy), as after any release.
        let until = if takeover_wait {
            (floor > now).then(|| floor.saturating_add(1))
        } else {
            Some(floor.saturating_sub(max_lead))
        };
        until.filter(|until| *until > now)
    });
    if !takeover_wait && let Some(floor) = shared.floor_ms {
        // Up to the floor's tick and one tick more: the generator's first ID is in the tick
        // after the floor's. The first renewal's bound covers it.
        let unit = i64::from(layout.unit_ms());
        let ahead = floor.saturating_add(unit) - shared.clock.now_ms();
        let lead = ahead.clamp(0, max_lead.saturating_add(unit));
        shared.lead_ms.store(lead, Ordering::SeqCst);
        if lead > unit {
            crate::observe::events::lease_takeover_lead(
                &shared.namespace,
                shared.node,
                floor,
                lead,
            );
        }
    }
    wait_until
}
