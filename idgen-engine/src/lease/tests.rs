//! The lease engine's logic over the in-memory store, on tokio's paused clock (deterministic).
//! The same promises are tested against real databases in the adapter crates.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use crate::error::{Error, ErrorKind};
use crate::lease::{
    BoxError, Claim, ClaimRequest, LeaseOptions, LeaseStore, MemoryLeaseStore, RenewRequest,
    WorkerLease,
};
use idgen_core::{Clock, ClockPolicy, Layout, Snowflake};

const BASE_MS: i64 = 1_800_000_000_000;

/// Unix time that follows tokio's (paused) clock; `wait_until` jumps an offset forward.
#[derive(Clone)]
struct TokioClock {
    start: tokio::time::Instant,
    offset: Arc<AtomicI64>,
    /// `false`: waits go through tokio's (paused) timers, as on a real clock.
    simulated: bool,
}

impl TokioClock {
    fn new() -> Self {
        TokioClock {
            start: tokio::time::Instant::now(),
            offset: Arc::default(),
            simulated: true,
        }
    }

    /// A clock the lease waits on with timers, so its heartbeat runs during a wait.
    fn timed() -> Self {
        TokioClock {
            simulated: false,
            ..TokioClock::new()
        }
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> i64 {
        BASE_MS + self.start.elapsed().as_millis() as i64 + self.offset.load(Ordering::SeqCst)
    }
    fn wait_until(&self, target_ms: i64) {
        let behind = target_ms - self.now_ms();
        if behind > 0 {
            self.offset.fetch_add(behind, Ordering::SeqCst);
        }
    }
    fn is_simulated(&self) -> bool {
        self.simulated
    }
}

/// A store that can be made to fail, as a database that went away.
#[derive(Clone)]
struct Flaky {
    inner: MemoryLeaseStore,
    down: Arc<AtomicBool>,
    /// The calls of `create_if_missing` it answered.
    creates: Arc<AtomicI64>,
}

impl Flaky {
    /// Up, over a memory store on `clock`.
    fn on(clock: &TokioClock) -> Self {
        Flaky {
            inner: MemoryLeaseStore::with_clock(clock.clone()),
            down: Arc::default(),
            creates: Arc::default(),
        }
    }

    /// What every call meets first: the refused connection while the store is down.
    fn reachable(&self) -> Result<(), BoxError> {
        if self.down.load(Ordering::SeqCst) {
            return Err("connection refused".into());
        }
        Ok(())
    }
}

impl LeaseStore for Flaky {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.reachable()?;
        self.inner.claim(req).await
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.reachable()?;
        self.inner.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.reachable()?;
        self.inner.release(req).await
    }
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        self.creates.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn options(clock: &TokioClock) -> LeaseOptions {
    LeaseOptions::default()
        .ttl(Duration::from_secs(3))
        .renew_every(Duration::from_secs(1))
        .safety_margin(Duration::from_millis(500))
        .clock(clock.clone())
}

/// A lease from `store` on `layout`, with [`options`] on `clock`.
async fn acquire(clock: &TokioClock, store: impl LeaseStore, layout: &Layout) -> WorkerLease {
    options(clock).acquire(store, layout).await.unwrap()
}

/// A generator on `layout` and `clock` that issues under `lease`, with `policy` for a clock
/// found behind.
fn leased(
    layout: Layout,
    clock: &TokioClock,
    policy: ClockPolicy,
    lease: WorkerLease,
) -> Snowflake<TokioClock> {
    Snowflake::builder()
        .layout(layout)
        .clock(clock.clone())
        .clock_policy(policy)
        .lease(lease)
        .build()
        .unwrap()
}

fn eight_nodes() -> Layout {
    Layout::builder().node_bits(3).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn concurrent_acquirers_get_distinct_node_ids() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let (store, clock) = (store.clone(), clock.clone());
            tokio::spawn(async move { acquire(&clock, store, &Layout::TWITTER).await })
        })
        .collect();
    let mut leases = Vec::new();
    for t in tasks {
        leases.push(t.await.unwrap());
    }
    let nodes: HashSet<u64> = leases.iter().map(|l| l.node()).collect();
    assert_eq!(nodes.len(), 64);
}

#[tokio::test(start_paused = true)]
async fn the_ninth_of_eight_gets_the_capacity_error() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(acquire(&clock, store.clone(), &eight_nodes()).await);
    }
    let err = options(&clock)
        .acquire(store.clone(), &eight_nodes())
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NoFreeNode { capacity: 8, namespace } if namespace == "default")
    );
    assert!(err.to_string().contains("all 8 node IDs"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn renewals_keep_the_generator_open() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let lease = acquire(&clock, store, &Layout::TWITTER).await;
    let handle = lease.handle();
    let ids = leased(Layout::TWITTER, &clock, ClockPolicy::default(), lease);
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        ids.next_id().unwrap();
    }
    let status = handle.status();
    assert!(status.renewals >= 9, "{status:?}");
    assert!(status.valid_until_ms > clock.now_ms());
}

#[tokio::test(start_paused = true)]
async fn a_holder_that_cannot_renew_stops_before_its_lease_expires_and_resumes_after() {
    let clock = TokioClock::new();
    let flaky = Flaky::on(&clock);
    let lease = acquire(&clock, flaky.clone(), &Layout::TWITTER).await;
    let handle = lease.handle();
    let ids = leased(Layout::TWITTER, &clock, ClockPolicy::default(), lease);
    ids.next_id().unwrap();

    flaky.down.store(true, Ordering::SeqCst);
    let down_at = clock.now_ms();
    // Last successful renewal was at `down_at` at the latest: the store keeps the lease until
    // down_at + 3 s. The generator must stop by down_at + 3 s - 500 ms.
    let mut stopped_at = None;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let Err(idgen_core::Error::Fenced { .. }) = ids.next_id() {
            stopped_at = Some(clock.now_ms());
            break;
        }
    }
    let stopped_at = stopped_at.expect("the generator never stopped");
    assert!(
        stopped_at <= down_at + 2_500,
        "stopped {} ms after the store went down",
        stopped_at - down_at
    );
    assert!(handle.status().failed_renewals > 0);
    assert!(
        handle
            .status()
            .last_error
            .unwrap()
            .contains("connection refused")
    );

    flaky.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(1)).await;
    ids.next_id().expect("renewed after the store came back");
}

#[tokio::test(start_paused = true)]
async fn an_expired_lease_passes_to_another_holder_and_the_old_one_stays_stopped() {
    let clock = TokioClock::new();
    let flaky = Flaky::on(&clock);
    let capacity_one = Layout::builder().node_bits(0).build().unwrap();
    let first = acquire(&clock, flaky.clone(), &capacity_one).await;
    let first_handle = first.handle();
    let old = leased(capacity_one, &clock, ClockPolicy::default(), first);
    let last_old_id = old.next_id().unwrap();

    // The old holder stops heart-beating (its store connection is cut) for longer than the TTL.
    flaky.down.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(4)).await;
    let second = acquire(&clock, flaky.inner.clone(), &capacity_one).await;
    assert_eq!(second.node(), 0);
    let new = leased(capacity_one, &clock, ClockPolicy::Refuse, second);
    assert!(new.next_id().unwrap() > last_old_id);

    flaky.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(first_handle.status().lost);
    assert!(matches!(
        old.next_id(),
        Err(idgen_core::Error::Fenced { .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_new_holder_never_issues_at_or_below_the_rows_last_timestamp() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let ahead = clock.now_ms() + 2_000;
    // A previous holder on a host whose clock runs 2 s ahead stored this.
    let stores_ahead = || RenewRequest {
        namespace: "default",
        node: 0,
        holder: "other",
        ttl: Duration::ZERO,
        last_timestamp_ms: Some(ahead),
    };
    store.renew(stores_ahead()).await.unwrap();
    store
        .claim(ClaimRequest {
            namespace: "default",
            capacity: 1,
            holder: "other",
            ttl: Duration::ZERO,
        })
        .await
        .unwrap();
    store.renew(stores_ahead()).await.unwrap();

    // With the takeover wait, `acquire` waits for the clock to pass the stored bound.
    let began = clock.now_ms();
    let lease = options(&clock)
        .takeover_wait(true)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap();
    assert_eq!(
        (lease.node(), lease.previous_timestamp_ms()),
        (0, Some(ahead))
    );
    assert!(
        clock.now_ms() > ahead,
        "returned at {}",
        clock.now_ms() - began
    );
    let waited = leased(Layout::TWITTER, &clock, ClockPolicy::Refuse, lease);
    let id = waited.next_id().unwrap();
    assert!(Layout::TWITTER.decompose(id).unwrap().unix_ms > ahead);
    drop(waited);
    tokio::task::yield_now().await; // let the background release run

    // By default it issues at once above the bound, whatever the clock policy: a holder
    // releases the node ID with a bound 4 s ahead.
    let other = ClaimRequest {
        namespace: "default",
        capacity: 1,
        holder: "other",
        ttl: Duration::from_secs(60),
    };
    assert!(store.claim(other).await.unwrap().is_some());
    let ahead = clock.now_ms() + 4_000;
    store
        .release(RenewRequest {
            last_timestamp_ms: Some(ahead),
            ..stores_ahead()
        })
        .await
        .unwrap();
    let began = clock.now_ms();
    let lease = acquire(&clock, store, &Layout::TWITTER).await;
    assert_eq!(
        lease.previous_timestamp_ms(),
        Some(ahead),
        "the exact floor survives a release"
    );
    let at_once = leased(Layout::TWITTER, &clock, ClockPolicy::Refuse, lease);
    let id = at_once.next_id().unwrap();
    assert_eq!(clock.now_ms(), began, "waited");
    assert!(Layout::TWITTER.decompose(id).unwrap().unix_ms > ahead);
}

#[tokio::test(start_paused = true)]
async fn release_frees_the_node_id_at_once_with_the_exact_last_timestamp() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let lease = acquire(&clock, store.clone(), &Layout::TWITTER).await;
    let handle = lease.handle();
    let ids = leased(Layout::TWITTER, &clock, ClockPolicy::default(), lease);
    let last = ids.next_id().unwrap();
    handle.release().await.unwrap();
    assert!(matches!(
        ids.next_id(),
        Err(idgen_core::Error::Fenced { .. })
    ));

    let next = acquire(&clock, store, &Layout::TWITTER).await;
    assert_eq!(
        next.node(),
        handle.node(),
        "the released node ID is free again"
    );
    let last_ms = Layout::TWITTER.decompose(last).unwrap().unix_ms;
    assert_eq!(
        next.previous_timestamp_ms(),
        Some(last_ms),
        "not the renewal's bound: the exact value"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_generator_releases_its_lease() {
    let clock = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(clock.clone());
    let tiny = Layout::builder().node_bits(0).build().unwrap();
    let lease = acquire(&clock, store.clone(), &tiny).await;
    let ids = leased(tiny, &clock, ClockPolicy::default(), lease);
    ids.next_id().unwrap();
    drop(ids);
    tokio::task::yield_now().await;
    assert!(options(&clock).acquire(store, &tiny).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn inconsistent_options_are_refused() {
    let store = MemoryLeaseStore::new();
    for (opts, needle) in [
        (
            WorkerLease::options()
                .ttl(Duration::from_secs(5))
                .safety_margin(Duration::from_secs(5)),
            "safety_margin",
        ),
        (
            WorkerLease::options().renew_every(Duration::from_secs(30)),
            "renew_every",
        ),
        (WorkerLease::options().capacity(2000), "capacity 2000"),
        (WorkerLease::options().capacity(0), "capacity 0"),
    ] {
        let err = opts
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::InvalidOptions { .. }));
        assert!(err.to_string().contains(needle), "{err}");
    }
}

/// A store that, like a database store, cannot vouch for a node ID it has no release record of:
/// every claim but that of a released node ID is not `exact`.
#[derive(Clone)]
struct Forgetful {
    inner: MemoryLeaseStore,
    released: Arc<std::sync::Mutex<HashSet<u64>>>,
    /// The largest bound a renewal stored.
    stored: Arc<AtomicI64>,
}

impl Forgetful {
    fn on(clock: &TokioClock) -> Self {
        Forgetful {
            inner: MemoryLeaseStore::with_clock(clock.clone()),
            released: Arc::default(),
            stored: Arc::new(AtomicI64::new(i64::MIN)),
        }
    }
}

impl LeaseStore for Forgetful {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        let claim = self.inner.claim(req).await?;
        Ok(claim.map(|c| Claim {
            exact: self.released.lock().unwrap().remove(&c.node),
            ..c
        }))
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        let renewed = self.inner.renew(req).await?;
        if renewed && let Some(ms) = req.last_timestamp_ms {
            self.stored.fetch_max(ms, Ordering::SeqCst);
        }
        Ok(renewed)
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.released.lock().unwrap().insert(req.node);
        self.inner.release(req).await
    }
}

/// With the takeover wait, a claim the store cannot prove free issues only after claim time +
/// TTL + allowance: `acquire` returns then, the bound goes into the generator, and the node ID
/// given back with `release` is taken at once with its exact last timestamp.
#[tokio::test(start_paused = true)]
async fn with_the_wait_an_unproven_claim_waits_one_ttl_and_the_allowance_a_released_one_does_not() {
    let clock = TokioClock::new();
    let store = Forgetful::on(&clock);
    let one = Layout::builder().node_bits(0).build().unwrap();
    let opts = || {
        options(&clock)
            .clock_allowance(Duration::from_millis(700))
            .takeover_wait(true)
    };
    let began = clock.now_ms();
    let lease = opts().acquire(store.clone(), &one).await.unwrap();
    let bound = lease.previous_timestamp_ms().unwrap();
    assert!(bound >= began + 3_700, "bound {bound}, began {began}");
    assert!(clock.now_ms() > bound, "acquire returned before its bound");
    let handle = lease.handle();
    let ids = leased(one, &clock, ClockPolicy::default(), lease);
    let first = ids.next_id().unwrap();
    assert!(one.decompose(first).unwrap().unix_ms > bound);
    handle.release().await.unwrap();
    drop(ids);

    let began = clock.now_ms();
    let again = opts().acquire(store.clone(), &one).await.unwrap();
    assert_eq!(
        again.previous_timestamp_ms(),
        Some(one.decompose(first).unwrap().unix_ms)
    );
    assert_eq!(clock.now_ms(), began, "a released node ID waited");
    again.handle().release().await.unwrap();

    // The opt-out of tests and development: no wait, no bound.
    let store = Forgetful::on(&clock);
    let began = clock.now_ms();
    let quick = opts()
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(store, &one)
        .await
        .unwrap();
    assert_eq!(quick.previous_timestamp_ms(), None);
    assert_eq!(clock.now_ms(), began);
}

/// A lease dropped right after a takeover (a caller that gave up): the node ID is given back
/// with the takeover bound as its last timestamp, so its next holder still issues only after it.
#[tokio::test(start_paused = true)]
async fn a_lease_dropped_after_a_takeover_gives_the_node_id_back_with_the_bound() {
    let clock = TokioClock::new();
    let store = Forgetful::on(&clock);
    let one = Layout::builder().node_bits(0).build().unwrap();
    let began = clock.now_ms();
    let lease = options(&clock).acquire(store.clone(), &one).await.unwrap();
    let bound = lease.previous_timestamp_ms().unwrap();
    assert!(bound >= began + 4_000, "TTL 3 s + allowance 1 s: {bound}");
    drop(lease);
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    let next = options(&clock).acquire(store, &one).await.unwrap();
    assert_eq!(
        next.previous_timestamp_ms(),
        Some(bound),
        "the bound was lost"
    );
}

/// One time base for a lease and its generator (issue 23, item 4): the wall clock steps by 30 s
/// between the lease's options and the generator's builder (each makes a `SystemClock`), in
/// either order and either direction. Real time, real `SystemClock`s; the step is injected
/// into this thread's wall-clock reads only.
///
/// Each case shows neither effect of two time bases: with renewals healthy the generator
/// issues (a generator clock ahead of the lease's would be `Fenced` for good), and once the
/// store stops answering, the generator is fenced by the time the store hands the node ID to
/// another holder (a generator clock behind would keep issuing 30 s past that).
async fn one_time_base_across_a_wall_clock_step(forward: bool, lease_first: bool) {
    use idgen_core::wall_clock_step;

    let case = format!(
        "wall clock stepped {} 30 s after the {} was made",
        if forward { "forward" } else { "back" },
        if lease_first { "lease" } else { "generator" }
    );
    // The database's clock, made before the step.
    let store = Flaky {
        inner: MemoryLeaseStore::new(),
        down: Arc::default(),
        creates: Arc::default(),
    };
    let one_node = Layout::builder().node_bits(0).build().unwrap();
    let (options, builder, _stepped) = if lease_first {
        let options = WorkerLease::options();
        let stepped = wall_clock_step::step(forward, Duration::from_secs(30));
        (options, Snowflake::builder(), stepped)
    } else {
        let builder = Snowflake::builder();
        let stepped = wall_clock_step::step(forward, Duration::from_secs(30));
        (WorkerLease::options(), builder, stepped)
    };
    let lease = options
        .ttl(Duration::from_secs(2))
        .renew_every(Duration::from_millis(300))
        .safety_margin(Duration::from_millis(500))
        .store_timeout(Duration::from_millis(200))
        .acquire(store.clone(), &one_node)
        .await
        .unwrap();
    let handle = lease.handle();
    let ids = builder.layout(one_node).lease(lease).build().unwrap();

    // Healthy renewals: the generator issues.
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while handle.status().renewals < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    waited.await.expect("two renewals");
    if let Err(err) = ids.next_id() {
        panic!(
            "{case}: fenced with healthy renewals ({:?}): {err}",
            handle.status()
        );
    }

    // The store stops answering; once it hands the node ID to another holder, the generator
    // must already be fenced.
    store.down.store(true, Ordering::SeqCst);
    let next_holder = ClaimRequest {
        namespace: "default",
        capacity: 1,
        holder: "next-holder",
        ttl: Duration::from_secs(60),
    };
    let claimed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if store.inner.claim(next_holder).await.unwrap().is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    claimed.await.expect("the store's lease expires");
    match ids.next_id() {
        Err(idgen_core::Error::Fenced { .. }) => {}
        other => panic!(
            "{case}: the generator still issues after the store gave its node ID to another holder: {other:?}"
        ),
    }
}

/// A wall-clock step forward or back, after the lease or after the generator was made.
#[tokio::test]
async fn a_wall_clock_step_either_way_at_either_moment_leaves_one_time_base() {
    for (forward, after_lease) in [(true, true), (false, true), (true, false), (false, false)] {
        one_time_base_across_a_wall_clock_step(forward, after_lease).await;
    }
}

/// A layout of 4 node IDs whose 10 ms ticks hold 4 IDs each.
fn small_ticks() -> Layout {
    Layout::builder()
        .node_bits(2)
        .sequence_bits(2)
        .unit_ms(10)
        .build()
        .unwrap()
}

/// Issue 37, item 1: a claim the store cannot prove free (a new row) returns at once (the
/// clock does not move) and its generator issues at once above the takeover bound (claim time
/// + TTL + allowance), ahead of the clock; a holder the store forgot (still issuing on the
/// same node ID until its deadline, its renewals going to the store it knew) issues only below
/// that bound, so no ID of the two collides; the renewals of the new holder store bounds that
/// cover every tick it issued ahead, so the next holder after it starts above them.
#[tokio::test(start_paused = true)]
async fn a_takeover_issues_at_once_above_its_bound_and_never_meets_the_forgotten_holder() {
    let clock = TokioClock::new();
    let layout = small_ticks();
    // The forgotten holder: its store answers it until the fault, then never again.
    let old_store = Flaky::on(&clock);
    let old = options(&clock)
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(old_store.clone(), &layout)
        .await
        .unwrap();
    assert_eq!(old.node(), 0);
    let old_ids = leased(layout, &clock, ClockPolicy::default(), old);
    let mut old_issued = vec![old_ids.next_id().unwrap()];
    old_store.down.store(true, Ordering::SeqCst);

    // The store came back empty: the new holder's claim of node 0 is a new row.
    let store = Forgetful::on(&clock);
    let began = clock.now_ms();
    let new = acquire(&clock, store.clone(), &layout).await;
    assert_eq!(new.node(), 0);
    let bound = new.previous_timestamp_ms().unwrap();
    assert!(bound >= began + 4_000, "TTL 3 s + allowance 1 s: {bound}");
    let handle = new.handle();
    let new_ids = leased(layout, &clock, ClockPolicy::default(), new);
    // At once: the whole tick after the bound (4 IDs), and no more until the clock moves (the
    // lead holds the time field at most TTL + allowance + one tick ahead).
    let mut new_issued = Vec::new();
    while let Some(id) = new_ids.try_next_id().unwrap() {
        new_issued.push(id);
    }
    assert_eq!(new_issued.len(), 4);
    assert_eq!(clock.now_ms(), began, "the takeover waited for the clock");
    let first = layout.decompose(new_issued[0]).unwrap().unix_ms;
    assert!(first > bound, "first tick {first}, bound {bound}");

    // Both issue side by side until the old holder fences at its deadline.
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        match old_ids.next_id() {
            Ok(id) => old_issued.push(id),
            Err(idgen_core::Error::Fenced { .. }) => break,
            Err(e) => panic!("{e}"),
        }
        while let Some(id) = new_ids.try_next_id().unwrap() {
            new_issued.push(id);
        }
    }
    let old_last = layout.decompose(*old_issued.last().unwrap()).unwrap();
    assert!(
        old_last.unix_ms < bound,
        "the old holder issued at {}",
        old_last.unix_ms
    );
    let old: HashSet<_> = old_issued.iter().collect();
    assert!(
        new_issued.iter().all(|id| !old.contains(id)),
        "an ID was issued twice"
    );
    assert!(new_issued.windows(2).all(|w| w[0] < w[1]));

    // The stored bound covers every tick issued ahead, and a crash leaves it for the next one.
    let highest = layout
        .decompose(*new_issued.last().unwrap())
        .unwrap()
        .unix_ms;
    let stored = store.stored.load(Ordering::SeqCst);
    assert!(
        stored >= highest,
        "stored {stored} below the tick {highest} issued"
    );
    tokio::time::sleep(Duration::from_secs(2)).await; // a few renewals
    handle.status().lost.then(|| panic!("lost"));
    assert!(store.stored.load(Ordering::SeqCst) >= highest);
}

/// Issue 37, item 2: a node ID given back before the clock reached its takeover bound is
/// released with that bound (ahead of the clock) as its exact last timestamp; the next holder
/// takes it at once and issues above it at once, instead of `ClockMovedBackwards` until the
/// clock gets there. With the takeover wait, a holder given up during its wait leaves the same
/// bound, and the next holder waits for it rather than fail.
#[tokio::test(start_paused = true)]
async fn a_node_id_released_before_its_bound_is_taken_and_issued_above_it_at_once() {
    let clock = TokioClock::new();
    let store = Forgetful::on(&clock);
    let one = Layout::builder().node_bits(0).build().unwrap();
    let p = acquire(&clock, store.clone(), &one).await;
    let bound = p.previous_timestamp_ms().unwrap();
    assert!(bound > clock.now_ms() + 3_000);
    p.handle().release().await.unwrap();
    drop(p);

    let began = clock.now_ms();
    let q = acquire(&clock, store.clone(), &one).await;
    assert_eq!(
        q.previous_timestamp_ms(),
        Some(bound),
        "released with its bound"
    );
    let ids = leased(one, &clock, ClockPolicy::default(), q);
    let id = ids
        .next_id()
        .expect("issues at once above the released bound");
    assert_eq!(clock.now_ms(), began);
    assert!(one.decompose(id).unwrap().unix_ms > bound);
    drop(ids);
    tokio::task::yield_now().await;

    // With the wait: P gives up during its wait; Q waits for P's bound, then issues.
    let clock = TokioClock::timed();
    let store = Forgetful::on(&clock);
    let waiting = || options(&clock).takeover_wait(true);
    let gave_up = tokio::time::timeout(
        Duration::from_secs(1),
        waiting().acquire(store.clone(), &one),
    );
    assert!(gave_up.await.is_err(), "P waits out its bound");
    let q = loop {
        match waiting().acquire(store.clone(), &one).await {
            Ok(q) => break q,
            Err(e) if matches!(e.kind(), ErrorKind::NoFreeNode { .. }) => {
                tokio::task::yield_now().await
            }
            Err(e) => panic!("{e}"),
        }
    };
    let bound = q.previous_timestamp_ms().unwrap();
    assert!(clock.now_ms() > bound);
    let ids = leased(one, &clock, ClockPolicy::Refuse, q);
    assert!(one.decompose(ids.next_id().unwrap()).unwrap().unix_ms > bound);
}

/// A store whose renewals answer "another holder has it" after the first: the node ID is
/// taken while `acquire` waits.
#[derive(Clone)]
struct TakenAfterClaim {
    inner: Forgetful,
    renewals: Arc<AtomicI64>,
}

impl LeaseStore for TakenAfterClaim {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.inner.claim(req).await
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        if self.renewals.fetch_add(1, Ordering::SeqCst) >= 1 {
            return Ok(false);
        }
        self.inner.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.inner.release(req).await
    }
}

/// Issue 37, item 4: a lease lost while `acquire` waited for its takeover bound is not
/// returned: a typed error names the node ID (on a clock waited with timers, where the
/// heartbeat finds it, and on a simulated clock, where the wait's own renewal does).
#[tokio::test(start_paused = true)]
async fn a_lease_lost_during_the_takeover_wait_is_not_returned() {
    for clock in [TokioClock::timed(), TokioClock::new()] {
        let store = TakenAfterClaim {
            inner: Forgetful::on(&clock),
            renewals: Arc::default(),
        };
        let began = clock.now_ms();
        let err = options(&clock)
            .takeover_wait(true)
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::LeaseLostDuringTakeover { node: 0, namespace } if namespace == "default"),
            "{err:?}"
        );
        assert!(err.to_string().contains("node ID 0"), "{err}");
        assert!(store.renewals.load(Ordering::SeqCst) >= 2);
        if !clock.simulated {
            assert!(
                clock.now_ms() - began < 2_000,
                "returned {} ms after the claim, not at the heartbeat's answer",
                clock.now_ms() - began
            );
        }
    }
}

/// Issue 37, item 4: timings outside their range are refused before any store call, with a
/// typed error naming the option, the value and the range; none panics (they did, inside the
/// claim task: `store_timeout + ttl` overflowed).
#[tokio::test(start_paused = true)]
async fn absurd_timings_are_refused_with_the_value_and_the_limit() {
    let store = MemoryLeaseStore::new();
    let day = LeaseOptions::MAX_TTL;
    for (opts, option, value) in [
        (
            WorkerLease::options().ttl(Duration::ZERO),
            "ttl",
            Duration::ZERO,
        ),
        (
            WorkerLease::options().ttl(Duration::MAX),
            "ttl",
            Duration::MAX,
        ),
        (
            WorkerLease::options().ttl(day + Duration::from_millis(1)),
            "ttl",
            day + Duration::from_millis(1),
        ),
        (
            WorkerLease::options().store_timeout(Duration::MAX),
            "store_timeout",
            Duration::MAX,
        ),
        (
            WorkerLease::options().store_timeout(Duration::ZERO),
            "store_timeout",
            Duration::ZERO,
        ),
        (
            WorkerLease::options().clock_allowance(Duration::MAX),
            "clock_allowance",
            Duration::MAX,
        ),
        (
            WorkerLease::options().renew_every(Duration::MAX),
            "renew_every",
            Duration::MAX,
        ),
        (
            WorkerLease::options().safety_margin(Duration::MAX),
            "safety_margin",
            Duration::MAX,
        ),
    ] {
        let err = opts
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap_err();
        let ErrorKind::LeaseOptionOutOfRange {
            option: named,
            value: rejected,
            max,
            ..
        } = err.kind()
        else {
            panic!("{option}: expected LeaseOptionOutOfRange, got {err:?}");
        };
        assert_eq!((*named, *rejected), (option, value));
        let text = err.to_string();
        assert!(
            text.contains(option)
                && text.contains(&format!("{value:?}"))
                && text.contains(&format!("{max:?}")),
            "{text}"
        );
    }
    // The largest of each is accepted, and the lease works.
    let lease = WorkerLease::options()
        .ttl(day)
        .renew_every(Duration::from_secs(60))
        .store_timeout(LeaseOptions::MAX_STORE_TIMEOUT)
        .clock_allowance(LeaseOptions::MAX_CLOCK_ALLOWANCE)
        .acquire(store, &Layout::TWITTER)
        .await
        .unwrap();
    let ids = Snowflake::builder().lease(lease).build().unwrap();
    ids.next_id().unwrap();
}

/// [`TokioClock`] read through an offset the test sets: a host whose clock is off by that much
/// from the store's (the store keeps the plain `TokioClock`).
#[derive(Clone)]
struct Skewed {
    base: TokioClock,
    offset_ms: Arc<AtomicI64>,
}

impl Skewed {
    fn on(base: &TokioClock) -> Self {
        Skewed {
            base: base.clone(),
            offset_ms: Arc::default(),
        }
    }

    fn set_offset(&self, ms: i64) {
        self.offset_ms.store(ms, Ordering::SeqCst);
    }
}

impl Clock for Skewed {
    fn now_ms(&self) -> i64 {
        self.base.now_ms() + self.offset_ms.load(Ordering::SeqCst)
    }
    fn wait_until(&self, target_ms: i64) {
        self.base
            .wait_until(target_ms - self.offset_ms.load(Ordering::SeqCst));
    }
    fn is_simulated(&self) -> bool {
        self.base.is_simulated()
    }
}

/// The check of the clock allowance on its own: the store read its clock somewhere between the
/// send and the answer, so the worst case of both ends must be within the allowance.
#[test]
fn the_clock_check_takes_the_worst_case_of_the_round_trip() {
    use crate::lease::fence::compare_clocks;
    let second = Duration::from_secs(1);
    let skew = |sent, store, received| match compare_clocks(sent, store, received, second, "claim")
        .map_err(Error::into_kind)
    {
        Ok(()) => None,
        Err(ErrorKind::ClockSkew {
            operation: "claim",
            lead_ms,
            round_trip_ms,
            allowance,
            certain,
        }) => {
            assert_eq!(round_trip_ms, received - sent);
            assert_eq!(allowance, second);
            Some((lead_ms, certain))
        }
        Err(e) => panic!("{e:?}"),
    };
    // No round trip: exactly the difference; the allowance itself is accepted.
    assert_eq!(skew(5_000, 5_000, 5_000), None);
    assert_eq!(skew(6_000, 5_000, 6_000), None);
    assert_eq!(skew(4_000, 5_000, 4_000), None);
    assert_eq!(skew(6_001, 5_000, 6_001), Some((1_001, true)));
    assert_eq!(skew(3_999, 5_000, 3_999), Some((-1_001, true)));
    // Seed 7 of the soak: a clock stepped 38.3 s ahead.
    assert_eq!(skew(43_300, 5_000, 43_302), Some((38_302, true)));
    // A round trip of 1.5 s around a store reading in its middle: within (750 ms either way).
    assert_eq!(skew(0, 750, 1_500), None);
    // 2.5 s: the store's reading may be 1.25 s behind the answer: refused, but not certain.
    assert_eq!(skew(0, 1_250, 2_500), Some((1_250, false)));
    // Longer than twice the allowance: refused wherever the store's reading falls.
    for store in -3_000..=5_000 {
        assert!(skew(0, store, 2_001).is_some(), "store reading {store}");
    }
    // A skew beyond the allowance is never accepted, whatever the round trip.
    for (sent, received) in [(0, 0), (0, 10), (0, 900), (0, 1_999)] {
        for true_skew in [1_001, 5_000, -1_001, -5_000] {
            for at in [sent, (sent + received) / 2, received] {
                // The store read its clock when this clock read `at`: store = at − skew.
                assert!(skew(sent, at - true_skew, received).is_some());
            }
        }
    }
}

/// A claim from a clock that leads or lags the store's by more than the allowance is refused
/// with `ClockSkew` naming the lead or lag and the allowance, before anything is claimed; one
/// at the allowance is accepted.
#[tokio::test(start_paused = true)]
async fn a_claim_from_a_clock_beyond_the_allowance_is_refused_before_it_claims() {
    let base = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(base.clone());
    let clock = Skewed::on(&base);
    let opts = || options(&base).clock(clock.clone());
    for offset in [38_300, 1_001, -1_001, -20_000] {
        clock.set_offset(offset);
        let err = opts()
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap_err();
        let ErrorKind::ClockSkew {
            operation,
            lead_ms,
            allowance,
            certain,
            ..
        } = err.kind()
        else {
            panic!("offset {offset}: expected ClockSkew, got {err:?}");
        };
        assert_eq!(
            (*operation, *lead_ms, *allowance, *certain),
            ("claim", offset, Duration::from_secs(1), true)
        );
        let text = err.to_string();
        let way = if offset > 0 { "leads" } else { "lags" };
        assert!(
            text.contains(&format!(
                "{way} the lease store's clock by {} ms",
                offset.abs()
            )) && text.contains("allowance of 1s"),
            "{text}"
        );
        assert!(store.rows("default").is_empty(), "offset {offset}: claimed");
    }
    for offset in [1_000, -1_000, 0] {
        clock.set_offset(offset);
        let lease = opts().acquire(store.clone(), &Layout::TWITTER).await;
        let lease = lease.unwrap_or_else(|e| panic!("offset {offset}: {e}"));
        lease.handle().release().await.unwrap();
    }
}

/// A holder whose clock moves past the allowance while it holds its node ID is fenced at its
/// next renewal, at once (its deadline still lay 25 s ahead), and the renewal is not sent; it
/// is not lost, and issues again once a renewal finds its clock within the allowance.
#[tokio::test(start_paused = true)]
async fn a_holder_whose_clock_moves_past_the_allowance_is_fenced_at_its_next_renewal() {
    let base = TokioClock::new();
    let store = MemoryLeaseStore::with_clock(base.clone());
    let clock = Skewed::on(&base);
    let lease = LeaseOptions::default()
        .ttl(Duration::from_secs(30))
        .renew_every(Duration::from_secs(1))
        .safety_margin(Duration::from_secs(5))
        .clock(clock.clone())
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap();
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .clock(clock.clone())
        .lease(lease)
        .build()
        .unwrap();
    ids.next_id().unwrap();
    let expires = store.rows("default")[0].expires_at_ms;

    clock.set_offset(5_000);
    ids.next_id().unwrap(); // until the next renewal: the check is at renewals
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert!(
        matches!(ids.next_id(), Err(idgen_core::Error::Fenced { .. })),
        "not fenced: {:?}",
        handle.status()
    );
    let status = handle.status();
    assert!(!status.lost);
    let error = status.last_error.expect("the renewal's error");
    assert!(
        error.starts_with("renew refused: the clock this process issues IDs from leads the lease store's clock by 5000 ms"),
        "{error}"
    );
    assert_eq!(
        store.rows("default")[0].expires_at_ms,
        expires,
        "the renewal was sent"
    );

    // Back within the allowance: the next renewal goes through, the generator issues again.
    clock.set_offset(0);
    tokio::time::sleep(Duration::from_millis(6_000)).await;
    ids.next_id().unwrap();
    let status = handle.status();
    assert!(status.last_error.is_none(), "{status:?}");
    assert!(store.rows("default")[0].expires_at_ms > expires);
    handle.release().await.unwrap();
}

/// `LeaseStore::create_if_missing` is a store's one say about creation: every claim calls it
/// first unless the options say `create_if_missing(false)`, and a store that keeps the default
/// (nothing to create) is claimed from whichever the options say.
#[tokio::test(start_paused = true)]
async fn a_claim_calls_create_if_missing_unless_the_options_say_false() {
    let clock = TokioClock::new();
    let store = Flaky::on(&clock);
    let first = acquire(&clock, store.clone(), &Layout::TWITTER).await;
    assert_eq!(store.creates.load(Ordering::SeqCst), 1);
    let second = options(&clock)
        .create_if_missing(false)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap();
    assert_eq!(
        store.creates.load(Ordering::SeqCst),
        1,
        "called despite false"
    );
    assert_eq!((first.node(), second.node()), (0, 1));

    for create in [true, false] {
        let lease = options(&clock)
            .create_if_missing(create)
            .acquire(
                MemoryLeaseStore::with_clock(clock.clone()),
                &Layout::TWITTER,
            )
            .await;
        assert!(lease.is_ok(), "create_if_missing({create}): {lease:?}");
    }
}

/// A memory store whose clock reads ([`LeaseStore::clock_ms`]) can be made slow: the next
/// `slow` reads each take 2.5 s, the store reading its clock in the middle (as a loaded machine
/// does to one round trip).
#[derive(Clone)]
struct SlowClockReads {
    inner: MemoryLeaseStore,
    /// The clock reads answered so far.
    reads: Arc<AtomicI64>,
    /// How many of the next clock reads are slow.
    slow: Arc<AtomicI64>,
}

impl SlowClockReads {
    const HALF_TRIP: Duration = Duration::from_millis(1_250);

    fn on(clock: &TokioClock) -> Self {
        SlowClockReads {
            inner: MemoryLeaseStore::with_clock(clock.clone()),
            reads: Arc::default(),
            slow: Arc::default(),
        }
    }

    /// Makes the next `n` clock reads slow.
    fn slow_next(&self, n: i64) {
        self.slow.store(n, Ordering::SeqCst);
    }

    fn reads(&self) -> i64 {
        self.reads.load(Ordering::SeqCst)
    }
}

impl LeaseStore for SlowClockReads {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.inner.claim(req).await
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.inner.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.inner.release(req).await
    }
    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        self.inner.record_layout(namespace, layout).await
    }
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let slow = self.slow.fetch_sub(1, Ordering::SeqCst) > 0;
        if slow {
            tokio::time::sleep(Self::HALF_TRIP).await;
        }
        let now = self.inner.clock_ms().await;
        if slow {
            tokio::time::sleep(Self::HALF_TRIP).await;
        }
        now
    }
}

/// The CI failure: a claim whose first clock reading takes 2.5 s (unsure: the store's clock may
/// be 1.25 s behind) reads it again, and the quick second reading proves the clocks within the
/// allowance: the claim is accepted.
#[tokio::test(start_paused = true)]
async fn a_claim_whose_clock_reading_is_slow_reads_it_again_and_is_accepted() {
    let clock = TokioClock::new();
    let store = SlowClockReads::on(&clock);
    store.slow_next(1);
    let lease = options(&clock)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap_or_else(|e| panic!("refused on one slow reading: {e}"));
    // Two readings for the claim, one for the first renewal.
    assert_eq!(store.reads(), 3);
    assert_eq!(store.inner.rows("default").len(), 1);
    lease.handle().release().await.unwrap();
}

/// A claim whose readings are all slow is refused after exactly three, with the last one's
/// unsure `ClockSkew`, before anything is claimed.
#[tokio::test(start_paused = true)]
async fn a_claim_whose_three_clock_readings_are_all_slow_is_refused_unsure() {
    use crate::lease::fence::CLOCK_READINGS;
    let clock = TokioClock::new();
    let store = SlowClockReads::on(&clock);
    store.slow_next(i64::from(CLOCK_READINGS) + 1);
    let err = options(&clock)
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::ClockSkew {
                operation: "claim",
                lead_ms: 1_250,
                round_trip_ms: 2_500,
                certain: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("by up to 1250 ms"), "{err}");
    assert_eq!((CLOCK_READINGS, store.reads()), (3, 3));
    assert!(store.inner.rows("default").is_empty(), "claimed");
}

/// A clock truly beyond the allowance is refused at its first certain reading, slow or quick,
/// and never read again; one whose first reading is slow and unsure is read again, and the
/// quick second reading, certain, refuses it at once (not a third).
#[tokio::test(start_paused = true)]
async fn a_clock_beyond_the_allowance_is_refused_at_its_first_certain_reading() {
    let base = TokioClock::new();
    let store = SlowClockReads::on(&base);
    let clock = Skewed::on(&base);
    let refusal = |err: Error| match err.into_kind() {
        ErrorKind::ClockSkew {
            operation: "claim",
            lead_ms,
            certain,
            ..
        } => (lead_ms, certain),
        other => panic!("expected ClockSkew, got {other:?}"),
    };
    // offset, slow readings, readings taken, (lead, certain) refused with.
    let cases = [
        (5_000, 0, 1, (5_000, true)),
        (-5_000, 0, 1, (-5_000, true)),
        // Slow, but even the best case (5 s − 1.25 s) exceeds the allowance.
        (5_000, 1, 1, (6_250, true)),
        // 1.5 s ahead: the slow reading allows 0.25 s (unsure), the quick one proves 1.5 s.
        (1_500, 1, 2, (1_500, true)),
    ];
    for (offset, slow, readings, refused) in cases {
        clock.set_offset(offset);
        store.slow_next(slow);
        let before = store.reads();
        let err = options(&base)
            .clock(clock.clone())
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap_err();
        let case = format!("offset {offset}, {slow} slow");
        assert_eq!(refusal(err), refused, "{case}");
        assert_eq!(store.reads() - before, readings, "{case}: readings");
        assert!(store.inner.rows("default").is_empty(), "{case}: claimed");
    }
}

/// A renewal whose first clock reading is slow (unsure) reads it again and, the second quick,
/// renews: no failed renewal, no error.
#[tokio::test(start_paused = true)]
async fn a_renewal_whose_clock_reading_is_slow_reads_it_again_and_renews() {
    let clock = TokioClock::new();
    let store = SlowClockReads::on(&clock);
    let lease = LeaseOptions::default()
        .ttl(Duration::from_secs(30))
        .renew_every(Duration::from_secs(1))
        .safety_margin(Duration::from_secs(5))
        .clock(clock.clone())
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap();
    let handle = lease.handle();
    assert_eq!(store.reads(), 2); // the claim's and the first renewal's
    let valid_until = handle.status().valid_until_ms;
    store.slow_next(1);
    // The renewal starts after 1 s; its slow reading takes 2.5 s, the second is quick.
    tokio::time::sleep(Duration::from_millis(3_600)).await;
    let status = handle.status();
    assert_eq!(
        (
            status.renewals,
            status.failed_renewals,
            status.last_error.as_deref()
        ),
        (1, 0, None)
    );
    assert_eq!(store.reads(), 4);
    assert!(status.valid_until_ms >= valid_until + 3_500, "{status:?}");
    handle.release().await.unwrap();
}
