//! The claim: [`LeaseOptions::acquire`] claims a node ID on a task of its own, so that a claim
//! landing after its caller gave up is given back at once, and opens the lease.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::error::{ErrorKind, Result};
use crate::lease::fence::check_clock;
use crate::lease::heartbeat::heartbeat;
use crate::lease::options::{LeaseOptions, Timing};
use crate::lease::release::give_back;
use crate::lease::shared::Shared;
use crate::lease::status::LeaseStatus;
use crate::lease::store::{DynLeaseStore, timed};
use crate::lease::takeover::{claim_floor, lead_or_wait};
use crate::lease::worker::WorkerLease;
use crate::lease::{Claim, ClaimRequest, IntoLeaseStore, LeaseStore};
use idgen_core::{Clock, Fence, Layout};

impl LeaseOptions {
    /// Claims a node ID of `layout` from `store` (a pool, with an adapter crate), records the
    /// lease's time bound, and starts renewing it. Must be called inside a tokio runtime.
    ///
    /// The claim runs as a task of its own: if it times out, or this future is dropped while it
    /// is in flight, a claim that still lands afterwards is given back at once (as long as the
    /// runtime runs), so it does not hold its node ID for the TTL.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NoFreeNode`] when every node ID is leased, [`ErrorKind::LeaseStore`] when the
    /// store fails or times out, [`ErrorKind::LeaseOptionOutOfRange`] for a timing outside its
    /// range and [`ErrorKind::InvalidOptions`] for inconsistent timings (both before any store
    /// call), [`ErrorKind::LeaseLostDuringTakeover`] when another holder took the node ID while
    /// `acquire` waited for its bound ([`takeover_wait`](LeaseOptions::takeover_wait)),
    /// [`ErrorKind::ClockSkew`] when this clock and the store's differ by more than the
    /// [clock allowance](LeaseOptions::clock_allowance) (nothing is claimed).
    pub async fn acquire<M>(
        self,
        store: impl IntoLeaseStore<M>,
        layout: &Layout,
    ) -> Result<WorkerLease> {
        let t = self.timing;
        let capacity = self.check(layout)?;
        let store = store.into_lease_store(&self.table);
        if self.create_if_missing {
            timed("create", t.store_timeout, store.create_if_missing()).await?;
        }
        // Before any claim: a namespace keeps the layout it was first used with.
        let requested = crate::lease::layout_key(layout);
        let recorded = timed(
            "record the layout",
            t.store_timeout,
            store.record_layout(&self.namespace, &requested),
        )
        .await?;
        if let Some(recorded) = recorded.filter(|recorded| *recorded != requested) {
            return Err(ErrorKind::LayoutMismatch {
                namespace: self.namespace.clone(),
                recorded,
                requested,
            }
            .into());
        }
        // Before the claim: a clock too far from the store's claims nothing.
        check_clock(&store, &*self.clock, t, "claim").await?;
        let namespace = self.namespace.clone();
        let task = ClaimTask {
            store: Arc::new(store),
            namespace: self.namespace,
            holder: unique_holder(self.holder.as_deref()),
            capacity,
            timing: t,
            skip_takeover_bound: self.skip_takeover_bound,
            clock: self.clock,
        };
        // The node ID is ours from the moment the claim lands, even one this future no longer
        // waits for: if anything below fails, or this future is dropped (a caller's time-out),
        // the guard gives it back rather than leave it held for the TTL.
        let mut claimed = task.spawn().await?.ok_or(ErrorKind::NoFreeNode {
            namespace,
            capacity,
        })?;
        let shared = Arc::clone(&claimed.shared);
        crate::observe::events::node_claimed(&shared.namespace, shared.node, capacity);

        let wait_until = lead_or_wait(&shared, self.takeover_wait, t, layout);

        // Record the bound this holder may issue up to before the first renewal, then open.
        let (renewed, grant) = shared.renew().await;
        if !renewed? {
            claimed.armed = false; // not ours any more: nothing to give back
            return Err(ErrorKind::LeaseStore {
                operation: "renew",
                message: format!(
                    "node ID {} was claimed by another holder at once",
                    shared.node
                ),
                source: None,
            }
            .into());
        }
        shared.fence.extend(grant.deadline, grant.ceiling);
        shared.update(|s| s.valid_until_ms = grant.deadline);
        claimed.armed = false;
        let heartbeat = tokio::spawn(heartbeat(Arc::clone(&shared)));
        let lease = WorkerLease { shared, heartbeat };
        if let Some(until) = wait_until {
            // Renewed in the background meanwhile; dropped (the caller gave up), the lease
            // gives the node ID back with this bound as its last timestamp.
            lease.wait_until(until).await;
            if lease.shared.fence.is_revoked() || lease.handle().status().lost {
                return Err(ErrorKind::LeaseLostDuringTakeover {
                    namespace: lease.shared.namespace.clone(),
                    node: lease.shared.node,
                }
                .into());
            }
        }
        Ok(lease)
    }
}

/// A claim of `acquire`, run as a task of its own so that its answer is never lost: a claim
/// can land after its caller gave up on it (the store's time-out, the caller's own time-out or
/// a dropped `acquire`: a statement already sent commits on PostgreSQL, SQLite, etcd and Redis,
/// and diesel's threads run theirs to the end), and such a claim must be given back at once
/// rather than hold its node ID for the TTL.
struct ClaimTask {
    store: Arc<dyn DynLeaseStore>,
    namespace: String,
    holder: String,
    capacity: u64,
    timing: Timing,
    skip_takeover_bound: bool,
    clock: Arc<dyn Clock>,
}

impl ClaimTask {
    /// Starts the claim on a task of its own and waits at most the store time-out for it: the
    /// claimed node ID in a guard, `None` when every node ID is held.
    ///
    /// The task sends its guard to this future; when nobody waits for it any more, the guard is
    /// dropped unopened and gives the node ID back with the exact bound of a claim that issued
    /// nothing (see [`ClaimGuard`]). The task waits for the claim one TTL longer than its
    /// caller did; a claim that lands even later holds its node ID until its TTL runs out. A
    /// runtime that shuts down drops the task: a claim that has landed by then is given back
    /// (on a thread of its own, see [`give_back`]), one still in flight cannot be known.
    async fn spawn(self) -> Result<Option<ClaimGuard>> {
        let t = self.timing;
        let (answer, answered) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let landed = tokio::time::timeout(t.store_timeout + t.ttl, self.claim()).await;
            let landed = landed.unwrap_or_else(|_| Err("the claim never answered".into()));
            let landed = landed.map(|claim| claim.map(|claim| ClaimGuard::of(self, claim)));
            // Refused or dropped unread when `acquire` stopped waiting: the guard gives back.
            let _ = answer.send(landed);
        });
        let answered = async move {
            answered.await.unwrap_or_else(|_| {
                Err("the claim's task ended without an answer (its runtime shut down)".into())
            })
        };
        timed("claim", t.store_timeout, answered).await
    }

    async fn claim(&self) -> std::result::Result<Option<Claim>, crate::lease::BoxError> {
        let request = ClaimRequest {
            namespace: &self.namespace,
            capacity: self.capacity,
            holder: &self.holder,
            ttl: self.timing.ttl,
        };
        self.store.claim(request).await
    }
}

/// A node ID claimed by an `acquire` that has not returned yet (or never will): given back
/// when dropped armed.
struct ClaimGuard {
    shared: Arc<Shared>,
    armed: bool,
}

impl ClaimGuard {
    /// The lease's state after `claim` landed, held by the guard. Nothing is issued until the
    /// first renewal has stored its bound, so a release of it stores the claim's own floor.
    fn of(task: ClaimTask, claim: Claim) -> ClaimGuard {
        let shared = Shared {
            store: task.store,
            namespace: task.namespace,
            holder: task.holder,
            node: claim.node,
            floor_ms: claim_floor(&claim, task.skip_takeover_bound, task.timing, &*task.clock),
            lead_ms: AtomicI64::new(0),
            options: task.timing,
            clock: task.clock,
            // Closed until the first renewal has stored the bound.
            fence: Fence::new(i64::MIN + 1),
            status: Mutex::new(LeaseStatus::default()),
            stopped: AtomicBool::new(false),
            released: AtomicBool::new(false),
            stop: Notify::new(),
            store_calls: tokio::sync::Mutex::new(()),
            forks: idgen_core::fork::generation(),
        };
        ClaimGuard {
            shared: Arc::new(shared),
            armed: true,
        }
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if self.armed {
            let last = self.shared.stop_issuing();
            give_back(Arc::clone(&self.shared), last);
        }
    }
}

/// `label:random` (`host:pid:random` without a label): unique per lease, readable in the table.
fn unique_holder(label: Option<&str>) -> String {
    let label = match label {
        Some(label) => label.to_owned(),
        None => format!(
            "{}:{}",
            gethostname::gethostname().to_string_lossy(),
            std::process::id()
        ),
    };
    let mut nonce = [0u8; 8];
    if getrandom::fill(&mut nonce).is_err() {
        // No OS randomness: the time and a per-process counter still differ per lease.
        use std::hash::{BuildHasher, RandomState};
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        nonce = RandomState::new()
            .hash_one((std::process::id(), std::time::SystemTime::now(), n))
            .to_le_bytes();
    }
    format!("{label}:{:016x}", u64::from_le_bytes(nonce))
}
