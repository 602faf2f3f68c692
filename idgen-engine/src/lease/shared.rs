//! The state one lease's parts share: the claim that made it, the renewals, the release and
//! the handles all hold one [`Shared`].

use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::lease::RenewRequest;
use crate::lease::options::Timing;
use crate::lease::status::LeaseStatus;
use crate::lease::store::DynLeaseStore;
use idgen_core::{Clock, Fence};

/// One lease's state, shared by its [`WorkerLease`](crate::lease::WorkerLease), its handles,
/// its renewal task and its release.
pub(super) struct Shared {
    pub(super) store: Arc<dyn DynLeaseStore>,
    pub(super) namespace: String,
    pub(super) holder: String,
    pub(super) node: u64,
    pub(super) floor_ms: Option<i64>,
    /// How far ahead of the clock the generator may issue (ms; 0 when the floor is not
    /// ahead, or with the takeover wait): set before the first renewal, whose stored bound
    /// covers it (see [`Shared::renew`]).
    pub(super) lead_ms: AtomicI64,
    pub(super) options: Timing,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) fence: Fence,
    pub(super) status: Mutex<LeaseStatus>,
    /// Set by the first release (graceful, by `Drop`, or of a claim nobody took), after the
    /// fence is revoked: no renewal is sent after it.
    pub(super) stopped: AtomicBool,
    /// Set once a release has reached the store and succeeded: later ones do nothing. Until
    /// then a release can be tried again, and `Drop` tries it.
    pub(super) released: AtomicBool,
    pub(super) stop: Notify,
    /// Held across each renewal and the release, so a release is sent only after a renewal in
    /// flight has been answered (or timed out).
    pub(super) store_calls: tokio::sync::Mutex<()>,
    /// The fork count the lease was claimed under: a copy in a forked child never renews or
    /// releases (the node ID is the parent's; see `idgen_core::fork`).
    pub(super) forks: u64,
}

impl Shared {
    /// Whether this is a copy of the lease in a forked child: the node ID is the parent's, so
    /// the copy never renews or releases it.
    pub(super) fn in_forked_child(&self) -> bool {
        idgen_core::fork::is_forked_since(self.forks)
    }

    /// A request about this lease's row: its namespace, node ID and holder.
    pub(super) fn request(
        &self,
        ttl: Duration,
        last_timestamp_ms: Option<i64>,
    ) -> RenewRequest<'_> {
        RenewRequest {
            namespace: &self.namespace,
            node: self.node,
            holder: &self.holder,
            ttl,
            last_timestamp_ms,
        }
    }

    pub(super) fn update(&self, f: impl FnOnce(&mut LeaseStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|p| p.into_inner()));
    }
}
