//! The renewal: the lease's background task renews it every `renew_every`, extends the fence
//! with what each renewal grants, and reports outages.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use crate::lease::fence::{Grant, check_clock};
use crate::lease::options::millis;
use crate::lease::shared::Shared;
use crate::lease::store::timed;

impl Shared {
    /// Renews the lease, storing as its last timestamp the bound this holder may issue up to
    /// until the next renewal: the fence's ceiling, now + TTL − safety margin + the lead (the
    /// generator issues at most the lead ahead of the clock, and only while the clock reads
    /// before the deadline now + TTL − safety margin). The store's answer (`false`: another
    /// holder has the node ID) and what to grant the fence.
    ///
    /// The store's clock is checked first ([`check_clock`]): a clock too far from it sends no
    /// renewal and answers [`ErrorKind::ClockSkew`].
    pub(super) async fn renew(&self) -> (Result<bool>, Grant) {
        let t = self.options;
        if let Err(skew) = check_clock(&*self.store, &*self.clock, t, "renew").await {
            let never = Grant {
                deadline: i64::MIN + 1,
                ceiling: i64::MIN + 1,
            };
            return (Err(skew), never);
        }
        let deadline = self.clock.now_ms() + millis(t.ttl - t.safety_margin);
        let ceiling = deadline.saturating_add(self.lead_ms.load(Ordering::SeqCst).max(0));
        let request = self.request(t.ttl, Some(ceiling));
        let renewed = timed("renew", t.store_timeout, self.store.renew(request)).await;
        (renewed, Grant { deadline, ceiling })
    }
}

/// Renews the lease until it is released, lost or dropped.
pub(super) async fn heartbeat(shared: Arc<Shared>) {
    let t = shared.options;
    let retry = (t.renew_every / 4).max(Duration::from_millis(10));
    let mut delay = t.renew_every;
    let mut outage = Outage::default();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shared.stop.notified() => return,
        }
        let calls = shared.store_calls.lock().await;
        if shared.stopped.load(Ordering::SeqCst) || shared.in_forked_child() {
            return;
        }
        let (outcome, grant) = shared.renew().await;
        drop(calls);
        match outcome {
            Ok(true) => {
                // Refused once the fence is revoked (released or lost): revocation is final.
                if !shared.fence.extend(grant.deadline, grant.ceiling) {
                    return;
                }
                shared.update(|s| {
                    s.renewals += 1;
                    s.last_error = None;
                    s.valid_until_ms = grant.deadline;
                });
                outage.renewed(&shared);
                delay = t.renew_every;
            }
            Ok(false) => {
                if shared.stopped.load(Ordering::SeqCst) {
                    return; // released meanwhile: not lost
                }
                shared.lose();
                return;
            }
            Err(e) => {
                if matches!(e.kind(), ErrorKind::ClockSkew { certain: true, .. }) {
                    shared.fence_now();
                }
                shared.update(|s| {
                    s.failed_renewals += 1;
                    s.last_error = Some(e.to_string());
                });
                outage.failed(&shared, &e);
                delay = retry;
            }
        }
    }
}

/// Renewal failures in a row, for the operator events (`observe`).
#[derive(Default)]
struct Outage {
    failures: u64,
    fenced: bool,
}

impl Outage {
    fn failed(&mut self, shared: &Shared, error: &Error) {
        self.failures += 1;
        let until = shared.fence.valid_until_ms();
        let (namespace, node) = (&shared.namespace, shared.node);
        crate::observe::events::lease_renewal_failed(namespace, node, self.failures, until, error);
        if !self.fenced && shared.clock.now_ms() >= until {
            self.fenced = true;
            crate::observe::events::lease_fenced(namespace, node, until);
        }
    }

    fn renewed(&mut self, shared: &Shared) {
        if self.failures > 0 {
            crate::observe::events::lease_renewed(&shared.namespace, shared.node, self.failures);
        }
        *self = Outage::default();
    }
}
