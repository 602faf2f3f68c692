//! [`RedisLeaseStore`]: node-ID leases as Redis keys with an expiry.

pub use idgen_engine::lease::*;

use std::sync::Arc;

use idgen_engine::Error;
use idgen_engine::SqlName;
use redis::Script;

use crate::connection::Connection;
#[allow(deprecated)]
pub use crate::connection::RedisClient;
pub use crate::connection::RedisMarker;
use crate::scripts::{self, timestamp_arg};

// The store's `LeaseOperator` (an operator's view); the trait and its types, `HeldLease`,
// `FreeRequest`, `Freed` and `NotFreed`, are idgen-engine's, re-exported above with the rest
// of its `lease` module.
mod operator;

/// The default key prefix of the lease keys (the SQL stores' default table name).
pub const DEFAULT_PREFIX: &str = "idgen_worker_lease";

/// Node-ID leases on Redis: the [`LeaseStore`] behind `WorkerLease::acquire(&client, &layout)`.
///
/// A claim takes the lowest node ID given back by a release (exact last timestamp: issued on
/// at once), else the lowest whose key `<prefix>:<namespace>:holder:<node>` is absent (issued
/// on after one TTL and the clock allowance, as Redis may have forgotten its holder), with
/// `SET … NX PX <ttl>`; renewals and releases are Lua scripts that check the holder first.
/// The last-timestamp bound lives in the hash `<prefix>:<namespace>:node:<node>`, which never
/// expires: a renewal raises it, a release replaces it with the exact last timestamp. Expiry is
/// measured on the Redis server's clock. A holder whose lease expired unclaimed may renew it
/// again (as with the SQL stores); a released node ID is never taken back by a late renewal.
///
/// Read [what Redis does not guarantee](crate#what-redis-does-not-guarantee) before relying on it.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_redis::lease::{RedisLeaseStore, WorkerLease};
/// use idgen_redis::{Layout, Snowflake};
///
/// let client = redis::Client::open("redis://127.0.0.1:6379/")?;
/// let store = RedisLeaseStore::new(client).with_prefix("orders_leases")?;
/// let lease = WorkerLease::acquire(store, &Layout::TWITTER).await?;
/// let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
/// println!("{}", ids.next_id()?);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisLeaseStore {
    conn: Connection,
    /// The key prefix, or why the given one was refused.
    prefix: Result<Arc<str>, Error>,
}

impl std::fmt::Debug for RedisLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLeaseStore")
            .field("server", &self.conn.server())
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisLeaseStore {
    /// The store on `client`'s server, with the key prefix [`DEFAULT_PREFIX`]. It connects on
    /// first use (one multiplexed connection, opened again if it breaks).
    ///
    /// ```
    /// let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// let store = idgen_redis::lease::RedisLeaseStore::new(client);
    /// assert_eq!(store.prefix().unwrap(), "idgen_worker_lease");
    /// ```
    pub fn new(client: redis::Client) -> Self {
        RedisLeaseStore {
            conn: Connection::new(client),
            prefix: Ok(DEFAULT_PREFIX.into()),
        }
    }

    /// The same store with another key prefix: the SQL stores' rule for table names
    /// (`name` or `a.name`, ASCII letters, digits and `_`), so one name works everywhere.
    ///
    /// ```
    /// # let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// use idgen_redis::lease::RedisLeaseStore;
    /// let store = RedisLeaseStore::new(client.clone()).with_prefix("app.leases")?;
    /// assert_eq!(store.prefix()?, "app.leases");
    /// let err = RedisLeaseStore::new(client).with_prefix("a b").unwrap_err();
    /// assert!(err.to_string().contains("\"a b\""));
    /// # Ok::<(), idgen_redis::Error>(())
    /// ```
    pub fn with_prefix(self, prefix: &str) -> Result<Self, Error> {
        SqlName::parse("lease key prefix", prefix)?;
        Ok(RedisLeaseStore {
            prefix: Ok(prefix.into()),
            ..self
        })
    }

    /// A store whose refused prefix fails the first call (for [`IntoLeaseStore`]).
    fn named(client: redis::Client, prefix: &str) -> Self {
        RedisLeaseStore {
            conn: Connection::new(client),
            prefix: SqlName::parse("lease key prefix", prefix).map(|_| prefix.into()),
        }
    }

    /// The key prefix.
    ///
    /// ```
    /// # let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
    /// let store = idgen_redis::lease::RedisLeaseStore::new(client);
    /// assert_eq!(store.prefix()?, idgen_redis::lease::DEFAULT_PREFIX);
    /// # Ok::<(), idgen_redis::Error>(())
    /// ```
    pub fn prefix(&self) -> Result<&str, Error> {
        self.prefix.as_deref().map_err(Clone::clone)
    }

    /// `<prefix>:<namespace>`.
    fn base(&self, namespace: &str) -> Result<String, BoxError> {
        Ok(format!("{}:{namespace}", self.prefix()?))
    }

    /// Runs `script` on the node ID of `req` with ARGV base, node, holder, `ttl_ms` (when
    /// given) and the last timestamp: the script's answer.
    async fn on_node(
        &self,
        script: &Script,
        action: &str,
        req: &RenewRequest<'_>,
        ttl_ms: Option<u64>,
    ) -> Result<i64, BoxError> {
        let base = self.base(req.namespace)?;
        self.conn
            .run(|mut conn| async move {
                let mut call = script.arg(&base);
                call.arg(req.node).arg(req.holder);
                if let Some(ttl_ms) = ttl_ms {
                    call.arg(ttl_ms);
                }
                call.arg(timestamp_arg(req.last_timestamp_ms))
                    .invoke_async(&mut conn)
                    .await
            })
            .await
            .map_err(|e| self.failed(format!("{action} node {}", req.node), e))
    }

    fn failed(&self, action: String, source: redis::RedisError) -> BoxError {
        Box::new(self.conn.failed(&action, source))
    }
}

/// Milliseconds for `PX`/`PEXPIRE` (0 ends the lease now: the scripts delete the key).
fn ttl_ms(ttl: std::time::Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)
}

/// A stored timestamp back to a number.
fn parse_timestamp(text: &str) -> Result<Option<i64>, BoxError> {
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        BoxError::from(format!(
            "the stored last timestamp {text:?} is not an integer"
        ))
    })
}

impl LeaseStore for RedisLeaseStore {
    /// In the key `<prefix>:<namespace>:layout` (no expiry), `SET … NX`; then read.
    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        let key = format!("{}:layout", self.base(namespace)?);
        let recorded: Option<String> = self
            .conn
            .run(|mut conn| {
                let key = key.clone();
                async move {
                    let _: Option<String> = redis::cmd("SET")
                        .arg(&key)
                        .arg(layout)
                        .arg("NX")
                        .query_async(&mut conn)
                        .await?;
                    redis::cmd("GET").arg(&key).query_async(&mut conn).await
                }
            })
            .await
            .map_err(|e| self.failed(format!("record the layout of {namespace}"), e))?;
        Ok(recorded)
    }

    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        let base = self.base(req.namespace)?;
        let reply: Option<(String, String, String)> = self
            .conn
            .run(|mut conn| async move {
                scripts::CLAIM
                    .arg(&base)
                    .arg(req.capacity)
                    .arg(req.holder)
                    .arg(ttl_ms(req.ttl).max(1))
                    .invoke_async(&mut conn)
                    .await
            })
            .await
            .map_err(|e| self.failed(format!("claim in {}", req.namespace), e))?;
        let Some((node, last, released)) = reply else {
            return Ok(None);
        };
        let node = node
            .parse()
            .map_err(|_| BoxError::from(format!("the claim returned node {node:?}")))?;
        Ok(Some(Claim {
            node,
            last_timestamp_ms: parse_timestamp(&last)?,
            exact: released == "1",
        }))
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let renewed = self
            .on_node(&scripts::RENEW, "renew", &req, Some(ttl_ms(req.ttl)))
            .await?;
        Ok(renewed == 1)
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.on_node(&scripts::RELEASE, "release", &req, None)
            .await
            .map(drop)
    }

    /// The server's clock, `TIME` ([`now_ms`](RedisLeaseStore::now_ms)): a call of its own
    /// before each claim and renewal (the claim and renewal scripts stay as they are).
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        Ok(Some(self.now_ms().await?))
    }

    /// The same server and prefix with a connection of its own, opened on first use (on the
    /// runtime that uses it).
    fn detached(&self) -> Option<Self> {
        Some(RedisLeaseStore {
            conn: self.conn.fresh(),
            prefix: self.prefix.clone(),
        })
    }
}

impl IntoLeaseStore<RedisMarker> for redis::Client {
    type Store = RedisLeaseStore;
    /// The store on this client, with `table` as the key prefix (a refused one fails the
    /// first claim, naming it).
    fn into_lease_store(self, table: &str) -> RedisLeaseStore {
        RedisLeaseStore::named(self, table)
    }
}
