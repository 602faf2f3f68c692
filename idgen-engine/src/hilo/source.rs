//! Where blocks come from: the [`HiLoSource`] trait and its conversions.

use std::future::Future;
use std::pin::Pin;

pub use idgen_core::BoxError;

/// How far the counter advances per call, as the database is configured.
///
/// ```
/// use idgen_engine::hilo::Increment;
///
/// // `CREATE SEQUENCE s INCREMENT BY 1000`: every `nextval` moves the sequence by 1000.
/// let sequence = Increment::Fixed(1000);
/// // A counter table updated with `next_val = next_val + ?`: any step per call.
/// let table = Increment::PerCall;
/// assert_ne!(sequence, table);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Increment {
    /// Every call advances the counter by exactly this much (a database sequence's
    /// `INCREMENT BY`). The engine refuses to start when it differs from the block size.
    Fixed(u64),
    /// Each call advances the counter by the size it is given (a counter table). The engine may
    /// then grow and shrink blocks with the consumption rate ([`HiLoBuilder::adaptive`]).
    ///
    /// [`HiLoBuilder::adaptive`]: crate::hilo::HiLoBuilder::adaptive
    PerCall,
}

/// A counter that [`HiLoSource::increment`] looked for and did not find: what is missing, in
/// words (`no sequence named orders`, `no row 'orders' in table idgen_hilo`, `no key … in etcd
/// at …`). Start-up creates the counter then, or refuses naming its migration; it is a result,
/// not an error, so that no engine has to recognise a store's error to tell.
///
/// ```
/// use idgen_engine::hilo::MissingCounter;
/// let missing = MissingCounter::new("no sequence named orders");
/// assert_eq!(missing.to_string(), "no sequence named orders");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingCounter(String);

impl MissingCounter {
    /// What is missing, in words.
    ///
    /// ```
    /// let m = idgen_engine::hilo::MissingCounter::new(format!("no row '{}' in table {}", "orders", "idgen_hilo"));
    /// assert_eq!(m.to_string(), "no row 'orders' in table idgen_hilo");
    /// ```
    pub fn new(what: impl Into<String>) -> MissingCounter {
        MissingCounter(what.into())
    }

    /// What is missing, in words.
    ///
    /// ```
    /// let m = idgen_engine::hilo::MissingCounter::new("no sequence named orders");
    /// assert_eq!(m.into_string(), "no sequence named orders");
    /// ```
    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for MissingCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A central counter that hands out blocks of IDs, with **pooled-lo** meaning: a returned value
/// `v` is the block `[v, v + size)`.
///
/// Implementations are expected to be thin: one atomic database statement per call
/// (`SELECT nextval(…)`, `UPDATE … RETURNING`, `UPDATE … SET next_val = LAST_INSERT_ID(next_val + ?)`).
/// The engine ([`HiLo`](crate::hilo::HiLo)) does everything else: it validates each block
/// (positive, no `i64` overflow, above every block it saw before), caches, prefetches, retries
/// with backoff and times out.
///
/// # Own connection, autocommit
///
/// [`allocate`](Self::allocate) must run **on its own connection, in autocommit, never inside a
/// caller's transaction**:
/// * a table counter advanced inside a transaction that later rolls back is un-allocated, and
///   another process then receives the same block that this process already hands out
///   (sequences are not transactional, but the rule keeps every source uniform);
/// * a pool whose every connection is held by a transaction waiting for an ID would deadlock
///   the refill that needs one more connection.
///
/// The increment must also be read **atomically with the update** (`RETURNING`, `nextval`,
/// `LAST_INSERT_ID(expr)` read from the same statement's result), never by a second `SELECT`.
///
/// # Implementing
///
/// The trait uses `async fn` in traits with a `Send` future, so implementations write plain
/// `async fn`s. It is not object-safe; the engine erases the type itself, so [`HiLo`] has no
/// type parameter. ORM crates without async (diesel) run the statement in
/// `tokio::task::spawn_blocking`.
///
/// ```
/// use idgen_engine::hilo::{BoxError, HiLo, HiLoSource, Increment, MissingCounter};
/// use std::sync::atomic::{AtomicI64, Ordering};
///
/// /// A counter table in memory: `UPDATE counters SET next = next + $1 RETURNING next - $1`.
/// struct Table(AtomicI64);
///
/// impl HiLoSource for Table {
///     async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
///         Ok(self.0.fetch_add(size as i64, Ordering::SeqCst))
///     }
///     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
///         Ok(Ok(Increment::PerCall)) // it always exists
///     }
///     fn name(&self) -> &str {
///         "counters.orders"
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::new(Table(AtomicI64::new(1)), 1000).await?;
/// assert_eq!(ids.next_id().await?, 1);
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
///
/// [`HiLo`]: crate::hilo::HiLo
pub trait HiLoSource: Send + Sync + 'static {
    /// Advances the counter by one step and returns the value it had before: the first ID of the
    /// new block. For [`Increment::Fixed`] sources `size` always equals that increment; for
    /// [`Increment::PerCall`] sources it is the number of IDs the engine wants now (one block,
    /// or several blocks' worth at a high rate; the engine splits them).
    fn allocate(&self, size: u64) -> impl Future<Output = Result<i64, BoxError>> + Send;

    /// Takes up to `count` blocks of `size` IDs in **one round trip** and returns their first
    /// IDs, each the block `[v, v + size)`. Asked only of [`Increment::Fixed`] sources (for an
    /// [`Increment::PerCall`] counter the engine asks [`allocate`](Self::allocate) for
    /// `count × size` IDs instead), when the consumption rate times the round trip needs more
    /// than one block per round trip.
    ///
    /// The default takes one block with [`allocate`](Self::allocate); the engine then runs
    /// several fetches at once if one at a time is not enough. A source that can take several
    /// values in one statement should override it, e.g. PostgreSQL
    /// `SELECT nextval('s') FROM generate_series(1, $count)` or MariaDB
    /// `SELECT NEXTVAL(s) FROM seq_1_to_$count`, under the same rules as `allocate` (own
    /// connection, autocommit).
    ///
    /// It may return fewer than `count` values, in any order, but at least one; each value is
    /// checked like a block from `allocate` (positive, no overflow, no overlap, above every
    /// block seen before this call was made).
    ///
    /// ```
    /// use idgen_engine::hilo::{BoxError, HiLo, HiLoSource, Increment, MissingCounter};
    /// use std::sync::atomic::{AtomicI64, Ordering};
    ///
    /// /// A sequence with `INCREMENT BY 100` that hands out several values per round trip.
    /// struct Sequence(AtomicI64);
    ///
    /// impl HiLoSource for Sequence {
    ///     async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
    ///         Ok(self.0.fetch_add(100, Ordering::SeqCst))
    ///     }
    ///     async fn allocate_blocks(&self, _size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
    ///         Ok((0..count).map(|_| self.0.fetch_add(100, Ordering::SeqCst)).collect())
    ///     }
    ///     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
    ///         Ok(Ok(Increment::Fixed(100)))
    ///     }
    ///     fn name(&self) -> &str {
    ///         "orders_seq"
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let seq = Sequence(AtomicI64::new(1));
    /// assert_eq!(seq.allocate_blocks(100, 3).await.unwrap(), [1, 101, 201]);
    /// let ids = HiLo::new(seq, 100).await?;
    /// assert!(ids.next_id().await? >= 1);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    fn allocate_blocks(
        &self,
        size: u64,
        count: u64,
    ) -> impl Future<Output = Result<Vec<i64>, BoxError>> + Send {
        let _ = count;
        async move { Ok(vec![self.allocate(size).await?]) }
    }

    /// Moves the counter forward in **one step**, so that its next block starts above `floor`:
    /// the [`floor`](crate::hilo::HiLoBuilder::floor) at start-up, instead of taking blocks until
    /// the counter is past it (10⁶ round trips for a gap of 10⁹ in blocks of 1,000).
    ///
    /// Forward only, and safe against every other writer: a counter already above `floor` is
    /// left as it is, and an allocation or another raise running at the same moment (another
    /// process starting) never makes the counter go down (an atomic `max` on a key-value store,
    /// `UPDATE … SET next_val = GREATEST(next_val, ?)` on a counter table, a sequence's value set
    /// while no `nextval` can run). A counter with a fixed increment moves by a whole number of
    /// increments, so its blocks stay on their grid.
    ///
    /// Returns `Ok(true)` once the counter is above `floor`, `Ok(false)` when this source
    /// cannot jump (the default): start-up then takes blocks until it is (several per round
    /// trip with [`allocate_blocks`](Self::allocate_blocks)), as it also does after an error
    /// here (a database user without the right to alter the sequence, say).
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLoSource, MemorySource};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let counter = MemorySource::sequence(1000);
    /// assert!(counter.raise_above(1_000_000_000).await.unwrap());
    /// assert_eq!(counter.peek_next(), 1_000_000_001); // 1 + 10⁶ increments, one call
    /// assert_eq!(counter.calls(), 1);
    /// counter.raise_above(5).await.unwrap(); // never backwards
    /// assert_eq!(counter.peek_next(), 1_000_000_001);
    /// # });
    /// ```
    fn raise_above(&self, floor: i64) -> impl Future<Output = Result<bool, BoxError>> + Send {
        let _ = floor;
        async { Ok(false) }
    }

    /// How the database is configured to advance the counter, read once at start-up (for a
    /// sequence: its increment from the catalog, e.g. `pg_sequences.increment_by`), or
    /// [`MissingCounter`] when the counter does not exist (start-up then creates it or refuses;
    /// [`create_if_missing`](Self::create_if_missing)). The outer `Err` is a failure to look.
    fn increment(
        &self,
    ) -> impl Future<Output = Result<Result<Increment, MissingCounter>, BoxError>> + Send;

    /// The counter's name, for error messages and logs (e.g. `public.orders_id_seq`).
    fn name(&self) -> &str;

    /// Creates the counter if it does not exist (a sequence with increment `block`, or a
    /// counter row starting at 1), idempotently and safely when many processes do it at the
    /// same moment; an existing counter is left as it is (start-up then checks its increment).
    /// [`HiLoBuilder::create_if_missing`](crate::hilo::HiLoBuilder::create_if_missing) calls it
    /// at start-up.
    ///
    /// The default fails naming the counter: a source whose counter idgen can create (every
    /// database source of the adapter crates, [`MemorySource`](crate::hilo::MemorySource))
    /// overrides it.
    fn create_if_missing(&self, block: u64) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = block;
        let message = format!(
            "hi-lo counter {}: this source cannot create its counter; create it before start-up",
            self.name()
        );
        async move { Err(message.into()) }
    }

    /// Whether start-up creates this counter when it finds it missing, unless the builder says
    /// otherwise ([`HiLoBuilder::create_if_missing`](crate::hilo::HiLoBuilder::create_if_missing)).
    ///
    /// `true` where a missing counter means a new schema: a SQL database keeps the counter with
    /// the rows its IDs key, so a database without it has none of them either. The default is
    /// `false`, for stores that can forget a counter while the IDs it gave out live on elsewhere
    /// (Redis restarted without persistence, an etcd restored from an old snapshot): created
    /// again at 1, such a counter would hand out those IDs a second time.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLoSource, MemorySource};
    /// assert!(MemorySource::new().create_if_missing_by_default());
    /// ```
    fn create_if_missing_by_default(&self) -> bool {
        false
    }

    /// The DDL that creates this counter for blocks of `block` IDs, for the team whose
    /// migrations own the schema: start-up names it when the counter is missing and creation
    /// is off. `None` (the default) for a store without DDL.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLoSource, MemorySource};
    /// assert_eq!(MemorySource::new().migration_sql(1000), None);
    /// ```
    fn migration_sql(&self, block: u64) -> Option<String> {
        let _ = block;
        None
    }
}

/// Anything [`HiLo::new`](crate::hilo::HiLo::new) accepts: a [`HiLoSource`] itself, or (in the
/// adapter crates) a connection pool that becomes a source for a named counter.
///
/// `Marker` exists only so that adapter crates may implement this trait for a pool type they do
/// not own, e.g. `impl IntoHiLoSource<idgen_sqlx::PgMarker> for sqlx::PgPool` (a local type
/// parameter satisfies Rust's orphan rule); callers never name it.
///
/// ```
/// use idgen_engine::hilo::{HiLo, IntoHiLoSource, MemorySource};
///
/// /// Stands in for a connection pool owned by another crate.
/// #[derive(Clone)]
/// struct Pool;
/// struct PoolMarker;
///
/// impl IntoHiLoSource<PoolMarker> for Pool {
///     type Source = MemorySource;
///     fn into_hilo_source(self, counter: &str) -> MemorySource {
///         MemorySource::named(counter)
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::new(Pool, 1000).await?; // the same call shape as `HiLo::new(pg_pool, 1000)`
/// assert_eq!(ids.stats().counter, "hilo");
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
pub trait IntoHiLoSource<Marker = ()> {
    /// The source this turns into.
    type Source: HiLoSource;

    /// Makes the source for the counter named `counter` ([`HiLoBuilder::counter`], default
    /// [`DEFAULT_COUNTER`]). A value that already is a source ignores the name.
    ///
    /// [`HiLoBuilder::counter`]: crate::hilo::HiLoBuilder::counter
    /// [`DEFAULT_COUNTER`]: crate::hilo::DEFAULT_COUNTER
    fn into_hilo_source(self, counter: &str) -> Self::Source;
}

impl<S: HiLoSource> IntoHiLoSource for S {
    type Source = S;

    fn into_hilo_source(self, _counter: &str) -> S {
        self
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object-safe twin of [`HiLoSource`], so the engine holds `Arc<dyn DynSource>`.
pub(crate) trait DynSource: Send + Sync + 'static {
    fn allocate(&self, size: u64) -> BoxFuture<'_, Result<i64, BoxError>>;
    fn allocate_blocks(&self, size: u64, count: u64) -> BoxFuture<'_, Result<Vec<i64>, BoxError>>;
    fn raise_above(&self, floor: i64) -> BoxFuture<'_, Result<bool, BoxError>>;
    fn name(&self) -> &str;
}

impl<S: HiLoSource> DynSource for S {
    fn allocate(&self, size: u64) -> BoxFuture<'_, Result<i64, BoxError>> {
        Box::pin(HiLoSource::allocate(self, size))
    }

    fn allocate_blocks(&self, size: u64, count: u64) -> BoxFuture<'_, Result<Vec<i64>, BoxError>> {
        Box::pin(HiLoSource::allocate_blocks(self, size, count))
    }

    fn raise_above(&self, floor: i64) -> BoxFuture<'_, Result<bool, BoxError>> {
        Box::pin(HiLoSource::raise_above(self, floor))
    }

    fn name(&self) -> &str {
        HiLoSource::name(self)
    }
}
