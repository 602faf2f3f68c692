//! [`HiLoBuilder`]: the options of a [`HiLo`].

use std::marker::PhantomData;
use std::time::Duration;

use std::future::Future;
use std::sync::Arc;

use super::HiLo;

use super::options::{Floor, FloorQuery, Options};
use super::source::{HiLoSource, IntoHiLoSource};
use crate::error::{ErrorKind, Result};
use idgen_core::BoxError;

/// Options of a [`HiLo`]; made by [`HiLo::builder`], finished by [`build`](Self::build).
///
/// ```
/// use idgen_engine::hilo::{HiLo, MemorySource};
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = HiLo::builder(MemorySource::new())
///     .block(500)
///     .timeout(Duration::from_secs(2))
///     .backoff(Duration::from_millis(20), Duration::from_secs(1))
///     .adaptive(50_000, Duration::from_secs(60))
///     .build()
///     .await?;
/// assert_eq!(ids.next_id().await?, 1);
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
#[must_use = "a builder does nothing until `build().await`"]
pub struct HiLoBuilder<T, M = ()> {
    source: T,
    options: Options,
    marker: PhantomData<fn() -> M>,
}

impl<T, M> std::fmt::Debug for HiLoBuilder<T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HiLoBuilder")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<T: IntoHiLoSource<M>, M> HiLoBuilder<T, M> {
    pub(crate) fn new(source: T) -> Self {
        HiLoBuilder {
            source,
            options: Options::default(),
            marker: PhantomData,
        }
    }

    /// The time-out set so far (for `StripedHiLo`, which waits on several counters).
    pub(crate) fn configured_timeout(&self) -> Duration {
        self.options.timeout
    }

    /// The source given (for `StripedHiLo`, which reads its counters' settings through the
    /// builders it configured).
    pub(crate) fn source_mut(&mut self) -> &mut T {
        &mut self.source
    }

    /// The block size: how many IDs one call to the counter takes (default 1000, at most 2^32).
    /// For a sequence it must equal the sequence's increment, or start-up is refused.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let err = HiLo::builder(MemorySource::new()).block(0).build().await.unwrap_err();
    /// assert!(err.to_string().contains("block = 0"));
    /// # });
    /// ```
    pub fn block(mut self, block: u64) -> Self {
        self.options.block = block;
        self
    }

    /// The counter's name when the source is a connection pool (default
    /// [`DEFAULT_COUNTER`](crate::hilo::DEFAULT_COUNTER)); a source value carries its own name and
    /// ignores this.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).counter("orders");
    /// # let _ = builder;
    /// ```
    pub fn counter(mut self, name: &str) -> Self {
        name.clone_into(&mut self.options.counter);
        self
    }

    /// When the database's increment differs from [`block`](Self::block), use the database's
    /// value instead of refusing to start (default `false`).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::sequence(50))
    ///     .block(1000)
    ///     .adopt_database_increment(true)
    ///     .build()
    ///     .await?;
    /// assert_eq!(ids.stats().block_size, 50);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn adopt_database_increment(mut self, adopt: bool) -> Self {
        self.options.adopt_database_increment = adopt;
        self
    }

    /// Whether start-up creates the counter when it finds it missing: a sequence with
    /// increment [`block`](Self::block), or the counter table and the counter's row,
    /// idempotently and safely when many processes start at the same moment (see
    /// [`HiLoSource::create_if_missing`](crate::hilo::HiLoSource::create_if_missing)).
    ///
    /// The default is the source's ([`HiLoSource::create_if_missing_by_default`]): `true` for
    /// the SQL databases of the adapter crates, so `HiLo::new(pool, 1000)` works on an empty
    /// database and on every restart; `false` for Redis and etcd, which can forget a counter
    /// whose IDs live on (created again at 1, it would hand them out twice).
    ///
    /// Start-up first looks for the counter and creates it only when it is missing, so an
    /// existing counter is never touched (a database user without the right to create
    /// anything can run it) and its increment is still checked. With `false`, a missing
    /// counter fails start-up with [`ErrorKind::HiLoCounterNotCreated`](crate::ErrorKind::HiLoCounterNotCreated),
    /// which gives the migration to run: for teams whose migrations own the schema.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // With idgen-sqlx: HiLo::builder(&pool).block(1000).create_if_missing(false).build().await?
    /// let ids = HiLo::builder(MemorySource::new()).block(1000).create_if_missing(false).build().await?;
    /// assert_eq!(ids.next_id().await?, 1);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn create_if_missing(mut self, create: bool) -> Self {
        self.options.create_if_missing = Some(create);
        self
    }

    /// Fetch the next block in the background before the current one runs out (default
    /// `true`). With `false`, the caller that finds the buffer empty waits for the fetch.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).prefetch(false);
    /// # let _ = builder;
    /// ```
    pub fn prefetch(mut self, prefetch: bool) -> Self {
        self.options.prefetch = prefetch;
        self
    }

    /// The low-water mark is `factor × consumption rate × fetch latency` IDs (default 3.0):
    /// a prefetch starts when fewer IDs than that are buffered, so it lands before the buffer
    /// runs dry even if the rate or the latency grows by that factor meanwhile. The latency is
    /// measured from the request to the block's arrival (so it includes scheduling the
    /// background task) and estimated as the largest of the last, the mean and the recent peak
    /// (which halves every 10 s, so a spike keeps counting for a while whatever the fetch
    /// rate); the rate is sampled at each refill. Before a rate is known, a whole block: the
    /// second block is fetched as soon as the first is in use. Blocks are fetched to stay
    /// above the mark, several per round trip or several round trips at once when one block
    /// per round trip is not enough, up to [`max_buffered_blocks`](Self::max_buffered_blocks).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).low_water_factor(5.0);
    /// # let _ = builder;
    /// ```
    pub fn low_water_factor(mut self, factor: f64) -> Self {
        self.options.low_water_factor = factor;
        self
    }

    /// A floor for the low-water mark, in IDs (default: one block): keep at least this many
    /// buffered, e.g. to ride out a database outage of known length at a known rate.
    ///
    /// The default asks for the next block as soon as the one in use is all that is left, so
    /// a fetch has the time of a whole block to land (10 ms for blocks of 1,000 at 100,000
    /// IDs/s) rather than a few mean fetch latencies, and a fetch a few times slower than the
    /// mean makes no caller wait. It costs at most one more block left unused by a restart.
    /// `min_low_water(1)` gives the mark to the rate and latency alone.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).min_low_water(10_000);
    /// # let _ = builder;
    /// ```
    pub fn min_low_water(mut self, ids: u64) -> Self {
        self.options.min_low_water = Some(ids);
        self
    }

    /// How many fetched blocks may wait in the buffer besides the current one, counting blocks
    /// on their way (default 256). The buffer only grows that far when the low-water mark
    /// (rate × fetch latency × [`low_water_factor`](Self::low_water_factor)) asks for it; this
    /// bounds it, and so the IDs a restart leaves unused.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).max_buffered_blocks(8);
    /// # let _ = builder;
    /// ```
    pub fn max_buffered_blocks(mut self, blocks: usize) -> Self {
        self.options.max_buffered_blocks = blocks;
        self
    }

    /// How many fetches may run at once (default 4). One round trip at a time is enough when
    /// the source gives several blocks per round trip
    /// ([`HiLoSource::allocate_blocks`](crate::hilo::HiLoSource::allocate_blocks), or a
    /// counter table); a source that gives one block per round trip is asked several times at
    /// once when the rate needs more than one block per round trip. A source that serves one
    /// call at a time (a single connection) gains nothing from that: when fetches sent while
    /// another is out take markedly longer (1.3×) than fetches sent alone, the engine goes back
    /// to one at a time, trying a second one every 10 s in case that changed.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// let builder = HiLo::builder(MemorySource::new()).max_fetches_in_flight(1);
    /// # let _ = builder;
    /// ```
    pub fn max_fetches_in_flight(mut self, fetches: usize) -> Self {
        self.options.max_fetches_in_flight = fetches;
        self
    }

    /// How long `next_id()` and `reserve()` wait for a block when the buffer is empty before
    /// returning [`ErrorKind::HiLoUnavailable`] (default 5 s). Also bounds the whole of `build()`:
    /// the counter's creation ([`create_if_missing`](Self::create_if_missing)), the increment
    /// check, the [floor](Self::floor_from) query and the move above the floor, and the first
    /// block together, whatever holds them up (another session holding the counter's lock or
    /// the lock of the table the floor query reads, a database that does not answer), and each
    /// later read of a floor query; past it, `build()` returns
    /// [`ErrorKind::HiLoStartTimeout`] naming what it was waiting for (or
    /// [`ErrorKind::HiLoUnavailable`] when it was the first block).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # use std::time::Duration;
    /// let builder = HiLo::builder(MemorySource::new()).timeout(Duration::from_millis(200));
    /// # let _ = builder;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// Retry delays after a failed fetch: `initial`, doubling up to `max`, each with random
    /// jitter down to half (defaults 50 ms and 5 s).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # use std::time::Duration;
    /// let builder = HiLo::builder(MemorySource::new())
    ///     .backoff(Duration::from_millis(10), Duration::from_secs(2));
    /// # let _ = builder;
    /// ```
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.options.backoff_initial = initial;
        self.options.backoff_max = max;
        self
    }

    /// Adaptive block size for counters that take any step per call ([`Increment::PerCall`],
    /// i.e. counter tables): each fetch asks for `rate × target_life` IDs, between
    /// [`block`](Self::block) and `max_block`, so a block lasts about `target_life` and shrinks
    /// again when traffic drops. Sequences ([`Increment::Fixed`]) keep their fixed block.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # use std::time::Duration;
    /// let builder = HiLo::builder(MemorySource::new())
    ///     .adaptive(1_000_000, Duration::from_secs(600));
    /// # let _ = builder;
    /// ```
    ///
    /// [`Increment::PerCall`]: crate::hilo::Increment::PerCall
    /// [`Increment::Fixed`]: crate::hilo::Increment::Fixed
    pub fn adaptive(mut self, max_block: u64, target_life: Duration) -> Self {
        self.options.adaptive = Some((max_block, target_life));
        self
    }

    /// Never hand out an ID at or below `floor`: the largest ID handed out before, as the
    /// application knows it (e.g. the largest key of the tables the IDs go into). At start-up,
    /// a counter at or below it (re-created empty, restored from an older backup, a lagging
    /// replica promoted) is first moved above it: in one forward-only step where the source
    /// can ([`HiLoSource::raise_above`](crate::hilo::HiLoSource::raise_above): every store of
    /// idgen's adapter crates), else by taking blocks until it is past (one block is then
    /// skipped per start). Every block after that must lie above it too, or the generator
    /// fails closed ([`ErrorKind::HiLoCounterWentBackwards`]). Reading the floor and moving the
    /// counter count against the [`timeout`](Self::timeout) of `build()`.
    ///
    /// A fixed value is known once; a floor that moves while the application runs (the
    /// largest key of a table other processes insert into) is [`floor_from`](Self::floor_from).
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // The counter was re-created at 1, but IDs up to 5000 are in the orders table.
    /// let ids = HiLo::builder(MemorySource::new()).block(100).floor(5000).build().await?;
    /// assert!(ids.next_id().await? > 5000);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn floor(mut self, floor: i64) -> Self {
        self.options.floor = Some(Floor::Value(floor));
        self
    }

    /// [`floor`](Self::floor) from a query: e.g. `SELECT COALESCE(MAX(id), 0) FROM orders` on
    /// the database the IDs go into. Run at start-up (before the counter is used), and again
    /// **before every fetch of a block**: a block that starts at or below what the query
    /// returned just before the counter handed it out fails the generator closed
    /// ([`ErrorKind::HiLoCounterWentBackwards`]) instead of being served. So a counter set back
    /// while processes run (a sequence restored between two processes' blocks) is caught by
    /// every process whose next block overlaps IDs the query already sees, not only by the
    /// process that was ahead; IDs handed out but not yet stored, which the query cannot see,
    /// stay uncovered.
    ///
    /// The query is read before the block is taken, so a block another process takes and
    /// stores after it never counts against this one. It costs one more round trip per fetch
    /// (fetches run ahead of need, so callers do not wait for it); it is bounded by the
    /// [`timeout`](Self::timeout). Its error fails the start-up ([`ErrorKind::HiLoSource`]); later,
    /// it fails that fetch, which is retried with backoff like any failed fetch.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // With sqlx: .floor_from(move || { let pool = pool.clone(); async move {
    /// //     Ok(sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM orders").fetch_one(&pool).await?)
    /// // }})
    /// let ids = HiLo::builder(MemorySource::new())
    ///     .block(100)
    ///     .floor_from(|| async { Ok(12_345) })
    ///     .build()
    ///     .await?;
    /// assert!(ids.next_id().await? > 12_345);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn floor_from<F, Fut>(mut self, query: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<i64, BoxError>> + Send + 'static,
    {
        let query: Arc<FloorQuery> = Arc::new(move || Box::pin(query()));
        self.options.floor = Some(Floor::Query(query));
        self
    }

    /// Every block start must be `origin + k × step` (a striped counter).
    pub(crate) fn grid(mut self, origin: i64, step: u64) -> Self {
        self.options.grid = Some((origin, step));
        self
    }

    /// Checks the options, reads the counter's increment (refusing a mismatch), fetches the
    /// first block and returns the running [`HiLo`], all within the
    /// [`timeout`](Self::timeout). Needs a tokio runtime; without one, use
    /// [`build_blocking`](Self::build_blocking).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoInvalidOption`] for an option out of range, [`ErrorKind::HiLoSource`] from the
    /// counter (one that is missing among them) or the floor query, [`ErrorKind::HiLoIncrementMismatch`],
    /// [`ErrorKind::HiLoStartTimeout`] when the creation, the increment check, the floor query or
    /// the move above the floor did not answer within the timeout, [`ErrorKind::HiLoUnavailable`] when the first block did not, and
    /// [`ErrorKind::HiLoNoRuntime`] outside a tokio runtime.
    ///
    /// ```
    /// # use idgen_engine::hilo::{HiLo, MemorySource};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(100).build().await?;
    /// assert_eq!(ids.next_id().await?, 1);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub async fn build(self) -> Result<HiLo> {
        self.options.validate()?;
        let source = self.source.into_hilo_source(&self.options.counter);
        HiLo::start(source, self.options).await
    }

    /// [`build`](Self::build) for callers without an async runtime (a diesel application, a
    /// plain thread): blocks this thread while the start-up runs on idgen's small background
    /// runtime (one thread per process). Use the [`HiLo`] with
    /// [`next_id_blocking`](HiLo::next_id_blocking) (or `.await` [`next_id`](HiLo::next_id)
    /// from async code). Not from async code on a runtime thread: `.await` `build()` there.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// let ids = HiLo::builder(MemorySource::new()).block(100).build_blocking()?;
    /// assert_eq!(ids.next_id_blocking()?, 1);
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn build_blocking(self) -> Result<HiLo> {
        self.options.validate()?;
        let source = self.source.into_hilo_source(&self.options.counter);
        let counter = source.name().to_owned();
        let options = self.options;
        super::runtime::block_on(HiLo::start(source, options)).unwrap_or_else(|reason| {
            Err(ErrorKind::HiLoSource {
                counter,
                source: std::sync::Arc::from(idgen_core::BoxError::from(reason)),
            }
            .into())
        })
    }
}

impl HiLo {
    /// A builder for the other options.
    ///
    /// ```
    /// use idgen_engine::hilo::{HiLo, MemorySource};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = HiLo::builder(MemorySource::new()).block(50).build().await?;
    /// assert_eq!(ids.stats().block_size, 50);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub fn builder<T: IntoHiLoSource<M>, M>(source: T) -> HiLoBuilder<T, M> {
        HiLoBuilder::new(source)
    }
}
