//! [`LeaseStore`]: where node-ID leases are kept (a database table, in the adapter crates).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use idgen_core::BoxError;

/// A request to claim a free or expired node ID.
#[derive(Clone, Copy, Debug)]
pub struct ClaimRequest<'a> {
    /// Separates independent generators sharing one lease table (e.g. `"orders"`).
    pub namespace: &'a str,
    /// Node IDs `0..capacity` may be claimed (the layout's node capacity, or less).
    pub capacity: u64,
    /// Who claims it: unique per process (host, process ID and a random part).
    pub holder: &'a str,
    /// How long the claim lasts unless renewed, measured on the store's clock.
    pub ttl: Duration,
}

/// A request to renew or release a held node ID.
#[derive(Clone, Copy, Debug)]
pub struct RenewRequest<'a> {
    /// The namespace the node ID was claimed in.
    pub namespace: &'a str,
    /// The held node ID.
    pub node: u64,
    /// The holder that claimed it.
    pub holder: &'a str,
    /// The new lifetime from now, on the store's clock (ignored by `release`).
    pub ttl: Duration,
    /// An upper bound (Unix ms) on every timestamp this holder has issued or may issue before
    /// the next renewal: the store keeps the largest value it was ever given.
    pub last_timestamp_ms: Option<i64>,
}

/// A request to release a held node ID: the same fields as a [`RenewRequest`] (its `ttl` is
/// ignored), named for what [`LeaseStore::release`] does with it.
///
/// ```
/// use std::time::Duration;
/// use idgen_engine::lease::ReleaseRequest;
///
/// let req = ReleaseRequest {
///     namespace: "orders",
///     node: 3,
///     holder: "web-1",
///     ttl: Duration::ZERO,
///     last_timestamp_ms: Some(1_700_000_000_000),
/// };
/// assert_eq!(req.node, 3);
/// ```
pub type ReleaseRequest<'a> = RenewRequest<'a>;

/// A successful claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The claimed node ID.
    pub node: u64,
    /// The largest `last_timestamp_ms` any earlier holder stored for this node ID.
    pub last_timestamp_ms: Option<i64>,
    /// Whether the store vouches that `last_timestamp_ms` bounds every tick any earlier holder
    /// of this node ID issued or may still issue: `true` for a node ID given back with
    /// [`release`](LeaseStore::release) (which stores the exact last timestamp), and for every
    /// claim of a store that cannot forget what it acknowledged (the in-process
    /// [`MemoryLeaseStore`](crate::lease::MemoryLeaseStore)) but one of a lease an operator
    /// ended (a free vouches for nothing).
    ///
    /// `false` when the store cannot prove it: no row or key for the node ID yet (a table or
    /// namespace just created, perhaps on a database that came back empty), or a lease taken
    /// over after it expired (perhaps a row restored from an older backup). A holder the store
    /// forgot may then still be issuing, so `WorkerLease` issues only at ticks after the claim
    /// time + one TTL + twice its clock allowance (see
    /// [`LeaseOptions::clock_allowance`](crate::lease::LeaseOptions::clock_allowance)).
    /// Answering `false` when unsure is always safe; it only costs that wait.
    pub exact: bool,
}

/// Storage for node-ID leases: one row per node ID with its holder, expiry and last timestamp.
///
/// Expiry is measured on the **store's** clock (the database's `now()`), so holders on hosts
/// with skewed clocks still agree on who holds what. Each method must be atomic on its own:
/// `claim` must never give one node ID to two holders whose leases are both unexpired.
///
/// Implemented by the adapter crates (PostgreSQL, MariaDB/MySQL, SQLite) and by
/// [`MemoryLeaseStore`](crate::lease::MemoryLeaseStore) for single-process use and tests.
pub trait LeaseStore: Send + Sync + 'static {
    /// Claims the lowest free or expired node ID below `capacity` for `holder`; `Ok(None)` when
    /// all are held.
    fn claim(
        &self,
        req: ClaimRequest<'_>,
    ) -> impl Future<Output = Result<Option<Claim>, BoxError>> + Send;

    /// Extends the lease when `holder` still holds `node` (even if it expired meanwhile, as long
    /// as nobody claimed it since), and raises the stored last timestamp. `Ok(false)` when
    /// another holder has it now.
    fn renew(&self, req: RenewRequest<'_>) -> impl Future<Output = Result<bool, BoxError>> + Send;

    /// Gives `node` back (expires it now) when `holder` still holds it, and **replaces** the
    /// stored last timestamp with `last_timestamp_ms`: the holder has stopped issuing and knows
    /// exactly what it issued, which is at most the bound its renewals stored.
    ///
    /// A released row names no holder any more, so a renewal of the same holder that was sent
    /// before the release and arrives after it finds nothing to renew (`Ok(false)`) and the node
    /// ID stays free. Releasing twice is harmless.
    fn release(&self, req: ReleaseRequest<'_>)
    -> impl Future<Output = Result<(), BoxError>> + Send;

    /// Creates what the store keeps its leases in (a database store's lease table) if it does
    /// not exist, idempotently and safely when many processes do it at the same moment: looked
    /// for first, so that a restart needs no `CREATE` privilege. Every claim calls it first,
    /// unless [`LeaseOptions::create_if_missing(false)`](crate::lease::LeaseOptions::create_if_missing)
    /// says the schema is the migrations' own.
    ///
    /// The default has nothing to create (`Ok(())`): for stores whose claims create the keys or
    /// rows they need (memory, etcd, Redis). A database store overrides it; **a wrapper around
    /// one forwards it**, or the table is never created (a claim on a database without it then
    /// fails, naming the DDL to run).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::lease::BoxError> {
    /// use idgen_engine::lease::{LeaseStore, MemoryLeaseStore};
    /// MemoryLeaseStore::new().create_if_missing().await?; // nothing to create
    /// # Ok(()) }
    /// ```
    fn create_if_missing(&self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// Records `layout` (a [`layout_key`](crate::lease::layout_key)) as the layout of
    /// `namespace` if the namespace has none yet, and returns the one recorded: `layout`
    /// itself, or the layout another process recorded first. Recording must be atomic (an
    /// insert-if-absent), so that of two processes that start at once with different layouts
    /// one is refused. A claim calls it first and refuses a different layout
    /// ([`ErrorKind::LayoutMismatch`](crate::ErrorKind::LayoutMismatch)).
    ///
    /// The default records nothing and returns `None` (no check): for a wrapper around another
    /// store, or a store that keeps no layouts. Every store of the idgen crates records.
    ///
    /// A store that forgets (a restart without persistence, a restore) forgets the layout with
    /// the leases: the next process records its own.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::lease::BoxError> {
    /// use idgen_engine::lease::{LeaseStore, MemoryLeaseStore};
    /// let store = MemoryLeaseStore::new();
    /// assert_eq!(store.record_layout("orders", "A").await?.as_deref(), Some("A"));
    /// assert_eq!(store.record_layout("orders", "B").await?.as_deref(), Some("A"));
    /// # Ok(()) }
    /// ```
    fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> impl Future<Output = Result<Option<String>, BoxError>> + Send {
        let _ = (namespace, layout);
        async { Ok(None) }
    }

    /// The store's own clock now, in Unix ms (the database's `now()`, Redis `TIME`), or `None`
    /// when the store has no clock it can report.
    ///
    /// [`WorkerLease`](crate::lease::WorkerLease) reads it before every claim and every
    /// renewal and compares it with the clock it issues IDs from: a claim is refused, and a
    /// holder is fenced, when the two differ by more than the
    /// [clock allowance](crate::lease::LeaseOptions::clock_allowance)
    /// ([`ErrorKind::ClockSkew`](crate::ErrorKind::ClockSkew)). The comparison is the engine's; a
    /// store only reads its clock, in a call of its own that may come before or after the
    /// claim or renewal it checks.
    ///
    /// The default answers `None` (no check): for a store without a clock it can read (etcd
    /// reports none in its answers). **A wrapper around another store forwards it**, or the
    /// check is lost.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::lease::BoxError> {
    /// use idgen_core::ManualClock;
    /// use idgen_engine::lease::{LeaseStore, MemoryLeaseStore};
    /// let store = MemoryLeaseStore::with_clock(ManualClock::new(1_800_000_000_000));
    /// assert_eq!(store.clock_ms().await?, Some(1_800_000_000_000));
    /// # Ok(()) }
    /// ```
    fn clock_ms(&self) -> impl Future<Output = Result<Option<i64>, BoxError>> + Send {
        async { Ok(None) }
    }

    /// A copy of this store that does not depend on the async runtime it was made on: it opens
    /// connections of its own when first used. `None` (the default) if the store cannot make one.
    ///
    /// `WorkerLease`'s `Drop` uses it to give the node ID back when the runtime the lease was
    /// acquired on has stopped (the end of `#[tokio::main]`, say): it calls `detached()` and
    /// then [`release`](LeaseStore::release) on a short-lived thread with a runtime of its own,
    /// waiting a bounded time. Without it, such a node ID stays held until its TTL runs out.
    fn detached(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

/// Turns something an application has (a connection pool) into a [`LeaseStore`].
///
/// Adapter crates implement it for their pool types, so that
/// `WorkerLease::acquire(&pool, &Layout::TWITTER)` works for each. `Marker` lets them do so for
/// foreign pool types without breaking the orphan rule.
pub trait IntoLeaseStore<Marker = ()> {
    /// The store.
    type Store: LeaseStore;
    /// The store, using `table` as the lease table.
    fn into_lease_store(self, table: &str) -> Self::Store;
}

impl<S: LeaseStore> IntoLeaseStore for S {
    type Store = S;
    fn into_lease_store(self, _table: &str) -> S {
        self
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Object-safe form of [`LeaseStore`], so `WorkerLease` has no type parameter.
pub(crate) trait DynLeaseStore: Send + Sync + 'static {
    fn claim<'a>(&'a self, req: ClaimRequest<'a>)
    -> BoxFuture<'a, Result<Option<Claim>, BoxError>>;
    fn renew<'a>(&'a self, req: RenewRequest<'a>) -> BoxFuture<'a, Result<bool, BoxError>>;
    fn release<'a>(&'a self, req: RenewRequest<'a>) -> BoxFuture<'a, Result<(), BoxError>>;
    fn clock_ms(&self) -> BoxFuture<'_, Result<Option<i64>, BoxError>>;
    fn detached(&self) -> Option<Box<dyn DynLeaseStore>>;
}

impl<S: LeaseStore> DynLeaseStore for S {
    fn claim<'a>(
        &'a self,
        req: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Claim>, BoxError>> {
        Box::pin(LeaseStore::claim(self, req))
    }
    fn renew<'a>(&'a self, req: RenewRequest<'a>) -> BoxFuture<'a, Result<bool, BoxError>> {
        Box::pin(LeaseStore::renew(self, req))
    }
    fn release<'a>(&'a self, req: RenewRequest<'a>) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(LeaseStore::release(self, req))
    }
    fn clock_ms(&self) -> BoxFuture<'_, Result<Option<i64>, BoxError>> {
        Box::pin(LeaseStore::clock_ms(self))
    }
    fn detached(&self) -> Option<Box<dyn DynLeaseStore>> {
        LeaseStore::detached(self).map(|s| Box::new(s) as Box<dyn DynLeaseStore>)
    }
}

/// A store call within the store time-out: its error, or the time-out, as
/// [`ErrorKind::LeaseStore`](crate::ErrorKind::LeaseStore) naming `operation`.
pub(crate) async fn timed<T>(
    operation: &'static str,
    limit: Duration,
    call: impl std::future::Future<Output = std::result::Result<T, crate::lease::BoxError>>,
) -> crate::error::Result<T> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(crate::error::Error::lease_store(operation, e)),
        Err(_) => Err(crate::error::ErrorKind::LeaseStore {
            operation,
            message: format!("no answer within {limit:?}"),
            source: None,
        }
        .into()),
    }
}
