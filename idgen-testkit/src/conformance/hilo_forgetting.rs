//! The counter forgets (issue 24): a floor keeps a new process above what was handed out before
//! the counter was set back or re-created; a sequence whose increment changes while a generator
//! runs is caught at the first block off its grid.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use idgen_engine::hilo::{BoxError, HiLo, HiLoSource, Increment, MissingCounter};
use idgen_engine::{Error, ErrorKind};

use super::hilo::{
    COUNTER, CounterUnderTest, HiLoSubject, open_source, raw_allocate, set_back, set_next, setup,
};
use super::{Database, DbKind};

/// The block size of these cases.
const BLOCK: u64 = 10;

/// IDs handed out, then the counter set back (a restore from an older backup, a re-created
/// counter, a lagging replica promoted): a new process with a floor (the largest ID the
/// application stored, read by a query at start-up) moves the counter above it before it
/// serves, and never hands out an ID again; on a SQL database the floor query is real SQL on
/// a table of the handed-out IDs.
pub async fn a_floor_keeps_a_new_process_above_a_counter_set_back<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    let first = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    let mut before = Vec::new();
    for _ in 0..35 {
        before.push(first.next_id().await.unwrap());
    }
    drop(first);
    let handed_out = *before.iter().max().unwrap();
    let db = Arc::new(db);
    if db.kind().is_sql() {
        db.execute("CREATE TABLE orders_data (id BIGINT NOT NULL)")
            .await;
        let values: Vec<String> = before.iter().map(|id| format!("({id})")).collect();
        db.execute(&format!(
            "INSERT INTO orders_data (id) VALUES {}",
            values.join(", ")
        ))
        .await;
    }
    set_back(&db, kind).await;

    // A new process right after the fault.
    let source = open_source::<H>(db.url()).await;
    let known = Arc::new(AtomicI64::new(handed_out));
    let (query_db, query_known) = (Arc::clone(&db), Arc::clone(&known));
    let second = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .floor_from(move || {
            let (db, known) = (Arc::clone(&query_db), Arc::clone(&query_known));
            async move {
                if db.kind().is_sql() {
                    Ok(db
                        .scalar("SELECT COALESCE(MAX(id), 0) FROM orders_data")
                        .await
                        .unwrap_or(0))
                } else {
                    Ok(known.load(Ordering::SeqCst))
                }
            }
        })
        .build()
        .await
        .unwrap();
    let mut after = Vec::new();
    for _ in 0..35 {
        after.push(second.next_id().await.unwrap());
    }
    let again: Vec<i64> = after
        .iter()
        .copied()
        .filter(|id| *id <= handed_out)
        .collect();
    assert!(
        again.is_empty(),
        "handed out again after the counter was set back: {again:?} (up to {handed_out} was handed out before)"
    );
    let distinct: HashSet<i64> = after.iter().copied().collect();
    assert_eq!(distinct.len(), after.len());

    // A counter that lags behind the floor later (set back again while this one runs) is
    // caught at its next block: the generator fails closed.
    set_back(&db, kind).await;
    let err = loop {
        match second.next_id().await {
            Ok(id) => assert!(id > handed_out, "{id} handed out again"),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(err.kind(), ErrorKind::HiLoCounterWentBackwards { .. }),
        "{err:?}"
    );
}

/// A sequence's increment is changed (`ALTER SEQUENCE … INCREMENT BY`) while a generator runs
/// and a script takes blocks too: the generator's next block, off the grid its blocks lie on,
/// is refused (the generator fails closed) instead of served over the script's block. Counter
/// tables (any step per call) have no increment to change, and etcd's counter re-reads its
/// increment on every allocation: the case does nothing there.
pub async fn a_sequence_whose_increment_changes_while_it_runs_fails_closed<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    // etcd's counter keeps its increment in a key it re-reads on every allocation: no grid
    // to leave. SQL sequences only.
    if kind != CounterUnderTest::Sequence || !db.kind().is_sql() {
        return;
    }
    let ids = HiLo::builder(source)
        .block(BLOCK)
        .prefetch(false)
        .build()
        .await
        .unwrap();
    let mut seen = vec![ids.next_id().await.unwrap()];
    // Another process (a script) takes the next block.
    let theirs = raw_allocate(&db, kind, BLOCK).await;
    let alter = match db.kind() {
        DbKind::Postgres | DbKind::MySql => format!("ALTER SEQUENCE {COUNTER} INCREMENT BY 5"),
        other => unreachable!("no sequences on {}", other.name()),
    };
    db.execute(&alter).await;
    let err = loop {
        match ids.next_id().await {
            Ok(id) => seen.push(id),
            Err(err) => break err,
        }
        assert!(
            seen.len() < 100,
            "the changed increment went unnoticed: {seen:?}"
        );
    };
    let overlap: Vec<i64> = seen
        .iter()
        .copied()
        .filter(|id| (theirs..theirs + BLOCK as i64).contains(id))
        .collect();
    assert!(
        overlap.is_empty(),
        "handed out IDs of the script's block {theirs}..{}: {overlap:?}",
        theirs + BLOCK as i64
    );
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoBlockOffGrid { .. } | ErrorKind::HiLoCounterWentBackwards { .. }
        ),
        "{err:?}"
    );
}

/// The application's table of handed-out IDs: a real table `orders_data` on a SQL database,
/// a set in memory beside a key-value store (whose application keeps its rows elsewhere).
#[derive(Clone)]
struct IssuedIds {
    db: Arc<Database>,
    memory: Arc<Mutex<BTreeSet<i64>>>,
}

impl IssuedIds {
    async fn new(db: Arc<Database>) -> IssuedIds {
        if db.kind().is_sql() {
            db.execute("CREATE TABLE orders_data (id BIGINT NOT NULL PRIMARY KEY)")
                .await;
        }
        IssuedIds {
            db,
            memory: Arc::default(),
        }
    }

    /// Takes `n` IDs from `ids` and stores each, as the application inserts its rows; an ID
    /// already stored (handed out by both generators) is counted in `twice`.
    async fn take_and_store(
        &self,
        ids: &HiLo,
        n: usize,
        twice: &mut Vec<i64>,
    ) -> Result<(), Error> {
        for _ in 0..n {
            let id = ids.next_id().await?;
            if !self.memory.lock().unwrap().insert(id) {
                twice.push(id);
                continue;
            }
            if self.db.kind().is_sql() {
                self.db
                    .execute(&format!("INSERT INTO orders_data (id) VALUES ({id})"))
                    .await;
            }
        }
        Ok(())
    }

    /// The floor query: the largest stored ID.
    async fn max(&self) -> i64 {
        if self.db.kind().is_sql() {
            self.db
                .scalar("SELECT COALESCE(MAX(id), 0) FROM orders_data")
                .await
                .unwrap_or(0)
        } else {
            self.memory.lock().unwrap().last().copied().unwrap_or(0)
        }
    }

    /// A generator of blocks of [`BLOCK`] on a new source of `H`, with or without the floor
    /// query over this table.
    async fn generator<H: HiLoSubject>(&self, floor: bool) -> HiLo {
        let builder = HiLo::builder(open_source::<H>(self.db.url()).await)
            .block(BLOCK)
            .prefetch(false);
        let builder = if floor {
            let table = self.clone();
            builder.floor_from(move || {
                let table = table.clone();
                async move { Ok(table.max().await) }
            })
        } else {
            builder
        };
        builder.build().await.expect("start hi-lo")
    }
}

/// Issue 37, item 6: two processes on one counter, the counter restored to a point between
/// their blocks (`setval` on PostgreSQL, `SET` on Redis): the start of the higher process's
/// block, which it still serves. With a floor query over the table of handed-out IDs, the
/// lower process's next block is refused (it fails closed) and no ID is handed out by both;
/// the higher one serves the rest of its block. Without a floor (what the README says): the
/// lower process takes the restored block silently and hands out again what the higher one
/// already did; neither notices.
pub async fn a_counter_restored_between_two_processes_blocks_is_caught_with_a_floor<
    H: HiLoSubject,
>() {
    let (db, _source, kind) = setup::<H>(BLOCK).await;
    let db = Arc::new(db);
    let table = IssuedIds::new(Arc::clone(&db)).await;
    let mut twice = Vec::new();

    let low = table.generator::<H>(true).await; // [1, 11)
    let high = table.generator::<H>(true).await; // [11, 21)
    table.take_and_store(&low, 5, &mut twice).await.unwrap();
    table.take_and_store(&high, 5, &mut twice).await.unwrap();
    assert_eq!(
        table.max().await,
        15,
        "the blocks were [1, 11) and [11, 21)"
    );
    set_next(&db, kind, 11).await;
    let err = table
        .take_and_store(&low, 20, &mut twice)
        .await
        .expect_err("the lower process takes the restored block");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoCounterWentBackwards {
                start: 11,
                highest: 15,
                ..
            }
        ),
        "{err:?}"
    );
    table.take_and_store(&high, 5, &mut twice).await.unwrap();
    assert!(twice.is_empty(), "handed out by both: {twice:?}");

    // Without a floor, on a fresh counter: the restored block is served again.
    drop((low, high));
    set_next(&db, kind, 1001).await;
    let low = table.generator::<H>(false).await; // [1001, 1011)
    let high = table.generator::<H>(false).await; // [1011, 1021)
    table.take_and_store(&low, 5, &mut twice).await.unwrap();
    table.take_and_store(&high, 5, &mut twice).await.unwrap();
    set_next(&db, kind, 1011).await;
    table.take_and_store(&low, 10, &mut twice).await.unwrap();
    table.take_and_store(&high, 5, &mut twice).await.unwrap();
    assert_eq!(
        twice,
        [1011, 1012, 1013, 1014, 1015],
        "without a floor the lower process serves the restored block again, unnoticed"
    );
}

/// A source that counts the round trips start-up makes.
#[derive(Clone)]
struct Counted<S> {
    inner: S,
    allocations: Arc<AtomicU64>,
    raises: Arc<AtomicU64>,
}

impl<S: HiLoSource + Clone> HiLoSource for Counted<S> {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.allocations.fetch_add(1, Ordering::SeqCst);
        self.inner.allocate(size).await
    }
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        self.allocations.fetch_add(1, Ordering::SeqCst);
        self.inner.allocate_blocks(size, count).await
    }
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.raises.fetch_add(1, Ordering::SeqCst);
        self.inner.raise_above(floor).await
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        self.inner.increment().await
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// Issue 37, item 7: a floor 10⁹ above the counter is reached in one forward-only step (one
/// raise and the first block), not one round trip per block (10⁸ blocks of 10); the first ID is
/// the first above the floor on the counter's grid.
pub async fn a_floor_far_above_the_counter_is_reached_in_one_step<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    let floor = 1_000_000_005;
    let counted = Counted {
        inner: source,
        allocations: Arc::default(),
        raises: Arc::default(),
    };
    let build = HiLo::builder(counted.clone())
        .block(BLOCK)
        .prefetch(false)
        .timeout(Duration::from_secs(20))
        .floor(floor)
        .build();
    let ids = tokio::time::timeout(Duration::from_secs(30), build)
        .await
        .expect("start-up moved the counter within 30 s")
        .expect("start hi-lo above the floor");
    let first = ids.next_id().await.unwrap();
    // 1 + k × 10 on a sequence's grid; floor + 1 on a counter that takes any step.
    assert!(
        (floor + 1..=floor + BLOCK as i64).contains(&first),
        "{first}"
    );
    if kind == CounterUnderTest::Sequence || db.kind() == DbKind::Etcd {
        assert_eq!((first - 1) % BLOCK as i64, 0, "off the grid: {first}");
    }
    assert_eq!(counted.raises.load(Ordering::SeqCst), 1);
    assert_eq!(
        counted.allocations.load(Ordering::SeqCst),
        1,
        "round trips besides the raise: only the first block"
    );
    assert!(raw_allocate(&db, kind, BLOCK).await > first);
}

/// Issue 37, item 7: raises to different floors at once, while blocks are taken: the counter
/// never moves back (each block is above the one before, and the end is above every floor).
pub async fn raising_the_counter_never_moves_it_backwards<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(BLOCK).await;
    let floors: Vec<i64> = [5, 2, 8, 1, 7, 3, 6, 4]
        .iter()
        .map(|k| k * 1_000_000 + 3)
        .collect();
    let raises: Vec<_> = floors
        .iter()
        .map(|&floor| {
            let source = source.clone();
            tokio::spawn(async move {
                assert!(source.raise_above(floor).await.expect("raise"), "{floor}");
            })
        })
        .collect();
    let taker = {
        let source = source.clone();
        tokio::spawn(async move {
            let mut starts = Vec::new();
            for _ in 0..40 {
                starts.push(source.allocate(BLOCK).await.expect("a block"));
            }
            starts
        })
    };
    for raise in raises {
        raise.await.expect("a raise");
    }
    let starts = taker.await.expect("the blocks");
    assert!(
        starts.windows(2).all(|w| w[0] < w[1]),
        "the counter moved back: {starts:?}"
    );
    let next = raw_allocate(&db, kind, BLOCK).await;
    let top = *floors.iter().max().unwrap();
    assert!(next > top, "{next} is not above the highest floor {top}");
    if kind == CounterUnderTest::Sequence || db.kind() == DbKind::Etcd {
        assert_eq!((next - 1) % BLOCK as i64, 0, "off the grid: {next}");
    }
}

/// Issue 37, item 7: a floor query waiting behind another session's lock (`LOCK TABLE` on the
/// table it reads) does not hold `build()` for ever: the typed time-out error naming the floor
/// query, within the timeout and a little more. (SQLite: the file lock would stop the counter
/// too; PostgreSQL and MySQL/MariaDB only.)
pub async fn build_returns_within_its_timeout_while_the_floor_query_waits_for_a_lock<
    H: HiLoSubject,
>() {
    let (db, source, _kind) = setup::<H>(BLOCK).await;
    let lock = match db.kind() {
        DbKind::Postgres => "LOCK TABLE orders_data IN ACCESS EXCLUSIVE MODE",
        DbKind::MySql => "LOCK TABLES orders_data WRITE",
        _ => return,
    };
    let db = Arc::new(db);
    let _table = IssuedIds::new(Arc::clone(&db)).await;
    let mut other = db.begin().await;
    other.execute(lock).await;
    let timeout = Duration::from_millis(300);
    let query_db = Arc::clone(&db);
    let build = HiLo::builder(source)
        .block(BLOCK)
        .timeout(timeout)
        .floor_from(move || {
            let db = Arc::clone(&query_db);
            async move {
                Ok(db
                    .scalar("SELECT COALESCE(MAX(id), 0) FROM orders_data")
                    .await
                    .unwrap_or(0))
            }
        })
        .build();
    let began = std::time::Instant::now();
    let built = tokio::time::timeout(Duration::from_secs(20), build).await;
    let took = began.elapsed();
    if db.kind() == DbKind::MySql {
        other.execute("UNLOCK TABLES").await;
    }
    other.rollback().await;
    let err = match built {
        Err(_) => panic!("build() still waited 20 s after its timeout of {timeout:?}"),
        Ok(Ok(_)) => panic!("build() succeeded while the floor query waited for a lock"),
        Ok(Err(err)) => err,
    };
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoStartTimeout {
                timeout_ms: 300,
                waiting_for: "the floor query",
                ..
            }
        ),
        "{err:?} after {took:?}"
    );
    assert!(
        took < timeout + Duration::from_millis(2_000),
        "build() returned {took:?} after it began, its timeout being {timeout:?}"
    );
}
