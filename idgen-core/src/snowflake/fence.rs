//! [`Fence`] and [`NodeLease`]: how a leased node ID stops a generator it no longer owns.
//!
//! Two promises rest on this file:
//!
//! * **Revocation is final.** [`Fence::revoke`] stores a sentinel deadline that
//!   [`Fence::extend_until`] refuses to overwrite, so no late renewal can reopen a fence whose
//!   node ID was already given back.
//! * **Revocation knows exactly what was issued.** A generator built with a fence registers its
//!   state word here. `revoke` sets the [`REVOKED`] bit in that word with one `fetch_or` and gets
//!   back the last `(tick, sequence)` any caller issued. Every ID is issued by a
//!   compare-and-swap on that same word from a value without the bit, so each issue is either
//!   ordered before the `fetch_or` (and so reflected in the value it returns) or fails and
//!   retries, sees the bit and returns [`Error::Fenced`](crate::error::Error::Fenced). No clock read
//!   and no cross-thread timing argument is involved: the value `revoke` returns is at or above
//!   every tick any caller issued or can still issue through this fence.

use std::sync::{Arc, Weak};

use crate::snowflake::Layout;
use crate::sync::{AtomicI64, AtomicU64, Mutex, Ordering};

/// The bit of a generator's state word that stops it for good. State words are
/// `tick << sequence_bits | sequence`, at most 63 bits wide, so bit 63 is free.
pub(crate) const REVOKED: u64 = 1 << 63;

/// The deadline of a revoked fence: no clock reading is below it, and `extend_until` never
/// replaces it.
const REVOKED_MS: i64 = i64::MIN;

const NONE_ISSUED: i64 = i64::MIN;

/// The contended state of a generator: the last issued `tick << sequence_bits | sequence`
/// ([`REVOKED`] set once its fence is revoked), on a cache line of its own. Shared with the
/// generator's [`Fence`], if it has one.
#[repr(align(128))]
pub(crate) struct IssueState {
    pub(crate) word: AtomicU64,
}

impl IssueState {
    pub(crate) fn new(word: u64) -> Self {
        IssueState {
            word: AtomicU64::new(word),
        }
    }
}

/// A shared deadline after which a [`Snowflake`](crate::snowflake::Snowflake) generator stops issuing IDs.
///
/// A node-ID lease (such as `WorkerLease` in the database adapter crates) holds one side and
/// moves the deadline forward on every successful renewal; the generator checks it on every ID
/// and returns [`Error::Fenced`](crate::error::Error::Fenced) once the clock reaches it. So a process
/// that cannot renew its lease stops before another process can be handed the same node ID.
///
/// [`revoke`](Fence::revoke) stops every generator built on the fence at once and for good, and
/// returns the start of the last tick they issued in: exactly what a lease must store as the
/// node ID's last timestamp when it gives the node ID back.
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
/// assert!(fence.extend_until(1_800_000_010_000)); // the lease was renewed
/// let later = ids.next_id()?;
/// assert!(later > id);
///
/// // Given back: stopped for good, and the exact last tick is known.
/// assert_eq!(fence.revoke(), Some(1_800_000_000_100));
/// assert!(!fence.extend_until(i64::MAX));
/// assert!(matches!(ids.next_id(), Err(Error::Fenced { .. })));
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Fence {
    inner: Arc<FenceState>,
}

struct FenceState {
    valid_until_ms: AtomicI64,
    /// Ticks starting at or after it are never issued, also ahead of the clock (a generator
    /// with a [lead](crate::snowflake::SnowflakeBuilder::lead) or a borrowing clock policy):
    /// at or above `valid_until_ms`; `i64::MIN` once revoked.
    ceiling_ms: AtomicI64,
    last_issued_ms: AtomicI64,
    /// The generators issuing under this fence. Locked only when a generator is built or
    /// dropped and by `revoke`, never on the path of an ID.
    generators: Mutex<Vec<Registered>>,
    /// The fork count when the fence was made (see `crate::fork`).
    forks: u64,
}

impl std::fmt::Debug for FenceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fence")
            .field(
                "valid_until_ms",
                &self.valid_until_ms.load(Ordering::SeqCst),
            )
            .field("ceiling_ms", &self.ceiling_ms.load(Ordering::SeqCst))
            .field(
                "last_issued_ms",
                &self.last_issued_ms.load(Ordering::SeqCst),
            )
            .finish_non_exhaustive()
    }
}

/// A generator registered with a fence: its state word and how to read a tick as a time.
struct Registered {
    state: Weak<IssueState>,
    layout: Layout,
    sequence_bits: u32,
}

impl Registered {
    /// The start (Unix ms) of the tick in state word `word`, `None` for the empty state.
    fn tick_ms(&self, word: u64) -> Option<i64> {
        let word = word & !REVOKED;
        (word != 0).then(|| self.layout.tick_start_ms(word >> self.sequence_bits))
    }
}

impl Fence {
    /// A fence that lets IDs through while the clock reads before `valid_until_ms`.
    ///
    /// ```
    /// assert!(idgen_core::Fence::new(42).is_open_at(41));
    /// ```
    pub fn new(valid_until_ms: i64) -> Self {
        Fence {
            inner: Arc::new(FenceState {
                valid_until_ms: AtomicI64::new(valid_until_ms.max(REVOKED_MS + 1)),
                ceiling_ms: AtomicI64::new(valid_until_ms.max(REVOKED_MS + 1)),
                last_issued_ms: AtomicI64::new(NONE_ISSUED),
                generators: Mutex::new(Vec::new()),
                forks: crate::fork::generation(),
            }),
        }
    }

    /// Moves the deadline to `valid_until_ms` (forwards or backwards), unless the fence was
    /// revoked: revocation is final. Returns whether the deadline was moved.
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(10);
    /// assert!(fence.extend_until(20));
    /// assert_eq!(fence.valid_until_ms(), 20);
    /// fence.revoke();
    /// assert!(!fence.extend_until(30)); // a late renewal cannot reopen it
    /// assert!(!fence.is_open_at(0));
    /// ```
    pub fn extend_until(&self, valid_until_ms: i64) -> bool {
        self.extend(valid_until_ms, valid_until_ms)
    }

    /// Moves the deadline to `valid_until_ms` and the [ceiling](Fence::ceiling_ms) of the
    /// ticks that may be issued ahead of the clock to `ceiling_ms` (at least the deadline),
    /// unless the fence was revoked. Returns whether they were moved.
    ///
    /// A lease whose generator may issue ahead of the clock (a
    /// [lead](crate::snowflake::SnowflakeBuilder::lead)) stores the ceiling as its bound, so
    /// the next holder of the node ID starts above every tick issued ahead.
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(10);
    /// assert!(fence.extend(20, 50));
    /// assert_eq!((fence.valid_until_ms(), fence.ceiling_ms()), (20, 50));
    /// assert!(!fence.is_open_at(20)); // the clock must read before the deadline
    /// assert!(fence.allows_tick_at(49)); // a tick ahead of the clock, below the ceiling
    /// assert!(!fence.allows_tick_at(50));
    /// ```
    pub fn extend(&self, valid_until_ms: i64, ceiling_ms: i64) -> bool {
        let target = valid_until_ms.max(REVOKED_MS + 1);
        let moved = self
            .inner
            .valid_until_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |current| {
                (current != REVOKED_MS).then_some(target)
            })
            .is_ok();
        if moved {
            // After the deadline: a generator that reads the new deadline and an old ceiling is
            // only held back more. A `revoke` in between leaves a ceiling no ID can use (every
            // generator's state word carries the REVOKED bit by then).
            self.inner
                .ceiling_ms
                .store(ceiling_ms.max(target), Ordering::SeqCst);
        }
        moved
    }

    /// The start of the first tick no ID may be issued in, even ahead of the clock (Unix ms):
    /// the deadline unless [`extend`](Fence::extend) set it higher; `i64::MIN` once revoked.
    ///
    /// ```
    /// assert_eq!(idgen_core::Fence::new(42).ceiling_ms(), 42);
    /// ```
    pub fn ceiling_ms(&self) -> i64 {
        if self.is_revoked() {
            return REVOKED_MS;
        }
        self.inner.ceiling_ms.load(Ordering::SeqCst)
    }

    /// Whether an ID may be issued in the tick starting at `tick_start_ms` ahead of the clock:
    /// below the [ceiling](Fence::ceiling_ms), and the fence not revoked.
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(42);
    /// assert!(fence.allows_tick_at(41));
    /// assert!(!fence.allows_tick_at(42));
    /// ```
    #[inline]
    pub fn allows_tick_at(&self, tick_start_ms: i64) -> bool {
        tick_start_ms < self.ceiling_ms()
    }

    /// Stops every generator built on this fence, at once and for good, and returns the start
    /// of the last tick any of them issued an ID in (Unix ms; `None` if none issued one). No
    /// caller can issue an ID at a later tick through this fence afterwards, whatever it was
    /// doing when `revoke` ran; see the module source for why.
    ///
    /// ```
    /// use idgen_core::{Fence, Layout, ManualClock, Snowflake};
    /// let fence = Fence::new(i64::MAX);
    /// let ids = Snowflake::builder().node(1).clock(ManualClock::new(1_800_000_000_000))
    ///     .fence(fence.clone()).build()?;
    /// ids.next_id()?;
    /// assert_eq!(fence.revoke(), Some(1_800_000_000_000));
    /// assert!(ids.next_id().is_err());
    /// assert!(!fence.is_open_at(0));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn revoke(&self) -> Option<i64> {
        let generators = self.lock();
        // A read-modify-write, not a plain store: ordered against `extend_until`'s
        // compare-and-swap in the deadline's modification order, so that one either lands first
        // (and is overwritten here) or reads the sentinel and gives up.
        self.inner.valid_until_ms.swap(REVOKED_MS, Ordering::SeqCst);
        self.inner.ceiling_ms.swap(REVOKED_MS, Ordering::SeqCst);
        for generator in generators.iter() {
            if let Some(state) = generator.state.upgrade() {
                // Every later compare-and-swap on this word fails (it expects a word without the
                // bit), so `before` holds the last ID this generator will ever issue.
                let before = state.word.fetch_or(REVOKED, Ordering::SeqCst);
                if let Some(ms) = generator.tick_ms(before) {
                    self.note_issued_ms(ms);
                }
            }
        }
        self.last_issued_ms()
    }

    /// Whether [`revoke`](Fence::revoke) was called.
    ///
    /// ```
    /// let fence = idgen_core::Fence::new(i64::MAX);
    /// assert!(!fence.is_revoked());
    /// fence.revoke();
    /// assert!(fence.is_revoked());
    /// ```
    pub fn is_revoked(&self) -> bool {
        self.inner.valid_until_ms.load(Ordering::SeqCst) == REVOKED_MS
    }

    /// The deadline, in milliseconds since the Unix epoch (exclusive); `i64::MIN` once revoked.
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

    /// The start of the latest tick a generator on this fence is known to have issued an ID in,
    /// in milliseconds since the Unix epoch; `None` before the first ID. Exact once the fence is
    /// revoked; while generators still issue, a tick may be issued a moment before it shows here.
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

    /// The fork count the fence was made under: a generator built on it in a forked child is
    /// a copy of the parent's (see `crate::fork`).
    pub(crate) fn fork_generation(&self) -> u64 {
        self.inner.forks
    }

    #[inline]
    pub(crate) fn note_issued_ms(&self, ms: i64) {
        self.inner.last_issued_ms.fetch_max(ms, Ordering::AcqRel);
    }

    /// Registers a generator's state word, so `revoke` stops it. A generator registered after
    /// the fence was revoked is stopped at once.
    pub(crate) fn register(&self, state: &Arc<IssueState>, layout: Layout) {
        let mut generators = self.lock();
        generators.retain(|g| g.state.strong_count() > 0);
        if self.is_revoked() {
            state.word.fetch_or(REVOKED, Ordering::SeqCst);
        }
        generators.push(Registered {
            state: Arc::downgrade(state),
            layout,
            sequence_bits: u32::from(layout.sequence_bits()),
        });
    }

    /// A generator is going away: keep its last tick (it can issue nothing more) and forget it.
    pub(crate) fn unregister(&self, state: &Arc<IssueState>) {
        let mut generators = self.lock();
        if let Some(at) = generators
            .iter()
            .position(|g| std::ptr::eq(g.state.as_ptr(), Arc::as_ptr(state)))
        {
            let generator = generators.swap_remove(at);
            let word = state.word.fetch_or(REVOKED, Ordering::SeqCst);
            if let Some(ms) = generator.tick_ms(word) {
                self.note_issued_ms(ms);
            }
        }
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Vec<Registered>> {
        // Every update under this lock is a single push, remove or atomic operation: a panic
        // elsewhere cannot leave the list half-changed.
        self.inner
            .generators
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A node ID held under a lease, as a [`Snowflake`](crate::snowflake::Snowflake) generator needs it:
/// implemented by the database adapters' `WorkerLease`.
///
/// [`SnowflakeBuilder::lease`](crate::snowflake::SnowflakeBuilder::lease) takes the node ID, the fence and
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

    /// How far ahead of the clock the generator may issue (default zero): a lease whose
    /// [`not_before_ms`](NodeLease::not_before_ms) lies ahead of the clock (a takeover's bound)
    /// lets it issue at once from there, beyond its [`ClockPolicy`](crate::ClockPolicy); see
    /// [`SnowflakeBuilder::lead`](crate::snowflake::SnowflakeBuilder::lead). The fence's
    /// [ceiling](Fence::ceiling_ms) must cover those ticks.
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_core::{Fence, ManualClock, NodeLease, Snowflake};
    ///
    /// struct TakenOver(Fence);
    /// impl NodeLease for TakenOver {
    ///     fn node(&self) -> u64 { 9 }
    ///     fn fence(&self) -> Fence { self.0.clone() }
    ///     // A holder the store forgot may issue up to 31 s from now.
    ///     fn not_before_ms(&self) -> Option<i64> { Some(1_800_000_031_000) }
    ///     fn lead(&self) -> Duration { Duration::from_millis(31_001) }
    /// }
    /// let fence = Fence::new(1_800_000_025_000);
    /// fence.extend(1_800_000_025_000, 1_800_000_056_000);
    /// let ids = Snowflake::builder().clock(ManualClock::new(1_800_000_000_000))
    ///     .lease(TakenOver(fence)).build()?;
    /// let id = ids.next_id()?; // at once, 31 s ahead of the clock
    /// assert!(idgen_core::Layout::TWITTER.decompose(id)?.unix_ms > 1_800_000_031_000);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    fn lead(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// What the clock the lease computes its deadlines on reads now (Unix ms), or `None` (the
    /// default) for a lease without one. The fence's deadline is checked on the generator's
    /// clock, so the two must be one time base:
    /// [`SnowflakeBuilder::build`](crate::snowflake::SnowflakeBuilder::build) refuses a generator whose
    /// clock reads more than [`CLOCKS_AGREE_WITHIN_MS`] away from this.
    ///
    /// ```
    /// use idgen_core::{Error, Fence, ManualClock, NodeLease, Snowflake};
    ///
    /// struct OnAClock(ManualClock);
    /// impl NodeLease for OnAClock {
    ///     fn node(&self) -> u64 { 9 }
    ///     fn fence(&self) -> Fence { Fence::new(i64::MAX) }
    ///     fn not_before_ms(&self) -> Option<i64> { None }
    ///     fn clock_now_ms(&self) -> Option<i64> {
    ///         use idgen_core::Clock;
    ///         Some(self.0.now_ms())
    ///     }
    /// }
    /// let lease_clock = ManualClock::new(1_800_000_000_000);
    /// // On the lease's clock: fine.
    /// let ids = Snowflake::builder().clock(lease_clock.clone())
    ///     .lease(OnAClock(lease_clock.clone())).build()?;
    /// // On a clock 30 s ahead: refused.
    /// let err = Snowflake::builder().clock(ManualClock::new(1_800_000_030_000))
    ///     .lease(OnAClock(lease_clock)).build().unwrap_err();
    /// assert!(matches!(err, Error::InvalidOptions { .. }));
    /// # drop(ids);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    fn clock_now_ms(&self) -> Option<i64> {
        None
    }
}

/// How far apart a lease's clock and the clock of a generator built on it may read when the
/// generator is built (see [`NodeLease::clock_now_ms`]): one second, far below any lease's
/// safety margin. Two [`SystemClock`](crate::clock::SystemClock)s of one process always agree (they
/// share one anchor).
pub const CLOCKS_AGREE_WITHIN_MS: i64 = 1_000;
