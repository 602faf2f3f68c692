//! [`MemoryLeaseStore`]: leases in process memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::lease::{BoxError, Claim, ClaimRequest, LeaseStore, RenewRequest};
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
    /// `None` once released.
    holder: Option<String>,
    expires_at_ms: i64,
    last_timestamp_ms: Option<i64>,
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
    /// Nothing to create: the store is ready from [`MemoryLeaseStore::new`].
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        Ok(())
    }

    /// `true`: nothing to create, so nothing to refuse.
    fn create_if_missing_by_default(&self) -> bool {
        true
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
                    // the stored bound is exact.
                    return Ok(Some(Claim {
                        node,
                        last_timestamp_ms: row.last_timestamp_ms,
                        exact: true,
                    }));
                }
                None => {
                    let row = Row {
                        holder: Some(req.holder.to_owned()),
                        expires_at_ms,
                        last_timestamp_ms: None,
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
        }
        Ok(())
    }

    /// The store itself: its rows live in this process, on no runtime.
    fn detached(&self) -> Option<Self> {
        Some(self.clone())
    }
}
