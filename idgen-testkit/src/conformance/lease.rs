//! The lease-store suite: what every [`LeaseStore`] promises, checked on a real database.
//!
//! The cases here run in one process; [`lease_processes`](super::lease_processes) has those
//! with child processes and [`lease_lifecycle`](super::lease_lifecycle) the edges of a
//! lease's life (release while a renewal is in flight, a runtime that stopped).

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use idgen_core::{Clock, ClockPolicy, Layout, Snowflake, SystemClock};
use idgen_engine::lease::{
    BoxError, ClaimRequest, LeaseHandle, LeaseOptions, LeaseStore, RenewRequest, WorkerLease,
    layout_key,
};
use idgen_engine::{Error, ErrorKind};

use super::{Database, DbKind};

/// The lease table every adapter uses by default.
pub const TABLE: &str = "idgen_worker_lease";

/// A lease store of one adapter on one database, as the suite drives it.
///
/// ```
/// use idgen_engine::lease::{BoxError, MemoryLeaseStore};
/// use idgen_testkit::conformance::{DbKind, LeaseSubject};
///
/// /// (A real subject opens a pool to `url`; this one only shows the shape.)
/// struct Memory;
/// impl LeaseSubject for Memory {
///     type Store = MemoryLeaseStore;
///     const DATABASE: DbKind = DbKind::Sqlite;
///     async fn store(_url: &str, _table: &str) -> Result<MemoryLeaseStore, BoxError> {
///         Ok(MemoryLeaseStore::new())
///     }
///     async fn create_table(_store: &MemoryLeaseStore) -> Result<(), BoxError> {
///         Ok(())
///     }
/// }
/// ```
pub trait LeaseSubject: Send + Sync + 'static {
    /// The store under test.
    type Store: LeaseStore + Clone;
    /// The database it runs on.
    const DATABASE: DbKind;
    /// A store on a new connection pool to `url` (a URL of [`Database::url`]) using the lease
    /// table `table`; an error (naming the name) for a table name the adapter refuses.
    fn store(url: &str, table: &str) -> impl Future<Output = Result<Self::Store, BoxError>> + Send;
    /// Creates the store's table if it is missing, the way this adapter's users do. The default
    /// does nothing: a store of keys (etcd, Redis) has no table (every SQL subject overrides it,
    /// through [`sql_lease_subject!`](crate::sql_lease_subject)).
    fn create_table(store: &Self::Store) -> impl Future<Output = Result<(), BoxError>> + Send {
        let _ = store;
        async { Ok(()) }
    }
    /// A store using `table` on a pool of the application's made as `spec` says, and that pool
    /// ([`AppPool`](super::AppPool)): for the cases about the application's connections (every
    /// SQL subject has one; the default fails, for etcd and Redis).
    fn app_store(
        url: &str,
        table: &str,
        spec: super::AppPoolSpec,
    ) -> impl Future<Output = Result<(Self::Store, Box<dyn super::AppPool>), BoxError>> + Send {
        let _ = (url, table, spec);
        async { Err("this subject has no application's pool".into()) }
    }
}

/// A fresh database of `S`, with the default lease table, and a store on it.
pub(crate) async fn setup<S: LeaseSubject>() -> (Database, S::Store) {
    let db = Database::fresh(S::DATABASE).await;
    let store = open_store::<S>(db.url(), TABLE).await;
    S::create_table(&store)
        .await
        .expect("create the lease table");
    (db, store)
}

/// `S`'s store on `url`, with `table`.
pub(crate) async fn open_store<S: LeaseSubject>(url: &str, table: &str) -> S::Store {
    S::store(url, table).await.expect("a lease store")
}

/// A layout with `bits` node bits (capacity 2^bits).
pub fn layout(bits: u8) -> Layout {
    Layout::builder()
        .node_bits(bits)
        .build()
        .expect("a layout with that many node bits")
}

/// The default options without the takeover wait
/// ([`skip_takeover_wait_for_tests_and_development`](LeaseOptions::skip_takeover_wait_for_tests_and_development)):
/// the cases start on a fresh database or key prefix, where no holder a store forgot can
/// exist, and would otherwise wait one TTL (30 s) after each claim of a new row. The cases
/// about that wait turn it back on.
pub fn no_wait() -> LeaseOptions {
    WorkerLease::options().skip_takeover_wait_for_tests_and_development(true)
}

/// Options with a short TTL (renewal every 1/8, margin 1/4, store time-out 1/8 of it), without
/// the takeover wait (see [`no_wait`]).
pub fn short(ttl_ms: u64) -> LeaseOptions {
    let ttl = Duration::from_millis(ttl_ms);
    no_wait()
        .ttl(ttl)
        .renew_every(ttl / 8)
        .safety_margin(ttl / 4)
        // A quarter of the TTL: short enough to fence well before expiry, long enough for a
        // claim through a proxy on a loaded two-core machine.
        .store_timeout(ttl / 4)
}

pub(crate) fn now_ms() -> i64 {
    SystemClock::new().now_ms()
}

/// Releases the leases (dropping them would release in the background, racing the removal of
/// the test database).
pub(crate) async fn release_all(leases: &[WorkerLease]) {
    for lease in leases {
        lease.handle().release().await.expect("release");
    }
}

/// A generator on `lease` with `layout` and the default clock policy, and the lease's handle
/// (the generator owns the lease; the case releases through the handle).
pub(crate) fn generator(lease: WorkerLease, layout: Layout) -> (Snowflake, LeaseHandle) {
    generator_with_policy(lease, layout, ClockPolicy::default())
}

/// [`generator`] with the clock policy `policy`.
pub(crate) fn generator_with_policy(
    lease: WorkerLease,
    layout: Layout,
    policy: ClockPolicy,
) -> (Snowflake, LeaseHandle) {
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(layout)
        .clock_policy(policy)
        .lease(lease)
        .build()
        .expect("a generator on the lease");
    (ids, handle)
}

/// A claim of `holder` in the namespace `default` for a minute.
pub(crate) fn claim<'a>(holder: &'a str, capacity: u64) -> ClaimRequest<'a> {
    ClaimRequest {
        namespace: "default",
        capacity,
        holder,
        ttl: Duration::from_secs(60),
    }
}

/// A renewal (or release) of `node` by `holder` in the namespace `default` for a minute.
pub(crate) fn renewal<'a>(node: u64, holder: &'a str, last: Option<i64>) -> RenewRequest<'a> {
    RenewRequest {
        namespace: "default",
        node,
        holder,
        ttl: Duration::from_secs(60),
        last_timestamp_ms: last,
    }
}

/// A namespace keeps the layout it was first used with (issue 27, item 2): a process with
/// another layout is refused before it claims anything, naming both; the same layout is
/// served, and another namespace takes another layout. Two processes that start at once on
/// a new namespace with different layouts: exactly one is served.
pub async fn a_namespace_keeps_the_layout_it_was_first_used_with<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let first = no_wait()
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .expect("the first layout");
    let other = open_store::<S>(db.url(), TABLE).await;
    let err = no_wait()
        .acquire(other.clone(), &Layout::SONYFLAKE)
        .await
        .expect_err("another layout in the same namespace is refused");
    let ErrorKind::LayoutMismatch {
        namespace,
        recorded,
        requested,
    } = err.kind()
    else {
        panic!("expected LayoutMismatch, got {err:?}");
    };
    assert_eq!(namespace, "default");
    assert_eq!(recorded, &layout_key(&Layout::TWITTER));
    assert_eq!(requested, &layout_key(&Layout::SONYFLAKE));
    let held = |rows: Vec<super::LeaseRow>| {
        let now = now_ms();
        rows.iter()
            .filter(|r| r.holder.is_some() && r.expires_at_ms > now)
            .count()
    };
    assert_eq!(
        held(db.lease_rows(TABLE, "default").await),
        1,
        "the refused process claimed"
    );

    let same = no_wait()
        .acquire(other.clone(), &Layout::TWITTER)
        .await
        .expect("the same layout is served");
    assert_ne!(same.node(), first.node());
    let elsewhere = no_wait()
        .namespace("sonyflake")
        .acquire(other.clone(), &Layout::SONYFLAKE)
        .await
        .expect("another namespace takes another layout");

    let third = open_store::<S>(db.url(), TABLE).await;
    let (a, b) = tokio::join!(
        no_wait()
            .namespace("race")
            .acquire(store.clone(), &Layout::TWITTER),
        no_wait()
            .namespace("race")
            .acquire(third, &Layout::SONYFLAKE),
    );
    let refused = [&a, &b]
        .iter()
        .filter(|r| {
            matches!(
                r.as_ref().map_err(Error::kind),
                Err(ErrorKind::LayoutMismatch { .. })
            )
        })
        .count();
    assert_eq!(refused, 1, "{a:?} / {b:?}");
    let mut leases = vec![first, same, elsewhere];
    leases.extend(a.ok());
    leases.extend(b.ok());
    release_all(&leases).await;
}

/// 64 tasks acquire at once: 64 distinct node IDs, and the table names the same 64 with 64
/// different holders.
pub async fn sixty_four_tasks_get_distinct_node_ids<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let tasks: Vec<_> = (0..64)
        .map(|_| {
            let store = store.clone();
            // 64 claims share one small pool: on a loaded machine the last wait seconds for a
            // connection, and the store's time-out is not what this case is about.
            let options = no_wait().store_timeout(Duration::from_secs(20));
            tokio::spawn(async move { options.acquire(store, &Layout::TWITTER).await })
        })
        .collect();
    let mut leases = Vec::new();
    for task in tasks {
        leases.push(task.await.expect("the task").expect("acquire"));
    }
    let nodes: HashSet<u64> = leases.iter().map(|l| l.node()).collect();
    assert_eq!(nodes.len(), 64, "duplicate node IDs: {nodes:?}");

    let now = now_ms();
    let live: Vec<_> = db
        .lease_rows(TABLE, "default")
        .await
        .into_iter()
        .filter(|r| r.expires_at_ms > now)
        .collect();
    assert_eq!(live.len(), 64, "{live:?}");
    let holders: HashSet<_> = live.iter().map(|r| r.holder.clone()).collect();
    assert_eq!(holders.len(), 64);
    assert!(holders.iter().all(Option::is_some));
    assert_eq!(live.iter().map(|r| r.node).collect::<HashSet<_>>(), nodes);
    release_all(&leases).await;
}

/// With every node ID held, `acquire` fails with `NoFreeNode` naming namespace and capacity;
/// a capacity below the layout's and another namespace behave the same.
pub async fn the_ninth_of_eight_node_ids_gets_the_capacity_error<S: LeaseSubject>() {
    let (_db, store) = setup::<S>().await;
    let eight = layout(3);
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(no_wait().acquire(store.clone(), &eight).await.unwrap());
    }
    let err = no_wait().acquire(store.clone(), &eight).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NoFreeNode { capacity: 8, namespace } if namespace == "default"),
        "{err:?}"
    );
    assert!(err.to_string().contains("all 8 node IDs"), "{err}");

    let orders = || no_wait().namespace("orders").capacity(8);
    for _ in 0..8 {
        let lease = orders()
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .unwrap();
        held.push(lease);
    }
    let err = orders()
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NoFreeNode { capacity: 8, namespace } if namespace == "orders"),
        "{err:?}"
    );
    release_all(&held).await;
}

/// A node space larger than one chunk of rows (1,024): the first claim creates the first
/// chunk; once it is taken, claims create the next rows as they need them, claim every node ID
/// below the capacity once, and none above.
pub async fn rows_are_created_as_the_node_space_fills<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let capacity = 1_100;
    let request = |holder: &str| {
        let store = store.clone();
        let holder = holder.to_owned();
        async move {
            store
                .claim(ClaimRequest {
                    namespace: "big",
                    capacity,
                    holder: &holder,
                    ttl: Duration::from_secs(600),
                })
                .await
                .expect("claim")
        }
    };
    let first = request("holder-0").await.expect("a free node ID");
    assert_eq!(first.node, 0);
    if db.kind().is_sql() {
        // A table gets rows a chunk at a time; etcd and Redis keep keys of used node IDs only.
        assert_eq!(db.lease_rows(TABLE, "big").await.len(), 1024);
    }
    // Other holders take node IDs 1..1000 (plain SQL, to spare a thousand claims).
    db.hold_lease_rows(TABLE, "big", 1..1000).await;
    let mut nodes = HashSet::new();
    for i in 1000..capacity {
        let claim = request(&format!("holder-{i}"))
            .await
            .expect("a free node ID");
        assert!(
            nodes.insert(claim.node),
            "node {} claimed twice",
            claim.node
        );
    }
    assert_eq!(nodes, (1000..capacity).collect::<HashSet<_>>());
    let rows = db.lease_rows(TABLE, "big").await;
    assert_eq!(rows.len(), capacity as usize);
    assert!(rows.iter().all(|r| r.holder.is_some()), "a row left free");
    assert_eq!(
        request("one-too-many").await,
        None,
        "claimed beyond the capacity"
    );
}

/// Claim, renew and release on the store itself: the lowest free node ID is claimed; a renewal
/// keeps the larger last timestamp (NULL never replaces one); only the holder renews; a release
/// stores the exact last timestamp, frees the node ID at once and clears the holder; the old
/// holder can then neither renew nor release it.
pub async fn the_store_claims_renews_and_releases<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let row = |node: u64| {
        let db = &db;
        async move {
            let rows = db.lease_rows(TABLE, "default").await;
            let row = rows.into_iter().find(|r| r.node == node).expect("the row");
            (row.holder, row.last_timestamp_ms)
        }
    };

    let a = store.claim(claim("a", 3)).await.unwrap().unwrap();
    assert_eq!((a.node, a.last_timestamp_ms), (0, None));
    assert_eq!(store.claim(claim("b", 3)).await.unwrap().unwrap().node, 1);

    assert!(store.renew(renewal(0, "a", Some(100))).await.unwrap());
    assert!(store.renew(renewal(0, "a", Some(50))).await.unwrap());
    assert!(store.renew(renewal(0, "a", None)).await.unwrap());
    assert_eq!(row(0).await, (Some("a".into()), Some(100)));
    assert!(!store.renew(renewal(0, "b", Some(500))).await.unwrap());
    assert_eq!(row(0).await.1, Some(100));

    store.release(renewal(0, "a", Some(70))).await.unwrap();
    assert_eq!(row(0).await, (None, Some(70)));
    let c = store.claim(claim("c", 3)).await.unwrap().unwrap();
    assert_eq!((c.node, c.last_timestamp_ms), (0, Some(70)));
    assert!(!store.renew(renewal(0, "a", Some(80))).await.unwrap());
    store.release(renewal(0, "a", Some(1))).await.unwrap();
    assert_eq!(row(0).await, (Some("c".into()), Some(70)));

    assert_eq!(store.claim(claim("d", 3)).await.unwrap().unwrap().node, 2);
    assert_eq!(store.claim(claim("e", 3)).await.unwrap(), None);
}

/// A renewal that was sent before a release and is answered after it finds nothing to renew:
/// the row keeps no holder, and the next claimant gets the node ID at once.
pub async fn a_renewal_answered_after_release_leaves_the_node_id_free<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let held = store.claim(claim("old", 1)).await.unwrap().unwrap();
    store
        .release(renewal(held.node, "old", Some(1_000)))
        .await
        .unwrap();
    let renewed = store
        .renew(renewal(held.node, "old", Some(2_000)))
        .await
        .unwrap();
    assert!(!renewed, "a renewal after the release re-held the node ID");
    let rows = db.lease_rows(TABLE, "default").await;
    assert_eq!(rows[0].holder, None, "{rows:?}");
    assert_eq!(rows[0].last_timestamp_ms, Some(1_000), "{rows:?}");
    let next = store.claim(claim("new", 1)).await.unwrap();
    assert_eq!(next.map(|c| c.node), Some(held.node));
}

/// A graceful release stops the generator and frees the node ID at once with the exact last
/// timestamp issued; the next holder issues only above it.
pub async fn a_released_node_id_is_free_at_once_and_keeps_its_last_timestamp<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    let lease = no_wait().acquire(store.clone(), &one).await.unwrap();
    let (ids, handle) = generator(lease, one);
    let mut last = ids.next_id().unwrap();
    for _ in 0..1000 {
        last = ids.next_id().unwrap();
    }
    handle.release().await.unwrap();
    assert!(matches!(
        ids.next_id(),
        Err(idgen_core::Error::Fenced { .. })
    ));

    let last_ms = one.decompose(last).unwrap().unix_ms;
    let row = db.lease_rows(TABLE, "default").await.remove(0);
    assert_eq!(row.last_timestamp_ms, Some(last_ms), "{row:?}");
    assert_eq!(row.holder, None, "{row:?}");
    assert!(row.expires_at_ms <= now_ms() + 5, "{row:?}"); // 5 ms for clock rounding

    let next = no_wait().acquire(store.clone(), &one).await.unwrap();
    assert_eq!(next.previous_timestamp_ms(), Some(last_ms));
    let (ids, handle) = generator(next, one);
    assert!(ids.next_id().unwrap() > last);
    handle.release().await.unwrap();
}

/// A previous holder (on a host whose clock ran 600 ms ahead) stored a last timestamp in the
/// future: the next holder issues at once above it (ahead of the clock, whatever its clock
/// policy) and its release keeps it; with the takeover wait, `acquire` waits until the clock has
/// passed it. Never at or below it.
pub async fn a_new_holder_never_issues_at_or_below_the_rows_last_timestamp<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    let crash_ahead = |holder: &'static str| {
        let store = store.clone();
        async move {
            let ahead = now_ms() + 600;
            let previous = store.claim(claim(holder, 1)).await.unwrap().unwrap();
            assert_eq!(previous.node, 0);
            let crashed = RenewRequest {
                ttl: Duration::ZERO,
                ..renewal(0, holder, Some(ahead))
            };
            assert!(store.renew(crashed).await.unwrap());
            ahead
        }
    };
    let ahead = crash_ahead("previous").await;
    let lease = no_wait().acquire(store.clone(), &one).await.unwrap();
    assert_eq!(lease.previous_timestamp_ms(), Some(ahead));
    let (ids, handle) = generator_with_policy(lease, one, ClockPolicy::Refuse);
    let first = ids
        .next_id()
        .expect("issues at once above the stored bound");
    let first_ms = one.decompose(first).unwrap().unix_ms;
    assert!(
        first_ms > ahead,
        "issued at {first_ms}, the bound is {ahead}"
    );
    handle.release().await.unwrap();
    let row = db.lease_rows(TABLE, "default").await.remove(0);
    assert!(
        row.last_timestamp_ms >= Some(first_ms),
        "release lost the floor: {row:?}"
    );

    let ahead = crash_ahead("another").await.max(first_ms);
    let lease = no_wait()
        .takeover_wait(true)
        .acquire(store.clone(), &one)
        .await
        .unwrap();
    assert!(
        now_ms() > ahead,
        "acquire returned before the bound {ahead}"
    );
    let (ids, handle) = generator_with_policy(lease, one, ClockPolicy::Refuse);
    let first = ids.next_id().unwrap();
    assert!(one.decompose(first).unwrap().unix_ms > ahead);
    handle.release().await.unwrap();
}

/// Without the table (issue 27, item 1): `WorkerLease::acquire` creates it (looked for first)
/// and a restart finds it. With `create_if_missing(false)` the claim fails naming the table and
/// the DDL to run, keeps the driver's error as its source, and creates nothing.
pub async fn a_missing_table_is_created_by_the_claim_or_refused_with_its_ddl<S: LeaseSubject>() {
    let db = Database::fresh(S::DATABASE).await;
    let store = open_store::<S>(db.url(), TABLE).await;
    let refused = || async {
        no_wait()
            .create_if_missing(false)
            .acquire(store.clone(), &Layout::TWITTER)
            .await
            .expect_err("a missing table is refused when creation is off")
    };
    let err = refused().await;
    // The first call on the table: the namespace's layout, recorded before any claim.
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LeaseStore {
                operation: "record the layout",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains(&db.quoted(TABLE)), "{text}");
    let dialect = match db.kind() {
        DbKind::Postgres => idgen_sql::Dialect::Postgres,
        DbKind::MySql => idgen_sql::Dialect::MySql,
        _ => idgen_sql::Dialect::Sqlite,
    };
    let ddl = idgen_sql::LeaseSql::new(dialect, TABLE)
        .expect("the default table name")
        .create_table();
    assert!(text.contains(&ddl), "{text} does not give {ddl}");
    // The store's error is the source, and the driver's error the source of that.
    let driver = std::error::Error::source(&err).and_then(|store| store.source());
    assert!(
        driver.is_some(),
        "the driver's error is not kept as the source: {err:?}"
    );
    let again = refused().await;
    assert!(
        again.to_string().contains(&ddl),
        "created after all: {again}"
    );

    let first = no_wait()
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .expect("acquire creates the missing table");
    let restarted = no_wait()
        .acquire(open_store::<S>(db.url(), TABLE).await, &Layout::TWITTER)
        .await
        .expect("a restart finds the table");
    assert_eq!((first.node(), restarted.node()), (0, 1));
    release_all(&[first, restarted]).await;
}

/// A table of another name in another schema works like the default one; a name that could
/// not be written into SQL safely is refused, naming it.
pub async fn a_custom_table_in_a_schema_and_a_refused_name<S: LeaseSubject>() {
    let db = Database::fresh(S::DATABASE).await;
    let table = match db.kind() {
        DbKind::Postgres => {
            db.execute("CREATE SCHEMA ops").await;
            "ops.leases".to_owned()
        }
        DbKind::MySql => format!("{}.leases", db.name()),
        DbKind::Sqlite => "main.leases".to_owned(),
        DbKind::Etcd | DbKind::Redis => "ops.leases".to_owned(),
    };
    let store = open_store::<S>(db.url(), &table).await;
    S::create_table(&store).await.unwrap();
    S::create_table(&store).await.unwrap(); // idempotent
    let lease = no_wait()
        .acquire(store.clone(), &Layout::TWITTER)
        .await
        .unwrap();
    let rows = db.lease_rows(&table, "default").await;
    assert_eq!(rows.len(), 1024);
    assert!(rows[lease.node() as usize].holder.is_some(), "{rows:?}");
    lease.handle().release().await.unwrap();

    let refused = "leases; DROP TABLE x";
    let err = S::store(db.url(), refused).await.err().expect("refused");
    assert!(err.to_string().contains(&format!("{refused:?}")), "{err}");
}

/// The system clock plus an offset the case sets: a host whose clock is that far from true
/// time (stepped by hand, or by a bad time source), for the cases about the clock check. A
/// lease and its generator are both given it (`LeaseOptions::clock`, `SnowflakeBuilder::clock`).
///
/// ```
/// use idgen_core::{Clock, SystemClock};
/// use idgen_testkit::conformance::lease::OffsetClock;
/// let clock = OffsetClock::new(20_000);
/// assert!(clock.now_ms() - SystemClock::new().now_ms() >= 19_000);
/// clock.set_offset(0);
/// assert!(clock.now_ms() - SystemClock::new().now_ms() < 1_000);
/// ```
#[derive(Clone, Debug)]
pub struct OffsetClock {
    system: SystemClock,
    offset_ms: Arc<AtomicI64>,
}

impl OffsetClock {
    /// The system clock `offset_ms` ahead (negative: behind).
    pub fn new(offset_ms: i64) -> Self {
        OffsetClock {
            system: SystemClock::new(),
            offset_ms: Arc::new(AtomicI64::new(offset_ms)),
        }
    }

    /// Steps the clock to `offset_ms` from the system clock, for every copy of it.
    pub fn set_offset(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }
}

impl Clock for OffsetClock {
    fn now_ms(&self) -> i64 {
        self.system.now_ms() + self.offset_ms.load(Ordering::SeqCst)
    }
}

/// The clock allowance of the clock cases: large next to a store call's round trip on a loaded
/// machine, so a right clock is never refused for a slow answer.
const CLOCK_ALLOWANCE: Duration = Duration::from_secs(2);
/// How far the wrong clocks of the clock cases are off: ten times the allowance.
const CLOCK_OFF_MS: i64 = 20_000;

/// The store reports its clock, except etcd (no wall-clock time in its answers), and the
/// clock it reports is this host's (the test servers run on this host or in its containers).
async fn stores_clock<S: LeaseSubject>(store: &S::Store) -> Option<i64> {
    let before = now_ms();
    let reported = store.clock_ms().await.expect("the store's clock");
    let after = now_ms();
    assert_eq!(
        reported.is_some(),
        S::DATABASE.reports_clock(),
        "{} reported {reported:?} as its clock",
        S::DATABASE.name()
    );
    if let Some(ms) = reported {
        assert!(
            ms >= before - 1_000 && ms <= after + 1_000,
            "{}'s clock {ms} is not this host's ({before}..{after})",
            S::DATABASE.name()
        );
    }
    reported
}

/// Issue 40 (the soak's seed 7): a claim from a clock that leads or lags the store's by more
/// than the clock allowance is refused with `ClockSkew`, naming the lead or lag and the
/// allowance, and claims nothing; a clock within the allowance either way is served and
/// issues. On etcd, which reports no clock, there is no check: the same claims are served
/// (documented on `EtcdLeaseStore`).
pub async fn a_claim_from_a_clock_beyond_the_allowance_of_the_stores_is_refused<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let checked = stores_clock::<S>(&store).await.is_some();
    let clock = OffsetClock::new(0);
    let options = || {
        no_wait()
            .clock(clock.clone())
            .clock_allowance(CLOCK_ALLOWANCE)
    };
    let two = layout(1);
    for offset in [CLOCK_OFF_MS, -CLOCK_OFF_MS] {
        clock.set_offset(offset);
        let result = options()
            .holder("skewed")
            .acquire(store.clone(), &two)
            .await;
        if !checked {
            let lease = result.unwrap_or_else(|e| panic!("offset {offset} ms, no check: {e}"));
            lease.handle().release().await.unwrap();
            continue;
        }
        let err = result.expect_err("a clock far from the store's is refused");
        let ErrorKind::ClockSkew {
            operation,
            lead_ms,
            allowance,
            ..
        } = err.kind()
        else {
            panic!("offset {offset} ms: expected ClockSkew, got {err:?}");
        };
        assert_eq!((*operation, *allowance), ("claim", CLOCK_ALLOWANCE));
        assert!(
            lead_ms.signum() == offset.signum() && (lead_ms - offset).abs() < 5_000,
            "offset {offset} ms measured as {lead_ms} ms"
        );
        let text = err.to_string();
        let way = if offset > 0 { "leads" } else { "lags" };
        assert!(
            text.contains(way) && text.contains("allowance of 2s"),
            "{text}"
        );
        let rows = db.lease_rows(TABLE, "default").await;
        assert!(
            rows.iter().all(|r| !r
                .holder
                .as_deref()
                .is_some_and(|h| h.starts_with("skewed:"))),
            "a refused claim holds a node ID: {rows:?}"
        );
    }
    let quarter = i64::try_from(CLOCK_ALLOWANCE.as_millis() / 4).unwrap();
    for offset in [quarter, -quarter] {
        clock.set_offset(offset);
        let lease = options().acquire(store.clone(), &two).await;
        let lease = lease.unwrap_or_else(|e| panic!("offset {offset} ms is within: {e}"));
        let handle = lease.handle();
        let ids = Snowflake::builder()
            .layout(two)
            .clock(clock.clone())
            .lease(lease)
            .build()
            .expect("a generator on the lease");
        ids.next_id_async()
            .await
            .unwrap_or_else(|e| panic!("offset {offset} ms: {e}"));
        handle.release().await.unwrap();
    }
}

/// Issue 40: a holder whose clock moves past the allowance while it holds its node ID (stepped
/// 20 s ahead; its fence deadline still lies 25 s beyond that) is fenced by its next renewal,
/// which it does not send, and is not lost; once its clock is back within the allowance a
/// renewal goes through and it issues again. On etcd (no clock) renewals go on and it issues
/// at the stepped clock.
pub async fn a_holder_whose_clock_moves_past_the_allowance_is_fenced_at_its_next_renewal<
    S: LeaseSubject,
>() {
    let (_db, store) = setup::<S>().await;
    let checked = stores_clock::<S>(&store).await.is_some();
    let clock = OffsetClock::new(0);
    let one = layout(0);
    let lease = no_wait()
        .ttl(Duration::from_secs(60))
        .renew_every(Duration::from_millis(200))
        .safety_margin(Duration::from_secs(15))
        .clock(clock.clone())
        .clock_allowance(CLOCK_ALLOWANCE)
        .acquire(store.clone(), &one)
        .await
        .expect("a clock within the allowance is served");
    let handle = lease.handle();
    let ids = Snowflake::builder()
        .layout(one)
        .clock(clock.clone())
        .lease(lease)
        .build()
        .expect("a generator on the lease");
    ids.next_id().unwrap();

    clock.set_offset(CLOCK_OFF_MS);
    let renewals = handle.status().renewals;
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let status = handle.status();
            if status.last_error.is_some() || status.renewals >= renewals + 2 {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let status = waited.await.expect("a renewal after the step");
    if !checked {
        assert_eq!(status.last_error, None, "etcd has no check: {status:?}");
        ids.next_id_async()
            .await
            .expect("etcd: issues at the stepped clock");
        handle.release().await.unwrap();
        return;
    }
    let error = status.last_error.clone().expect("the renewal's refusal");
    assert!(
        error.starts_with(
            "renew refused: the clock this process issues IDs from leads the lease store's clock by"
        ),
        "{error}"
    );
    assert!(
        matches!(ids.next_id(), Err(idgen_core::Error::Fenced { .. })),
        "not fenced at once: {status:?}"
    );
    assert!(!status.lost, "{status:?}");

    clock.set_offset(0);
    let resumed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if ids.next_id().is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    resumed.await.unwrap_or_else(|_| {
        panic!(
            "no ID after the clock came back within the allowance: {:?}",
            handle.status()
        )
    });
    assert!(!handle.status().lost);
    handle.release().await.unwrap();
}
