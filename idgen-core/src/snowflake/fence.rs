//! [`Fence`] and [`NodeLease`]: how a leased node ID stops a generator it no longer owns.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A shared deadline after which a [`Snowflake`](crate::Snowflake) generator stops issuing IDs.
///
/// A node-ID lease (such as `WorkerLease` in the database adapter crates) holds one side and
/// moves the deadline forward on every successful renewal; the generator checks it on every ID
/// and returns [`Error::Fenced`](crate::Error::Fenced) once the clock reaches it. So a process
/// that cannot renew its lease stops before another process can be handed the same node ID.
///
/// The generator in turn records the last timestamp it issued, which the lease writes to the
/// database so the next holder of the node ID never issues at or below it.
///
/// ```
/// use idgen_core::{Fence, Layout, ManualClock, Snowflake, Error};
///
/// let clock = ManualClock::new(1_800_000_000_000);
/// let fence = Fence::new(1_800_000_000_100);
/// let ids = Snowflake::builder()
///     .layout(Layout::TWITTER).node(5).clock(clock.clone()).fence(fence.clone())
///     .build()?;
/// let id = ids.next_id()?;
/// assert_eq!(fence.last_issued_ms(), Some(1_800_000_000_000));
///
/// clock.set(1_800_000_000_100);
/// assert!(matches!(ids.next_id(), Err(Error::Fenced { .. })));
/// fence.extend_until(1_800_000_010_000); // the lease was renewed
/// assert!(ids.next_id()? > id);
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Fence {
    inner: Arc<FenceState>,
}

#[derive(Debug)]
struct FenceState {
    valid_until_ms: AtomicI64,
    last_issued_ms: AtomicI64,
}

const NONE_ISSUED: i64 = i64::MIN;

impl Fence {
    /// A fence that lets IDs through while the clock reads before `valid_until_ms`.
    pub fn new(valid_until_ms: i64) -> Self {
        Fence {
            inner: Arc::new(FenceState {
                valid_until_ms: AtomicI64::new(valid_until_ms),
                last_issued_ms: AtomicI64::new(NONE_ISSUED),
            }),
        }
    }

    /// Moves the deadline to `valid_until_ms` (forwards or backwards).
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(10);
    /// fence.extend_until(20);
    /// assert_eq!(fence.valid_until_ms(), 20);
    /// ```
    pub fn extend_until(&self, valid_until_ms: i64) {
        self.inner
            .valid_until_ms
            .store(valid_until_ms, Ordering::SeqCst);
    }

    /// Stops the generator at once (the lease was lost or released).
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(i64::MAX);
    /// fence.revoke();
    /// assert!(!fence.is_open_at(0));
    /// ```
    pub fn revoke(&self) {
        self.inner.valid_until_ms.store(i64::MIN, Ordering::SeqCst);
    }

    /// The deadline, in milliseconds since the Unix epoch (exclusive).
    ///
    /// ```
    /// assert_eq!(idgen_core::Fence::new(42).valid_until_ms(), 42);
    /// ```
    pub fn valid_until_ms(&self) -> i64 {
        self.inner.valid_until_ms.load(Ordering::SeqCst)
    }

    /// Whether IDs may be issued at `now_ms`.
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(42);
    /// assert!(fence.is_open_at(41));
    /// assert!(!fence.is_open_at(42));
    /// ```
    #[inline]
    pub fn is_open_at(&self, now_ms: i64) -> bool {
        now_ms < self.inner.valid_until_ms.load(Ordering::Acquire)
    }

    /// The start of the latest tick the fenced generator issued an ID in, in milliseconds since
    /// the Unix epoch; `None` before the first ID.
    ///
    /// ```
    /// assert_eq!(idgen_core::Fence::new(42).last_issued_ms(), None);
    /// ```
    pub fn last_issued_ms(&self) -> Option<i64> {
        match self.inner.last_issued_ms.load(Ordering::SeqCst) {
            NONE_ISSUED => None,
            ms => Some(ms),
        }
    }

    #[inline]
    pub(crate) fn note_issued_ms(&self, ms: i64) {
        self.inner.last_issued_ms.fetch_max(ms, Ordering::AcqRel);
    }
}

/// A node ID held under a lease, as a [`Snowflake`](crate::Snowflake) generator needs it:
/// implemented by the database adapters' `WorkerLease`.
///
/// [`SnowflakeBuilder::lease`](crate::SnowflakeBuilder::lease) takes the node ID, the fence and
/// the last timestamp from it, and keeps the lease alive (and renewed by its owner) as long as
/// the generator lives.
///
/// ```
/// use idgen_core::{Fence, Layout, NodeLease, Snowflake};
///
/// struct Fixed(Fence);
/// impl NodeLease for Fixed {
///     fn node(&self) -> u64 { 9 }
///     fn fence(&self) -> Fence { self.0.clone() }
///     fn not_before_ms(&self) -> Option<i64> { None }
/// }
/// let ids = Snowflake::builder().layout(Layout::TWITTER).lease(Fixed(Fence::new(i64::MAX))).build()?;
/// assert_eq!(ids.node(), 9);
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub trait NodeLease: Send + Sync + 'static {
    /// The leased node ID.
    fn node(&self) -> u64;
    /// The fence the lease moves forward on each renewal.
    fn fence(&self) -> Fence;
    /// The last timestamp (Unix ms) any earlier holder of this node ID issued: the generator
    /// issues only at later ticks.
    fn not_before_ms(&self) -> Option<i64>;
}
