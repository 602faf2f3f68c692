//! An operator's view of the leases: [`EtcdLeaseStore::rows`] (what `idgen leases list --etcd`
//! shows) and [`EtcdLeaseStore::free`] (`idgen leases free --etcd`), with the rule of the SQL
//! stores' free: an expired lease is freed at once, a live one only with `force`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use etcd_client::{Client, GetOptions, Txn, TxnOp};
use idgen_engine::Error;

use super::{BoxError, EtcdLeaseStore, Keys, node_of};
use crate::last::Last;

/// How many times [`EtcdLeaseStore::free`] reads again when a claim, renewal or release
/// changed the node ID's keys between its read and its write.
const FREE_ROUNDS: usize = 8;

/// A node ID with a holder, as [`EtcdLeaseStore::rows`] reads it.
///
/// ```
/// use idgen_etcd::lease::HeldLease;
/// let lease = HeldLease { node: 3, holder: "web-1".into(), expires_at_ms: None, last_timestamp_ms: Some(1_700_000_000_000) };
/// assert!(!lease.is_live(1_700_000_000_000)); // ended: etcd keeps no time for it
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldLease {
    /// The node ID.
    pub node: u64,
    /// Its holder: the holder key's value, or, for a lease that expired (or was freed by force)
    /// and that nobody claimed since, the holder its `last` key still names.
    pub holder: String,
    /// When the lease ends, Unix ms: this host's clock when read plus the time to live etcd
    /// reports (whole seconds, rounded down). `None` for a lease that has ended: etcd deleted
    /// its holder key and keeps no record of when.
    pub expires_at_ms: Option<i64>,
    /// The last-timestamp bound stored for the node ID (Unix ms): at or above every tick any
    /// holder of it issued or may still issue.
    pub last_timestamp_ms: Option<i64>,
}

impl HeldLease {
    /// Whether the lease is live at `now_ms` (Unix ms).
    ///
    /// ```
    /// use idgen_etcd::lease::HeldLease;
    /// let lease = HeldLease { node: 0, holder: "a".into(), expires_at_ms: Some(2_000), last_timestamp_ms: None };
    /// assert!(lease.is_live(1_000));
    /// assert!(!lease.is_live(2_000));
    /// ```
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.expires_at_ms.is_some_and(|end| end > now_ms)
    }
}

/// A node ID that [`EtcdLeaseStore::free`] freed.
///
/// ```
/// use idgen_etcd::lease::Freed;
/// let freed = Freed::Expired { node: 3, holder: "web-1".into() };
/// assert!(freed.to_string().contains("node 3 freed"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freed {
    /// Its lease had expired: the `last` key names no holder any more and keeps the bound the
    /// holder's last renewal stored, so the next claim takes the node ID at once, above it.
    Expired {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
    },
    /// Its lease was live and was ended now (`force`): the holder key is deleted and its etcd
    /// lease revoked, while the `last` key keeps the bound and the holder's name, so the next
    /// claim waits one TTL plus its clock allowance before it issues (if the old holder renews
    /// before anyone claims the node ID, the lease is its own again).
    Forced {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
        /// How long the lease still had, in ms (whole seconds, as etcd reports them).
        remaining_ms: i64,
    },
}

impl fmt::Display for Freed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Freed::Expired { node, holder } => write!(
                f,
                "node {node} freed: the lease of {holder} had expired; the next claim takes it at once"
            ),
            Freed::Forced {
                node,
                holder,
                remaining_ms,
            } => write!(
                f,
                "node {node} freed by force: the lease of {holder} had {} left; the next claim \
                 waits one TTL plus its clock allowance before it issues",
                seconds(*remaining_ms)
            ),
        }
    }
}

/// Why [`EtcdLeaseStore::free`] did not free a node ID.
///
/// ```
/// use idgen_etcd::lease::NotFreed;
/// let not = NotFreed::OtherHolder { node: 3, expected: "web-1".into(), actual: "web-2".into() };
/// assert_eq!(not.to_string(), "node 3 is held by web-2 now, not web-1: nothing was freed");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFreed {
    /// The namespace has no keys for the node ID: it was never claimed (or etcd forgot it).
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
        /// How long the lease still has, in ms (whole seconds, as etcd reports them).
        remaining_ms: i64,
    },
}

impl fmt::Display for NotFreed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFreed::NoRow { node } => {
                write!(f, "node {node} has no lease keys: it was never claimed")
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
                 fails); a new holder waits one TTL plus its clock allowance first, which keeps \
                 them apart only if both use the same TTL and their clocks agree within that \
                 allowance",
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

/// A failed operator call, typed as the lease store's failure.
fn store_error(operation: &'static str, err: BoxError) -> Error {
    Error::LeaseStore {
        operation,
        message: err.to_string(),
        source: Some(Arc::from(err)),
    }
}

/// This host's clock, Unix ms.
fn local_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What [`EtcdLeaseStore::free`] read of a node ID.
enum State {
    /// No keys.
    Never,
    /// A holder key: its value, etcd lease and mod revision.
    Held {
        holder: String,
        lease: i64,
        revision: i64,
    },
    /// No holder key; the `last` key (and its mod revision).
    Unheld { last: Last, revision: i64 },
}

impl EtcdLeaseStore {
    /// The clock [`rows`](Self::rows) measures `expires_at_ms` on: etcd has no wall clock (its
    /// leases count down on the leader's monotonic clock), so this is this host's clock, Unix
    /// ms.
    ///
    /// ```
    /// use idgen_etcd::{Etcd, lease::EtcdLeaseStore};
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// assert!(store.now_ms() > 1_700_000_000_000);
    /// ```
    pub fn now_ms(&self) -> i64 {
        local_now_ms()
    }

    /// Every node ID of `namespace` with a holder, by node ID: live leases (a holder key, with
    /// the time to live etcd reports), and leases that expired or were freed by force and
    /// that nobody claimed since (the `last` key still names the holder; `expires_at_ms` is
    /// `None`). Each with the last-timestamp bound stored for the node ID. Node IDs that were
    /// released or freed are left out.
    ///
    /// # Errors
    ///
    /// [`Error::LeaseStore`] naming etcd's endpoints and the key read, or a `last` value that is
    /// not idgen's.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_etcd::{Etcd, lease::EtcdLeaseStore};
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// let now = store.now_ms();
    /// for lease in store.rows("default").await? {
    ///     println!("{} {} live: {}", lease.node, lease.holder, lease.is_live(now));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn rows(&self, namespace: &str) -> Result<Vec<HeldLease>, Error> {
        self.etcd
            .retry_unsent(|| self.rows_once(namespace))
            .await
            .map_err(|e| store_error("list leases", e))
    }

    async fn rows_once(&self, namespace: &str) -> Result<Vec<HeldLease>, BoxError> {
        let base = self.base(namespace)?;
        let mut client = self.client("list leases").await?;
        let mut read = client
            .get(base.as_str(), Some(GetOptions::new().with_prefix()))
            .await
            .map_err(self.failed(format!("read {base}")))?;
        let mut holders = BTreeMap::new();
        let mut lasts = BTreeMap::new();
        for kv in read.take_kvs() {
            if let Some(node) = node_of(kv.key(), &base, "holder/") {
                let holder = String::from_utf8_lossy(kv.value()).into_owned();
                holders.insert(node, (holder, kv.lease()));
            } else if let Some(node) = node_of(kv.key(), &base, "last/") {
                lasts.insert(node, Last::decode(kv.value())?);
            }
        }
        let mut rows = Vec::new();
        for (node, (holder, lease)) in holders {
            let now = local_now_ms();
            let ttl = self.time_to_live(&mut client, lease).await?;
            rows.push(HeldLease {
                node,
                holder,
                expires_at_ms: (ttl > 0).then(|| now.saturating_add(ttl.saturating_mul(1000))),
                last_timestamp_ms: lasts.get(&node).and_then(|l| l.timestamp_ms),
            });
        }
        for (node, last) in lasts {
            if let Some(owner) = last.owner
                && !rows.iter().any(|r| r.node == node)
            {
                rows.push(HeldLease {
                    node,
                    holder: owner,
                    expires_at_ms: None,
                    last_timestamp_ms: last.timestamp_ms,
                });
            }
        }
        rows.sort_by_key(|r| r.node);
        Ok(rows)
    }

    /// The seconds `lease` has left (0 or less: it has ended).
    async fn time_to_live(&self, client: &mut Client, lease: i64) -> Result<i64, BoxError> {
        if lease == 0 {
            return Ok(0);
        }
        let answer = client
            .lease_time_to_live(lease, None)
            .await
            .map_err(self.failed(format!("read the time to live of lease {lease:x}")))?;
        Ok(answer.ttl())
    }

    /// Frees `node` of `namespace` for an operator, with the rule of the SQL stores
    /// (`idgen_sql::procedure::free`): an expired lease at once; a live one only with `force`.
    /// With `holder`, only that holder's lease is freed (the one `leases list` showed), so a
    /// node ID claimed again in between is left alone; without, whoever holds it now.
    ///
    /// # Why IDs stay unique
    ///
    /// Every renewal stored in the `last` key a bound at or above every tick its holder may
    /// issue until its fence deadline (the holder computes the deadline before it sends the
    /// renewal; the generator refuses later ticks). The free never deletes or lowers the
    /// `last` key, which every claim reads:
    ///
    /// * **Expired** (no holder key, the `last` key still names the holder): etcd expired the
    ///   lease, which its leader measures from a keep-alive the holder sent after computing
    ///   its deadline, with a TTL rounded up to whole seconds: the holder has stopped. The
    ///   `last` key then names no owner and keeps the bound, as a release leaves it, so the
    ///   next claim issues at once and above the bound. Done in one transaction that checks
    ///   that no holder key appeared and the `last` key did not change since it was read; a
    ///   late renewal of the old holder then finds it released and does not take it back.
    /// * **Forced** (a live lease): the holder key is deleted in a transaction that checks it
    ///   still names the holder under the same etcd lease, then that lease is revoked. The
    ///   `last` key keeps the holder's name and the bound, so the next claim is not `exact`:
    ///   it is a takeover, issuing only after claim time + one TTL + its clock allowance, and
    ///   above the bound. The old holder may still issue until its fence deadline (at most one
    ///   TTL after its last renewal); the takeover wait keeps the two apart when both use the
    ///   same TTL and their clocks agree within the allowance, which is what [`NotFreed::Live`]
    ///   warns about. If the old holder renews before anyone claims the node ID, it takes it
    ///   back (as with the SQL stores); once another process has claimed it, its renewals fail
    ///   and it fences.
    ///
    /// # Errors
    ///
    /// [`Error::LeaseStore`] naming etcd's endpoints and the key, or when the node ID's keys
    /// kept changing under the free (a claim and renewals racing it) eight times in a row.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_etcd::lease::{EtcdLeaseStore, NotFreed};
    /// use idgen_etcd::Etcd;
    ///
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// match store.free("default", 3, Some("web-1:4242:9f3a"), false).await? {
    ///     Ok(freed) => println!("{freed}"),
    ///     Err(live @ NotFreed::Live { .. }) => eprintln!("{live}; pass force to free it anyway"),
    ///     Err(not) => eprintln!("{not}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn free(
        &self,
        namespace: &str,
        node: u64,
        holder: Option<&str>,
        force: bool,
    ) -> Result<Result<Freed, NotFreed>, Error> {
        self.etcd
            .retry_unsent(|| self.free_once(namespace, node, holder, force))
            .await
            .map_err(|e| store_error("free", e))
    }

    async fn free_once(
        &self,
        namespace: &str,
        node: u64,
        expected: Option<&str>,
        force: bool,
    ) -> Result<Result<Freed, NotFreed>, BoxError> {
        let base = self.base(namespace)?;
        let keys = Self::keys(&base, node);
        let mut client = self.client("free").await?;
        for _ in 0..FREE_ROUNDS {
            let other = |actual: &str| {
                expected
                    .filter(|e| *e != actual)
                    .map(|e| NotFreed::OtherHolder {
                        node,
                        expected: e.to_owned(),
                        actual: actual.to_owned(),
                    })
            };
            match self.state(&mut client, &keys).await? {
                State::Never => return Ok(Err(NotFreed::NoRow { node })),
                State::Unheld { last, revision } => {
                    let Some(owner) = last.owner.clone() else {
                        return Ok(Err(NotFreed::NotHeld { node }));
                    };
                    if let Some(not) = other(&owner) {
                        return Ok(Err(not));
                    }
                    let released = Last {
                        timestamp_ms: last.timestamp_ms,
                        owner: None,
                    };
                    let txn = Txn::new()
                        .when(keys.unheld_since(revision))
                        .and_then([TxnOp::put(keys.last.as_str(), released.encode(), None)]);
                    let answer = client
                        .txn(txn)
                        .await
                        .map_err(self.failed(format!("free node {node}")))?;
                    if answer.succeeded() {
                        return Ok(Ok(Freed::Expired {
                            node,
                            holder: owner,
                        }));
                    }
                }
                State::Held {
                    holder,
                    lease,
                    revision,
                } => {
                    if let Some(not) = other(&holder) {
                        return Ok(Err(not));
                    }
                    let ttl = self.time_to_live(&mut client, lease).await?;
                    if ttl <= 0 {
                        // Ended this moment: etcd deletes the key; read again.
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        continue;
                    }
                    let remaining_ms = ttl.saturating_mul(1000);
                    if !force {
                        return Ok(Err(NotFreed::Live {
                            node,
                            holder,
                            remaining_ms,
                        }));
                    }
                    let txn = Txn::new()
                        .when([
                            etcd_client::Compare::mod_revision(
                                keys.holder.as_str(),
                                etcd_client::CompareOp::Equal,
                                revision,
                            ),
                            etcd_client::Compare::lease(
                                keys.holder.as_str(),
                                etcd_client::CompareOp::Equal,
                                lease,
                            ),
                        ])
                        .and_then([TxnOp::delete(keys.holder.as_str(), None)]);
                    let answer = client
                        .txn(txn)
                        .await
                        .map_err(self.failed(format!("free node {node}")))?;
                    if answer.succeeded() {
                        // The key is gone; the lease held nothing else. Revoking it makes the
                        // old holder's next keep-alive fail at once (best effort: it would
                        // expire anyway).
                        let _ = client.lease_revoke(lease).await;
                        return Ok(Ok(Freed::Forced {
                            node,
                            holder,
                            remaining_ms,
                        }));
                    }
                }
            }
        }
        Err(BoxError::from(format!(
            "the keys of node {node} in namespace {namespace:?} changed under the free {FREE_ROUNDS} times in a row"
        )))
    }

    /// The node ID's keys now.
    async fn state(&self, client: &mut Client, keys: &Keys) -> Result<State, BoxError> {
        let mut read = client
            .get(keys.holder.as_str(), None)
            .await
            .map_err(self.failed(format!("read {}", keys.holder)))?;
        if let Some(kv) = read.take_kvs().into_iter().next() {
            return Ok(State::Held {
                holder: String::from_utf8_lossy(kv.value()).into_owned(),
                lease: kv.lease(),
                revision: kv.mod_revision(),
            });
        }
        let mut read = client
            .get(keys.last.as_str(), None)
            .await
            .map_err(self.failed(format!("read {}", keys.last)))?;
        Ok(match read.take_kvs().into_iter().next() {
            None => State::Never,
            Some(kv) => State::Unheld {
                last: Last::decode(kv.value())?,
                revision: kv.mod_revision(),
            },
        })
    }
}
