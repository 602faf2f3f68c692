//! An operator's view of the leases, etcd's [`LeaseOperator`]: the held leases (what `idgen
//! leases list --etcd` shows) and the free (`idgen leases free --etcd`), with the rule of the
//! SQL stores' free: an expired lease is freed at once, a live one only with `force`.

use std::collections::BTreeMap;

use etcd_client::{Client, GetOptions, Txn, TxnOp};
use idgen_engine::Error;
use idgen_engine::lease::{FREED_HOLDER, FreeRequest, Freed, HeldLease, LeaseOperator, NotFreed};

use super::{BoxError, EtcdLeaseStore, Keys, node_of};
use crate::last::Last;

/// How many times etcd's [`free`](LeaseOperator::free) reads again when a claim, renewal or release
/// changed the node ID's keys between its read and its write.
const FREE_ROUNDS: usize = 8;

/// This host's clock, Unix ms.
fn local_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// What etcd's [`free`](LeaseOperator::free) read of a node ID.
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

/// etcd's operator view: this host's clock (etcd has none), the holder and `last` keys of a
/// namespace, and the free (see [`free`](LeaseOperator::free) for why IDs stay unique).
impl LeaseOperator for EtcdLeaseStore {
    fn clock_name(&self) -> &'static str {
        "this host's clock: etcd keeps none"
    }

    /// The clock [`held_leases`](LeaseOperator::held_leases) measures `expires_at_ms` on: etcd
    /// has no wall clock (its leases count down on the leader's monotonic clock), so this is
    /// this host's clock, Unix ms. Never fails.
    async fn now_ms(&self) -> Result<i64, Error> {
        Ok(local_now_ms())
    }

    /// Every node ID of `namespace` with a holder, by node ID: live leases (a holder key, with
    /// the time to live etcd reports), and leases that expired or were freed by force and
    /// that nobody claimed since (the `last` key still names the holder; `expires_at_ms` is
    /// `None`). Each with the last-timestamp bound stored for the node ID. Node IDs that were
    /// released or freed (the `last` key names no owner, or [`FREED_HOLDER`]) are left out.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) naming etcd's endpoints and the key read, or a `last` value that is
    /// not idgen's.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_etcd::{Etcd, lease::{EtcdLeaseStore, LeaseOperator}};
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// let now = store.now_ms().await?;
    /// for lease in store.held_leases("default").await? {
    ///     println!("{} {} live: {}", lease.node, lease.holder, lease.is_live(now));
    /// }
    /// # Ok(()) }
    /// ```
    async fn held_leases(&self, namespace: &str) -> Result<Vec<HeldLease>, Error> {
        self.etcd
            .retry_unsent(|| self.rows_once(namespace))
            .await
            .map_err(|e| Error::lease_store("list leases", e))
    }

    /// Frees `req.node` of `req.namespace` for an operator, with the rule of the SQL stores
    /// (`idgen_sql::procedure::free`): an expired lease at once; a live one only with
    /// `req.force`. With `req.holder`, only that holder's lease is freed (the one `leases
    /// list` showed), so a node ID claimed again in between is left alone; without, whoever
    /// holds it now.
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
    ///   its deadline, with a TTL rounded up to whole seconds: the holder has stopped, unless
    ///   etcd was restored from a snapshot older than its lease (then it may still be issuing,
    ///   and the operator cannot tell). The `last` key then names [`FREED_HOLDER`] as owner
    ///   and keeps the bound: a late renewal of the old holder finds another owner and does
    ///   not take the node ID back (it fences), and the next claim is not `exact` (only a
    ///   release, which names no owner, is): a takeover, issuing no ID timestamped before
    ///   claim time + one TTL + its clock allowance, and above the bound. Done in one
    ///   transaction that checks that no holder key appeared and the `last` key did not change
    ///   since it was read.
    /// * **Forced** (a live lease): the holder key is deleted in a transaction that checks it
    ///   still names the holder under the same etcd lease, then that lease is revoked. The
    ///   `last` key keeps the holder's name and the bound, so the next claim is not `exact`:
    ///   it is a takeover, issuing no ID timestamped before claim time + one TTL + its clock
    ///   allowance, and above the bound. The old holder may still issue until its fence deadline (at most one
    ///   TTL after its last renewal); the takeover wait keeps the two apart when both use the
    ///   same TTL and their clocks agree within the allowance, which is what [`NotFreed::Live`]
    ///   warns about. If the old holder renews before anyone claims the node ID, it takes it
    ///   back (as with the SQL stores); once another process has claimed it, its renewals fail
    ///   and it fences.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) naming etcd's endpoints and the key, or when the node ID's keys
    /// kept changing under the free (a claim and renewals racing it) eight times in a row.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_etcd::lease::{EtcdLeaseStore, FreeRequest, LeaseOperator, NotFreed};
    /// use idgen_etcd::Etcd;
    ///
    /// let store = EtcdLeaseStore::new(&Etcd::new(["http://127.0.0.1:2379"]));
    /// let req = FreeRequest { namespace: "default", node: 3, holder: Some("web-1:4242:9f3a"), force: false };
    /// match store.free(req).await? {
    ///     Ok(freed) => println!("{freed}"),
    ///     Err(live @ NotFreed::Live { .. }) => eprintln!("{live}; pass force to free it anyway"),
    ///     Err(not) => eprintln!("{not}"),
    /// }
    /// # Ok(()) }
    /// ```
    async fn free(&self, req: FreeRequest<'_>) -> Result<Result<Freed, NotFreed>, Error> {
        self.etcd
            .retry_unsent(|| self.free_once(req))
            .await
            .map_err(|e| Error::lease_store("free", e))
    }
}

impl EtcdLeaseStore {
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
            if let Some(owner) = last.owner.filter(|o| o != FREED_HOLDER)
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

    async fn free_once(&self, req: FreeRequest<'_>) -> Result<Result<Freed, NotFreed>, BoxError> {
        let (namespace, node, expected) = (req.namespace, req.node, req.holder);
        let keys = Self::keys(&self.base(namespace)?, node);
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
                    let Some(owner) = last.owner.clone().filter(|o| o != FREED_HOLDER) else {
                        return Ok(Err(NotFreed::NotHeld { node }));
                    };
                    if let Some(not) = other(&owner) {
                        return Ok(Err(not));
                    }
                    let freed = Last {
                        timestamp_ms: last.timestamp_ms,
                        owner: Some(FREED_HOLDER.to_owned()),
                    };
                    let txn = Txn::new()
                        .when(keys.unheld_since(revision))
                        .and_then([TxnOp::put(keys.last.as_str(), freed.encode(), None)]);
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
                    if !req.force {
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
