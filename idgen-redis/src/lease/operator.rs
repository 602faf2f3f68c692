//! An operator's view of the leases, Redis's [`LeaseOperator`]: the held leases (what `idgen
//! leases list --redis` shows) and the free (`idgen leases free --redis`), with the rule of the
//! SQL stores' free: an expired lease is freed at once, a live one only with `force`.

use idgen_engine::Error;
use idgen_engine::lease::{FREED_HOLDER, FreeRequest, Freed, HeldLease, LeaseOperator, NotFreed};

use super::{BoxError, RedisLeaseStore, parse_timestamp};
use crate::scripts;

/// Keys `SCAN` asks for per round.
const SCAN_COUNT: u64 = 1000;

/// `text` with the glob characters of `SCAN … MATCH` escaped.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Redis's operator view: the server's clock, the node IDs' hashes and holder keys of a
/// namespace, and the free (see [`free`](LeaseOperator::free) for why IDs stay unique).
impl LeaseOperator for RedisLeaseStore {
    fn clock_name(&self) -> &'static str {
        "Redis server clock"
    }

    /// The server's clock (`TIME`), Unix ms: what [`held_leases`](LeaseOperator::held_leases) measures
    /// `expires_at_ms` on.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) naming the server.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
    /// let store = idgen_redis::lease::RedisLeaseStore::new(client);
    /// use idgen_redis::lease::LeaseOperator;
    /// assert!(store.now_ms().await? > 1_700_000_000_000);
    /// # Ok(()) }
    /// ```
    async fn now_ms(&self) -> Result<i64, Error> {
        let (secs, micros): (i64, i64) = self
            .conn
            .run(|mut conn| async move { redis::cmd("TIME").query_async(&mut conn).await })
            .await
            .map_err(|e| {
                Error::lease_store("read the clock", self.failed("read the clock".into(), e))
            })?;
        Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
    }

    /// Every node ID of `namespace` with a holder, by node ID: live leases (a holder key, with
    /// its `PTTL`), and leases that expired or were freed by force and that nobody claimed
    /// since (the node ID's hash still names the holder as owner; `expires_at_ms` is `None`).
    /// Each with the last-timestamp bound stored for the node ID. Node IDs that were released
    /// or freed (the owner is empty, or [`FREED_HOLDER`]) are left out. The node IDs are found with `SCAN` (never `KEYS`), then each is
    /// read by a script of its own.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) naming the server and the node ID read, or a stored value that is
    /// not idgen's.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
    /// let store = idgen_redis::lease::RedisLeaseStore::new(client);
    /// use idgen_redis::lease::LeaseOperator;
    /// let now = store.now_ms().await?;
    /// for lease in store.held_leases("default").await? {
    ///     println!("{} {} live: {}", lease.node, lease.holder, lease.is_live(now));
    /// }
    /// # Ok(()) }
    /// ```
    async fn held_leases(&self, namespace: &str) -> Result<Vec<HeldLease>, Error> {
        self.rows_inner(namespace)
            .await
            .map_err(|e| Error::lease_store("list leases", e))
    }

    /// Frees `req.node` of `req.namespace` for an operator, with the rule of the SQL stores
    /// (`idgen_sql::procedure::free`): an expired lease at once; a live one only with
    /// `req.force`. With `req.holder`, only that holder's lease is freed (the one `leases
    /// list` showed), so a node ID claimed again in between is left alone; without, whoever
    /// holds it now. One script, atomic on the server.
    ///
    /// # Why IDs stay unique
    ///
    /// Every renewal stored in the node ID's hash (`last_timestamp`, never expiring) a bound
    /// at or above every tick its holder may issue until its fence deadline (the holder
    /// computes the deadline before it sends the renewal; the generator refuses later ticks).
    /// The free never deletes or lowers `last_timestamp`, which every claim reads:
    ///
    /// * **Expired** (no holder key, the hash still names the holder as owner): Redis expired
    ///   the key on its clock after the holder's fence closed (the store's promise, with the
    ///   server's clock slewed, never stepped), unless Redis came back from an older snapshot
    ///   (then the holder may still be issuing, and the operator cannot tell). The owner
    ///   becomes [`FREED_HOLDER`] and the bound is kept: a late renewal of the old holder
    ///   finds another owner and does not take the node ID back (it fences), and the next
    ///   claim is not `exact` (only a release, which empties the owner, is): a takeover,
    ///   issuing no ID timestamped before claim time + one TTL + its clock allowance, and
    ///   above the bound.
    /// * **Forced** (a live lease): the holder key is deleted; the hash keeps the holder as
    ///   owner and the bound, so the next claim is not `exact`: it is a takeover, issuing no ID
    ///   timestamped before claim time + one TTL + its clock allowance, and above the bound. The old holder
    ///   may still issue until its fence deadline (at most one TTL after its last renewal); the
    ///   takeover wait keeps the two apart when both use the same TTL and their clocks agree
    ///   within the allowance, which is what [`NotFreed::Live`] warns about. If the old holder
    ///   renews before anyone claims the node ID, it takes it back (as with the SQL stores);
    ///   once another process has claimed it, its renewals fail and it fences.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) naming the server and the node ID.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_redis::lease::{FreeRequest, LeaseOperator, NotFreed, RedisLeaseStore};
    ///
    /// let store = RedisLeaseStore::new(redis::Client::open("redis://127.0.0.1:6379/")?);
    /// let req = FreeRequest { namespace: "default", node: 3, holder: Some("web-1:4242:9f3a"), force: false };
    /// match store.free(req).await? {
    ///     Ok(freed) => println!("{freed}"),
    ///     Err(live @ NotFreed::Live { .. }) => eprintln!("{live}; pass force to free it anyway"),
    ///     Err(not) => eprintln!("{not}"),
    /// }
    /// # Ok(()) }
    /// ```
    async fn free(&self, req: FreeRequest<'_>) -> Result<Result<Freed, NotFreed>, Error> {
        self.free_inner(req)
            .await
            .map_err(|e| Error::lease_store("free", e))
    }
}

impl RedisLeaseStore {
    async fn rows_inner(&self, namespace: &str) -> Result<Vec<HeldLease>, BoxError> {
        let base = self.base(namespace)?;
        let states = format!("{base}:node:");
        let pattern = format!("{}*", glob_escape(&states));
        let mut nodes = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = self
                .conn
                .run(|mut conn| {
                    let pattern = pattern.clone();
                    async move {
                        redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(pattern)
                            .arg("COUNT")
                            .arg(SCAN_COUNT)
                            .query_async(&mut conn)
                            .await
                    }
                })
                .await
                .map_err(|e| self.failed(format!("scan {pattern}"), e))?;
            nodes.extend(keys.iter().filter_map(|key| {
                let digits = key.strip_prefix(&states)?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                digits.parse::<u64>().ok()
            }));
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        nodes.sort_unstable();
        nodes.dedup();
        let now = self.now_ms().await.map_err(BoxError::from)?;
        let mut rows = Vec::new();
        for node in nodes {
            let (holder, left, last): (String, String, String) = self
                .conn
                .run(|mut conn| {
                    let base = base.clone();
                    async move {
                        scripts::ROW
                            .arg(base)
                            .arg(node)
                            .invoke_async(&mut conn)
                            .await
                    }
                })
                .await
                .map_err(|e| self.failed(format!("read node {node}"), e))?;
            if holder.is_empty() || holder == FREED_HOLDER {
                continue;
            }
            let left: i64 = left
                .parse()
                .map_err(|_| BoxError::from(format!("PTTL answered {left:?}")))?;
            rows.push(HeldLease {
                node,
                holder,
                expires_at_ms: (left > 0).then(|| now.saturating_add(left)),
                last_timestamp_ms: parse_timestamp(&last)?,
            });
        }
        Ok(rows)
    }

    async fn free_inner(&self, req: FreeRequest<'_>) -> Result<Result<Freed, NotFreed>, BoxError> {
        let base = self.base(req.namespace)?;
        let (node, expected, force) = (req.node, req.holder, req.force);
        let (outcome, holder, ms): (String, String, String) = self
            .conn
            .run(|mut conn| async move {
                scripts::FREE
                    .arg(base)
                    .arg(node)
                    .arg(expected.unwrap_or(""))
                    .arg(if force { "1" } else { "0" })
                    .arg(FREED_HOLDER)
                    .invoke_async(&mut conn)
                    .await
            })
            .await
            .map_err(|e| self.failed(format!("free node {node}"), e))?;
        let remaining_ms: i64 = ms
            .parse()
            .map_err(|_| BoxError::from(format!("PTTL answered {ms:?}")))?;
        let remaining_ms = remaining_ms.max(0);
        Ok(match outcome.as_str() {
            "none" => Err(NotFreed::NoRow { node }),
            "notheld" => Err(NotFreed::NotHeld { node }),
            "other" => Err(NotFreed::OtherHolder {
                node,
                expected: expected.unwrap_or_default().to_owned(),
                actual: holder,
            }),
            "live" => Err(NotFreed::Live {
                node,
                holder,
                remaining_ms,
            }),
            "forced" => Ok(Freed::Forced {
                node,
                holder,
                remaining_ms,
            }),
            "expired" => Ok(Freed::Expired { node, holder }),
            other => {
                return Err(BoxError::from(format!(
                    "the free script answered {other:?}"
                )));
            }
        })
    }
}
