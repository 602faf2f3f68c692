//! The lease engine's logic over the in-memory store, on tokio's paused clock (deterministic).
//! The same promises are tested against real databases in the adapter crates.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use crate::error::Error;
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
}

impl TokioClock {
    fn new() -> Self {
        TokioClock {
            start: tokio::time::Instant::now(),
            offset: Arc::default(),
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
        true
    }
}

/// A store that can be made to fail, as a database that went away.
#[derive(Clone)]
struct Flaky {
    inner: MemoryLeaseStore,
    down: Arc<AtomicBool>,
}

impl Flaky {
    /// Up, over a memory store on `clock`.
    fn on(clock: &TokioClock) -> Self {
        Flaky {
            inner: MemoryLeaseStore::with_clock(clock.clone()),
            down: Arc::default(),
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
    assert!(matches!(&err, Error::NoFreeNode { capacity: 8, namespace } if namespace == "default"));
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

    let lease = acquire(&clock, store.clone(), &Layout::TWITTER).await;
    assert_eq!(
        (lease.node(), lease.previous_timestamp_ms()),
        (0, Some(ahead))
    );
    let wait = |ms| ClockPolicy::Wait {
        max: Duration::from_millis(ms),
    };
    let refusing = leased(Layout::TWITTER, &clock, wait(100), lease);
    let err = refusing.next_id().unwrap_err();
    assert!(
        matches!(
            err,
            idgen_core::Error::ClockMovedBackwards {
                behind_ms: 2_000,
                ..
            }
        ),
        "{err}"
    );
    drop(refusing);
    tokio::task::yield_now().await; // let the background release run

    let lease = acquire(&clock, store, &Layout::TWITTER).await;
    assert_eq!(
        lease.previous_timestamp_ms(),
        Some(ahead),
        "the exact floor survives a release"
    );
    let waiting = leased(Layout::TWITTER, &clock, wait(3_000), lease);
    let id = waiting.next_id().unwrap();
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
        (WorkerLease::options().ttl(Duration::ZERO), "ttl"),
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
        assert!(matches!(err, Error::InvalidOptions { .. }));
        assert!(err.to_string().contains(needle), "{err}");
    }
}

/// A store that, like a database store, cannot vouch for a node ID it has no release record of:
/// every claim but that of a released node ID is not `exact`.
#[derive(Clone)]
struct Forgetful {
    inner: MemoryLeaseStore,
    released: Arc<std::sync::Mutex<HashSet<u64>>>,
}

impl Forgetful {
    fn on(clock: &TokioClock) -> Self {
        Forgetful {
            inner: MemoryLeaseStore::with_clock(clock.clone()),
            released: Arc::default(),
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
        self.inner.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.released.lock().unwrap().insert(req.node);
        self.inner.release(req).await
    }
}

/// A claim the store cannot prove free issues only after claim time + TTL + allowance:
/// `acquire` returns then, the bound goes into the generator, and the node ID given back with
/// `release` is taken at once with its exact last timestamp.
#[tokio::test(start_paused = true)]
async fn an_unproven_claim_waits_one_ttl_and_the_allowance_a_released_one_does_not() {
    let clock = TokioClock::new();
    let store = Forgetful::on(&clock);
    let one = Layout::builder().node_bits(0).build().unwrap();
    let opts = || options(&clock).clock_allowance(Duration::from_millis(700));
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
