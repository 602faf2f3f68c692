//! What an operator reads and frees of a lease store, the same for every store: the
//! [`LeaseOperator`] trait every store implements (`idgen leases list|free` and `idgen web`'s
//! operator view call it), the held leases ([`HeldLease`], what `idgen leases list` shows)
//! and the outcome of a free ([`Freed`], or [`NotFreed`] saying why not; what `idgen leases
//! free` prints).
//!
//! The stores implement the rule once each (`idgen_sql::procedure::free` for the SQL tables,
//! etcd's and Redis's stores in their crates): an expired lease is freed at once, a live
//! one only with `force`, and only the holder asked for (or, without one, whoever holds the
//! node ID when it is read), so a node ID claimed again in between is left alone.
//!
//! A free never makes the next claim exact ([`Claim::exact`](crate::lease::Claim::exact)):
//! only a release by the holder itself can vouch for the bound it stores. A store restored
//! from an older backup may show a lease as expired whose holder is still issuing; the
//! operator cannot tell, so the next claim of a freed node ID is a takeover (it issues no ID
//! timestamped before its claim time + one TTL + its clock allowance). An expired lease is
//! freed by writing [`FREED_HOLDER`] in its holder's place: no renewal of the old holder
//! matches it, and no claim takes it for a release.

use std::fmt;
use std::future::Future;

use crate::error::Error;

/// An operator's view of a lease store: the store's clock, the held leases of a namespace, and
/// the free of a node ID. Every store implements it the same way (checked on each by
/// idgen-testkit's `operator_suite!`), so `idgen leases` and `idgen web` run on any of them.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_engine::Error> {
/// use idgen_engine::lease::{FreeRequest, LeaseOperator, MemoryLeaseStore, NotFreed, WorkerLease};
///
/// async fn show(store: &impl LeaseOperator) -> Result<(), idgen_engine::Error> {
///     let now = store.now_ms().await?;
///     for lease in store.held_leases("default").await? {
///         let state = if lease.is_live(now) { "live" } else { "ended" };
///         println!("node {} held by {} ({state}, {})", lease.node, lease.holder, store.clock_name());
///     }
///     Ok(())
/// }
///
/// let store = MemoryLeaseStore::new();
/// let lease = WorkerLease::acquire(store.clone(), &idgen_core::Layout::TWITTER).await?;
/// show(&store).await?;
/// let req = FreeRequest { namespace: "default", node: lease.node(), holder: None, force: false };
/// let refused = LeaseOperator::free(&store, req).await?.unwrap_err();
/// assert!(matches!(refused, NotFreed::Live { .. })); // live: only with `force`
/// # Ok(()) }
/// ```
pub trait LeaseOperator: Send + Sync {
    /// Whose clock [`now_ms`](Self::now_ms) reads, for people: `"database clock"`, `"Redis
    /// server clock"`, `"this host's clock: etcd keeps none"`.
    ///
    /// ```
    /// use idgen_engine::lease::{LeaseOperator, MemoryLeaseStore};
    /// assert_eq!(MemoryLeaseStore::new().clock_name(), "this process's clock");
    /// ```
    fn clock_name(&self) -> &'static str;

    /// The store's clock, Unix ms: what [`HeldLease::expires_at_ms`] is measured on.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](crate::ErrorKind::LeaseStore): the store did not answer.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{LeaseOperator, MemoryLeaseStore};
    /// let now = LeaseOperator::now_ms(&MemoryLeaseStore::new()).await?;
    /// assert!(now > 1_700_000_000_000);
    /// # Ok(()) }
    /// ```
    fn now_ms(&self) -> impl Future<Output = Result<i64, Error>> + Send;

    /// The node IDs of `namespace` with a holder, by node ID: live leases, and leases that
    /// ended and that nobody claimed since (each with the last-timestamp bound stored for
    /// it). Node IDs released or freed are left out.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](crate::ErrorKind::LeaseStore): the store failed, or holds a
    /// record it cannot read.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{LeaseOperator, MemoryLeaseStore, WorkerLease};
    /// let store = MemoryLeaseStore::new();
    /// let lease = WorkerLease::acquire(store.clone(), &idgen_core::Layout::TWITTER).await?;
    /// let held = store.held_leases("default").await?;
    /// assert_eq!((held[0].node, held[0].holder.as_str()), (lease.node(), lease.holder()));
    /// # Ok(()) }
    /// ```
    fn held_leases(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<HeldLease>, Error>> + Send;

    /// Frees `req.node` of `req.namespace` for an operator, with the rule of every store: an
    /// expired lease at once (its holder becomes [`FREED_HOLDER`], so its renewals fail), a
    /// live one only with `req.force` (it ends now). Only `req.holder`'s lease (or, with
    /// `None`, whoever holds it when it is read), so a node ID claimed again in between is
    /// left alone. Neither makes the next claim exact, as a release does: it is a takeover.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](crate::ErrorKind::LeaseStore) when the store failed; a
    /// refusal is no error but the `Err` of the result: [`NotFreed`], saying why.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{FreeRequest, LeaseOperator, MemoryLeaseStore, NotFreed};
    /// let store = MemoryLeaseStore::new();
    /// let req = FreeRequest { namespace: "default", node: 3, holder: Some("web-1:4242:9f3a"), force: false };
    /// match LeaseOperator::free(&store, req).await? {
    ///     Ok(freed) => println!("{freed}"),
    ///     Err(live @ NotFreed::Live { .. }) => eprintln!("{live}; pass force to free it anyway"),
    ///     Err(not) => assert_eq!(not, NotFreed::NoRow { node: 3 }),
    /// }
    /// # Ok(()) }
    /// ```
    fn free(
        &self,
        req: FreeRequest<'_>,
    ) -> impl Future<Output = Result<Result<Freed, NotFreed>, Error>> + Send;
}

/// What an operator frees: [`LeaseOperator::free`].
///
/// ```
/// use idgen_engine::lease::FreeRequest;
/// let req = FreeRequest { namespace: "orders", node: 3, holder: Some("web-1:4242:9f3a"), force: false };
/// assert_eq!((req.namespace, req.node), ("orders", 3));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FreeRequest<'a> {
    /// The namespace of the lease.
    pub namespace: &'a str,
    /// The node ID.
    pub node: u64,
    /// The holder the operator saw (freed only if it still holds the node ID); `None`: whoever
    /// holds it now.
    pub holder: Option<&'a str>,
    /// Free a live lease too.
    pub force: bool,
}

/// The holder an operator's free of an expired lease writes in the old holder's place (the SQL
/// `holder` column, etcd's `last` key, Redis's `owner` field): a tombstone. It is no holder
/// `WorkerLease` makes (those end in `:` and 16 hex digits), so the old holder's renewals find
/// another holder and fail (it cannot take the node ID back), and it is not the empty holder a
/// release leaves, so the next claim is a takeover, not exact. Stores list a node ID with this
/// holder as free ([`HeldLease`] leaves it out), and a second free finds it
/// [`NotFreed::NotHeld`].
///
/// ```
/// assert_eq!(idgen_engine::lease::FREED_HOLDER, "(freed by an operator)");
/// ```
pub const FREED_HOLDER: &str = "(freed by an operator)";

/// What a takeover promises, in the words every message of a free uses.
const TAKEOVER: &str = "the next claim is a takeover, which issues no ID timestamped before \
                        its claim time + one TTL + its clock allowance";

/// A node ID with a holder, as an operator lists it: a live lease, or one that ended and that
/// nobody claimed since (an SQL row that still names its holder; on etcd and Redis, a lease
/// that expired or was freed by force, whose holder the node ID's record still names). A node
/// ID released, or freed by an operator ([`FREED_HOLDER`]), has none and is not listed.
///
/// ```
/// use idgen_engine::lease::HeldLease;
/// let lease = HeldLease { node: 3, holder: "web-1".into(), expires_at_ms: None, last_timestamp_ms: Some(1_700_000_000_000) };
/// assert!(!lease.is_live(1_700_000_000_000)); // ended: etcd and Redis keep no time for it
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldLease {
    /// The node ID.
    pub node: u64,
    /// Its holder: the holder column or key, or, for a lease that ended and that nobody
    /// claimed since, the holder the node ID's record still names.
    pub holder: String,
    /// When the lease ends, Unix ms on the store's clock: an SQL table's `expires_at` (the
    /// database's clock); on etcd, this host's clock when read plus the time to live etcd
    /// reports (whole seconds, rounded down); on Redis, `TIME` plus the key's `PTTL`. `None`
    /// for an ended lease of a store that keeps no record of when (etcd and Redis delete the
    /// holder key).
    pub expires_at_ms: Option<i64>,
    /// The last-timestamp bound stored for the node ID (Unix ms): at or above every tick any
    /// holder of it issued or may still issue.
    pub last_timestamp_ms: Option<i64>,
}

impl HeldLease {
    /// Whether the lease is live at `now_ms` (Unix ms, on the store's clock).
    ///
    /// ```
    /// use idgen_engine::lease::HeldLease;
    /// let lease = HeldLease { node: 0, holder: "a".into(), expires_at_ms: Some(2_000), last_timestamp_ms: None };
    /// assert!(lease.is_live(1_000));
    /// assert!(!lease.is_live(2_000));
    /// ```
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.expires_at_ms.is_some_and(|end| end > now_ms)
    }
}

/// A node ID that an operator's free freed.
///
/// ```
/// use idgen_engine::lease::Freed;
/// let freed = Freed::Expired { node: 3, holder: "web-1".into() };
/// assert_eq!(
///     freed.to_string(),
///     "node 3 freed: the lease of web-1 had expired, and web-1 can no longer renew it; the \
///      next claim is a takeover, which issues no ID timestamped before its claim time + one \
///      TTL + its clock allowance"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freed {
    /// Its lease had expired: the node ID's record (an SQL row, etcd's `last` key, Redis's
    /// hash) names [`FREED_HOLDER`] in place of the holder and keeps the last timestamp the
    /// holder's last renewal stored. The old holder's renewals fail from then on (a holder
    /// that a restored store showed as expired may still be running: it fences), and the next
    /// claim is a takeover, not exact: it issues no ID timestamped before its claim time + one
    /// TTL + its clock allowance, and none at or below that timestamp. Only a release by the
    /// holder itself lets the next claim issue right above the stored timestamp.
    Expired {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
    },
    /// Its lease was live and was ended now (`force`): an SQL row's lease ends now; on etcd
    /// and Redis the holder key is deleted (on etcd, its lease revoked). The record keeps the
    /// holder's name and the bound, so the next claim is a takeover (it issues no ID
    /// timestamped before its claim time + one TTL + its clock allowance), and the old
    /// holder's renewals fail once another process holds the node ID (if it renews before
    /// anyone claims it, the lease is its own again).
    Forced {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
        /// How long the lease still had, in ms, on the store's clock (the database's; whole
        /// seconds on etcd, as it reports them; the key's `PTTL` on Redis).
        remaining_ms: i64,
    },
}

impl fmt::Display for Freed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Freed::Expired { node, holder } => write!(
                f,
                "node {node} freed: the lease of {holder} had expired, and {holder} can no \
                 longer renew it; {TAKEOVER}"
            ),
            Freed::Forced {
                node,
                holder,
                remaining_ms,
            } => write!(
                f,
                "node {node} freed by force: the lease of {holder} had {} left; {TAKEOVER}",
                seconds(*remaining_ms)
            ),
        }
    }
}

/// Why an operator's free did not free a node ID.
///
/// ```
/// use idgen_engine::lease::NotFreed;
/// let not = NotFreed::OtherHolder { node: 3, expected: "web-1".into(), actual: "web-2".into() };
/// assert_eq!(not.to_string(), "node 3 is held by web-2 now, not web-1: nothing was freed");
/// assert_eq!(
///     NotFreed::NoRow { node: 5 }.to_string(),
///     "node 5 has no lease row or keys: it was never claimed"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFreed {
    /// The store has no record of the node ID in the namespace (no SQL row; no etcd or Redis
    /// keys): it was never claimed, or the store forgot it.
    NoRow {
        /// The node ID.
        node: u64,
    },
    /// No one holds it (it was released, or freed already).
    NotHeld {
        /// The node ID.
        node: u64,
    },
    /// Another holder than the one asked for holds it now.
    OtherHolder {
        /// The node ID.
        node: u64,
        /// The holder asked for.
        expected: String,
        /// The holder now.
        actual: String,
    },
    /// Its lease is live, and `force` was not given.
    Live {
        /// The node ID.
        node: u64,
        /// Who holds it.
        holder: String,
        /// How long the lease still has, in ms, on the store's clock (as in
        /// [`Freed::Forced`]).
        remaining_ms: i64,
    },
}

impl fmt::Display for NotFreed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFreed::NoRow { node } => {
                write!(
                    f,
                    "node {node} has no lease row or keys: it was never claimed"
                )
            }
            NotFreed::NotHeld { node } => {
                write!(f, "node {node} is not held by anyone: it is free already")
            }
            NotFreed::OtherHolder {
                node,
                expected,
                actual,
            } => write!(
                f,
                "node {node} is held by {actual} now, not {expected}: nothing was freed"
            ),
            NotFreed::Live {
                node,
                holder,
                remaining_ms,
            } => write!(
                f,
                "node {node} is leased by {holder} for another {}: that process may still be \
                 issuing IDs, so it was not freed. Forcing lets two processes issue with the same \
                 node ID until the old holder's fence deadline (it stops when its next renewal \
                 fails); a new holder issues no ID timestamped before its claim time + one TTL \
                 + its clock allowance, which keeps them apart only if both use the same TTL and \
                 their clocks agree within that allowance",
                seconds(*remaining_ms)
            ),
        }
    }
}

impl std::error::Error for NotFreed {}

/// `12.3 s`.
fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_shown_in_tenths_of_a_second() {
        let forced = Freed::Forced {
            node: 1,
            holder: "a".into(),
            remaining_ms: 12_345,
        };
        assert!(forced.to_string().contains("had 12.3 s left"), "{forced}");
        let live = NotFreed::Live {
            node: 1,
            holder: "a".into(),
            remaining_ms: 4_000,
        };
        assert!(live.to_string().contains("for another 4.0 s"), "{live}");
    }
}
