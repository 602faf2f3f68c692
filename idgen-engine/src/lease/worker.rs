//! [`WorkerLease`]: a node ID leased from a [`LeaseStore`], renewed in the background.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::error::{Error, Result};
use crate::lease::store::DynLeaseStore;
use crate::lease::{Claim, ClaimRequest, IntoLeaseStore, LeaseStore, RenewRequest};
use idgen_core::{Clock, Fence, Layout, NodeLease, SystemClock};

/// The lease table's default name, shared by every SQL adapter: what a
/// [`LeaseOptions::table`] that was not set names.
///
/// ```
/// assert_eq!(idgen_engine::lease::DEFAULT_LEASE_TABLE, "idgen_worker_lease");
/// ```
pub const DEFAULT_LEASE_TABLE: &str = "idgen_worker_lease";

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
    shared: Arc<Shared>,
    heartbeat: tokio::task::JoinHandle<()>,
}

struct Shared {
    store: Arc<dyn DynLeaseStore>,
    namespace: String,
    holder: String,
    node: u64,
    floor_ms: Option<i64>,
    /// How far ahead of the clock the generator may issue (ms; 0 when the floor is not
    /// ahead, or with the takeover wait): set before the first renewal, whose stored bound
    /// covers it (see [`Shared::renew`]).
    lead_ms: AtomicI64,
    options: Timing,
    clock: Arc<dyn Clock>,
    fence: Fence,
    status: Mutex<LeaseStatus>,
    /// Set by the first release (graceful, by `Drop`, or of a claim nobody took), after the
    /// fence is revoked: no renewal is sent after it.
    stopped: AtomicBool,
    /// Set once a release has reached the store and succeeded: later ones do nothing. Until
    /// then a release can be tried again, and `Drop` tries it.
    released: AtomicBool,
    stop: Notify,
    /// Held across each renewal and the release, so a release is sent only after a renewal in
    /// flight has been answered (or timed out).
    store_calls: tokio::sync::Mutex<()>,
    /// The fork count the lease was claimed under: a copy in a forked child never renews or
    /// releases (the node ID is the parent's; see `idgen_core::fork`).
    forks: u64,
}

#[derive(Clone, Copy, Debug)]
struct Timing {
    ttl: Duration,
    renew_every: Duration,
    safety_margin: Duration,
    store_timeout: Duration,
    clock_allowance: Duration,
}

/// What the lease's background renewal has seen, from [`LeaseHandle::status`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseStatus {
    /// Successful renewals.
    pub renewals: u64,
    /// Renewals that failed (store error or time-out).
    pub failed_renewals: u64,
    /// The last renewal error, if the last renewal failed.
    pub last_error: Option<String>,
    /// The node ID was taken by another holder (after this one's lease expired); the generator
    /// is stopped for good.
    pub lost: bool,
    /// The fence deadline, in Unix ms: the generator issues IDs until then.
    pub valid_until_ms: i64,
}

/// Options for [`WorkerLease`]; start from [`WorkerLease::options`].
///
/// **The clock is checked against the store's.** Before every claim and renewal the lease
/// reads the store's clock and refuses a claim ([`Error::ClockSkew`]), or fences the
/// generator, when it differs from the clock IDs are issued from by more than the
/// [clock allowance](LeaseOptions::clock_allowance) (not on etcd, which reports no clock).
///
/// Defaults: namespace `"default"`, table `"idgen_worker_lease"`, TTL 30 s, renewal every 10 s,
/// safety margin 5 s, store calls time out after 5 s, clock allowance 1 s, capacity = the
/// layout's node capacity, holder = host name, process ID and a random suffix.
///
/// **A takeover issues at once, ahead of the clock.** A claim the store cannot prove free (no
/// row or key for the node ID yet, a table just created, a lease taken over after it expired)
/// issues only at ticks after its claim time + one TTL + twice the
/// [clock allowance](LeaseOptions::clock_allowance), so that a holder the store forgot has
/// issued below them. By default `acquire` returns at once and the generator starts at that
/// bound: the time field of its IDs leads real time by at most TTL + 2 × allowance (32 s with
/// the defaults), less as the clock catches up. [`takeover_wait(true)`](LeaseOptions::takeover_wait)
/// waits for the clock instead (32 s at start-up with the defaults), for applications that read
/// the time field as the creation time. A node ID given back with [`LeaseHandle::release`] is
/// taken at once with its exact last timestamp.
///
/// Timings are checked by [`acquire`](LeaseOptions::acquire) before any store call: each within
/// its range ([`MAX_TTL`](LeaseOptions::MAX_TTL), [`MAX_STORE_TIMEOUT`](LeaseOptions::MAX_STORE_TIMEOUT),
/// [`MAX_CLOCK_ALLOWANCE`](LeaseOptions::MAX_CLOCK_ALLOWANCE); [`Error::LeaseOptionOutOfRange`]),
/// and consistent with each other ([`Error::InvalidOptions`]).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_engine::Error> {
/// use std::time::Duration;
/// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
/// use idgen_core::Layout;
///
/// let lease = WorkerLease::options()
///     .namespace("orders")
///     .ttl(Duration::from_secs(60))
///     .renew_every(Duration::from_secs(15))
///     .safety_margin(Duration::from_secs(10))
///     .acquire(MemoryLeaseStore::new(), &Layout::TWITTER)
///     .await?;
/// assert_eq!(lease.namespace(), "orders");
///
/// let err = WorkerLease::options().renew_every(Duration::from_secs(30))
///     .acquire(MemoryLeaseStore::new(), &Layout::TWITTER).await.err().unwrap();
/// assert!(err.to_string().contains("renew_every (30s) must be shorter than ttl - safety_margin (25s)"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct LeaseOptions {
    namespace: String,
    table: String,
    timing: Timing,
    capacity: Option<u64>,
    holder: Option<String>,
    clock: Arc<dyn Clock>,
    /// `None`: the store's own default ([`LeaseStore::create_if_missing_by_default`]).
    create_if_missing: Option<bool>,
    takeover_wait: bool,
    /// No takeover bound at all (tests and development only).
    skip_takeover_bound: bool,
}

impl std::fmt::Debug for LeaseOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseOptions")
            .field("namespace", &self.namespace)
            .field("table", &self.table)
            .field("timing", &self.timing)
            .field("capacity", &self.capacity)
            .field("holder", &self.holder)
            .field("create_if_missing", &self.create_if_missing)
            .field("takeover_wait", &self.takeover_wait)
            .field("skip_takeover_bound", &self.skip_takeover_bound)
            .finish()
    }
}

impl Default for LeaseOptions {
    fn default() -> Self {
        LeaseOptions {
            namespace: "default".into(),
            table: DEFAULT_LEASE_TABLE.into(),
            timing: Timing {
                ttl: Duration::from_secs(30),
                renew_every: Duration::from_secs(10),
                safety_margin: Duration::from_secs(5),
                store_timeout: Duration::from_secs(5),
                clock_allowance: Duration::from_secs(1),
            },
            capacity: None,
            holder: None,
            clock: Arc::new(SystemClock::new()),
            create_if_missing: None,
            takeover_wait: false,
            skip_takeover_bound: false,
        }
    }
}

impl LeaseOptions {
    /// The longest [`ttl`](LeaseOptions::ttl) accepted: one day.
    pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);
    /// The longest [`store_timeout`](LeaseOptions::store_timeout) accepted: one hour.
    pub const MAX_STORE_TIMEOUT: Duration = Duration::from_secs(60 * 60);
    /// The largest [`clock_allowance`](LeaseOptions::clock_allowance) accepted: one hour.
    pub const MAX_CLOCK_ALLOWANCE: Duration = Duration::from_secs(60 * 60);

    /// Separates independent generators sharing one lease table.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The lease table's name (for database stores).
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = table.into();
        self
    }

    /// How long a lease lasts without renewal.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.timing.ttl = ttl;
        self
    }

    /// How often the background task renews the lease.
    pub fn renew_every(mut self, every: Duration) -> Self {
        self.timing.renew_every = every;
        self
    }

    /// How long before the lease's expiry the generator stops, when renewals fail: covers
    /// clock-rate differences and the time between a renewal's send and its commit.
    pub fn safety_margin(mut self, margin: Duration) -> Self {
        self.timing.safety_margin = margin;
        self
    }

    /// How long one store call may take before it counts as failed. A claim that answers after
    /// it (or after the caller dropped [`acquire`](LeaseOptions::acquire)) is given back at
    /// once; a release that timed out can be tried again (see [`LeaseHandle::release`]).
    pub fn store_timeout(mut self, timeout: Duration) -> Self {
        self.timing.store_timeout = timeout;
        self
    }

    /// How far the clock this lease issues IDs from may differ from the lease store's clock,
    /// either way (default 1 s): checked before every claim and every renewal, and part of the
    /// bound after a claim the store cannot prove free (Chubby's *lock-delay*).
    ///
    /// **The check.** Before a claim and before each renewal the lease reads the store's clock
    /// ([`LeaseStore::clock_ms`]: PostgreSQL `now()`, MariaDB/MySQL `UTC_TIMESTAMP(6)`, SQLite
    /// the host's clock, Redis `TIME`, the memory store's clock) between two readings of its
    /// own clock (the one [`clock`](Self::clock) sets, which the generator issues from), one
    /// at the send and one at the answer. The store read its clock somewhere in that round
    /// trip, so the lease takes the worst case: it may lead the store by the answer's reading
    /// minus the store's, and lag it by the store's minus the send's reading; both must be
    /// within the allowance. So a difference beyond the allowance is never accepted, and a
    /// slow round trip only refuses more (one longer than twice the allowance is always
    /// refused). A claim that fails the check is refused with [`Error::ClockSkew`] before
    /// anything is claimed. A renewal that fails it is not sent: when even the best case
    /// exceeds the allowance the generator is fenced at once; when only a slow round trip
    /// leaves it unsure, it counts as a failed renewal (the generator fences at its deadline
    /// if that goes on). The generator issues again once a renewal finds the clocks within the
    /// allowance, unless another holder took the node ID meanwhile. Both show in
    /// [`LeaseHandle::status`] (`last_error`). **etcd reports no clock: there is no check**,
    /// and the rule below rests on the hosts' clocks being kept within the allowance of true
    /// time (NTP) and on etcd not forgetting what it acknowledged.
    ///
    /// **The takeover bound.** A lease store can forget what it acknowledged: Redis restarted
    /// without persistence, a database restored from a backup or failed over to a lagging
    /// replica, a volume lost and the database back empty. Its rows then cannot tell that a
    /// node ID is free; time can. A holder issues only up to the fence deadline of its last
    /// acknowledged renewal, which it computed before sending it, as its clock + TTL − safety
    /// margin; and the store forgot that renewal only after acknowledging it, so before this
    /// claim returned. That holder's clock was within the allowance of the store's at that
    /// renewal (checked), and this host's is within it at this claim (checked), so the two
    /// differ by at most twice the allowance (the safety margin covers the clocks' rates
    /// over one TTL). So when the claim finds no record of a release (no row or key, a lease
    /// taken over after expiry), the lease issues only at ticks after this host's clock at
    /// the claim's return + TTL + **twice** this allowance: after every tick a forgotten
    /// holder can issue. By default the generator starts at those ticks at once, ahead of the
    /// clock (a `lease_takeover_lead` event); with [`takeover_wait(true)`](LeaseOptions::takeover_wait),
    /// `acquire` waits until the clock has passed them (a `lease_takeover_wait` event),
    /// renewing meanwhile.
    ///
    /// ```
    /// use std::time::Duration;
    /// let options = idgen_engine::lease::WorkerLease::options().clock_allowance(Duration::from_secs(2));
    /// # let _ = options;
    /// ```
    pub fn clock_allowance(mut self, allowance: Duration) -> Self {
        self.timing.clock_allowance = allowance;
        self
    }

    /// Whether `acquire` waits for the clock to pass the lease's bound when that lies ahead
    /// (default `false`).
    ///
    /// A claim the store cannot prove free (a new row or key, a lease taken over after it
    /// expired) must not issue at or below its claim time + TTL + twice the [clock
    /// allowance](Self::clock_allowance); a node ID given back early may carry a bound ahead of
    /// the clock too. With `false`, `acquire` returns at once and the generator issues from
    /// that bound, ahead of the clock: IDs stay unique and increasing, and their time field
    /// leads real time by at most TTL + 2 × allowance (32 s with the defaults), less as the clock
    /// catches up (reached after that long at the latest, sooner if the generator idles).
    /// Renewals store a bound that covers the ticks issued ahead, so the next holder starts
    /// above them.
    ///
    /// With `true`, `acquire` waits until the clock has passed the bound (about 32 s after a
    /// takeover with the defaults), renewing meanwhile: for applications that read the time
    /// field of an ID as its creation time. It is also the stronger choice against a store that
    /// forgets twice within one TTL (a Redis restarted without persistence twice in a row): a
    /// generator that waited issues only below its lease's deadline, which any later claim's
    /// bound covers, while one that leads issues above it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let lease = WorkerLease::options()
    ///     .takeover_wait(true) // IDs' time field close to real time, at the cost of a wait
    ///     .acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER)
    ///     .await?;
    /// assert_eq!(lease.node(), 0);
    /// # Ok(()) }
    /// ```
    pub fn takeover_wait(mut self, wait: bool) -> Self {
        self.takeover_wait = wait;
        self
    }

    /// **Tests and development only.** `true` puts no takeover bound on a claim the store
    /// cannot prove free: the generator starts at the clock (or the row's stored bound), not
    /// at claim time + TTL + twice the [clock allowance](Self::clock_allowance). With it, a database
    /// restored from a backup, a Redis restarted without persistence, or a table recreated
    /// empty while old holders still run can give one node ID to two processes, and so
    /// duplicate IDs. Since a takeover no longer waits by default (see
    /// [`takeover_wait`](Self::takeover_wait)), only tests that check the time field of IDs
    /// against the clock need it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let lease = WorkerLease::options()
    ///     .skip_takeover_wait_for_tests_and_development(true)
    ///     .acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER)
    ///     .await?;
    /// assert_eq!(lease.node(), 0);
    /// # Ok(()) }
    /// ```
    pub fn skip_takeover_wait_for_tests_and_development(mut self, skip: bool) -> Self {
        self.skip_takeover_bound = skip;
        self
    }

    /// Lease only node IDs `0..capacity` (at most the layout's node capacity).
    pub fn capacity(mut self, capacity: u64) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// Whether the claim creates what the store needs (the lease table of a database store)
    /// when it is missing (default: the store's
    /// [`create_if_missing_by_default`](LeaseStore::create_if_missing_by_default), `true` for
    /// every store of the idgen crates): looked for first, created only when missing, and
    /// safe when many processes start at the same moment (see
    /// [`LeaseStore::create_if_missing`]). So `WorkerLease::acquire(&pool, &layout)` works on
    /// an empty database and on every restart, like `HiLo::new(pool, 1000)`.
    ///
    /// Unlike a hi-lo counter, a lease table created again after a store lost it is safe:
    /// a claim of a new row issues only above its claim time + one TTL + twice the clock allowance. With
    /// `false` (migrations own the schema), a missing table fails the claim with an error
    /// that gives the DDL to run.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// // With idgen-sqlx: WorkerLease::options().create_if_missing(false).acquire(&pool, &Layout::TWITTER)
    /// let lease = WorkerLease::options()
    ///     .create_if_missing(false)
    ///     .acquire(MemoryLeaseStore::new(), &idgen_core::Layout::TWITTER)
    ///     .await?;
    /// assert_eq!(lease.node(), 0);
    /// # Ok(()) }
    /// ```
    pub fn create_if_missing(mut self, create: bool) -> Self {
        self.create_if_missing = Some(create);
        self
    }

    /// A readable label for the holder column of the lease row (default: the host name and
    /// process ID). A random suffix is always added, so two processes given the same label (a
    /// restarted pod with its old name, say) never match each other's rows: a stale process can
    /// never renew a node ID that was handed to its namesake.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let store = MemoryLeaseStore::new();
    /// let a = WorkerLease::options().holder("web-1").acquire(store.clone(), &idgen_core::Layout::TWITTER).await?;
    /// let b = WorkerLease::options().holder("web-1").acquire(store, &idgen_core::Layout::TWITTER).await?;
    /// assert!(a.holder().starts_with("web-1:"));
    /// assert_ne!(a.holder(), b.holder());
    /// # Ok(()) }
    /// ```
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// The clock the lease computes its fence deadlines on (default: the process's
    /// [`SystemClock`]). The generator checks those deadlines on its own clock, so the two must
    /// read one time base. With neither given a clock they do, in whichever order they were
    /// made: every `SystemClock` of a process shares one anchor. A lease given a clock here
    /// needs its generator built on the same clock (`SnowflakeBuilder::clock`);
    /// [`build`](idgen_core::SnowflakeBuilder::build) refuses clocks more than
    /// [`CLOCKS_AGREE_WITHIN_MS`](idgen_core::snowflake::CLOCKS_AGREE_WITHIN_MS) apart.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// use idgen_core::{Layout, ManualClock, Snowflake};
    ///
    /// let clock = ManualClock::new(1_800_000_000_000);
    /// let store = MemoryLeaseStore::with_clock(clock.clone());
    /// let lease = WorkerLease::options().clock(clock.clone()).acquire(store, &Layout::TWITTER).await?;
    /// let ids = Snowflake::builder().clock(clock).lease(lease).build()?;
    /// assert!(ids.next_id().is_ok());
    /// # Ok(()) }
    /// ```
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Claims a node ID of `layout` from `store` (a pool, with an adapter crate), records the
    /// lease's time bound, and starts renewing it. Must be called inside a tokio runtime.
    ///
    /// The claim runs as a task of its own: if it times out, or this future is dropped while it
    /// is in flight, a claim that still lands afterwards is given back at once (as long as the
    /// runtime runs), so it does not hold its node ID for the TTL.
    ///
    /// # Errors
    ///
    /// [`Error::NoFreeNode`] when every node ID is leased, [`Error::LeaseStore`] when the
    /// store fails or times out, [`Error::LeaseOptionOutOfRange`] for a timing outside its
    /// range and [`Error::InvalidOptions`] for inconsistent timings (both before any store
    /// call), [`Error::LeaseLostDuringTakeover`] when another holder took the node ID while
    /// `acquire` waited for its bound ([`takeover_wait`](LeaseOptions::takeover_wait)),
    /// [`Error::ClockSkew`] when this clock and the store's differ by more than the
    /// [clock allowance](LeaseOptions::clock_allowance) (nothing is claimed).
    pub async fn acquire<M>(
        self,
        store: impl IntoLeaseStore<M>,
        layout: &Layout,
    ) -> Result<WorkerLease> {
        let t = self.timing;
        check_timing(&t)?;
        let invalid = |reason: String| Err(Error::InvalidOptions { reason });
        if t.safety_margin >= t.ttl {
            return invalid(format!(
                "safety_margin ({:?}) must be shorter than ttl ({:?})",
                t.safety_margin, t.ttl
            ));
        }
        if t.renew_every.is_zero() || t.renew_every >= t.ttl - t.safety_margin {
            return invalid(format!(
                "renew_every ({:?}) must be shorter than ttl - safety_margin ({:?}), and above 0",
                t.renew_every,
                t.ttl - t.safety_margin
            ));
        }
        let capacity = self.capacity.unwrap_or(layout.node_capacity());
        if capacity == 0 || capacity > layout.node_capacity() {
            return invalid(format!(
                "capacity {capacity} must be between 1 and the layout's node capacity {}",
                layout.node_capacity()
            ));
        }
        let store = store.into_lease_store(&self.table);
        let create = self
            .create_if_missing
            .unwrap_or_else(|| store.create_if_missing_by_default());
        if create {
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
            return Err(Error::LayoutMismatch {
                namespace: self.namespace.clone(),
                recorded,
                requested,
            });
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
        let mut claimed = task.spawn().await?.ok_or(Error::NoFreeNode {
            namespace,
            capacity,
        })?;
        let shared = Arc::clone(&claimed.shared);
        crate::observe::events::node_claimed(&shared.namespace, shared.node, capacity);

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
            let until = if self.takeover_wait {
                (floor > now).then(|| floor.saturating_add(1))
            } else {
                Some(floor.saturating_sub(max_lead))
            };
            until.filter(|until| *until > now)
        });
        if !self.takeover_wait
            && let Some(floor) = shared.floor_ms
        {
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

        // Record the bound this holder may issue up to before the first renewal, then open.
        let (renewed, grant) = shared.renew().await;
        if !renewed? {
            claimed.armed = false; // not ours any more: nothing to give back
            return Err(Error::LeaseStore {
                operation: "renew",
                message: format!(
                    "node ID {} was claimed by another holder at once",
                    shared.node
                ),
                source: None,
            });
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
                return Err(Error::LeaseLostDuringTakeover {
                    namespace: lease.shared.namespace.clone(),
                    node: lease.shared.node,
                });
            }
        }
        Ok(lease)
    }
}

/// Each timing within its sane range, so that no arithmetic on them can overflow.
fn check_timing(t: &Timing) -> Result<()> {
    const MS: Duration = Duration::from_millis(1);
    let ranges = [
        ("ttl", t.ttl, MS, LeaseOptions::MAX_TTL),
        (
            "store_timeout",
            t.store_timeout,
            MS,
            LeaseOptions::MAX_STORE_TIMEOUT,
        ),
        (
            "clock_allowance",
            t.clock_allowance,
            Duration::ZERO,
            LeaseOptions::MAX_CLOCK_ALLOWANCE,
        ),
        // Both below the TTL (checked next), so at most one day too.
        ("renew_every", t.renew_every, MS, LeaseOptions::MAX_TTL),
        (
            "safety_margin",
            t.safety_margin,
            Duration::ZERO,
            LeaseOptions::MAX_TTL,
        ),
    ];
    for (option, value, min, max) in ranges {
        if value < min || value > max {
            return Err(Error::LeaseOptionOutOfRange {
                option,
                value,
                min,
                max,
            });
        }
    }
    Ok(())
}

impl WorkerLease {
    /// Claims a node ID of `layout` with the default [`LeaseOptions`]; see
    /// [`LeaseOptions::acquire`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// use idgen_engine::{Error, Layout};
    ///
    /// let tiny = Layout::builder().node_bits(1).build()?; // 2 node IDs
    /// let store = MemoryLeaseStore::new();
    /// let _a = WorkerLease::acquire(store.clone(), &tiny).await?;
    /// let _b = WorkerLease::acquire(store.clone(), &tiny).await?;
    /// let err = WorkerLease::acquire(store.clone(), &tiny).await.err().unwrap();
    /// assert!(matches!(err, Error::NoFreeNode { capacity: 2, .. }));
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

    /// Waits until the clock reads `until` (the takeover bound + 1, or the bound less the
    /// longest lead), logging why once; returns early if the lease is lost meanwhile.
    async fn wait_until(&self, until: i64) {
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

impl Drop for WorkerLease {
    /// Stops the generator and the renewals, and gives the node ID back: in a task on the
    /// running tokio runtime, or, when there is none or it shuts down before the task has run,
    /// on a short-lived thread of its own (bounded, best effort; see [`WorkerLease`]).
    fn drop(&mut self) {
        if self.shared.in_forked_child() {
            return; // the parent's lease: a copy in a child gives nothing back
        }
        self.heartbeat.abort();
        // Also after a release that failed or was cancelled: only one that succeeded is enough.
        if self.shared.released.load(Ordering::SeqCst) {
            return;
        }
        let last = self.shared.stop_issuing();
        give_back(Arc::clone(&self.shared), last);
    }
}

/// Releases a claimed node ID in the background: in a task on the running tokio runtime, or,
/// when there is none or it shuts down before the task has run, on a thread of its own.
fn give_back(shared: Arc<Shared>, last: Option<i64>) {
    let release = ReleaseOnDrop {
        shared,
        last,
        finished: false,
    };
    match tokio::runtime::Handle::try_current() {
        // Never blocks a runtime thread: if the runtime drops the task unfinished (it is
        // shutting down), the task's own drop takes the thread route.
        Ok(runtime) => drop(runtime.spawn(release.run())),
        Err(_) => drop(release),
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

/// The bound below which a fresh claim must not issue: the stored last tick when the store proved
/// the node ID released (or the bound is skipped for tests), else the takeover bound below.
fn claim_floor(claim: &Claim, skip_bound: bool, t: Timing, clock: &dyn Clock) -> Option<i64> {
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

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if self.armed {
            let last = self.shared.stop_issuing();
            give_back(Arc::clone(&self.shared), last);
        }
    }
}

/// The release of a dropped lease. Run as a task; dropped unfinished (no runtime, or the runtime
/// shut down before it completed), it releases on a thread with a runtime of its own.
struct ReleaseOnDrop {
    shared: Arc<Shared>,
    last: Option<i64>,
    finished: bool,
}

impl ReleaseOnDrop {
    async fn run(mut self) {
        if self.shared.release_row(self.last).await.is_ok() {
            self.finished = true;
            return;
        }
        // The release failed. One cause is the runtime itself: as it shuts down, it drops the
        // store's connection tasks (a multiplexed Redis connection, an etcd channel) before this
        // task, and the call fails at once. So try again on the store's detached copy, off the
        // runtime's threads. If the runtime is shutting down the blocking task never runs, this
        // one is dropped unfinished, and `Drop` takes the thread route (bounded) instead.
        let (shared, last) = (Arc::clone(&self.shared), self.last);
        let retried = tokio::task::spawn_blocking(move || release_without_runtime(&shared, last));
        if retried.await.is_ok() {
            self.finished = true;
        }
    }
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            release_without_runtime(&self.shared, self.last);
        }
    }
}

/// The longest a dropped lease waits for its release when its runtime is gone.
const DROP_RELEASE_LIMIT: Duration = Duration::from_secs(2);

/// Releases on a new thread with a current-thread runtime and the store's
/// [`detached`](crate::lease::LeaseStore::detached) copy, waiting at most
/// `min(store_timeout, 2 s)`.
fn release_without_runtime(shared: &Arc<Shared>, last: Option<i64>) {
    if shared.released.load(Ordering::SeqCst) {
        return;
    }
    let limit = shared.options.store_timeout.min(DROP_RELEASE_LIMIT);
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let shared = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("idgen-lease-release".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    // Made inside this runtime, so its connections belong to it.
                    if let Some(store) = shared.store.detached() {
                        let request = shared.release_request(last);
                        let released = tokio::time::timeout(limit, store.release(request)).await;
                        if let Ok(Ok(())) = released {
                            shared.released.store(true, Ordering::SeqCst);
                        }
                    }
                });
                drop(runtime);
            }
            // Everything this thread holds goes before the caller is told: the runtime (with
            // any task the store left in it) and its share of the lease, which may be the last
            // one and so own the store's pool. The caller may be a process on its way out of
            // `main`; a pool closing its connections on this thread while `exit` runs the C
            // libraries' clean-up (OpenSSL's `atexit` handler under libpq) kills the process
            // with SIGSEGV. Torn down first, the caller's side is the last to hold anything.
            drop(shared);
            let _ = done.send(());
        });
    if spawned.is_ok() {
        let _ = finished.recv_timeout(limit + Duration::from_millis(200));
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
    shared: Arc<Shared>,
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

    /// Graceful shutdown: stops the generator (at once, also for threads issuing right now),
    /// stops renewing, and gives the node ID back with the exact last timestamp issued, so the
    /// next holder can start at once. Calling it again after it succeeded does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::LeaseStore`] when the store fails or does not answer within the store time-out.
    /// The generator is stopped all the same (before the store call), and the release can be
    /// tried again: a release that failed, or whose future was dropped, did not count. If no
    /// release succeeded, dropping the lease tries once more in the background.
    /// [`idgen_core::Error::Forked`] in a forked child, for the parent's lease (nothing is sent).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// use idgen_core::{Layout, Snowflake};
    ///
    /// let store = MemoryLeaseStore::new();
    /// let tiny = Layout::builder().node_bits(1).build()?; // 2 node IDs
    /// let lease = WorkerLease::options().capacity(1).acquire(store.clone(), &tiny).await?;
    /// let handle = lease.handle();
    /// let ids = Snowflake::builder().layout(tiny).lease(lease).build()?;
    /// let last = ids.next_id()?;
    /// handle.release().await?;
    ///
    /// // The node ID is free at once, and its next holder issues only after `last`.
    /// let next = WorkerLease::options().capacity(1).acquire(store, &tiny).await?;
    /// let ids = Snowflake::builder().layout(tiny).lease(next).build()?;
    /// assert!(ids.next_id_async().await? > last);
    /// # Ok(()) }
    /// ```
    pub async fn release(&self) -> Result<()> {
        if self.shared.in_forked_child() {
            return Err(Error::Id(idgen_core::Error::Forked {
                what: "node ID lease",
            }));
        }
        if self.shared.released.load(Ordering::SeqCst) {
            return Ok(());
        }
        let last = self.shared.stop_issuing();
        self.shared.release_row(last).await
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

impl Shared {
    /// Stops the generator for good and the renewals, before any release's store call; the
    /// exact last tick issued. Revoking first stops every issuer and yields that tick (see
    /// `Fence`); revoking again (a retried release) yields the same one, as nothing can be
    /// issued after the first.
    fn stop_issuing(&self) -> Option<i64> {
        let last = self.fence.revoke();
        self.stopped.store(true, Ordering::SeqCst);
        self.stop.notify_one();
        last
    }

    /// Whether this is a copy of the lease in a forked child: the node ID is the parent's, so
    /// the copy never renews or releases it.
    fn in_forked_child(&self) -> bool {
        idgen_core::fork::is_forked_since(self.forks)
    }

    /// Gives the node ID back, unless a release already has. `last` is what
    /// [`stop_issuing`](Shared::stop_issuing) returned. Counts as done only once the store
    /// answered it: a failed or dropped call leaves the release to be tried again.
    async fn release_row(&self, last: Option<i64>) -> Result<()> {
        // After a renewal in flight, so that one cannot land after the release; and one
        // release at a time, so a retry sees whether another one succeeded meanwhile.
        let _calls = self.store_calls.lock().await;
        if self.released.load(Ordering::SeqCst) {
            return Ok(());
        }
        timed(
            "release",
            self.options.store_timeout,
            self.store.release(self.release_request(last)),
        )
        .await?;
        self.released.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn release_request(&self, last: Option<i64>) -> RenewRequest<'_> {
        self.request(Duration::ZERO, last.max(self.floor_ms))
    }

    /// A request about this lease's row: its namespace, node ID and holder.
    fn request(&self, ttl: Duration, last_timestamp_ms: Option<i64>) -> RenewRequest<'_> {
        RenewRequest {
            namespace: &self.namespace,
            node: self.node,
            holder: &self.holder,
            ttl,
            last_timestamp_ms,
        }
    }

    fn update(&self, f: impl FnOnce(&mut LeaseStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Renews the lease, storing as its last timestamp the bound this holder may issue up to
    /// until the next renewal: the fence's ceiling, now + TTL − safety margin + the lead (the
    /// generator issues at most the lead ahead of the clock, and only while the clock reads
    /// before the deadline now + TTL − safety margin). The store's answer (`false`: another
    /// holder has the node ID) and what to grant the fence.
    ///
    /// The store's clock is checked first ([`check_clock`]): a clock too far from it sends no
    /// renewal and answers [`Error::ClockSkew`].
    async fn renew(&self) -> (Result<bool>, Grant) {
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

    /// Stops the generator now, until a renewal extends the fence again: the clock is
    /// certainly too far from the store's ([`Error::ClockSkew`]), so the ticks it would issue
    /// until its deadline are not the ones a later holder's bound covers.
    fn fence_now(&self) {
        if self.fence.extend(i64::MIN + 1, i64::MIN + 1) {
            self.update(|s| s.valid_until_ms = i64::MIN + 1);
        }
    }

    /// Another holder has the node ID: marked lost before the fence is revoked, so whoever
    /// sees the generator refuse sees the lease lost too.
    fn lose(&self) {
        self.update(|s| {
            s.lost = true;
            s.valid_until_ms = i64::MIN;
        });
        self.fence.revoke();
        crate::observe::events::lease_lost(&self.namespace, self.node, &self.holder);
    }
}

/// What a successful renewal grants the fence: the deadline the clock must read before, and
/// the ceiling of the ticks issued (at or above the deadline; what the renewal stored).
#[derive(Clone, Copy, Debug)]
struct Grant {
    deadline: i64,
    ceiling: i64,
}

async fn heartbeat(shared: Arc<Shared>) {
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
                if matches!(e, Error::ClockSkew { certain: true, .. }) {
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

/// Reads the store's clock ([`LeaseStore::clock_ms`]) between two readings of `clock` and
/// compares them ([`compare_clocks`]); nothing to compare when the store reports no clock.
async fn check_clock<S: DynLeaseStore + ?Sized>(
    store: &S,
    clock: &dyn Clock,
    t: Timing,
    operation: &'static str,
) -> Result<()> {
    let sent = clock.now_ms();
    let store_ms = timed("read the clock", t.store_timeout, store.clock_ms()).await?;
    let received = clock.now_ms();
    match store_ms {
        Some(store_ms) => compare_clocks(sent, store_ms, received, t.clock_allowance, operation),
        None => Ok(()),
    }
}

/// The check of [`LeaseOptions::clock_allowance`]: the store read its clock (`store_ms`) at
/// some moment between `sent` and `received` (this clock), so this clock may lead it by up to
/// `received − store_ms` and lag it by up to `store_ms − sent`; both must be within the
/// allowance. [`Error::ClockSkew`] names the worst case, and whether even the best case
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
    Err(Error::ClockSkew {
        operation,
        lead_ms,
        round_trip_ms: received.saturating_sub(sent),
        allowance,
        certain,
    })
}

async fn timed<T>(
    operation: &'static str,
    limit: Duration,
    call: impl std::future::Future<Output = std::result::Result<T, crate::lease::BoxError>>,
) -> Result<T> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(Error::LeaseStore {
            operation,
            message: e.to_string(),
            source: Some(std::sync::Arc::from(e)),
        }),
        Err(_) => Err(Error::LeaseStore {
            operation,
            message: format!("no answer within {limit:?}"),
            source: None,
        }),
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
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
