//! [`WorkerLease`]: a node ID leased from a [`LeaseStore`](crate::lease::LeaseStore), renewed
//! in the background; and its [`LeaseHandle`]. How it is claimed, renewed, fenced and released
//! is in the modules beside this one.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::error::Result;
use crate::lease::IntoLeaseStore;
use crate::lease::options::LeaseOptions;
use crate::lease::shared::Shared;
use crate::lease::status::LeaseStatus;
use idgen_core::{Fence, Layout, NodeLease};

/// A node ID leased from a database, so two live processes never share one.
///
/// [`acquire`](WorkerLease::acquire) claims the lowest free or expired node ID of the layout's
/// node space; a background task renews the lease every `renew_every` and moves the
/// [`Fence`] of the generator built from it. If renewals fail until the lease is within
/// `safety_margin` of expiring, the generator stops issuing ([`idgen_core::Error::Fenced`]) before any other
/// process can be handed the node ID, and resumes when a renewal succeeds again.
///
/// Each renewal stores, as the row's last timestamp, the fence deadline it is about to grant
/// (raised by the lead, after a takeover: see [`LeaseOptions::takeover_wait`]): an upper bound
/// on every timestamp this process may issue before the next renewal. The next holder of the
/// node ID (after a crash, or on another host whose clock is behind) issues only after it,
/// never reissuing. A graceful [`release`](LeaseHandle::release) stops the generator, stores the exact
/// last timestamp it issued, and frees the node ID at once.
///
/// **Shut down with [`LeaseHandle::release`]**, or drop the generator (and with it the lease)
/// while the runtime still runs. If the lease is dropped after its runtime has stopped (at the
/// end of `#[tokio::main]`), `Drop` still gives the node ID back, best effort and bounded: on a
/// short-lived thread with a runtime and a connection of its own (for stores that offer
/// [`LeaseStore::detached`](crate::lease::LeaseStore::detached)), waiting at most
/// `min(store_timeout, 2 s)`. Failing that, the node ID is free again after its TTL.
///
/// **After `fork()`** (without `exec`), the node ID stays the parent's: the child's copy of
/// the lease never renews or releases it. [`LeaseHandle::release`] returns [`idgen_core::Error::Forked`]
/// there, dropping the copy does nothing with the store, the renewal task does not run in the
/// child (or, in a copy of a current-thread runtime the child drives, stops without a call),
/// and a generator built in the child on the copy is refused. A child that needs Snowflake IDs
/// acquires a lease of its own.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_engine::Error> {
/// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
/// use idgen_core::{Layout, Snowflake};
///
/// let store = MemoryLeaseStore::new(); // the adapter crates pass a database pool instead
/// let lease = WorkerLease::acquire(store, &Layout::TWITTER).await?;
/// let handle = lease.handle();
/// let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
/// let id = ids.next_id()?;
/// assert_eq!(Layout::TWITTER.decompose(id)?.node, handle.node());
///
/// handle.release().await?; // graceful shutdown: the generator stops, the node ID is free
/// assert!(ids.next_id().is_err());
/// # Ok(()) }
/// ```
pub struct WorkerLease {
    pub(super) shared: Arc<Shared>,
    pub(super) heartbeat: tokio::task::JoinHandle<()>,
}

impl WorkerLease {
    /// Claims a node ID of `layout` with the default [`LeaseOptions`]; see
    /// [`LeaseOptions::acquire`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// use idgen_engine::{ErrorKind, Layout};
    ///
    /// let tiny = Layout::builder().node_bits(1).build()?; // 2 node IDs
    /// let store = MemoryLeaseStore::new();
    /// let _a = WorkerLease::acquire(store.clone(), &tiny).await?;
    /// let _b = WorkerLease::acquire(store.clone(), &tiny).await?;
    /// let err = WorkerLease::acquire(store.clone(), &tiny).await.err().unwrap();
    /// assert!(matches!(err.kind(), ErrorKind::NoFreeNode { capacity: 2, .. }));
    /// # Ok(()) }
    /// ```
    pub async fn acquire<M>(store: impl IntoLeaseStore<M>, layout: &Layout) -> Result<WorkerLease> {
        LeaseOptions::default().acquire(store, layout).await
    }

    /// Options for acquiring a lease.
    ///
    /// ```
    /// let options = idgen_engine::lease::WorkerLease::options().namespace("orders");
    /// # let _ = options;
    /// ```
    pub fn options() -> LeaseOptions {
        LeaseOptions::default()
    }

    /// The leased node ID.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// # use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let lease = WorkerLease::acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER).await?;
    /// assert_eq!(lease.node(), 0); // the lowest free one
    /// # Ok(()) }
    /// ```
    pub fn node(&self) -> u64 {
        self.shared.node
    }

    /// The namespace the node ID was leased in.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// The holder name in the lease row: the label (host name and process ID by default) and a
    /// random suffix, unique to this lease.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// # use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let lease = WorkerLease::acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER).await?;
    /// assert!(lease.holder().contains(&std::process::id().to_string()));
    /// # Ok(()) }
    /// ```
    pub fn holder(&self) -> &str {
        &self.shared.holder
    }

    /// The bound the generator issues after: the largest last timestamp an earlier holder
    /// stored, or, after a claim the store could not prove free, the claim time + TTL + twice
    /// the clock allowance if later (see [`LeaseOptions::clock_allowance`]).
    pub fn previous_timestamp_ms(&self) -> Option<i64> {
        self.shared.floor_ms
    }

    /// A handle that outlives moving the lease into a generator: status and graceful release.
    pub fn handle(&self) -> LeaseHandle {
        LeaseHandle {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl NodeLease for WorkerLease {
    fn node(&self) -> u64 {
        self.shared.node
    }
    fn fence(&self) -> Fence {
        self.shared.fence.clone()
    }
    fn not_before_ms(&self) -> Option<i64> {
        self.shared.floor_ms
    }
    fn lead(&self) -> Duration {
        Duration::from_millis(
            self.shared
                .lead_ms
                .load(Ordering::SeqCst)
                .max(0)
                .unsigned_abs(),
        )
    }
    fn clock_now_ms(&self) -> Option<i64> {
        Some(self.shared.clock.now_ms())
    }
}

impl std::fmt::Debug for WorkerLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.handle().fmt(f)
    }
}

/// A clonable handle to a [`WorkerLease`], kept after the lease moved into a generator.
#[derive(Clone)]
pub struct LeaseHandle {
    pub(super) shared: Arc<Shared>,
}

impl LeaseHandle {
    /// The leased node ID.
    pub fn node(&self) -> u64 {
        self.shared.node
    }

    /// The namespace the node ID was leased in.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// # use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let lease = WorkerLease::options().namespace("orders")
    ///     .acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER).await?;
    /// assert_eq!(lease.handle().namespace(), "orders");
    /// # Ok(()) }
    /// ```
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// The fence the generator checks.
    pub fn fence(&self) -> Fence {
        self.shared.fence.clone()
    }

    /// What the background renewal has seen.
    pub fn status(&self) -> LeaseStatus {
        self.shared
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl std::fmt::Debug for LeaseHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerLease")
            .field("namespace", &self.shared.namespace)
            .field("node", &self.shared.node)
            .field("holder", &self.shared.holder)
            .field("status", &self.status())
            .finish()
    }
}
