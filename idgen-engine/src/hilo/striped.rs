//! [`StripedHiLo`]: hi-lo over several counter servers whose blocks never overlap (Flickr's
//! ticket servers), taking blocks from whichever answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::builder::HiLoBuilder;
use super::source::{BoxError, HiLoSource, Increment, MissingCounter};
use super::{HiLo, HiLoStats};
use crate::error::{ErrorKind, Result};

/// How often [`StripedHiLo::next_id`] looks again at its members while none has an ID buffered.
const POLL: Duration = Duration::from_millis(1);

/// A counter that can say where its values begin: a sequence's `START WITH`. Needed by
/// [`StripedHiLo`] to prove at start-up that its counters' blocks never overlap.
///
/// ```
/// use idgen_engine::hilo::{BoxError, CounterStart};
/// struct Sequence { start: i64 }
/// impl CounterStart for Sequence {
///     async fn start(&self) -> Result<i64, BoxError> { Ok(self.start) }
/// }
/// # let _ = Sequence { start: 1 };
/// ```
pub trait CounterStart: Send + Sync + 'static {
    /// The counter's first value.
    fn start(&self) -> impl Future<Output = std::result::Result<i64, BoxError>> + Send;

    /// Where the counter lives (e.g. `db1.example:5432/app`), so that an overlap error can
    /// tell apart counters of the same name on different servers. `None` by default.
    fn location(&self) -> Option<String> {
        None
    }
}

/// One counter's settings, as [`check_no_overlap`] compares them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSettings {
    /// The counter's name, for the error.
    pub name: String,
    /// Its first value.
    pub start: i64,
    /// How far it advances per call (a sequence's increment).
    pub step: u64,
}

/// Refuses counters whose blocks of `block` IDs could overlap, naming both: counter `i` hands
/// out the blocks `[start_i + k·step_i, start_i + k·step_i + block)`. A counter overlaps itself
/// when its step is below the block; two counters overlap when some block starts of one and
/// the other are less than a block apart, i.e. when `start_j − start_i` modulo
/// `gcd(step_i, step_j)` is within a block of 0. Flickr's layout (`N` counters with step
/// `N × block`, starts one block apart) passes.
///
/// ```
/// use idgen_engine::hilo::{check_no_overlap, CounterSettings};
/// let c = |name: &str, start, step| CounterSettings { name: name.into(), start, step };
/// assert!(check_no_overlap(100, &[c("a", 1, 200), c("b", 101, 200)]).is_ok());
/// let err = check_no_overlap(100, &[c("a", 1, 200), c("b", 51, 200)]).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "hi-lo counters a and b can hand out overlapping blocks: a (start 1, step 200) and b (start 51, step 200) \
///      have block starts 50 apart, less than a block of 100; refusing to start"
/// );
/// ```
pub fn check_no_overlap(block: u64, counters: &[CounterSettings]) -> Result<()> {
    for c in counters {
        if c.step < block {
            return Err(ErrorKind::HiLoCountersOverlap {
                first: c.name.clone(),
                second: c.name.clone(),
                reason: format!(
                    "{} advances by {} per call, less than a block of {block}",
                    c.name, c.step
                ),
            }
            .into());
        }
    }
    for (i, a) in counters.iter().enumerate() {
        for b in &counters[i + 1..] {
            let g = i128::from(gcd(a.step, b.step));
            let d = (i128::from(b.start) - i128::from(a.start)).rem_euclid(g);
            let apart = d.min(g - d);
            if apart < i128::from(block) {
                return Err(ErrorKind::HiLoCountersOverlap {
                    first: a.name.clone(),
                    second: b.name.clone(),
                    reason: format!(
                        "{} (start {}, step {}) and {} (start {}, step {}) have block starts {apart} apart, less than a block of {block}",
                        a.name, a.start, a.step, b.name, b.start, b.step
                    ),
                }.into());
            }
        }
    }
    Ok(())
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// One counter of a [`StripedHiLo`]: the counter, presented to its [`HiLo`] as handing out
/// blocks of `block` (its real step, `N × block`, was checked at start-up and is checked again
/// whenever the engine asks).
pub struct Stripe<S> {
    inner: S,
    block: u64,
    step: u64,
}

impl<S: HiLoSource> HiLoSource for Stripe<S> {
    async fn allocate(&self, _size: u64) -> std::result::Result<i64, BoxError> {
        self.inner.allocate(self.step).await
    }

    async fn allocate_blocks(
        &self,
        _size: u64,
        count: u64,
    ) -> std::result::Result<Vec<i64>, BoxError> {
        self.inner.allocate_blocks(self.step, count).await
    }

    /// The counter's own jump: it moves by whole steps (`N × block`), so its blocks stay its
    /// own.
    async fn raise_above(&self, floor: i64) -> std::result::Result<bool, BoxError> {
        self.inner.raise_above(floor).await
    }

    async fn increment(
        &self,
    ) -> std::result::Result<std::result::Result<Increment, MissingCounter>, BoxError> {
        match self.inner.increment().await? {
            Ok(Increment::Fixed(step)) if step == self.step => Ok(Ok(Increment::Fixed(self.block))),
            Err(missing) => Ok(Err(missing)),
            Ok(other) => Err(format!(
                "hi-lo counter {} changed its increment since start-up: {other:?}, was {}",
                self.inner.name(),
                self.step
            )
            .into()),
        }
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// Hi-lo over several counters, usually on different database servers, whose blocks can never
/// overlap (Flickr's ticket servers: two servers, one handing out odd and one even numbers).
///
/// Counter `i` of `N` is a sequence with `INCREMENT BY N × block` and `START WITH 1 + i × block`,
/// so its blocks `[v, v + block)` interleave with the others' and never meet them.
/// [`new`](StripedHiLo::new) reads every counter's increment and start and refuses settings
/// whose blocks could overlap, naming both counters ([`check_no_overlap`]). Each counter then
/// feeds a [`HiLo`] of its own (buffering, prefetch, retries, and failing closed when that
/// counter goes backwards, or hands out a block that is not one of its own: `start + k × step`,
/// after a `setval`, `RESTART` or `INCREMENT BY` change on its server). [`next_id`](StripedHiLo::next_id) takes IDs from the counters in
/// turn; while one is down it takes them from the others, and uses it again once it answers.
///
/// IDs are unique across the counters and increase within each counter, but not across them:
/// two counters advance at their own pace.
///
/// ```
/// use std::sync::atomic::{AtomicI64, Ordering};
/// use idgen_engine::hilo::{BoxError, CounterStart, HiLoSource, Increment, MissingCounter, StripedHiLo};
///
/// /// Stands in for a sequence on one database server.
/// struct Sequence { name: String, next: AtomicI64, start: i64, step: u64 }
/// impl HiLoSource for Sequence {
///     async fn allocate(&self, _: u64) -> Result<i64, BoxError> {
///         Ok(self.next.fetch_add(self.step as i64, Ordering::SeqCst))
///     }
///     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> { Ok(Ok(Increment::Fixed(self.step))) }
///     fn name(&self) -> &str { &self.name }
/// }
/// impl CounterStart for Sequence {
///     async fn start(&self) -> Result<i64, BoxError> { Ok(self.start) }
/// }
/// let seq = |name: &str, start| Sequence { name: name.into(), next: AtomicI64::new(start), start, step: 200 };
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ids = StripedHiLo::new(vec![seq("odd", 1), seq("even", 101)], 100).await?;
/// let (a, b) = (ids.next_id().await?, ids.next_id().await?);
/// assert_ne!(a, b);
///
/// let err = StripedHiLo::new(vec![seq("odd", 1), seq("even", 51)], 100).await.err().unwrap();
/// assert!(err.to_string().starts_with("hi-lo counters odd and even can hand out overlapping blocks"));
/// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
/// ```
pub struct StripedHiLo {
    members: Vec<HiLo>,
    names: Vec<String>,
    next: AtomicUsize,
    timeout: Duration,
}

impl StripedHiLo {
    /// Checks the counters' settings and starts a [`HiLo`] over each, with the defaults.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoCountersOverlap`] naming two counters whose blocks could overlap;
    /// [`ErrorKind::HiLoSource`] when a counter cannot be read at start-up (every counter must
    /// answer then); [`ErrorKind::HiLoStartTimeout`] naming the counter that did not answer when
    /// reading the counters' settings took longer than the time-out (5 s by default; each
    /// counter's own start-up after that is bounded by it too); [`ErrorKind::HiLoInvalidOption`]
    /// when there is no counter; any error of [`HiLo::new`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use idgen_engine::hilo::{BoxError, CounterStart, HiLoSource, Increment, MissingCounter, StripedHiLo};
    /// # struct Table;
    /// # impl HiLoSource for Table {
    /// #     async fn allocate(&self, n: u64) -> Result<i64, BoxError> { Ok(1) }
    /// #     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> { Ok(Ok(Increment::PerCall)) }
    /// #     fn name(&self) -> &str { "counters.orders" }
    /// # }
    /// # impl CounterStart for Table { async fn start(&self) -> Result<i64, BoxError> { Ok(1) } }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// // A counter table advances by whatever it is asked: its blocks cannot be kept apart.
    /// let err = StripedHiLo::new(vec![Table], 100).await.err().unwrap();
    /// assert!(err.to_string().contains("use sequences with a fixed increment"));
    /// let none: Vec<Table> = Vec::new();
    /// assert!(StripedHiLo::new(none, 100).await.is_err());
    /// # });
    /// ```
    pub async fn new<S: HiLoSource + CounterStart>(sources: Vec<S>, block: u64) -> Result<Self> {
        Self::with_options(sources, block, |builder| builder).await
    }

    /// As [`new`](StripedHiLo::new), with each counter's [`HiLoBuilder`] passed through
    /// `configure` (time-out, backoff, prefetch; the block is set here). The first counter's
    /// time-out bounds reading every counter's settings, each counter's start-up is bounded by
    /// its own, and it also bounds [`next_id`](StripedHiLo::next_id) when no counter answers.
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicI64, Ordering};
    /// # use idgen_engine::hilo::{BoxError, CounterStart, HiLoSource, Increment, MissingCounter, StripedHiLo};
    /// # struct Sequence(AtomicI64, i64);
    /// # impl HiLoSource for Sequence {
    /// #     async fn allocate(&self, _: u64) -> Result<i64, BoxError> { Ok(self.0.fetch_add(20, Ordering::SeqCst)) }
    /// #     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> { Ok(Ok(Increment::Fixed(20))) }
    /// #     fn name(&self) -> &str { "s" }
    /// # }
    /// # impl CounterStart for Sequence { async fn start(&self) -> Result<i64, BoxError> { Ok(self.1) } }
    /// use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = StripedHiLo::with_options(
    ///     vec![Sequence(AtomicI64::new(1), 1), Sequence(AtomicI64::new(11), 11)],
    ///     10,
    ///     |b| b.timeout(Duration::from_secs(1)),
    /// ).await?;
    /// assert_eq!(ids.counters(), ["s", "s"]);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub async fn with_options<S: HiLoSource + CounterStart>(
        sources: Vec<S>,
        block: u64,
        configure: impl Fn(HiLoBuilder<Stripe<S>, ()>) -> HiLoBuilder<Stripe<S>, ()>,
    ) -> Result<Self> {
        if sources.is_empty() {
            return Err(ErrorKind::HiLoInvalidOption {
                option: "sources",
                value: "0".to_owned(),
                reason: "a striped hi-lo needs at least one counter",
            }
            .into());
        }
        // Each counter's builder first, for the time-out that bounds reading the settings.
        let mut builders: Vec<HiLoBuilder<Stripe<S>, ()>> = sources
            .into_iter()
            .map(|inner| {
                configure(HiLo::builder(Stripe {
                    inner,
                    block,
                    step: 0,
                }))
            })
            .collect();
        let timeout = builders[0].configured_timeout();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut settings = Vec::with_capacity(builders.len());
        for builder in &mut builders {
            let source = &builder.source_mut().inner;
            let name = source.name().to_owned();
            let failed = |e: BoxError| ErrorKind::HiLoSource {
                counter: name.clone(),
                source: Arc::from(e),
            };
            let timed_out = |waiting_for: &'static str| ErrorKind::HiLoStartTimeout {
                counter: name.clone(),
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                waiting_for,
            };
            let increment = tokio::time::timeout_at(deadline, source.increment())
                .await
                .map_err(|_| timed_out("the counter's increment check"))?;
            let found = increment.map_err(failed)?;
            let step = match found.map_err(|missing| ErrorKind::HiLoCounterMissing {
                counter: name.clone(),
                missing: missing.into_string(),
            })? {
                Increment::Fixed(step) => step,
                Increment::PerCall => {
                    return Err(ErrorKind::HiLoCountersOverlap {
                        first: name.clone(),
                        second: name.clone(),
                        reason: format!(
                            "{name} advances by whatever it is asked (a counter table), so its blocks cannot be kept apart from the others'; use sequences with a fixed increment"
                        ),
                    }.into());
                }
            };
            let start = tokio::time::timeout_at(deadline, source.start())
                .await
                .map_err(|_| timed_out("the counter's start value"))?
                .map_err(failed)?;
            let name = match source.location() {
                Some(at) => format!("{name} on {at}"),
                None => name,
            };
            builder.source_mut().step = step;
            settings.push(CounterSettings { name, start, step });
        }
        check_no_overlap(block, &settings)?;
        let mut members = Vec::with_capacity(builders.len());
        for (builder, setting) in builders.into_iter().zip(&settings) {
            // Each block it receives must be one of its own (start + k × step): a `setval` or
            // `RESTART` on one server while this runs would otherwise go unnoticed until its
            // blocks met another counter's. Each start-up is bounded by the time-out.
            let builder = builder.block(block).grid(setting.start, setting.step);
            members.push(builder.build().await?);
        }
        Ok(StripedHiLo {
            members,
            names: settings.into_iter().map(|s| s.name).collect(),
            next: AtomicUsize::new(0),
            timeout,
        })
    }

    /// The next ID: from the counters in turn, skipping those with nothing buffered; when none
    /// has an ID, waits (up to the time-out) for the first that gets a block.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoUnavailable`] naming every counter when none answered within the
    /// time-out; a counter's error when it failed closed (it went backwards).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::sync::atomic::{AtomicI64, Ordering};
    /// # use idgen_engine::hilo::{BoxError, CounterStart, HiLoSource, Increment, MissingCounter, StripedHiLo};
    /// # struct Sequence(AtomicI64, i64);
    /// # impl HiLoSource for Sequence {
    /// #     async fn allocate(&self, _: u64) -> Result<i64, BoxError> { Ok(self.0.fetch_add(20, Ordering::SeqCst)) }
    /// #     async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> { Ok(Ok(Increment::Fixed(20))) }
    /// #     fn name(&self) -> &str { "s" }
    /// # }
    /// # impl CounterStart for Sequence { async fn start(&self) -> Result<i64, BoxError> { Ok(self.1) } }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ids = StripedHiLo::new(vec![Sequence(AtomicI64::new(1), 1), Sequence(AtomicI64::new(11), 11)], 10).await?;
    /// let mut seen: Vec<i64> = Vec::new();
    /// for _ in 0..40 { seen.push(ids.next_id().await?); }
    /// seen.sort();
    /// seen.dedup();
    /// assert_eq!(seen.len(), 40);
    /// # Ok::<(), idgen_engine::Error>(()) }).unwrap();
    /// ```
    pub async fn next_id(&self) -> Result<i64> {
        let n = self.members.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            for k in 0..n {
                if let Some(id) = self.members[(first + k) % n].try_next_id()? {
                    return Ok(id);
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ErrorKind::HiLoUnavailable {
                    counter: self.names.join(", "),
                    waited_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                    last_error: None,
                }
                .into());
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The counters' names, in the order given.
    ///
    /// ```
    /// # use idgen_engine::hilo::StripedHiLo;
    /// fn names(ids: &StripedHiLo) -> Vec<String> { ids.counters().to_vec() }
    /// ```
    pub fn counters(&self) -> &[String] {
        &self.names
    }

    /// Each counter's [`HiLoStats`], in the order given.
    ///
    /// ```
    /// # use idgen_engine::hilo::StripedHiLo;
    /// fn blocks(ids: &StripedHiLo) -> u64 { ids.stats().iter().map(|s| s.blocks_fetched).sum() }
    /// ```
    pub fn stats(&self) -> Vec<HiLoStats> {
        self.members.iter().map(HiLo::stats).collect()
    }
}
