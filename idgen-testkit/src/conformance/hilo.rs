//! The hi-lo source suite: what every [`HiLoSource`] over a database promises, checked on a
//! real database through idgen-engine's [`HiLo`] engine.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use idgen_engine::ErrorKind;
use idgen_engine::hilo::{BoxError, HiLo, HiLoSource};

use super::child::{self, Child, Children, say};
use super::{Database, DbKind};

/// The counter the cases use.
pub const COUNTER: &str = "orders";
/// The counter table every adapter uses by default.
pub const COUNTER_TABLE: &str = "idgen_hilo";
/// The block size where a case does not say otherwise.
pub const BLOCK: u64 = 100;

/// How the source under test keeps its counter, as its subject declares it: idgen-sql's
/// `CounterKind` (a sequence or a table row), or `Detect` for a source that asks the server.
///
/// ```
/// use idgen_testkit::conformance::CounterUnderTest;
/// assert_ne!(CounterUnderTest::Sequence, CounterUnderTest::Detect);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterUnderTest {
    /// A sequence with a fixed increment (PostgreSQL, MariaDB ≥ 10.3).
    Sequence,
    /// A row of the counter table `idgen_hilo` (MySQL, SQLite), any step per call.
    Table,
    /// MySQL/MariaDB, decided by the server: a sequence on MariaDB ≥ 10.3, else a table row.
    Detect,
}

/// A hi-lo source of one adapter on one database, as the suite drives it.
///
/// ```
/// use idgen_engine::hilo::{BoxError, MemorySource};
/// use idgen_testkit::conformance::{CounterUnderTest, DbKind, HiLoSubject};
///
/// /// (A real subject opens a pool to `url`; this one only shows the shape.)
/// struct Memory;
/// impl HiLoSubject for Memory {
///     type Source = MemorySource;
///     const DATABASE: DbKind = DbKind::Sqlite;
///     const COUNTER: CounterUnderTest = CounterUnderTest::Table;
///     async fn source(_url: &str, counter: &str) -> Result<MemorySource, BoxError> {
///         Ok(MemorySource::named(counter))
///     }
///     async fn create(_source: &MemorySource, _block: u64) -> Result<(), BoxError> {
///         Ok(())
///     }
/// }
/// ```
pub trait HiLoSubject: Send + Sync + 'static {
    /// The source under test.
    type Source: HiLoSource + Clone;
    /// The database it runs on.
    const DATABASE: DbKind;
    /// How it keeps the counter.
    const COUNTER: CounterUnderTest;
    /// The counter `counter` over a new connection pool to `url` (a URL of
    /// [`Database::url`]); an error naming the name for one the adapter refuses.
    fn source(
        url: &str,
        counter: &str,
    ) -> impl Future<Output = Result<Self::Source, BoxError>> + Send;
    /// Creates the counter if it is missing (increment `block` where it has one), the way this
    /// adapter's users do.
    fn create(
        source: &Self::Source,
        block: u64,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
    /// The counter `counter` on a pool of the application's made as `spec` says, and that pool
    /// ([`AppPool`](super::AppPool)): for the cases about the application's connections (every
    /// SQL subject has one; the default fails, for etcd and Redis).
    fn app_source(
        url: &str,
        counter: &str,
        spec: super::AppPoolSpec,
    ) -> impl Future<Output = Result<(Self::Source, Box<dyn super::AppPool>), BoxError>> + Send
    {
        let _ = (url, counter, spec);
        async { Err("this subject has no application's pool".into()) }
    }
}

/// The counter kind `H` has on `db` (asking the server for [`CounterUnderTest::Detect`]).
pub(crate) async fn counter_kind<H: HiLoSubject>(db: &Database) -> CounterUnderTest {
    match (H::COUNTER, db.kind()) {
        (CounterUnderTest::Detect, _) => {
            let version = db.version().await;
            let numbers: Vec<u32> = version
                .trim_start_matches("5.5.5-")
                .split(|c: char| !c.is_ascii_digit())
                .take(2)
                .map(|n| n.parse().unwrap_or(0))
                .collect();
            let sequences = version.contains("MariaDB") && (numbers[0], numbers[1]) >= (10, 3);
            if sequences {
                CounterUnderTest::Sequence
            } else {
                CounterUnderTest::Table
            }
        }
        (kind, _) => kind,
    }
}

/// What a script or another language does: takes one block of `step` from the counter with
/// plain SQL, bypassing idgen. Returns the block's first ID.
pub(crate) async fn raw_allocate(db: &Database, kind: CounterUnderTest, step: u64) -> i64 {
    if let Some(keys) = db.key_prefix() {
        return super::key_value::raw_allocate(keys, COUNTER, step).await;
    }
    let start = match (db.kind(), kind) {
        (DbKind::Postgres, _) => db.scalar(&format!("SELECT nextval('{COUNTER}')")).await,
        (DbKind::MySql, CounterUnderTest::Sequence) => {
            db.scalar(&format!("SELECT NEXTVAL({COUNTER})")).await
        }
        (DbKind::MySql, _) => {
            db.scalar_after(
                &format!(
                    "UPDATE {COUNTER_TABLE} SET next_val = LAST_INSERT_ID(next_val + {step}) \
                     WHERE name = '{COUNTER}'"
                ),
                &format!("SELECT CAST(LAST_INSERT_ID() AS SIGNED) - {step}"),
            )
            .await
        }
        (DbKind::Sqlite, _) => {
            db.scalar(&format!(
                "UPDATE {COUNTER_TABLE} SET next_val = next_val + {step} \
                 WHERE name = '{COUNTER}' RETURNING next_val - {step}"
            ))
            .await
        }
        (DbKind::Etcd | DbKind::Redis, _) => unreachable!("taken above"),
    };
    start.expect("the counter exists")
}

/// Sets the counter back to 1, as restoring an older backup of it would.
pub(crate) async fn set_back(db: &Database, kind: CounterUnderTest) {
    set_next(db, kind, 1).await;
}

/// Sets the counter so that the next block anyone takes starts at `next` (on the grid of a
/// sequence), as restoring a backup taken at that point would: `setval` on PostgreSQL,
/// `ALTER SEQUENCE … RESTART` on MariaDB, the row's `next_val`, the key's value.
pub(crate) async fn set_next(db: &Database, kind: CounterUnderTest, next: i64) {
    if let Some(keys) = db.key_prefix() {
        return super::key_value::set_next(keys, COUNTER, next).await;
    }
    let sql = match (db.kind(), kind) {
        (DbKind::Postgres, _) => format!("SELECT setval('{COUNTER}', {next}, false)"),
        (DbKind::MySql, CounterUnderTest::Sequence) => {
            format!("ALTER SEQUENCE {COUNTER} RESTART WITH {next}")
        }
        _ => format!("UPDATE {COUNTER_TABLE} SET next_val = {next} WHERE name = '{COUNTER}'"),
    };
    db.execute(&sql).await;
}

/// A fresh database of `H` with the counter created (increment `block`), and its kind.
pub(crate) async fn setup<H: HiLoSubject>(block: u64) -> (Database, H::Source, CounterUnderTest) {
    let db = Database::fresh(H::DATABASE).await;
    let source = open_source::<H>(db.url()).await;
    H::create(&source, block).await.expect("create the counter");
    let kind = counter_kind::<H>(&db).await;
    (db, source, kind)
}

pub(crate) async fn open_source<H: HiLoSubject>(url: &str) -> H::Source {
    H::source(url, COUNTER).await.expect("a hi-lo source")
}

/// Hi-lo on `source` with blocks of `block` taken only when one is used up (no look-ahead), so
/// a case knows which blocks the counter has given.
async fn without_prefetch<S: HiLoSource>(source: S, block: u64) -> HiLo {
    HiLo::builder(source)
        .block(block)
        .prefetch(false)
        .build()
        .await
        .expect("start hi-lo without prefetch")
}

/// A sequence whose increment differs from the block size is refused, naming both numbers, or
/// adopted on request; a counter table takes any block.
pub async fn the_increment_is_checked_at_start_up<H: HiLoSubject>() {
    let (_db, source, kind) = setup::<H>(50).await;
    let result = HiLo::new(source.clone(), BLOCK).await;
    if kind == CounterUnderTest::Table {
        let ids = result.expect("a counter table takes any block");
        assert_eq!(ids.next_id().await.unwrap(), 1);
        assert_eq!(ids.stats().block_size, BLOCK);
        return;
    }
    let err = result.expect_err("a sequence of 50 refused for a block of 100");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoIncrementMismatch {
                configured: 100,
                database: 50,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("advances by 50"), "{err}");
    let ids = HiLo::builder(source)
        .block(BLOCK)
        .adopt_database_increment(true)
        .build()
        .await
        .unwrap();
    assert_eq!(ids.stats().block_size, 50);
    assert_eq!(ids.next_id().await.unwrap(), 1);
}

/// A counter that was never created (issue 27, item 1): `HiLo::new` creates it on a SQL
/// database, where the counter lives with the rows its IDs key, and finds it again on a
/// restart; a key-value store, which can forget a counter whose IDs live on, refuses. With
/// `create_if_missing(false)` every store refuses, naming what is missing and (on SQL) the
/// migration to run, and creates nothing. A counter name that could not be written into SQL
/// is refused, naming it.
pub async fn a_missing_counter_is_created_at_start_up_or_refused_with_its_migration<
    H: HiLoSubject,
>() {
    let db = Database::fresh(H::DATABASE).await;
    let kind = counter_kind::<H>(&db).await;
    let missing = if let Some(keys) = db.key_prefix() {
        super::key_value::missing_counter(keys, COUNTER)
    } else if kind == CounterUnderTest::Table {
        // The table exists, the row does not.
        let other = H::source(db.url(), "other").await.unwrap();
        H::create(&other, BLOCK).await.unwrap();
        format!("no row '{COUNTER}' in table {COUNTER_TABLE}")
    } else {
        format!("no sequence named {COUNTER}")
    };
    let sql = db.key_prefix().is_none();
    let source = open_source::<H>(db.url()).await;
    assert_eq!(
        source.create_if_missing_by_default(),
        sql,
        "SQL sources create a missing counter by default, key-value stores never"
    );

    let err = HiLo::builder(source.clone())
        .block(BLOCK)
        .create_if_missing(false)
        .build()
        .await
        .expect_err("a missing counter is refused when creation is off");
    let still = source
        .increment()
        .await
        .expect("the source answers")
        .expect_err("nothing was created");
    assert!(still.to_string().contains(&missing), "{still}");
    let ErrorKind::HiLoCounterNotCreated {
        missing: named,
        remedy,
        ..
    } = err.kind()
    else {
        panic!("expected HiLoCounterNotCreated, got {err:?}");
    };
    assert!(named.contains(&missing), "{err}");
    if sql {
        let migration = source.migration_sql(BLOCK).expect("a SQL source has DDL");
        assert!(
            remedy.contains(&migration),
            "{err} does not give {migration}"
        );
    } else {
        assert!(remedy.contains("starts at 1"), "{err}");
    }

    let started = HiLo::new(source.clone(), BLOCK).await;
    if sql {
        let first = started
            .expect("HiLo::new creates the counter")
            .next_id()
            .await;
        assert_eq!(first.unwrap(), 1);
        // A restart finds the counter and goes on above what the first instance took.
        let again = HiLo::new(open_source::<H>(db.url()).await, BLOCK)
            .await
            .expect("HiLo::new on a restart");
        assert!(again.next_id().await.unwrap() > BLOCK as i64);
    } else {
        let err = started.expect_err("a key-value store never recreates a counter");
        assert!(
            matches!(err.kind(), ErrorKind::HiLoCounterNotCreated { .. }),
            "{err:?}"
        );
    }

    let refused = "orders; DROP TABLE x";
    let err = H::source(db.url(), refused).await.err().expect("refused");
    assert!(err.to_string().contains(&format!("{refused:?}")), "{err}");
}

/// Another session holding the counter, from [`hold_the_counter`].
enum Held {
    /// PostgreSQL, MySQL/MariaDB: a transaction of another client.
    Transaction(super::OpenTransaction),
    /// SQLite: another connection holding the file's write lock.
    Lock(super::Outage),
}

/// Makes another session hold the counter until [`let_go`]: on PostgreSQL it is in the middle
/// of creating it (its transaction holds idgen's DDL lock and the uncommitted sequence, as
/// another process starting up, or a migration, would); on MySQL/MariaDB it holds the
/// sequence's or counter table's table lock (`LOCK TABLES … WRITE`); on SQLite the file's write
/// lock (`BEGIN EXCLUSIVE`). Outside PostgreSQL the counter exists first.
async fn hold_the_counter<H: HiLoSubject>(db: &Database, kind: CounterUnderTest) -> Held {
    match db.kind() {
        DbKind::Postgres => {
            let mut other = db.begin().await;
            let create = idgen_sql::CounterSql::sequence(idgen_sql::Dialect::Postgres, COUNTER)
                .expect("the counter's SQL")
                .create_guarded(BLOCK);
            for sql in create {
                other.execute(&sql).await;
            }
            Held::Transaction(other)
        }
        DbKind::MySql => {
            H::create(&open_source::<H>(db.url()).await, BLOCK)
                .await
                .expect("create the counter");
            let locked = match kind {
                CounterUnderTest::Sequence => COUNTER,
                _ => COUNTER_TABLE,
            };
            let mut other = db.begin().await;
            other.execute(&format!("LOCK TABLES {locked} WRITE")).await;
            Held::Transaction(other)
        }
        DbKind::Sqlite => {
            H::create(&open_source::<H>(db.url()).await, BLOCK)
                .await
                .expect("create the counter");
            let (_, mut lock) = db.reachable_until_cut().await;
            lock.cut().await;
            Held::Lock(lock)
        }
        DbKind::Etcd | DbKind::Redis => unreachable!("an SQL case"),
    }
}

/// Ends the hold of [`hold_the_counter`].
async fn let_go(held: Held, kind: DbKind) {
    match held {
        Held::Transaction(mut other) => {
            if kind == DbKind::MySql {
                other.execute("UNLOCK TABLES").await;
            }
            other.rollback().await;
        }
        Held::Lock(mut lock) => lock.restore().await,
    }
}

/// `build()` is bounded by the builder's timeout as a whole, the counter's creation and the
/// increment check included (issue 23, item 3): while another session holds the counter, a
/// build returns within the timeout and a little more, with the typed error naming the timeout
/// and what it was waiting for; once the other session lets go, the same build succeeds.
pub async fn build_returns_within_its_timeout_while_another_session_holds_the_counter<
    H: HiLoSubject,
>() {
    let db = Database::fresh(H::DATABASE).await;
    let kind = counter_kind::<H>(&db).await;
    let held = hold_the_counter::<H>(&db, kind).await;
    let timeout = Duration::from_millis(300);
    let build = HiLo::builder(open_source::<H>(db.url()).await)
        .block(BLOCK)
        .create_if_missing(true)
        .timeout(timeout)
        .build();
    let began = std::time::Instant::now();
    // The guard only stops a build that would wait for ever (today's PostgreSQL one), so the
    // case fails instead of hanging.
    let built = tokio::time::timeout(Duration::from_secs(20), build).await;
    let took = began.elapsed();
    let_go(held, db.kind()).await;
    let err = match built {
        Err(_) => panic!("build() still waited 20 s after its timeout of {timeout:?}"),
        Ok(Ok(_)) => panic!("build() succeeded while another session held the counter"),
        Ok(Err(err)) => err,
    };
    // What it waited for depends on what the other session's hold blocks: the creation
    // (PostgreSQL: the sequence is being created), the increment check (MySQL/MariaDB: a
    // table lock blocks the read), or the first block (SQLite in WAL mode reads on, and the
    // counter exists, so start-up creates nothing and waits for its first block).
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoStartTimeout {
                timeout_ms: 300,
                waiting_for: "the counter's creation" | "the counter's increment check",
                ..
            } | ErrorKind::HiLoUnavailable { .. }
        ),
        "{err:?} after {took:?}"
    );
    // The message names the wait: the whole timeout, or how long the first block was waited
    // for (the rest of the timeout, and the scheduling delay of a loaded machine).
    let waited = match err.kind() {
        ErrorKind::HiLoUnavailable { waited_ms, .. } => *waited_ms,
        _ => 300,
    };
    assert!(
        u128::from(waited) <= took.as_millis() + 1,
        "{err} after {took:?}"
    );
    assert!(err.to_string().contains(&format!("{waited} ms")), "{err}");
    // Generous for a loaded machine, and far below what the database would wait by itself
    // (SQLite's busy timeout is 5 s; PostgreSQL and MariaDB wait for the lock for ever).
    assert!(
        took < timeout + Duration::from_millis(2_000),
        "build() returned {took:?} after it began, its timeout being {timeout:?}"
    );
    let ids = HiLo::builder(open_source::<H>(db.url()).await)
        .block(BLOCK)
        .create_if_missing(true)
        .timeout(Duration::from_secs(20))
        .build()
        .await
        .expect("the build succeeds once the other session let go");
    assert!(ids.next_id().await.unwrap() >= 1);
}

/// Pooled-lo exactly: with a block of 7 and no prefetch, nine IDs are 1..=9 from two blocks,
/// [1, 8) and [8, 15), and the next block anyone takes starts at 15.
pub async fn blocks_follow_pooled_lo_arithmetic<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(7).await;
    let ids = without_prefetch(source, 7).await;
    let mut got = Vec::new();
    for _ in 0..9 {
        got.push(ids.next_id().await.unwrap());
    }
    assert_eq!(got, (1..=9).collect::<Vec<i64>>());
    assert_eq!(raw_allocate(&db, kind, 7).await, 15);
}

/// `allocate_blocks` gives distinct blocks of the counter, each on the block grid and below
/// the next block anyone takes; a PostgreSQL sequence gives all that were asked for in its one
/// statement (the look-ahead relies on it to cover a slow fetch without several in flight).
pub async fn several_blocks_in_one_call_are_distinct_blocks_of_the_counter<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(10).await;
    let starts = source.allocate_blocks(10, 5).await.unwrap();
    assert!(!starts.is_empty());
    if db.kind() == DbKind::Postgres {
        assert_eq!(starts.len(), 5, "{starts:?}");
    }
    let distinct: std::collections::HashSet<i64> = starts.iter().copied().collect();
    assert_eq!(distinct.len(), starts.len(), "a block twice: {starts:?}");
    assert!(
        starts.iter().all(|s| (s - 1) % 10 == 0),
        "off the grid: {starts:?}"
    );
    let next = raw_allocate(&db, kind, 10).await;
    assert!(starts.iter().all(|s| *s < next), "{starts:?} then {next}");
    let again = source.allocate_blocks(10, 3).await.unwrap();
    assert!(again.iter().all(|s| *s > next), "{again:?} after {next}");
}

/// The source never joins a caller's transaction: a block taken while the caller's transaction
/// is open stays taken after that transaction rolls back.
pub async fn a_rolled_back_caller_transaction_does_not_return_a_block<H: HiLoSubject>() {
    let (db, source, _kind) = setup::<H>(BLOCK).await;
    let open = db.begin().await;
    let first = source.allocate(BLOCK).await.unwrap();
    open.rollback().await;
    assert_eq!(first, 1);
    assert_eq!(source.allocate(BLOCK).await.unwrap(), 1 + BLOCK as i64);
}

/// A counter set back (a restored backup, a lagging replica) is caught at the next block: the
/// generator fails closed instead of handing out IDs again.
pub async fn a_counter_set_back_fails_closed<H: HiLoSubject>() {
    let (db, source, kind) = setup::<H>(10).await;
    let ids = without_prefetch(source, 10).await;
    for expected in 1..=15 {
        assert_eq!(ids.next_id().await.unwrap(), expected);
    }
    set_back(&db, kind).await;
    let err = loop {
        match ids.next_id().await {
            Ok(id) => assert!(
                id <= 20,
                "{id} is not from the block taken before the reset"
            ),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(
            err.kind(),
            ErrorKind::HiLoCounterWentBackwards {
                start: 1,
                highest: 20,
                ..
            }
        ),
        "{err:?}"
    );
}

/// The database goes away: buffered IDs keep coming, then a typed error, never a duplicate;
/// once it is back, the generator recovers by itself, and nothing issued is issued again.
pub async fn the_database_going_away_and_coming_back<H: HiLoSubject>() {
    let (db, _direct, kind) = setup::<H>(BLOCK).await;
    let (url, mut outage) = db.reachable_until_cut().await;
    // At most 4 blocks buffered (the look-ahead would buffer more at this flat-out rate), so
    // the bound below (10 blocks) tells a buffer from a database that is not down.
    let ids = HiLo::builder(open_source::<H>(&url).await)
        .block(BLOCK)
        .max_buffered_blocks(4)
        // Also bounds `build()`, whose first connection can take a second on a loaded machine.
        .timeout(Duration::from_secs(2))
        .backoff(Duration::from_millis(20), Duration::from_millis(200))
        .build()
        .await
        .unwrap();
    let mut issued = Vec::new();
    for _ in 0..250 {
        issued.push(ids.next_id().await.unwrap());
    }
    for _ in 0..100 {
        if ids.stats().buffered >= BLOCK {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let buffered = ids.stats().buffered;
    assert!(buffered >= BLOCK, "buffered {buffered}");

    outage.cut().await;
    let mut served_while_down = 0_u64;
    let err = loop {
        match ids.next_id().await {
            Ok(id) => {
                issued.push(id);
                served_while_down += 1;
                assert!(
                    served_while_down <= 10 * BLOCK,
                    "IDs keep coming while down"
                );
            }
            Err(err) => break err,
        }
    };
    assert!(
        matches!(err.kind(), ErrorKind::HiLoUnavailable { .. }),
        "{err:?}"
    );
    assert!(
        served_while_down >= buffered,
        "{served_while_down} < {buffered}"
    );
    assert_eq!(ids.try_next_id().unwrap(), None);

    outage.restore().await;
    let recovered = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Ok(id) = ids.next_id().await {
                return id;
            }
        }
    })
    .await
    .expect("recovers after the database is back");
    issued.push(recovered);
    for _ in 0..500 {
        issued.push(ids.next_id().await.unwrap());
    }
    assert!(issued.windows(2).all(|w| w[0] < w[1]), "increasing");
    assert!(raw_allocate(&db, kind, BLOCK).await > *issued.last().unwrap());
}

/// On a MariaDB server whose sessions start with autocommit off, every block is committed at
/// once: another connection sees the counter advanced while the generator's connection is still
/// open, and a new generator never gets a block again.
pub async fn blocks_are_committed_on_a_server_without_autocommit<H: HiLoSubject>() {
    assert_eq!(H::DATABASE, DbKind::MySql);
    let db = Database::fresh_with_autocommit_off().await;
    assert_eq!(db.scalar("SELECT @@GLOBAL.autocommit").await, Some(0));
    let source = open_source::<H>(db.url()).await;
    H::create(&source, 10).await.unwrap();
    let kind = counter_kind::<H>(&db).await;
    let ids = without_prefetch(source, 10).await;
    assert_eq!(ids.next_id().await.unwrap(), 1);
    let committed = match kind {
        CounterUnderTest::Sequence => format!("SELECT next_not_cached_value FROM {COUNTER}"),
        _ => format!("SELECT next_val FROM {COUNTER_TABLE} WHERE name = '{COUNTER}'"),
    };
    assert_eq!(
        db.scalar(&committed).await,
        Some(11),
        "the block [1, 11) is not committed"
    );
    drop(ids);
    let again = without_prefetch(open_source::<H>(db.url()).await, 10).await;
    assert_eq!(again.next_id().await.unwrap(), 11);
}

/// Processes drawing at once, and what each draws.
const PROCESSES: usize = 4;
const TASKS: usize = 4;
const IDS_PER_TASK: usize = 10_000;

fn spawn_drawer(children: &Children, url: &str, out: &std::path::Path) -> Child {
    children.spawn(
        "draw",
        &[("URL", url.to_owned()), ("OUT", out.display().to_string())],
    )
}

/// Reads a drawer's file: `task id` lines; checks each task's IDs increase.
fn drawn(out: &std::path::Path) -> Vec<i64> {
    let text = std::fs::read_to_string(out).expect("the child's IDs");
    let mut last = [0_i64; TASKS];
    let mut count = [0_usize; TASKS];
    let mut ids = Vec::with_capacity(TASKS * IDS_PER_TASK);
    for line in text.lines() {
        let (task, id) = line.split_once(' ').expect("`task id`");
        let (task, id): (usize, i64) = (task.parse().unwrap(), id.parse().unwrap());
        assert!(id > last[task], "task {task}: {id} after {}", last[task]);
        last[task] = id;
        count[task] += 1;
        ids.push(id);
    }
    assert_eq!(count, [IDS_PER_TASK; TASKS]);
    ids
}

/// Four processes of four tasks draw 10,000 IDs per task from one counter while plain SQL takes
/// blocks from it too (as a script would): every ID is distinct and positive, increasing per
/// task, and none falls in a block the script took.
pub async fn four_processes_and_a_script_share_one_counter<H: HiLoSubject>(children: Children) {
    let (db, _source, kind) = setup::<H>(BLOCK).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut procs: Vec<(Child, std::path::PathBuf)> = (0..PROCESSES)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            (spawn_drawer(&children, db.url(), &out), out)
        })
        .collect();
    let mut raw_blocks = Vec::new();
    let mut done = 0;
    for (child, _) in &mut procs {
        child.line("READY").await;
    }
    for (child, _) in &mut procs {
        child.send("GO").await;
    }
    while done < PROCESSES {
        let start = raw_allocate(&db, kind, BLOCK).await;
        raw_blocks.push(start..start + BLOCK as i64);
        tokio::time::sleep(Duration::from_millis(20)).await;
        done = 0;
        for (_, out) in &procs {
            if out.with_extension("done").exists() {
                done += 1;
            }
        }
    }
    let start = raw_allocate(&db, kind, BLOCK).await;
    raw_blocks.push(start..start + BLOCK as i64);

    let mut all = HashSet::with_capacity(PROCESSES * TASKS * IDS_PER_TASK);
    for (child, out) in procs {
        child.finish().await;
        for id in drawn(&out) {
            assert!(id >= 1);
            assert!(all.insert(id), "ID {id} handed out twice");
        }
    }
    assert_eq!(all.len(), PROCESSES * TASKS * IDS_PER_TASK);
    assert!(raw_blocks.len() >= 2, "{raw_blocks:?}");
    for block in &raw_blocks {
        assert!(
            !block.clone().any(|id| all.contains(&id)),
            "the script's block {block:?} was handed out too"
        );
    }
}

/// Two child processes on source `H` and this process on source `T` (another adapter on the
/// same database and counter) draw at once: every ID is distinct.
pub async fn processes_of_two_adapters_share_one_counter<H, T>(children: Children)
where
    H: HiLoSubject,
    T: HiLoSubject,
{
    assert_eq!(H::DATABASE, T::DATABASE);
    let (db, _source, _kind) = setup::<H>(BLOCK).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut procs: Vec<(Child, std::path::PathBuf)> = (0..2)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            (spawn_drawer(&children, db.url(), &out), out)
        })
        .collect();
    for (child, _) in &mut procs {
        child.line("READY").await;
        child.send("GO").await;
    }
    let here = HiLo::new(T::source(db.url(), COUNTER).await.unwrap(), BLOCK)
        .await
        .unwrap();
    let mut all = HashSet::new();
    for _ in 0..TASKS * IDS_PER_TASK {
        assert!(all.insert(here.next_id().await.unwrap()));
    }
    for (child, out) in procs {
        child.finish().await;
        for id in drawn(&out) {
            assert!(all.insert(id), "ID {id} drawn by both adapters");
        }
    }
    assert_eq!(all.len(), 3 * TASKS * IDS_PER_TASK);
}

/// The child side of the hi-lo cases (a no-op in a normal test run): `TASKS` tasks draw
/// `IDS_PER_TASK` IDs each from one `HiLo`, after the parent says `GO`.
pub fn child_main<H: HiLoSubject>() {
    if child::role().as_deref() != Some("draw") {
        return;
    }
    child::runtime().block_on(async {
        let url = child::var("URL");
        let out = std::path::PathBuf::from(child::var("OUT"));
        let ids = HiLo::builder(open_source::<H>(&url).await)
            .block(BLOCK)
            .timeout(Duration::from_secs(30))
            .build()
            .await
            .expect("start hi-lo in the child");
        let mut orders = child::Orders::new();
        say("READY", "ok");
        assert_eq!(orders.next().await.as_deref(), Some("GO"));
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let ids = ids.clone();
                tokio::spawn(async move {
                    let mut got = Vec::with_capacity(IDS_PER_TASK);
                    for _ in 0..IDS_PER_TASK {
                        got.push(ids.next_id().await.expect("an ID"));
                    }
                    got
                })
            })
            .collect();
        let mut text = String::new();
        for (task, handle) in tasks.into_iter().enumerate() {
            for id in handle.await.expect("a drawing task") {
                text.push_str(&format!("{task} {id}\n"));
            }
        }
        std::fs::write(&out, text).expect("write the IDs");
        std::fs::write(out.with_extension("done"), "").expect("mark the IDs written");
        while orders.next().await.is_some() {}
    });
}
