//! [`LeaseOptions`]: the namespace, table, timings, capacity, holder and clock of a lease, and
//! the checks of the timings before any store call.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{ErrorKind, Result};
use idgen_core::{Clock, Layout, SystemClock};

/// The lease table's default name, shared by every SQL adapter: what a
/// [`LeaseOptions::table`] that was not set names.
///
/// ```
/// assert_eq!(idgen_engine::lease::DEFAULT_LEASE_TABLE, "idgen_worker_lease");
/// ```
pub const DEFAULT_LEASE_TABLE: &str = "idgen_worker_lease";

#[derive(Clone, Copy, Debug)]
pub(super) struct Timing {
    pub(super) ttl: Duration,
    pub(super) renew_every: Duration,
    pub(super) safety_margin: Duration,
    pub(super) store_timeout: Duration,
    pub(super) clock_allowance: Duration,
}

/// Options for [`WorkerLease`](crate::lease::WorkerLease); start from
/// [`WorkerLease::options`](crate::lease::WorkerLease::options).
///
/// **The clock is checked against the store's.** Before every claim and renewal the lease
/// reads the store's clock and refuses a claim ([`ErrorKind::ClockSkew`]), or fences the
/// generator, when it differs from the clock IDs are issued from by more than the
/// [clock allowance](LeaseOptions::clock_allowance) (not on etcd, which reports no clock).
///
/// Defaults: namespace `"default"`, table `"idgen_worker_lease"`, TTL 30 s, renewal every 10 s,
/// safety margin 5 s, store calls time out after 5 s, clock allowance 1 s, capacity = the
/// layout's node capacity, holder = host name, process ID and a random suffix.
///
/// **A takeover issues at once, ahead of the clock.** A claim the store cannot prove free (no row
/// or key for the node ID yet, a table just created, a lease taken over after it expired) issues
/// only at ticks after its claim time + one TTL + twice the [clock
/// allowance](LeaseOptions::clock_allowance), so that a holder the store forgot has issued below
/// them. By default `acquire` returns at once and the generator starts at that bound: the time
/// field of its IDs leads real time by at most TTL + 2 × allowance (32 s with the defaults), less
/// as the clock catches up. [`takeover_wait(true)`](LeaseOptions::takeover_wait) waits for the
/// clock instead (32 s at start-up with the defaults), for applications that read the time field as
/// the creation time. A node ID given back with
/// [`LeaseHandle::release`](crate::lease::LeaseHandle::release) is taken at once with its exact
/// last timestamp.
///
/// Timings are checked by [`acquire`](LeaseOptions::acquire) before any store call: each within its
/// range ([`MAX_TTL`](LeaseOptions::MAX_TTL),
/// [`MAX_STORE_TIMEOUT`](LeaseOptions::MAX_STORE_TIMEOUT),
/// [`MAX_CLOCK_ALLOWANCE`](LeaseOptions::MAX_CLOCK_ALLOWANCE); [`ErrorKind::LeaseOptionOutOfRange`]),
/// and consistent with each other ([`ErrorKind::InvalidOptions`]).
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
    pub(super) namespace: String,
    pub(super) table: String,
    pub(super) timing: Timing,
    pub(super) capacity: Option<u64>,
    pub(super) holder: Option<String>,
    pub(super) clock: Arc<dyn Clock>,
    /// Whether the claim calls
    /// [`LeaseStore::create_if_missing`](crate::lease::LeaseStore::create_if_missing) first.
    pub(super) create_if_missing: bool,
    pub(super) takeover_wait: bool,
    /// No takeover bound at all (tests and development only).
    pub(super) skip_takeover_bound: bool,
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
            create_if_missing: true,
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

    /// How long one store call may take before it counts as failed. A claim that answers after it
    /// (or after the caller dropped [`acquire`](LeaseOptions::acquire)) is given back at once; a
    /// release that timed out can be tried again (see
    /// [`LeaseHandle::release`](crate::lease::LeaseHandle::release)).
    pub fn store_timeout(mut self, timeout: Duration) -> Self {
        self.timing.store_timeout = timeout;
        self
    }

    /// How far the clock this lease issues IDs from may differ from the lease store's clock,
    /// either way (default 1 s): checked before every claim and every renewal, and part of the
    /// bound after a claim the store cannot prove free (Chubby's *lock-delay*).
    ///
    /// **The check.** Before a claim and before each renewal the lease reads the store's clock
    /// ([`LeaseStore::clock_ms`](crate::lease::LeaseStore::clock_ms): PostgreSQL `now()`,
    /// MariaDB/MySQL `UTC_TIMESTAMP(6)`, SQLite the host's clock, Redis `TIME`, the memory store's
    /// clock) between two readings of its own clock (the one [`clock`](Self::clock) sets, which the
    /// generator issues from), one at the send and one at the answer. The store read its clock
    /// somewhere in that round trip, so the lease takes the worst case: it may lead the store by
    /// the answer's reading minus the store's, and lag it by the store's minus the send's reading;
    /// both must be within the allowance. So a difference beyond the allowance is never accepted,
    /// and a slow round trip only refuses more (one longer than twice the allowance is always
    /// refused). A reading refused only because its round trip was slow is measured again, up to
    /// three readings in all (each within the [store time-out](Self::store_timeout)), before it
    /// counts: the first that proves the clocks within the allowance is accepted. A claim that
    /// fails the check is refused with [`ErrorKind::ClockSkew`] before anything is claimed. A
    /// renewal that fails it is not sent: when even the best case exceeds the
    /// allowance the generator is fenced at once; when only a slow round trip leaves it unsure, it
    /// counts as a failed renewal (the generator fences at its deadline if that goes on). The
    /// generator issues again once a renewal finds the clocks within the allowance, unless another
    /// holder took the node ID meanwhile. Both show in
    /// [`LeaseHandle::status`](crate::lease::LeaseHandle::status) (`last_error`). **etcd reports no
    /// clock: there is no check**, and the rule below rests on the hosts' clocks being kept within
    /// the allowance of true time (NTP) and on etcd not forgetting what it acknowledged.
    ///
    /// **The takeover bound.** A lease store can forget what it acknowledged: Redis restarted
    /// without persistence, a database restored from a backup or failed over to a lagging replica,
    /// a volume lost and the database back empty. Its rows then cannot tell that a node ID is free;
    /// time can. A holder issues only up to the fence deadline of its last acknowledged renewal,
    /// which it computed before sending it, as its clock + TTL − safety margin; and the store
    /// forgot that renewal only after acknowledging it, so before this claim returned. That
    /// holder's clock was within the allowance of the store's at that renewal (checked), and this
    /// host's is within it at this claim (checked), so the two differ by at most twice the
    /// allowance (the safety margin covers the clocks' rates over one TTL). So when the claim finds
    /// no record of a release (no row or key, a lease taken over after expiry), the lease issues
    /// only at ticks after this host's clock at the claim's return + TTL + **twice** this
    /// allowance: after every tick a forgotten holder can issue. By default the generator starts at
    /// those ticks at once, ahead of the clock (a `lease_takeover_lead` event); with
    /// [`takeover_wait(true)`](LeaseOptions::takeover_wait), `acquire` waits until the clock has
    /// passed them (a `lease_takeover_wait` event), renewing meanwhile.
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

    /// **Tests and development only.** `true` puts no takeover bound on a claim the store cannot
    /// prove free: the generator starts at the clock (or the row's stored bound), not at claim
    /// time + TTL + twice the [clock allowance](Self::clock_allowance). With it, a database restored
    /// from a backup, a Redis restarted without persistence, or a table recreated empty while old
    /// holders still run can give one node ID to two processes, and so duplicate IDs. Since a
    /// takeover no longer waits by default (see [`takeover_wait`](Self::takeover_wait)), only tests
    /// that check the time field of IDs against the clock need it.
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

    /// Whether the claim creates what the store needs (the lease table of a database store) when it
    /// is missing (default `true`; stores with nothing to create, such as memory, etcd and Redis,
    /// do nothing): looked for first, created only when missing, and safe when many processes start
    /// at the same moment (see
    /// [`LeaseStore::create_if_missing`](crate::lease::LeaseStore::create_if_missing)). So
    /// `WorkerLease::acquire(&pool, &layout)` works on an empty database and on every restart, like
    /// `HiLo::new(pool, 1000)`.
    ///
    /// Unlike a hi-lo counter, a lease table created again after a store lost it is safe: a claim
    /// of a new row issues only above its claim time + one TTL + twice the clock allowance. With
    /// `false` (migrations own the schema), a missing table fails the claim with an error that
    /// gives the DDL to run.
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
        self.create_if_missing = create;
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
}

impl LeaseOptions {
    /// The checks [`acquire`](LeaseOptions::acquire) makes before any store call: each timing
    /// within its range ([`check_timing`]), the timings consistent with each other, and the
    /// capacity within the layout's node capacity; the capacity to claim below.
    pub(super) fn check(&self, layout: &Layout) -> Result<u64> {
        let t = self.timing;
        check_timing(&t)?;
        let invalid = |reason: String| Err(ErrorKind::InvalidOptions { reason }.into());
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
        Ok(capacity)
    }
}

/// Each timing within its sane range, so that no arithmetic on them can overflow.
pub(super) fn check_timing(t: &Timing) -> Result<()> {
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
            return Err(ErrorKind::LeaseOptionOutOfRange {
                option,
                value,
                min,
                max,
            }
            .into());
        }
    }
    Ok(())
}

/// A duration in whole milliseconds, saturating.
pub(super) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
