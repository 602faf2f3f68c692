//! [`EtcdLeaseStore`]: node-ID leases on etcd's own leases.

pub use idgen_engine::lease::*;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use etcd_client::{Client, Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};
use idgen_engine::Error;
use idgen_engine::SqlName;

use crate::connection::Etcd;
pub use crate::connection::EtcdMarker;
use crate::last::{self, Last};

// The store's `LeaseOperator` (an operator's view); the trait and its types, `HeldLease`,
// `FreeRequest`, `Freed` and `NotFreed`, are idgen-engine's, re-exported above with the rest
// of its `lease` module.
mod operator;

/// The default key prefix of the lease keys (the SQL stores' default table name).
pub const DEFAULT_PREFIX: &str = "idgen_worker_lease";

/// Rounds of a claim whose every candidate was taken by a racing claimant meanwhile.
const CLAIM_ROUNDS: usize = 64;

/// Node-ID leases on etcd: the [`LeaseStore`] behind `WorkerLease::acquire(&etcd, &layout)`.
///
/// Each claim grants an etcd lease with the TTL (whole seconds, rounded up) and creates the key
/// `<prefix>/<namespace>/holder/<node>` under it, in a transaction that succeeds only if the key
/// does not exist (`create_revision == 0`): the lowest free node ID wins. A renewal is a
/// keep-alive of that lease followed by a transaction that checks the key still names the
/// holder and raises the bound in `<prefix>/<namespace>/last/<node>`, a key with no lease that
/// outlives it (a byte-wise compare makes the raise one round trip, never a decrease). A
/// release deletes the holder key if it still names the holder, stores the exact last
/// timestamp, and revokes the lease. Expiry is measured by etcd's leader on a monotonic clock;
/// every write is committed to a quorum before it is answered.
///
/// The `last` key also names the holder of the current claim, so that a holder whose lease
/// expired while nobody claimed the node ID may take it back on its next renewal (as with the
/// SQL stores), while a released node ID, or one claimed by another since, is never taken back.
///
/// A renewal's TTL is the claim's (etcd fixes it at grant); a renewal with a TTL of zero ends
/// the lease at once.
///
/// **No clock check.** etcd puts no wall-clock time in its answers (its lease TTLs run on the
/// leader's monotonic clock), so this store reports none ([`LeaseStore::clock_ms`] is `None`)
/// and `WorkerLease` cannot compare a holder's clock with the store's, as it does on
/// PostgreSQL, MariaDB, SQLite and Redis. The takeover bound after a claim etcd cannot prove
/// free (claim time + TTL + twice the
/// [clock allowance](idgen_engine::lease::LeaseOptions::clock_allowance)) then rests on every
/// holder's clock being within the allowance of true time (NTP), and on etcd not forgetting
/// what a quorum acknowledged: a holder whose clock is stepped far ahead is not refused here.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_etcd::lease::{EtcdLeaseStore, WorkerLease};
/// use idgen_etcd::{Etcd, Layout, Snowflake};
///
/// let etcd = Etcd::new(["http://127.0.0.1:2379"]);
/// let store = EtcdLeaseStore::new(&etcd).with_prefix("orders_leases")?;
/// let lease = WorkerLease::acquire(store, &Layout::TWITTER).await?;
/// let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
/// println!("{}", ids.next_id()?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct EtcdLeaseStore {
    etcd: Etcd,
    /// The key prefix, or why the given one was refused.
    prefix: Result<Arc<str>, Error>,
    /// The etcd lease of each claim this process made: (namespace, node, holder) → lease ID.
    leases: Arc<Mutex<HashMap<Claimed, i64>>>,
}

/// A claim of this process: (namespace, node ID, holder).
type Claimed = (String, u64, String);

impl std::fmt::Debug for EtcdLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdLeaseStore")
            .field("etcd", &self.etcd)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// The keys of one node ID.
struct Keys {
    holder: String,
    last: String,
}

impl Keys {
    /// Nobody holds the node ID, and its `last` key is still at `revision` (0: absent): when a
    /// claim, a take-back or a late release may write.
    fn unheld_since(&self, revision: i64) -> [Compare; 2] {
        [
            Compare::create_revision(self.holder.as_str(), CompareOp::Equal, 0),
            Compare::mod_revision(self.last.as_str(), CompareOp::Equal, revision),
        ]
    }

    /// The writes of a claim: the holder key under `lease`, and the `last` key.
    fn claim_ops(&self, holder: &str, lease: i64, last: &Last) -> [TxnOp; 2] {
        let under_lease = PutOptions::new().with_lease(lease);
        [
            TxnOp::put(self.holder.as_str(), holder, Some(under_lease)),
            TxnOp::put(self.last.as_str(), last.encode(), None),
        ]
    }
}

impl EtcdLeaseStore {
    /// The store on `etcd`, with the key prefix [`DEFAULT_PREFIX`].
    ///
    /// ```
    /// use idgen_etcd::{Etcd, lease::EtcdLeaseStore};
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// assert_eq!(store.prefix()?, "idgen_worker_lease");
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn new(etcd: &Etcd) -> Self {
        Self::named(etcd, DEFAULT_PREFIX)
    }

    /// The same store with another key prefix: the SQL stores' rule for table names (`name`
    /// or `a.name`, ASCII letters, digits and `_`), so one name works everywhere.
    ///
    /// ```
    /// use idgen_etcd::{Etcd, lease::EtcdLeaseStore};
    /// let etcd = Etcd::new(["http://127.0.0.1:2379"]);
    /// assert_eq!(EtcdLeaseStore::new(&etcd).with_prefix("app.leases")?.prefix()?, "app.leases");
    /// let err = EtcdLeaseStore::new(&etcd).with_prefix("a/b").unwrap_err();
    /// assert!(err.to_string().contains("\"a/b\""));
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn with_prefix(self, prefix: &str) -> Result<Self, Error> {
        SqlName::parse("lease key prefix", prefix)?;
        Ok(EtcdLeaseStore {
            prefix: Ok(prefix.into()),
            ..self
        })
    }

    /// A store whose refused prefix fails the first call (for [`IntoLeaseStore`]).
    fn named(etcd: &Etcd, prefix: &str) -> Self {
        EtcdLeaseStore {
            etcd: etcd.clone(),
            prefix: SqlName::parse("lease key prefix", prefix).map(|_| prefix.into()),
            leases: Arc::default(),
        }
    }

    /// The key prefix.
    ///
    /// ```
    /// # use idgen_etcd::{Etcd, lease::EtcdLeaseStore};
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// assert_eq!(store.prefix()?, idgen_etcd::lease::DEFAULT_PREFIX);
    /// # Ok::<(), idgen_etcd::Error>(())
    /// ```
    pub fn prefix(&self) -> Result<&str, Error> {
        self.prefix.as_deref().map_err(Clone::clone)
    }

    /// `<prefix>/<namespace>/`.
    fn base(&self, namespace: &str) -> Result<String, BoxError> {
        Ok(format!("{}/{namespace}/", self.prefix()?))
    }

    fn keys(base: &str, node: u64) -> Keys {
        Keys {
            holder: format!("{base}holder/{node}"),
            last: format!("{base}last/{node}"),
        }
    }

    async fn client(&self, action: &str) -> Result<Client, BoxError> {
        self.etcd
            .client()
            .await
            .map_err(|e| self.etcd.failed(format!("connect to {action}"), e).into())
    }

    fn failed(&self, action: String) -> impl FnOnce(etcd_client::Error) -> BoxError + '_ {
        move |e| self.etcd.failed(action, e).into()
    }

    fn lease_of(&self, namespace: &str, node: u64, holder: &str) -> Option<i64> {
        let leases = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        leases
            .get(&(namespace.to_owned(), node, holder.to_owned()))
            .copied()
    }

    fn remember(&self, namespace: &str, node: u64, holder: &str, lease: Option<i64>) {
        let mut leases = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        let key = (namespace.to_owned(), node, holder.to_owned());
        match lease {
            Some(lease) => leases.insert(key, lease),
            None => leases.remove(&key),
        };
    }

    /// Renews `lease` (a keep-alive): whether it is still alive.
    async fn keep_alive(&self, client: &mut Client, lease: i64) -> Result<bool, BoxError> {
        let action = || format!("keep lease {lease:x} alive");
        let (mut keeper, mut answers) = match client.lease_keep_alive(lease).await {
            Ok(stream) => stream,
            // etcd-client sends a first keep-alive itself and turns etcd's answer for a lease
            // that is gone (TTL 0: it expired, or a restored etcd never had it) into this
            // error. It is an answer, not a failure: "not alive", so the renewal takes the node
            // ID back or reports it lost. As a store error, every renewal failed the same way
            // and the holder stayed fenced for good without learning that it had lost its node
            // ID (the fault test "etcd restored from an older snapshot" found it).
            Err(etcd_client::Error::LeaseKeepAliveError(_)) => return Ok(false),
            Err(err) => return Err(self.failed(action())(err)),
        };
        keeper.keep_alive().await.map_err(self.failed(action()))?;
        let answer = answers.message().await.map_err(self.failed(action()))?;
        Ok(answer.is_some_and(|a| a.ttl() > 0))
    }

    /// The holder's lease expired and nobody claimed the node ID since (the `last` key still
    /// names it as owner): claims it again under a new lease and raises the bound.
    async fn take_back(
        &self,
        client: &mut Client,
        req: &RenewRequest<'_>,
        keys: &Keys,
    ) -> Result<bool, BoxError> {
        let mut read = client
            .get(keys.last.as_str(), None)
            .await
            .map_err(self.failed(format!("read {}", keys.last)))?;
        let Some(kv) = read.take_kvs().into_iter().next() else {
            return Ok(false);
        };
        let stored = Last::decode(kv.value())?;
        if stored.owner.as_deref() != Some(req.holder) || req.ttl.is_zero() {
            return Ok(false);
        }
        let lease = client
            .lease_grant(ttl_seconds(req.ttl), None)
            .await
            .map_err(self.failed("grant a lease".into()))?
            .id();
        let raised = Last {
            timestamp_ms: stored
                .timestamp_ms
                .max(req.last_timestamp_ms.map(|t| t.max(0))),
            owner: Some(req.holder.to_owned()),
        };
        let txn = Txn::new()
            .when(keys.unheld_since(kv.mod_revision()))
            .and_then(keys.claim_ops(req.holder, lease, &raised));
        let done = client
            .txn(txn)
            .await
            .map_err(self.failed(format!("take node {} back", req.node)));
        match done {
            Ok(answer) if answer.succeeded() => {
                self.remember(req.namespace, req.node, req.holder, Some(lease));
                Ok(true)
            }
            other => {
                let _ = client.lease_revoke(lease).await;
                other.map(|_| false)
            }
        }
    }
}

/// etcd's TTL in whole seconds, rounded up (a longer lease than asked is safe: the generator's
/// fence closes by the TTL asked for).
fn ttl_seconds(ttl: Duration) -> i64 {
    let ms = ttl.as_millis();
    i64::try_from(ms.div_ceil(1000)).unwrap_or(i64::MAX).max(1)
}

/// The node ID in a key `<base>holder/<node>` (`None` for another namespace's key).
fn node_of(key: &[u8], base: &str, kind: &str) -> Option<u64> {
    let rest = key
        .strip_prefix(base.as_bytes())?
        .strip_prefix(kind.as_bytes())?;
    let digits = std::str::from_utf8(rest).ok()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl LeaseStore for EtcdLeaseStore {
    /// In the key `<prefix>/<namespace>/layout` (no lease), put in a transaction that succeeds
    /// only if the key does not exist; then read.
    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        self.etcd
            .retry_unsent(|| self.record_layout_once(namespace, layout))
            .await
    }

    /// A request refused before it was sent (a member down or still starting) is sent again,
    /// up to eight times per endpoint with short pauses, so the balanced channel reaches a
    /// member that answers; so are renewals, releases and the layout's record.
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.etcd.retry_unsent(|| self.claim_once(req)).await
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.etcd.retry_unsent(|| self.renew_once(req)).await
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.etcd.retry_unsent(|| self.release_once(req)).await
    }

    /// The same cluster and prefix with a client of its own, connected on first use (on the
    /// runtime that uses it).
    fn detached(&self) -> Option<Self> {
        Some(EtcdLeaseStore {
            etcd: self.etcd.fresh(),
            prefix: self.prefix.clone(),
            leases: Arc::clone(&self.leases),
        })
    }
}

impl EtcdLeaseStore {
    async fn record_layout_once(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        let key = format!("{}layout", self.base(namespace)?);
        let mut client = self.client("record the layout").await?;
        let txn = Txn::new()
            .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key.as_str(), layout, None)]);
        client
            .txn(txn)
            .await
            .map_err(self.failed(format!("record the layout of {namespace}")))?;
        let got = client
            .get(key.as_str(), None)
            .await
            .map_err(self.failed(format!("read the layout of {namespace}")))?;
        let recorded = got
            .kvs()
            .first()
            .map(|kv| String::from_utf8_lossy(kv.value()).into_owned());
        Ok(recorded)
    }

    async fn claim_once(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        let base = self.base(req.namespace)?;
        let mut client = self.client("claim").await?;
        let lease = client
            .lease_grant(ttl_seconds(req.ttl), None)
            .await
            .map_err(self.failed("grant a lease".into()))?
            .id();
        let claimed = self.claim_under(&mut client, &req, &base, lease).await;
        match &claimed {
            Ok(Some(claim)) => {
                self.remember(req.namespace, claim.node, req.holder, Some(lease));
            }
            _ => {
                let _ = client.lease_revoke(lease).await;
            }
        }
        claimed
    }

    async fn renew_once(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let base = self.base(req.namespace)?;
        let keys = Self::keys(&base, req.node);
        let mut client = self.client("renew").await?;
        let lease = match self.lease_of(req.namespace, req.node, req.holder) {
            Some(lease) => Some(lease),
            None => {
                let mut read = client
                    .get(keys.holder.as_str(), None)
                    .await
                    .map_err(self.failed(format!("read {}", keys.holder)))?;
                read.take_kvs()
                    .into_iter()
                    .next()
                    .filter(|kv| kv.value() == req.holder.as_bytes())
                    .map(|kv| kv.lease())
            }
        };
        let Some(lease) = lease else {
            return self.take_back(&mut client, &req, &keys).await;
        };
        if !self.keep_alive(&mut client, lease).await? {
            self.remember(req.namespace, req.node, req.holder, None);
            return self.take_back(&mut client, &req, &keys).await;
        }
        let mut then = Vec::new();
        if let Some(ms) = req.last_timestamp_ms {
            let raised = Last {
                timestamp_ms: Some(ms.max(0)),
                owner: Some(req.holder.to_owned()),
            };
            let raise = Txn::new()
                .when([Compare::value(
                    keys.last.as_str(),
                    CompareOp::Less,
                    last::timestamp(ms),
                )])
                .and_then([TxnOp::put(keys.last.as_str(), raised.encode(), None)]);
            then.push(TxnOp::txn(raise));
        }
        if req.ttl.is_zero() {
            then.push(TxnOp::delete(keys.holder.as_str(), None));
        }
        let txn = Txn::new()
            .when([
                Compare::value(keys.holder.as_str(), CompareOp::Equal, req.holder),
                Compare::lease(keys.holder.as_str(), CompareOp::Equal, lease),
            ])
            .and_then(then);
        let answer = client
            .txn(txn)
            .await
            .map_err(self.failed(format!("renew node {}", req.node)))?;
        if req.ttl.is_zero() && answer.succeeded() {
            let _ = client.lease_revoke(lease).await;
        }
        Ok(answer.succeeded())
    }

    async fn release_once(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        let base = self.base(req.namespace)?;
        let keys = Self::keys(&base, req.node);
        let mut client = self.client("release").await?;
        let exact = |last: &str| {
            let released = Last {
                timestamp_ms: req.last_timestamp_ms,
                owner: None,
            };
            TxnOp::put(last, released.encode(), None)
        };
        let txn = Txn::new()
            .when([Compare::value(
                keys.holder.as_str(),
                CompareOp::Equal,
                req.holder,
            )])
            .and_then([TxnOp::delete(keys.holder.as_str(), None), exact(&keys.last)]);
        let answer = client
            .txn(txn)
            .await
            .map_err(self.failed(format!("release node {}", req.node)))?;
        if !answer.succeeded() {
            // The lease expired: release still, if nobody claimed the node ID since.
            let mut read = client
                .get(keys.last.as_str(), None)
                .await
                .map_err(self.failed(format!("read {}", keys.last)))?;
            if let Some(kv) = read.take_kvs().into_iter().next()
                && Last::decode(kv.value())?.owner.as_deref() == Some(req.holder)
            {
                let txn = Txn::new()
                    .when(keys.unheld_since(kv.mod_revision()))
                    .and_then([exact(&keys.last)]);
                client
                    .txn(txn)
                    .await
                    .map_err(self.failed(format!("release node {}", req.node)))?;
            }
        }
        if let Some(lease) = self.lease_of(req.namespace, req.node, req.holder) {
            self.remember(req.namespace, req.node, req.holder, None);
            // The node ID is free already (its key is gone); the lease itself would only
            // expire. Revoke it without making the release wait (a release at shutdown has
            // little time).
            tokio::spawn(async move {
                let _ = client.lease_revoke(lease).await;
            });
        }
        Ok(())
    }

    /// The claim with the granted `lease`: the lowest node ID without a holder key, created in
    /// a transaction that fails if another claimant was first (then the next one is tried).
    async fn claim_under(
        &self,
        client: &mut Client,
        req: &ClaimRequest<'_>,
        base: &str,
        lease: i64,
    ) -> Result<Option<Claim>, BoxError> {
        for _ in 0..CLAIM_ROUNDS {
            let mut read = client
                .get(base, Some(GetOptions::new().with_prefix()))
                .await
                .map_err(self.failed(format!("read {base}")))?;
            let mut held = HashSet::new();
            let mut lasts = BTreeMap::new();
            for kv in read.take_kvs() {
                if let Some(node) = node_of(kv.key(), base, "holder/") {
                    held.insert(node);
                } else if let Some(node) = node_of(kv.key(), base, "last/") {
                    lasts.insert(node, (Last::decode(kv.value())?, kv.mod_revision()));
                }
            }
            let mut raced = false;
            // A node ID given back by a release first (its `last` names no owner and keeps the
            // exact timestamp): its new holder issues at once. Any other free node ID (no keys:
            // never claimed, or etcd forgot it; or a lease that expired) may hide a holder etcd
            // no longer knows, and costs a wait (`Claim::exact`).
            let released = |node: &u64| {
                lasts
                    .get(node)
                    .is_some_and(|(last, _)| last.owner.is_none() && last.timestamp_ms.is_some())
            };
            let free = |node: &u64| *node < req.capacity && !held.contains(node);
            let candidates = lasts
                .keys()
                .copied()
                .filter(|node| free(node) && released(node))
                .chain((0..req.capacity).filter(|node| free(node) && !released(node)));
            for node in candidates {
                let exact = released(&node);
                let keys = Self::keys(base, node);
                let (stored, revision) = match lasts.get(&node) {
                    Some((last, revision)) => (last.timestamp_ms, *revision),
                    None => (None, 0),
                };
                let owned = Last {
                    timestamp_ms: stored,
                    owner: Some(req.holder.to_owned()),
                };
                let txn = Txn::new()
                    .when(keys.unheld_since(revision))
                    .and_then(keys.claim_ops(req.holder, lease, &owned));
                let answer = client
                    .txn(txn)
                    .await
                    .map_err(self.failed(format!("claim node {node}")))?;
                if answer.succeeded() {
                    return Ok(Some(Claim {
                        node,
                        last_timestamp_ms: stored,
                        exact,
                    }));
                }
                raced = true;
            }
            if !raced {
                return Ok(None);
            }
        }
        Err(BoxError::from(format!(
            "every free node ID of namespace {:?} was taken by another claimant {CLAIM_ROUNDS} times in a row",
            req.namespace
        )))
    }
}

impl IntoLeaseStore<EtcdMarker> for Etcd {
    type Store = EtcdLeaseStore;
    /// The store on this cluster, with `table` as the key prefix (a refused one fails the
    /// first claim, naming it).
    fn into_lease_store(self, table: &str) -> EtcdLeaseStore {
        EtcdLeaseStore::named(&self, table)
    }
}
