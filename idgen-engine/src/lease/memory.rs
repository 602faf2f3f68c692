//! [`MemoryLeaseStore`]: leases in process memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::lease::{
    BoxError, Claim, ClaimRequest, FREED_HOLDER, FreeRequest, Freed, HeldLease, LeaseOperator,
    LeaseStore, NotFreed, RenewRequest,
};
use idgen_core::{Clock, SystemClock};

/// Node-ID leases kept in memory: for several generators inside one process, and for tests of
/// code built on leases. It protects nothing across processes; use a database store for that.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_engine::Error> {
/// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
/// use idgen_core::Layout;
///
/// let store = MemoryLeaseStore::new();
/// let a = WorkerLease::acquire(store.clone(), &Layout::TWITTER).await?;
/// let b = WorkerLease::acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_ne!(a.node(), b.node());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MemoryLeaseStore {
    rows: Arc<Mutex<BTreeMap<(String, u64), Row>>>,
    /// The layout each namespace was first used with.
    layouts: Arc<Mutex<BTreeMap<String, String>>>,
    clock: Arc<dyn Clock>,
}

#[derive(Clone, Debug)]
struct Row {
    /// `None` once released; [`FREED_HOLDER`] once an operator freed its expired lease.
    holder: Option<String>,
    expires_at_ms: i64,
    last_timestamp_ms: Option<i64>,
    /// An operator ended the lease ([`MemoryLeaseStore::free`]): the next claim is not exact.
    freed: bool,
}

impl MemoryLeaseStore {
    /// An empty store on the [`SystemClock`].
    pub fn new() -> Self {
        Self::with_clock(SystemClock::new())
    }

    /// An empty store whose expiry times follow `clock`.
    pub fn with_clock(clock: impl Clock + 'static) -> Self {
        MemoryLeaseStore {
            rows: Arc::default(),
            layouts: Arc::default(),
            clock: Arc::new(clock),
        }
    }

    /// The store's clock, Unix ms: what [`HeldLease::expires_at_ms`] of [`rows`](Self::rows)
    /// is measured on.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Every node ID of `namespace` with a holder, by node ID: live leases, and leases that
    /// ended and that nobody claimed since. Node IDs released or freed are left out.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// let store = MemoryLeaseStore::new();
    /// let lease = WorkerLease::options().namespace("orders").acquire(store.clone(), &idgen_core::Layout::TWITTER).await?;
    /// let rows = store.rows("orders");
    /// assert_eq!((rows[0].node, rows[0].holder.as_str()), (lease.node(), lease.holder()));
    /// assert!(rows[0].is_live(store.now_ms()));
    /// # Ok(()) }
    /// ```
    pub fn rows(&self, namespace: &str) -> Vec<HeldLease> {
        self.lock()
            .iter()
            .filter(|((ns, _), _)| ns == namespace)
            .filter_map(|((_, node), row)| {
                let holder = row.holder.clone().filter(|h| h != FREED_HOLDER)?;
                Some(HeldLease {
                    node: *node,
                    holder,
                    expires_at_ms: Some(row.expires_at_ms),
                    last_timestamp_ms: row.last_timestamp_ms,
                })
            })
            .collect()
    }

    /// Frees `node` of `namespace` for an operator, with the rule of every store's free: an
    /// expired lease at once (its holder becomes [`FREED_HOLDER`], so its renewals fail), a
    /// live one only with `force` (it ends now; the holder's name stays). Only `holder`'s lease
    /// (or, with `None`, whoever holds it). Neither makes the next claim exact, as a release
    /// does: it is a takeover.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, NotFreed, WorkerLease};
    /// let store = MemoryLeaseStore::new();
    /// let lease = WorkerLease::acquire(store.clone(), &idgen_core::Layout::TWITTER).await?;
    /// let refused = store.free("default", lease.node(), None, false).unwrap_err();
    /// assert!(matches!(refused, NotFreed::Live { .. }));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`NotFreed`] saying why nothing was freed.
    pub fn free(
        &self,
        namespace: &str,
        node: u64,
        holder: Option<&str>,
        force: bool,
    ) -> Result<Freed, NotFreed> {
        let now = self.clock.now_ms();
        let mut rows = self.lock();
        let Some(row) = rows.get_mut(&(namespace.to_owned(), node)) else {
            return Err(NotFreed::NoRow { node });
        };
        let actual = match row.holder.clone() {
            Some(h) if h != FREED_HOLDER => h,
            _ => return Err(NotFreed::NotHeld { node }),
        };
        if let Some(expected) = holder.filter(|e| *e != actual) {
            return Err(NotFreed::OtherHolder {
                node,
                expected: expected.to_owned(),
                actual,
            });
        }
        if row.expires_at_ms <= now {
            row.holder = Some(FREED_HOLDER.to_owned());
            row.freed = true;
            return Ok(Freed::Expired {
                node,
                holder: actual,
            });
        }
        let remaining_ms = row.expires_at_ms - now;
        if !force {
            return Err(NotFreed::Live {
                node,
                holder: actual,
                remaining_ms,
            });
        }
        row.expires_at_ms = now;
        row.freed = true;
        Ok(Freed::Forced {
            node,
            holder: actual,
            remaining_ms,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, u64), Row>> {
        // A panic while holding the lock leaves consistent rows (each update is one assignment).
        self.rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A TTL in ms, saturating (a request made by hand may carry any duration).
fn ttl_ms(ttl: std::time::Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}

/// The operator's view of [`rows`](MemoryLeaseStore::rows), [`now_ms`](MemoryLeaseStore::now_ms)
/// and [`free`](MemoryLeaseStore::free), which never fail.
impl LeaseOperator for MemoryLeaseStore {
    fn clock_name(&self) -> &'static str {
        "this process's clock"
    }

    async fn now_ms(&self) -> Result<i64, crate::error::Error> {
        Ok(MemoryLeaseStore::now_ms(self))
    }

    async fn held_leases(&self, namespace: &str) -> Result<Vec<HeldLease>, crate::error::Error> {
        Ok(self.rows(namespace))
    }

    async fn free(
        &self,
        req: FreeRequest<'_>,
    ) -> Result<Result<Freed, NotFreed>, crate::error::Error> {
        Ok(MemoryLeaseStore::free(
            self,
            req.namespace,
            req.node,
            req.holder,
            req.force,
        ))
    }
}

impl Default for MemoryLeaseStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryLeaseStore")
            .field("rows", &self.lock().len())
            .finish()
    }
}

impl LeaseStore for MemoryLeaseStore {
    /// The store's clock ([`with_clock`](MemoryLeaseStore::with_clock)).
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        Ok(Some(self.clock.now_ms()))
    }

    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        let mut layouts = self
            .layouts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let recorded = layouts
            .entry(namespace.to_owned())
            .or_insert_with(|| layout.to_owned());
        Ok(Some(recorded.clone()))
    }

    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        let now = self.clock.now_ms();
        let expires_at_ms = now.saturating_add(ttl_ms(req.ttl));
        let mut rows = self.lock();
        for node in 0..req.capacity {
            let key = (req.namespace.to_owned(), node);
            match rows.get_mut(&key) {
                Some(row) if row.expires_at_ms > now => continue,
                Some(row) => {
                    row.holder = Some(req.holder.to_owned());
                    row.expires_at_ms = expires_at_ms;
                    // Rows live as long as any holder holds the store, and are never forgotten:
                    // the stored bound is exact, unless an operator ended the lease (a holder
                    // freed by force may still issue until its fence deadline).
                    let exact = !std::mem::take(&mut row.freed);
                    return Ok(Some(Claim {
                        node,
                        last_timestamp_ms: row.last_timestamp_ms,
                        exact,
                    }));
                }
                None => {
                    let row = Row {
                        holder: Some(req.holder.to_owned()),
                        expires_at_ms,
                        last_timestamp_ms: None,
                        freed: false,
                    };
                    rows.insert(key, row);
                    // No row: never claimed from this store (which cannot forget one).
                    return Ok(Some(Claim {
                        node,
                        last_timestamp_ms: None,
                        exact: true,
                    }));
                }
            }
        }
        Ok(None)
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let now = self.clock.now_ms();
        let mut rows = self.lock();
        match rows.get_mut(&(req.namespace.to_owned(), req.node)) {
            Some(row) if row.holder.as_deref() == Some(req.holder) => {
                row.expires_at_ms = now.saturating_add(ttl_ms(req.ttl));
                row.last_timestamp_ms = row.last_timestamp_ms.max(req.last_timestamp_ms);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        let now = self.clock.now_ms();
        let mut rows = self.lock();
        if let Some(row) = rows.get_mut(&(req.namespace.to_owned(), req.node))
            && row.holder.as_deref() == Some(req.holder)
        {
            row.holder = None;
            row.expires_at_ms = row.expires_at_ms.min(now);
            row.last_timestamp_ms = req.last_timestamp_ms;
            // The holder itself vouches for what it issued: the next claim is exact again.
            row.freed = false;
        }
        Ok(())
    }

    /// The store itself: its rows live in this process, on no runtime.
    fn detached(&self) -> Option<Self> {
        Some(self.clone())
    }
}
