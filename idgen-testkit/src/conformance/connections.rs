//! The application's connections after idgen's calls: a store or a source made on a pool of
//! the application's ([`AppPool`]), calls cancelled at their statements by a gate in the
//! database, and then every connection of that pool checked: no open transaction, the settings
//! it had, and a write of the application's on it seen by another session.

use std::future::Future;
use std::time::Duration;

use idgen_engine::hilo::{BoxError, HiLoSource};
use idgen_engine::lease::{LeaseStore, WorkerLease};

use super::app_pool::{AppFuture, AppPool, AppPoolSpec};
use super::database::OpenTransaction;
use super::hilo::{COUNTER, COUNTER_TABLE, CounterUnderTest, HiLoSubject, counter_kind};
use super::lease::{LeaseSubject, TABLE, claim, layout, renewal};
use super::{Database, DbKind, Outage};

/// The gate a case closes on the statements that change the lease table or the counter: on
/// PostgreSQL and MariaDB a `BEFORE UPDATE` trigger that sleeps [`GATE_SLEEP`] while the gate
/// is closed, on SQLite another connection holding the file's write lock, on a PostgreSQL
/// sequence another session's `ALTER SEQUENCE` (which `nextval` waits for), none on a MariaDB
/// sequence (the caller's deadlines alone).
enum Gate {
    Trigger,
    Lock(Outage),
    Sequence(Option<OpenTransaction>),
    None,
}

/// How long a gated statement sleeps in the trigger.
const GATE_SLEEP: &str = "0.5";
/// The caller's deadlines: before, at and after the statements that reach the gate.
const DEADLINES_MS: [u64; 3] = [2, 30, 250];

impl Gate {
    /// A gate on the `column` of `table` (unquoted), open.
    async fn install(db: &Database, table: &str, column: &str) -> Gate {
        let quoted = db.quoted(table);
        match db.kind() {
            DbKind::Postgres => {
                db.execute(
                    "CREATE TABLE idgen_test_gate (closed INTEGER NOT NULL);
                     INSERT INTO idgen_test_gate VALUES (0);",
                )
                .await;
                db.execute(&format!(
                    "CREATE OR REPLACE FUNCTION idgen_test_gate_sleep() RETURNS trigger \
                     LANGUAGE plpgsql AS $$ BEGIN \
                     IF (SELECT closed FROM idgen_test_gate) = 1 THEN PERFORM pg_sleep({GATE_SLEEP}); END IF; \
                     RETURN NEW; END $$"
                ))
                .await;
                db.execute(&format!(
                    "CREATE TRIGGER idgen_test_gate BEFORE UPDATE ON {quoted} \
                     FOR EACH ROW EXECUTE FUNCTION idgen_test_gate_sleep()"
                ))
                .await;
                Gate::Trigger
            }
            DbKind::MySql => {
                db.execute("CREATE TABLE idgen_test_gate (closed INT NOT NULL)")
                    .await;
                db.execute("INSERT INTO idgen_test_gate VALUES (0)").await;
                db.execute(&format!(
                    "CREATE TRIGGER idgen_test_gate BEFORE UPDATE ON {quoted} FOR EACH ROW \
                     SET NEW.{column} = IF((SELECT closed FROM idgen_test_gate) = 1 \
                     AND SLEEP({GATE_SLEEP}) = 0, NEW.{column}, NEW.{column})"
                ))
                .await;
                Gate::Trigger
            }
            DbKind::Sqlite => Gate::Lock(db.reachable_until_cut().await.1),
            DbKind::Etcd | DbKind::Redis => unreachable!("SQL cases only"),
        }
    }

    async fn close(&mut self, db: &Database) {
        match self {
            Gate::Trigger => db.execute("UPDATE idgen_test_gate SET closed = 1").await,
            Gate::Lock(lock) => lock.cut().await,
            Gate::Sequence(held) => {
                let mut tx = db.begin().await;
                if let OpenTransaction::Postgres(conn) = &mut tx {
                    use sqlx::Executor;
                    (&mut **conn)
                        .execute(sqlx::AssertSqlSafe(format!(
                            "ALTER SEQUENCE {COUNTER} NO CYCLE"
                        )))
                        .await
                        .expect("ALTER SEQUENCE in an open transaction");
                }
                *held = Some(tx);
            }
            Gate::None => {}
        }
    }

    async fn open(&mut self, db: &Database) {
        match self {
            Gate::Trigger => db.execute("UPDATE idgen_test_gate SET closed = 0").await,
            Gate::Lock(lock) => lock.restore().await,
            Gate::Sequence(held) => {
                if let Some(tx) = held.take() {
                    tx.rollback().await;
                }
            }
            Gate::None => {}
        }
    }
}

/// The application's table its writes go to.
const APP_TABLE: &str = "app_writes";

/// Every connection of `app` is outside any transaction, has `autocommit` (MariaDB), and a write
/// of the application's on each one (committed the application's way: with `COMMIT` when its
/// connections run with `autocommit=0`) is seen at once by another session. `writes` counts the
/// application's writes so far.
async fn assert_left_as_found(
    db: &Database,
    app: &dyn AppPool,
    autocommit: i64,
    writes: &mut i64,
    after: &str,
) {
    match db.kind() {
        DbKind::MySql => {
            let open = app
                .scalar_each("SELECT CAST(@@in_transaction AS SIGNED) AS value")
                .await
                .expect("@@in_transaction");
            assert!(
                open.iter().all(|o| *o == Some(0)),
                "after {after}: a connection of the application's pool is inside a transaction: {open:?}"
            );
            let modes = app
                .scalar_each("SELECT CAST(@@autocommit AS SIGNED) AS value")
                .await
                .expect("@@autocommit");
            assert!(
                modes.iter().all(|m| *m == Some(autocommit)),
                "after {after}: the application's autocommit={autocommit} was changed: {modes:?}"
            );
        }
        DbKind::Postgres => {
            // A transaction that wrote (idgen's would have) has a transaction ID assigned; a
            // statement of its own has none.
            let open = app
                .scalar_each(
                    "SELECT CAST(CASE WHEN txid_current_if_assigned() IS NULL THEN 0 ELSE 1 END AS BIGINT) AS value",
                )
                .await
                .expect("txid_current_if_assigned()");
            assert!(
                open.iter().all(|o| *o == Some(0)),
                "after {after}: a connection of the application's pool is inside a transaction: {open:?}"
            );
        }
        _ => {}
    }
    let connections = app
        .scalar_each(&format!("SELECT COUNT(*) AS value FROM {APP_TABLE}"))
        .await
        .expect("the application's connections")
        .len() as i64;
    app.execute_each(&format!("INSERT INTO {APP_TABLE} (x) VALUES (1)"))
        .await
        .expect("the application's write");
    // The application's way: on `autocommit=0` connections its reads and writes above are
    // in a transaction until it commits.
    if autocommit == 0 {
        app.execute_each("COMMIT")
            .await
            .expect("the application's commit");
    }
    *writes += connections;
    assert_eq!(
        db.scalar(&format!("SELECT COUNT(*) FROM {APP_TABLE}"))
            .await,
        Some(*writes),
        "after {after}: a write of the application's is not seen by another session"
    );
}

/// Runs `call` with the caller's deadline `ms`, expecting it cut short.
async fn cut<T, F: Future<Output = T>>(ms: u64, call: F) -> bool {
    tokio::time::timeout(Duration::from_millis(ms), call)
        .await
        .is_err()
}

/// The node space of the lease cases (claims that land after their caller gave up take some).
const CAPACITY: u64 = 16;

/// The application's pool of two connections each case uses.
const APP: AppPoolSpec = AppPoolSpec {
    size: 2,
    on_connect: None,
};

/// Claims, renewals and releases cancelled at their statements (a gate in the database holds
/// the statements that change the lease table; the caller's `tokio::time::timeout` of a few
/// milliseconds to a quarter second, and the store time-out of a `WorkerLease`): afterwards
/// every connection of the application's pool the store runs on has no open transaction and
/// its settings, and a write of the application's on it is seen by another session.
pub async fn a_cancelled_call_leaves_the_applications_connections_as_they_were<S: LeaseSubject>() {
    let db = Database::fresh(S::DATABASE).await;
    let (store, app) = S::app_store(db.url(), TABLE, APP)
        .await
        .expect("a store on an application's pool");
    S::create_table(&store).await.expect("the lease table");
    db.execute(&format!("CREATE TABLE {APP_TABLE} (x INTEGER)"))
        .await;
    let mut gate = Gate::install(&db, TABLE, "holder").await;
    let mut writes = 0;

    for ms in DEADLINES_MS {
        // A node ID to renew and release (the gate holds only statements that change a row).
        let holder = format!("held-{ms}");
        let held = store
            .claim(claim(&holder, CAPACITY))
            .await
            .expect("a claim")
            .expect("a free node ID");
        gate.close(&db).await;
        let cancelled = [
            cut(ms, store.claim(claim("cancelled", CAPACITY))).await,
            cut(ms, store.renew(renewal(held.node, &holder, None))).await,
            cut(ms, store.release(renewal(held.node, &holder, None))).await,
        ];
        gate.open(&db).await;
        assert!(
            cancelled.iter().any(|c| *c),
            "the gate held no call past {ms} ms: {cancelled:?}"
        );
        let after = format!("calls cancelled after {ms} ms");
        assert_left_as_found(&db, &*app, 1, &mut writes, &after).await;
    }

    // The store's own time-out: a claim and a release of a `WorkerLease`.
    let options = || {
        WorkerLease::options()
            .capacity(CAPACITY)
            .store_timeout(Duration::from_millis(250))
    };
    gate.close(&db).await;
    let claimed = options().acquire(store.clone(), &layout(4)).await;
    gate.open(&db).await;
    assert_left_as_found(
        &db,
        &*app,
        1,
        &mut writes,
        "a claim cut by the store time-out",
    )
    .await;
    let lease = match claimed {
        Ok(lease) => lease,
        Err(_) => options()
            .acquire(store.clone(), &layout(4))
            .await
            .expect("a claim with the gate open"),
    };
    let handle = lease.handle();
    gate.close(&db).await;
    let released = handle.release().await;
    gate.open(&db).await;
    assert_left_as_found(
        &db,
        &*app,
        1,
        &mut writes,
        "a release cut by the store time-out",
    )
    .await;
    if released.is_err() {
        let _ = handle.release().await;
    }
    drop(lease);
    // Statements of closed connections still sleeping in the trigger end before the database
    // is dropped.
    tokio::time::sleep(Duration::from_millis(600)).await;
}

/// The lease row of `node` in the default namespace, and all the rows (for messages).
async fn row_of(db: &Database, node: u64) -> (super::LeaseRow, Vec<super::LeaseRow>) {
    let rows = db.lease_rows(TABLE, "default").await;
    let row = rows
        .iter()
        .find(|r| r.node == node)
        .expect("its row")
        .clone();
    (row, rows)
}

/// A store on an application's pool of `size` connections that run with `autocommit=0`.
async fn autocommit_off_store<S: LeaseSubject>(
    db: &Database,
    size: u32,
) -> (S::Store, Box<dyn AppPool>) {
    let spec = AppPoolSpec {
        size,
        on_connect: Some("SET autocommit = 0"),
    };
    S::app_store(db.url(), TABLE, spec)
        .await
        .expect("a store on an application's pool")
}

/// An application whose connections run with `autocommit=0` (MariaDB, set by the pool's
/// `after_connect`): idgen claims, renews and releases on them, every write committed at once
/// (seen by another session), and leaves each connection with `autocommit=0` and outside any
/// transaction. A connection the application gives back inside its own (uncommitted)
/// transaction is left alone: idgen's call fails, and the application's write is neither
/// committed nor rolled back by idgen.
pub async fn an_autocommit_off_pool_keeps_its_setting_and_gets_committed_writes<S: LeaseSubject>() {
    assert_eq!(S::DATABASE, DbKind::MySql);
    let db = Database::fresh(S::DATABASE).await;
    db.execute(&format!("CREATE TABLE {APP_TABLE} (x INTEGER)"))
        .await;
    let (store, app) = autocommit_off_store::<S>(&db, 2).await;
    S::create_table(&store).await.expect("the lease table");
    let mut writes = 0;
    assert_left_as_found(&db, &*app, 0, &mut writes, "creating the table").await;

    let lease = WorkerLease::options()
        .holder("off")
        .capacity(4)
        .acquire(store.clone(), &layout(2))
        .await
        .expect("a claim on autocommit=0 connections");
    let (row, rows) = row_of(&db, lease.node()).await;
    assert_eq!(
        row.holder.as_deref(),
        Some(lease.holder()),
        "the claim is not committed: {rows:?}"
    );
    assert_left_as_found(&db, &*app, 0, &mut writes, "a claim").await;
    let last = super::lease::now_ms() + 3_600_000;
    assert!(
        store
            .renew(renewal(lease.node(), lease.holder(), Some(last)))
            .await
            .expect("a renewal")
    );
    let (row, _) = row_of(&db, lease.node()).await;
    assert_eq!(
        row.last_timestamp_ms,
        Some(last),
        "the renewal is not committed"
    );
    assert_left_as_found(&db, &*app, 0, &mut writes, "a renewal").await;
    let node = lease.node();
    lease.handle().release().await.expect("a release");
    let rows = db.lease_rows(TABLE, "default").await;
    let row = rows.iter().find(|r| r.node == node).expect("its row");
    assert_eq!(row.holder, None, "the release is not committed");
    assert_left_as_found(&db, &*app, 0, &mut writes, "a release").await;

    // One connection, given back with the application's transaction open.
    let (store, app) = autocommit_off_store::<S>(&db, 1).await;
    app.execute_each(&format!("INSERT INTO {APP_TABLE} (x) VALUES (2)"))
        .await
        .expect("the application's uncommitted write");
    let outcome = store.renew(renewal(node, "off", None)).await;
    assert!(
        outcome.is_err(),
        "idgen ran inside the application's transaction: {outcome:?}"
    );
    let pending = format!("SELECT COUNT(*) FROM {APP_TABLE} WHERE x = 2");
    assert_eq!(
        db.scalar(&pending).await,
        Some(0),
        "idgen committed the application's pending write"
    );
    app.execute_each("COMMIT")
        .await
        .expect("the application's commit");
    assert_eq!(
        db.scalar(&pending).await,
        Some(1),
        "idgen rolled back the application's pending write"
    );
}

/// Block allocations cancelled at their statement (a gate on the counter, the caller's
/// deadlines): afterwards every connection of the application's pool the source was made on
/// has no open transaction and its settings, and a write of the application's on it is seen
/// by another session; on MariaDB a pool whose connections run with `autocommit=0` keeps that
/// setting and every block is committed at once.
pub async fn a_cancelled_allocation_leaves_the_applications_connections_as_they_were<
    H: HiLoSubject,
>() {
    let db = Database::fresh(H::DATABASE).await;
    db.execute(&format!("CREATE TABLE {APP_TABLE} (x INTEGER)"))
        .await;
    let mysql = db.kind() == DbKind::MySql;
    let specs: &[(AppPoolSpec, i64)] = if mysql {
        &[
            (APP, 1),
            (
                AppPoolSpec {
                    size: 2,
                    on_connect: Some("SET autocommit = 0"),
                },
                0,
            ),
        ]
    } else {
        &[(APP, 1)]
    };
    let mut writes = 0;
    let mut gate = None;
    for &(spec, autocommit) in specs {
        let (source, app) = H::app_source(db.url(), COUNTER, spec)
            .await
            .expect("a source on an application's pool");
        H::create(&source, 10).await.expect("the counter");
        let kind = counter_kind::<H>(&db).await;
        if gate.is_none() {
            gate = Some(match (db.kind(), kind) {
                (DbKind::Postgres, _) => Gate::Sequence(None),
                (DbKind::MySql, CounterUnderTest::Sequence) => Gate::None,
                _ => Gate::install(&db, COUNTER_TABLE, "next_val").await,
            });
        }
        let gate = gate.as_mut().expect("installed above");
        let first = source.allocate(10).await.expect("a block");
        let committed = committed_counter(&db, kind).await;
        assert!(
            committed > first,
            "the block at {first} is not committed (the counter reads {committed})"
        );
        assert_left_as_found(&db, &*app, autocommit, &mut writes, "an allocation").await;
        for ms in DEADLINES_MS {
            gate.close(&db).await;
            let _ = cut(ms, source.allocate(10)).await;
            gate.open(&db).await;
            let after = format!("an allocation cancelled after {ms} ms");
            assert_left_as_found(&db, &*app, autocommit, &mut writes, &after).await;
        }
        let next = source.allocate(10).await.expect("a block");
        assert!(next > first, "{next} after {first}");
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
}

/// What another session reads as the counter's next value.
async fn committed_counter(db: &Database, kind: CounterUnderTest) -> i64 {
    let sql = match (db.kind(), kind) {
        (DbKind::Postgres, _) => format!("SELECT last_value + 10 FROM {COUNTER}"),
        (DbKind::MySql, CounterUnderTest::Sequence) => {
            format!("SELECT next_not_cached_value FROM {COUNTER}")
        }
        _ => format!("SELECT next_val FROM {COUNTER_TABLE} WHERE name = '{COUNTER}'"),
    };
    db.scalar(&sql).await.expect("the counter")
}

/// An application's sqlx pool made as `spec` says, and it as an [`AppPool`]: for the subjects
/// of idgen-sqlx and idgen-seaorm (whose stores run on the sqlx pool behind a
/// `DatabaseConnection`).
macro_rules! sqlx_app_pool {
    ($(#[$doc:meta])* $name:ident, $db:ty, $options:ty, $extra:expr) => {
        $(#[$doc])*
        ///
        /// # Errors
        ///
        /// A URL the driver refuses.
        pub fn $name(
            url: &str,
            spec: AppPoolSpec,
        ) -> Result<(sqlx::Pool<$db>, Box<dyn AppPool>), BoxError> {
            use std::str::FromStr;
            let extra: fn($options) -> $options = $extra;
            let options = extra(<$options>::from_str(url)?);
            let on_connect = spec.on_connect;
            let pool = sqlx::pool::PoolOptions::<$db>::new()
                .max_connections(spec.size)
                .after_connect(move |conn, _| {
                    Box::pin(async move {
                        if let Some(sql) = on_connect {
                            sqlx::Executor::execute(&mut *conn, sql).await?;
                        }
                        Ok(())
                    })
                })
                .connect_lazy_with(options);
            let app = SqlxApp {
                pool: pool.clone(),
                size: spec.size,
            };
            Ok((pool, Box::new(app)))
        }

        impl AppPool for SqlxApp<$db> {
            fn scalar_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, Vec<Option<i64>>> {
                Box::pin(async move {
                    let mut conns = Vec::new();
                    for _ in 0..self.size {
                        conns.push(self.pool.acquire().await?);
                    }
                    let mut values = Vec::new();
                    for conn in &mut conns {
                        let value: Option<i64> =
                            sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
                                .fetch_optional(&mut **conn)
                                .await?;
                        values.push(value);
                    }
                    Ok(values)
                })
            }

            fn execute_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, ()> {
                Box::pin(async move {
                    let mut conns = Vec::new();
                    for _ in 0..self.size {
                        conns.push(self.pool.acquire().await?);
                    }
                    for conn in &mut conns {
                        sqlx::Executor::execute(&mut **conn, sqlx::AssertSqlSafe(sql.to_owned()))
                            .await?;
                    }
                    Ok(())
                })
            }
        }
    };
}

/// An sqlx pool as an [`AppPool`].
struct SqlxApp<DB: sqlx::Database> {
    pool: sqlx::Pool<DB>,
    size: u32,
}

sqlx_app_pool!(
    /// A PostgreSQL pool of the application's.
    postgres_app_pool,
    sqlx::Postgres,
    sqlx::postgres::PgConnectOptions,
    |options| options
);
sqlx_app_pool!(
    /// A MySQL/MariaDB pool of the application's.
    mysql_app_pool,
    sqlx::MySql,
    sqlx::mysql::MySqlConnectOptions,
    |options| options
);
sqlx_app_pool!(
    /// An SQLite pool of the application's (writers wait up to 30 s for each other).
    sqlite_app_pool,
    sqlx::Sqlite,
    sqlx::sqlite::SqliteConnectOptions,
    |options| options.busy_timeout(Duration::from_secs(30))
);
