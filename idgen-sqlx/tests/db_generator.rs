//! The database-side generator (`idgen_next_id()`) on real PostgreSQL and MariaDB servers:
//! concurrent SQL sessions next to applications with leases, a tick's worth of inserts in one
//! statement, a clock step back under each policy, install and uninstall.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use idgen_sqlx::Dialect;
use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::lease::{SqlxLeaseStore, WorkerLease};
use idgen_sqlx::{ClockPolicy, CoreError, ErrorKind, Layout, Snowflake, SnowflakeId};

mod common;

/// SQL sessions and application tasks inserting at once, and rows each inserts.
const SESSIONS: usize = 8;
const APPS: usize = 4;
const ROWS_EACH: usize = 150;

/// The generator for `layout` on a fresh database, where no holder can have been forgotten:
/// installs skip the takeover wait (tests of the wait set it back).
fn fresh(layout: Layout) -> DbGenerator {
    DbGenerator::new(layout).skip_takeover_wait_for_tests_and_development(true)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A layout whose ticks are 100 ms with 8 IDs each: a tick is easy to fill in one statement.
fn small_tick_layout() -> Layout {
    Layout::builder()
        .epoch_ms(1_767_225_600_000)
        .unit_ms(100)
        .timestamp_bits(40)
        .node_bits(10)
        .sequence_bits(3)
        .build()
        .unwrap()
}

macro_rules! db_generator_cases {
    (
        $module:ident, $db:ty, $testdb:path, $dialect:expr,
        create_table: $create:expr,
        now_ms: $now:expr,
        insert_default: $insert_default:expr,
        insert_app: $insert_app:expr,
        insert_burst: $insert_burst:expr,
        plant: $plant:path,
        free_lease: $free_lease:expr,
        forget_holder: $forget_holder:expr,
        replace_row: $replace_row:expr,
        isolation: [$($begin:expr),+],
        sessions: [$($session_setup:expr),+],
        decode: $decode:expr,
        min_id_at: $min_id_at:expr,
        max_id_at: $max_id_at:expr $(,)?
    ) => {
        mod $module {
            use super::*;

            type Pool = sqlx::Pool<$db>;

            /// A fresh database, and a pool of up to 24 connections to it.
            async fn database() -> (idgen_testkit::TestDb<$db>, Pool) {
                common::sql::database($testdb(), 24).await
            }

            /// The lease row of `node` in the default namespace.
            async fn lease_row(store: &SqlxLeaseStore<$db>, node: u64) -> idgen_sqlx::lease::LeaseRow {
                let rows = store.rows("default").await.unwrap();
                rows.into_iter().find(|r| r.node == node).unwrap()
            }

            /// The generator for `layout`, installed, and the table `t` taking its IDs; its node.
            async fn installed_with_table(pool: &Pool, layout: Layout) -> (DbGenerator, u64) {
                let generator = fresh(layout);
                let node = db_generator::install(pool, &generator).await.unwrap();
                table_with_default(pool, &generator).await;
                (generator, node)
            }

            /// The table `t` with `id` taking the function's IDs by default.
            async fn table_with_default(pool: &Pool, generator: &DbGenerator) {
                sqlx::raw_sql($create).execute(pool).await.unwrap();
                let default = generator.column_default_sql($dialect, "t", "id").unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(default))
                    .execute(pool)
                    .await
                    .unwrap();
            }

            fn insert_default() -> String {
                format!($insert_default, now = $now)
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sql_sessions_and_apps_with_leases_never_share_an_id() {
                let (_db, pool) = database().await;
                let layout = Layout::TWITTER;
                let generator = fresh(layout);
                let db_node = db_generator::install(&pool, &generator).await.unwrap();
                table_with_default(&pool, &generator).await;

                // Every app holds its lease until all of them hold one: a lease is given
                // back when its app is done, and its node may then go to an app that starts
                // later, which is correct but is not what this test checks.
                let all_leased = std::sync::Arc::new(tokio::sync::Barrier::new(APPS));
                let mut tasks = Vec::new();
                for _ in 0..SESSIONS {
                    let pool = pool.clone();
                    tasks.push(tokio::spawn(async move {
                        let mut conn = pool.acquire().await.unwrap();
                        let mut ids = Vec::new();
                        for _ in 0..ROWS_EACH {
                            let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(insert_default()))
                                .bind(db_node as i64)
                                .fetch_one(&mut *conn)
                                .await
                                .unwrap();
                            ids.push(id);
                        }
                        (db_node, ids)
                    }));
                }
                for _ in 0..APPS {
                    let pool = pool.clone();
                    let all_leased = all_leased.clone();
                    tasks.push(tokio::spawn(async move {
                        let lease = WorkerLease::options()
                            .skip_takeover_wait_for_tests_and_development(true)
                            .acquire(&pool, &layout)
                            .await
                            .unwrap();
                        let node = lease.node();
                        all_leased.wait().await;
                        let snowflake = Snowflake::builder()
                            .layout(layout)
                            .lease(lease)
                            .build()
                            .unwrap();
                        let mut ids = Vec::new();
                        for _ in 0..ROWS_EACH {
                            let sql = format!($insert_app, now = $now);
                            let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                                .bind(snowflake.next_id().unwrap())
                                .bind(node as i64)
                                .fetch_one(&pool)
                                .await
                                .unwrap();
                            ids.push(id);
                        }
                        (node, ids)
                    }));
                }
                let mut app_nodes = HashSet::new();
                for task in tasks {
                    let (node, ids) = task.await.unwrap();
                    if node != db_node {
                        app_nodes.insert(node);
                    }
                    // One session's (or one application's) IDs strictly increase.
                    assert!(
                        ids.windows(2).all(|w| w[0] < w[1]),
                        "node {node}: not increasing"
                    );
                }
                assert_eq!(app_nodes.len(), APPS, "each app has a node ID of its own");
                assert!(
                    !app_nodes.contains(&db_node),
                    "the database shares no node ID"
                );

                let rows: Vec<(i64, i64, i64)> =
                    sqlx::query_as("SELECT id, expected_node, inserted_ms FROM t")
                        .fetch_all(&pool)
                        .await
                        .unwrap();
                assert_eq!(rows.len(), (SESSIONS + APPS) * ROWS_EACH);
                let distinct: HashSet<i64> = rows.iter().map(|r| r.0).collect();
                assert_eq!(distinct.len(), rows.len(), "duplicate IDs");
                let mut per_node: HashMap<i64, usize> = HashMap::new();
                for (id, expected_node, inserted_ms) in rows {
                    let parts = layout
                        .decompose(SnowflakeId::try_from(id).unwrap())
                        .unwrap();
                    assert_eq!(parts.node as i64, expected_node, "ID {id}");
                    // Made during the insert (the database's IDs: `inserted_ms` is MariaDB's
                    // statement start, while the function reads the clock when it runs, which
                    // on a loaded machine is seconds later) or before it (the apps' IDs, by
                    // however long the app then waited for a connection). A wrong time field
                    // would be off by far more than these bounds.
                    let lag = inserted_ms - parts.unix_ms;
                    assert!(
                        (-10_000..=10_000).contains(&lag),
                        "ID {id}: its time is {lag} ms before its insert"
                    );
                    *per_node.entry(expected_node).or_default() += 1;
                }
                assert_eq!(per_node[&(db_node as i64)], SESSIONS * ROWS_EACH);
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn more_than_a_ticks_sequence_in_one_statement_moves_to_the_next_tick() {
                let (_db, pool) = database().await;
                let layout = small_tick_layout();
                let (_, node) = installed_with_table(&pool, layout).await;

                // 30 rows in one statement: almost all in one 100 ms tick of 8 IDs.
                let sql = format!($insert_burst, now = $now);
                let ids: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .bind(node as i64)
                    .fetch_all(&pool)
                    .await
                    .unwrap();
                let after = now_ms();
                assert_eq!(ids.len(), 30);
                let distinct: HashSet<i64> = ids.iter().copied().collect();
                assert_eq!(distinct.len(), 30, "duplicates: {ids:?}");
                let mut ticks = HashMap::new();
                for id in &ids {
                    let parts = layout
                        .decompose(SnowflakeId::try_from(*id).unwrap())
                        .unwrap();
                    assert_eq!(parts.node, node);
                    assert!(
                        parts.unix_ms <= after,
                        "an ID ahead of the clock: never borrowed under Wait"
                    );
                    *ticks.entry(parts.ticks).or_insert(0) += 1;
                }
                assert!(
                    ticks.len() >= 4,
                    "30 IDs need at least 4 ticks of 8: {ticks:?}"
                );
                assert!(ticks.values().all(|&n| n <= 8), "{ticks:?}");
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_clock_step_back_follows_the_policy() {
                let (_db, pool) = database().await;
                let layout = Layout::TWITTER;
                let policies = [
                    ("refuse", ClockPolicy::Refuse, 5_000),
                    (
                        "wait_short",
                        ClockPolicy::Wait {
                            max: Duration::from_millis(10),
                        },
                        5_000,
                    ),
                    (
                        "wait_long",
                        ClockPolicy::Wait {
                            max: Duration::from_secs(2),
                        },
                        1_200,
                    ),
                    (
                        "borrow",
                        ClockPolicy::Borrow {
                            max: Duration::from_secs(1),
                        },
                        900,
                    ),
                ];
                let mut nodes = HashSet::new();
                for (name, policy, ahead_ms) in policies {
                    let generator = fresh(layout)
                        .function(&format!("next_id_{name}"))
                        .unwrap()
                        .clock_policy(policy);
                    nodes.insert(db_generator::install(&pool, &generator).await.unwrap());
                    // The host's clock stepped back: the last ID was issued `ahead_ms` from now.
                    // (Far enough ahead that the clock is still behind it when the call starts,
                    // also on a loaded machine; each case checks that it was.)
                    let planted_ms = now_ms() + ahead_ms;
                    let planted_tick = layout.ticks_at(planted_ms).unwrap();
                    let planted = (planted_tick << layout.sequence_bits()) | 1;
                    $plant(&pool, &generator, planted as i64).await;
                    let called_ms = now_ms();
                    let outcome = db_generator::next_id(&pool, &generator).await;
                    let returned_ms = now_ms();
                    assert!(
                        called_ms < planted_ms,
                        "{name}: the call began after the planted time (a stalled machine)"
                    );
                    match name {
                        "refuse" | "wait_short" => {
                            let Err(ErrorKind::Id(CoreError::ClockMovedBackwards {
                                behind_ms,
                                allowed_ms,
                                policy: p,
                            })) = outcome.as_ref().map_err(|e| e.kind())
                            else {
                                panic!("{name}: {outcome:?}");
                            };
                            let (behind_ms, allowed_ms, p) = (*behind_ms, *allowed_ms, *p);
                            assert_eq!(p, policy.to_string());
                            assert_eq!(allowed_ms, policy.tolerance_ms());
                            assert!(
                                behind_ms > allowed_ms && behind_ms <= ahead_ms as u64,
                                "{name}: {behind_ms}"
                            );
                        }
                        "wait_long" => {
                            let parts = layout.decompose(outcome.unwrap()).unwrap();
                            assert!(
                                parts.ticks >= planted_tick,
                                "{name}: issued below the last tick"
                            );
                            // Begun while the clock was behind, answered with a tick at or past
                            // the planted one and no later than the clock: it waited.
                            assert!(parts.unix_ms <= returned_ms, "{name}: ahead of the clock");
                        }
                        _ => {
                            let parts = layout.decompose(outcome.unwrap()).unwrap();
                            assert_eq!(
                                (parts.ticks, parts.sequence),
                                (planted_tick, 1),
                                "{name}: borrows the last tick"
                            );
                            // Answered while the clock was still behind the planted tick: it
                            // borrowed instead of waiting for the clock.
                            assert!(
                                returned_ms < planted_ms,
                                "{name}: waited for the clock ({} ms after the call)",
                                returned_ms - called_ms
                            );
                        }
                    }
                }
                assert_eq!(nodes.len(), 4, "each function holds a node ID of its own");
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn install_is_idempotent_and_uninstall_gives_the_node_back() {
                let (_db, pool) = database().await;
                let layout = Layout::TWITTER;
                let generator = fresh(layout);
                // Installs from four processes at once end with one node ID.
                let installs = (0..4).map(|_| {
                    let (pool, generator) = (pool.clone(), generator.clone());
                    tokio::spawn(
                        async move { db_generator::install(&pool, &generator).await.unwrap() },
                    )
                });
                let mut nodes = HashSet::new();
                for install in installs {
                    nodes.insert(install.await.unwrap());
                }
                assert_eq!(nodes.len(), 1, "{nodes:?}");
                let node = *nodes.iter().next().unwrap();
                let store = SqlxLeaseStore::new(pool.clone());
                let labelled: Vec<_> = store
                    .rows("default")
                    .await
                    .unwrap()
                    .into_iter()
                    .filter(|r| r.holder.as_deref().is_some_and(|h| h.starts_with("database:") && h.contains(".idgen_next_id:")))
                    .collect();
                assert_eq!(labelled.len(), 1);
                assert_eq!(labelled[0].node, node);
                assert!(labelled[0].expires_at_ms > now_ms() + 50 * 365 * 24 * 3600 * 1000);

                // An application's lease takes another node ID.
                let lease = WorkerLease::options()
                    .skip_takeover_wait_for_tests_and_development(true)
                    .acquire(&pool, &layout)
                    .await
                    .unwrap();
                assert_ne!(lease.node(), node);

                // Another layout is refused, naming both.
                let other = fresh(Layout::INSTAGRAM);
                let err = db_generator::install(&pool, &other)
                    .await
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.contains(&generator.layout_key()) && err.contains(&other.layout_key()),
                    "{err}"
                );

                let last = db_generator::next_id(&pool, &generator).await.unwrap();
                db_generator::uninstall(&pool, &generator).await.unwrap();
                let row = lease_row(&store, node).await;
                assert_eq!(row.holder, None);
                assert!(row.expires_at_ms <= now_ms() + 1000);
                // The last timestamp issued, or (MariaDB) of the last word reserved: the count
                // sequence's cached values count as drawn, within a tick or two of the last ID.
                let last_ms = layout.decompose(last).unwrap().unix_ms;
                let stored = row.last_timestamp_ms.expect("a last timestamp");
                assert!(
                    (last_ms..=last_ms + 2).contains(&stored),
                    "stored {stored}, the last ID's {last_ms}"
                );
                assert!(
                    db_generator::next_id(&pool, &generator).await.is_err(),
                    "dropped"
                );
                db_generator::uninstall(&pool, &generator).await.unwrap();

                // Installed again, it starts after the last timestamp stored.
                let again = db_generator::install(&pool, &generator).await.unwrap();
                assert_eq!(again, node, "the lowest free node ID");
                let next = db_generator::next_id(&pool, &generator).await.unwrap();
                assert!(
                    layout.decompose(next).unwrap().ticks > layout.decompose(last).unwrap().ticks
                );

                // A lease row freed by hand makes the function refuse rather than share the node,
                // once each session has handed out what it had reserved (the rest of its block).
                sqlx::query($free_lease)
                    .bind(node as i64)
                    .execute(&pool)
                    .await
                    .unwrap();
                let (after_fence, _) = drain_until_refused(&pool, &generator).await;
                let err = db_generator::next_id(&pool, &generator).await.unwrap_err();
                assert!(
                    matches!(
                        err.kind(),
                        ErrorKind::Id(CoreError::Fenced {
                            valid_until_ms: i64::MIN,
                            ..
                        })
                    ),
                    "{err}"
                );
                // The fence recorded the last timestamp the function issued on the freed row,
                // so whoever claims it next starts after it.
                let row = lease_row(&store, node).await;
                for id in std::iter::once(next).chain(after_fence.into_iter().map(|id| SnowflakeId::try_from(id).unwrap())) {
                    let issued = layout.decompose(id).unwrap().unix_ms;
                    assert!(
                        row.last_timestamp_ms.is_some_and(|t| t >= issued),
                        "{:?} < {issued}",
                        row.last_timestamp_ms
                    );
                }
            }

            /// Calls the function on every connection of the pool (24) until each refuses: the
            /// IDs they still handed out (what the sessions had reserved before a fence: at most
            /// the rest of one block each, MariaDB; none, PostgreSQL) and the first refusal's
            /// SQLSTATE and message. Afterwards no connection of the pool holds a block.
            async fn drain_until_refused(pool: &Pool, generator: &DbGenerator) -> (Vec<i64>, String) {
                let sql = generator.next_id_sql($dialect).unwrap();
                let mut conns = Vec::new();
                for _ in 0..24 {
                    conns.push(pool.acquire().await.unwrap());
                }
                let (mut issued, mut first_refusal) = (Vec::new(), None);
                for conn in &mut conns {
                    let mut handed_out = 0;
                    loop {
                        match sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.clone())).fetch_one(&mut **conn).await {
                            Ok(id) => {
                                issued.push(id);
                                handed_out += 1;
                                assert!(
                                    handed_out < generator.block_len(),
                                    "{handed_out} IDs on one connection after the fence: more than the rest of a block"
                                );
                            }
                            Err(err) => {
                                let db = err.as_database_error().unwrap_or_else(|| panic!("{err}"));
                                first_refusal.get_or_insert_with(|| format!("{} {}", db.code().unwrap_or_default(), db.message()));
                                break;
                            }
                        }
                    }
                }
                (issued, first_refusal.expect("24 connections"))
            }

            /// 32 sessions inserting single rows at once, with a 1 ms tick (a jump nearly every
            /// tick): none stalls on the jump lock. On MariaDB every waiter used to draw again and
            /// again, reading the base sequence that the jump's NEXTVAL writes, and that stream of
            /// readers kept the jump from writing until the 10 s bound failed inserts with `IDG05`.
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn thirty_two_sessions_at_once_never_stall_on_the_jump() {
                const CROWD: usize = 32;
                const ROWS: usize = 100;
                let db = $testdb().await.expect("a database");
                let pool: Pool = sqlx::pool::PoolOptions::new()
                    .max_connections(CROWD as u32)
                    .min_connections(CROWD as u32)
                    .connect(db.url())
                    .await
                    .expect("a pool");
                let generator = fresh(Layout::TWITTER);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                table_with_default(&pool, &generator).await;
                let start = std::sync::Arc::new(tokio::sync::Barrier::new(CROWD));
                let mut tasks = Vec::new();
                for _ in 0..CROWD {
                    let (pool, start) = (pool.clone(), start.clone());
                    tasks.push(tokio::spawn(async move {
                        let mut conn = pool.acquire().await.unwrap();
                        start.wait().await;
                        let mut ids = Vec::with_capacity(ROWS);
                        for _ in 0..ROWS {
                            let id: Result<i64, sqlx::Error> =
                                sqlx::query_scalar(sqlx::AssertSqlSafe(insert_default()))
                                    .bind(node as i64)
                                    .fetch_one(&mut *conn)
                                    .await;
                            ids.push(id.map_err(|e| e.to_string())?);
                        }
                        Ok::<_, String>(ids)
                    }));
                }
                let mut all = HashSet::new();
                for task in tasks {
                    let ids = task.await.unwrap().unwrap_or_else(|e| panic!("an insert failed: {e}"));
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "one session's IDs not increasing");
                    for id in ids {
                        assert!(all.insert(id), "{id} twice");
                    }
                }
                assert_eq!(all.len(), CROWD * ROWS);
                let rows: i64 = sqlx::query_scalar("SELECT COUNT(DISTINCT id) FROM t")
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                assert_eq!(rows as usize, CROWD * ROWS);
            }

            /// Transactions that read the table and then take IDs, from 8 sessions at once, in
            /// the isolation levels that made the row-locking design fail: none fails now.
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn transactions_in_every_isolation_level_take_ids_without_failing() {
                let (_db, pool) = database().await;
                let generator = fresh(Layout::TWITTER);
                db_generator::install(&pool, &generator).await.unwrap();
                table_with_default(&pool, &generator).await;
                let next_id_sql = generator.next_id_sql($dialect).unwrap();
                for begin in [$($begin),+] {
                    let mut tasks = Vec::new();
                    for _ in 0..8 {
                        let (pool, next_id_sql) = (pool.clone(), next_id_sql.clone());
                        tasks.push(tokio::spawn(async move {
                            let mut conn = pool.acquire().await.unwrap();
                            let (mut failed, mut ids) = (Vec::new(), Vec::new());
                            for _ in 0..15 {
                                let mut tx_ids = Vec::new();
                                let outcome: Result<(), sqlx::Error> = async {
                                    for statement in begin {
                                        sqlx::raw_sql(sqlx::AssertSqlSafe(*statement)).execute(&mut *conn).await?;
                                    }
                                    sqlx::query("SELECT COUNT(*) FROM t").execute(&mut *conn).await?;
                                    // The IDs alone (no insert: concurrent inserts into the
                                    // table just read are a conflict of the workload's own).
                                    for _ in 0..5 {
                                        let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(next_id_sql.clone()))
                                            .fetch_one(&mut *conn)
                                            .await?;
                                        tx_ids.push(id);
                                    }
                                    sqlx::raw_sql("COMMIT").execute(&mut *conn).await?;
                                    Ok(())
                                }
                                .await;
                                match outcome {
                                    Ok(()) => ids.extend(tx_ids),
                                    Err(e) => {
                                        let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await;
                                        failed.push(e.to_string());
                                    }
                                }
                            }
                            (failed, ids)
                        }));
                    }
                    let mut all = HashSet::new();
                    for task in tasks {
                        let (failed, ids) = task.await.unwrap();
                        assert!(failed.is_empty(), "{begin:?}: {} failed: {:?}", failed.len(), failed.first());
                        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{begin:?}: not increasing");
                        for id in ids {
                            assert!(all.insert(id), "{begin:?}: {id} twice");
                        }
                    }
                    assert_eq!(all.len(), 8 * 15 * 5, "{begin:?}");
                }
            }

            /// Sessions in other time zones (with and without daylight saving) and with a
            /// frozen session clock get IDs of the true time; a tick used up inside a
            /// statement moves on.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_time_is_the_hosts_whatever_the_sessions_zone_or_clock() {
                let (_db, pool) = database().await;
                let layout = small_tick_layout();
                let (_, node) = installed_with_table(&pool, layout).await;
                for setup in [$($session_setup),+] {
                    let mut conn = pool.acquire().await.unwrap();
                    conn.close_on_drop();
                    if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(setup)).execute(&mut *conn).await {
                        panic!("{setup}: {e}");
                    }
                    let before = now_ms();
                    let sql = format!($insert_burst, now = "0");
                    let ids: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                        .bind(node as i64)
                        .fetch_all(&mut *conn)
                        .await
                        .unwrap();
                    let after = now_ms();
                    assert_eq!(ids.len(), 30);
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{setup}: {ids:?}");
                    for id in ids {
                        let parts = layout.decompose(SnowflakeId::try_from(id).unwrap()).unwrap();
                        // The tick's start is at most one tick before the call.
                        assert!(
                            parts.unix_ms >= before - 100 && parts.unix_ms <= after,
                            "{setup}: ID {id} says {} ms, the call ran from {before} to {after}",
                            parts.unix_ms
                        );
                    }
                }
            }

            /// Its lease row replaced by another holder's with the fence bypassed (PostgreSQL:
            /// triggers off; MariaDB: `TRUNCATE`, which fires none, and a restore): the next call
            /// (next tick) fails with `IDG06`, later ones too.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_function_stops_when_its_row_is_replaced_with_the_fence_bypassed() {
                let (_db, pool) = database().await;
                let generator = fresh(Layout::TWITTER);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                db_generator::next_id(&pool, &generator).await.unwrap();
                let sql = $replace_row.replace("{node}", &node.to_string());
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
                let (_, failed) = drain_until_refused(&pool, &generator).await;
                assert!(failed.starts_with("IDG06"), "{failed}");
                let err = db_generator::next_id(&pool, &generator).await.unwrap_err();
                assert!(matches!(err.kind(), ErrorKind::Id(CoreError::Fenced { .. })), "{err}");
            }

            /// The lease table dropped, and an application re-creating it and claiming the
            /// function's node at once (the worst case: no takeover wait): the function's next
            /// call fails with `IDG06`, and no ID is issued by both.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_function_stops_when_its_lease_table_is_dropped_and_recreated() {
                let (_db, pool) = database().await;
                let layout = Layout::TWITTER;
                let generator = fresh(layout);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                let mut issued = HashSet::new();
                for _ in 0..50 {
                    issued.insert(db_generator::next_id(&pool, &generator).await.unwrap());
                }
                sqlx::raw_sql("DROP TABLE idgen_worker_lease").execute(&pool).await.unwrap();
                let lease = WorkerLease::options()
                    .skip_takeover_wait_for_tests_and_development(true)
                    .acquire(&pool, &layout)
                    .await
                    .unwrap();
                assert_eq!(lease.node(), node, "the application takes the function's node");
                tokio::time::sleep(Duration::from_millis(5)).await;
                // PostgreSQL's `sql_drop` event trigger (the test user may create one) fences it
                // in the DROP itself (`IDG02`); else its check of the row at the jump (`IDG06`),
                // once the sessions' blocks (MariaDB) are used up or a second old.
                let (after, failed) = drain_until_refused(&pool, &generator).await;
                for id in after {
                    issued.insert(SnowflakeId::try_from(id).unwrap());
                }
                assert!(failed.starts_with("IDG06") || failed.starts_with("IDG02"), "{failed}");
                assert!(db_generator::next_id(&pool, &generator).await.is_err());
                let snowflake = Snowflake::builder().layout(layout).lease(lease).build().unwrap();
                for _ in 0..1000 {
                    let id = snowflake.next_id().unwrap();
                    assert!(!issued.contains(&id), "{id:?} issued by both");
                }
            }

            /// A live application holder the lease table forgot (its row freed under it, as a
            /// restore from before its claim would leave it) and an install that takes its node:
            /// the function's first tick is at or above claim time + TTL + allowance, so no ID
            /// is issued by both (it used to issue at once from "now - 20 s").
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn an_install_taking_a_forgotten_holders_node_issues_above_the_takeover_floor() {
                let (_db, pool) = database().await;
                let layout = Layout::TWITTER;
                let lease = WorkerLease::options()
                    .ttl(Duration::from_secs(2))
                    .renew_every(Duration::from_millis(500))
                    .safety_margin(Duration::from_millis(500))
                    .skip_takeover_wait_for_tests_and_development(true)
                    .acquire(&pool, &layout)
                    .await
                    .unwrap();
                let app_node = lease.node();
                let snowflake = Snowflake::builder().layout(layout).lease(lease).build().unwrap();
                let app = tokio::spawn(async move {
                    let mut ids = Vec::new();
                    let until = std::time::Instant::now() + Duration::from_secs(4);
                    while std::time::Instant::now() < until {
                        match snowflake.next_id() {
                            Ok(id) => ids.push(id),
                            Err(_) => break,
                        }
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    ids
                });
                tokio::time::sleep(Duration::from_millis(100)).await;
                sqlx::query($forget_holder).bind(app_node as i64).execute(&pool).await.unwrap();
                let claimed_after = now_ms();
                let generator = DbGenerator::new(layout)
                    .takeover_wait(Duration::from_secs(2), Duration::from_millis(500));
                let node = db_generator::install(&pool, &generator).await.unwrap();
                assert_eq!(node, app_node, "the install takes the forgotten holder's node");
                let mut ours = HashSet::new();
                let first = db_generator::next_id(&pool, &generator).await.unwrap();
                let first_ms = layout.decompose(first).unwrap().unix_ms;
                assert!(
                    first_ms >= claimed_after + 2_500,
                    "first ID at {first_ms}, the claim after {claimed_after}: below the floor"
                );
                ours.insert(first);
                while !app.is_finished() {
                    ours.insert(db_generator::next_id(&pool, &generator).await.unwrap());
                }
                let theirs = app.await.unwrap();
                assert!(!theirs.is_empty());
                for id in theirs {
                    assert!(!ours.contains(&id), "{id:?} issued by both");
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn one_connection_is_enough_to_install_and_uninstall() {
                let db = $testdb().await.expect("a database");
                let pool: Pool = sqlx::pool::PoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect(db.url())
                    .await
                    .unwrap();
                let generator = fresh(Layout::TWITTER);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                issues_then_uninstall_frees_every_row(&pool, &generator, node).await;
            }

            /// The function issues on `node`, and uninstalling it leaves no lease row held.
            async fn issues_then_uninstall_frees_every_row(pool: &Pool, generator: &DbGenerator, node: u64) {
                let id = db_generator::next_id(pool, generator).await.unwrap();
                assert_eq!(generator.layout().decompose(id).unwrap().node, node);
                db_generator::uninstall(pool, generator).await.unwrap();
                let rows = SqlxLeaseStore::new(pool.clone()).rows("default").await.unwrap();
                assert!(rows.iter().all(|r| r.holder.is_none()), "held after uninstall: {rows:?}");
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn another_namespace_or_lease_table_is_refused_naming_both() {
                let (_db, pool) = database().await;
                let generator = fresh(Layout::TWITTER);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                for other in [
                    generator.clone().namespace("b"),
                    generator.clone().lease_table("other_leases").unwrap(),
                ] {
                    let err = db_generator::install(&pool, &other).await.unwrap_err().to_string();
                    // The lease tables are named with the schema the install resolved.
                    for named in [
                        format!("namespace {:?}", generator.lease_namespace()),
                        format!("namespace {:?}", other.lease_namespace()),
                        format!(".{}\"", generator.lease_table_name()),
                        format!(".{}\"", other.lease_table_name()),
                    ] {
                        assert!(err.contains(&named), "{named} missing: {err}");
                    }
                }
                // Nothing changed: the first install still holds its node and issues.
                issues_then_uninstall_frees_every_row(&pool, &generator, node).await;
            }

            /// `idgen_decode`, `idgen_min_id_at` and `idgen_max_id_at` against the layout's own
            /// `decompose` and `compose` on random IDs and times, for every preset and a custom
            /// layout.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn the_sql_helpers_agree_with_the_layout() {
                let (_db, pool) = database().await;
                let custom = Layout::builder()
                    .epoch_ms(1_600_000_000_000)
                    .unit_ms(10)
                    .timestamp_bits(39)
                    .node_bits(8)
                    .sequence_bits(16)
                    .order(idgen_sqlx::FieldOrder::TimeSequenceNode)
                    .build()
                    .unwrap();
                let mut random = SplitMix(0x1d9e_5eed);
                for (i, layout) in [Layout::TWITTER, Layout::INSTAGRAM, Layout::SONYFLAKE, custom]
                    .into_iter()
                    .enumerate()
                {
                    // A namespace per layout: a namespace keeps the layout it was first used with.
                    let generator = fresh(layout)
                        .function(&format!("g{i}_next_id"))
                        .unwrap()
                        .namespace(format!("layout{i}"));
                    db_generator::install(&pool, &generator).await.unwrap();
                    let [decode, min_at, max_at] = generator.helper_names();
                    for _ in 0..200 {
                        let parts = idgen_sqlx::Parts {
                            ticks: random.below(layout.max_ticks() + 1),
                            node: random.below(layout.node_capacity()),
                            sequence: random.below(layout.max_sequence() + 1),
                        };
                        let id = layout.compose(parts).unwrap();
                        let want = layout.decompose(id).unwrap();
                        let sql = format!($decode, f = decode);
                        let got: (i64, i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                            .bind(id.as_i64())
                            .fetch_one(&pool)
                            .await
                            .unwrap();
                        assert_eq!(
                            got,
                            (want.unix_ms, want.node as i64, want.sequence as i64),
                            "layout {i}, ID {id:?}"
                        );
                        let span = (layout.last_unix_ms() - layout.epoch_ms()) as u64;
                        let ms = layout.epoch_ms() + random.below(span + 1) as i64;
                        let lowest = layout.compose_at(ms, 0, 0).unwrap().as_i64();
                        let highest = layout
                            .compose_at(ms, layout.node_capacity() - 1, layout.max_sequence())
                            .unwrap()
                            .as_i64();
                        for (helper, template, want) in [(&min_at, $min_id_at, lowest), (&max_at, $max_id_at, highest)] {
                            let sql = format!("SELECT {}", template.replace("{f}", helper));
                            let got: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                                .bind(ms)
                                .fetch_one(&pool)
                                .await
                                .unwrap();
                            assert_eq!(got, want, "layout {i}, {helper} at {ms}");
                        }
                    }
                    // Outside the layout's time: no ID (NULL), never a wrapped one.
                    let sql = format!("SELECT {}", $min_id_at.replace("{f}", &min_at));
                    let got: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                        .bind(layout.epoch_ms() - 1)
                        .fetch_one(&pool)
                        .await
                        .unwrap();
                    assert_eq!(got, None, "layout {i}: before the epoch");
                }
            }
        }
    };
}

db_generator_cases!(
    postgres, sqlx::Postgres, idgen_testkit::postgres, Dialect::Postgres,
    create_table: "CREATE TABLE t (id BIGINT NOT NULL, source TEXT NOT NULL, \
                   expected_node BIGINT NOT NULL, inserted_ms BIGINT NOT NULL)",
    now_ms: "(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint",
    insert_default: "INSERT INTO t (source, expected_node, inserted_ms) VALUES ('sql', $1, {now}) RETURNING id",
    insert_app: "INSERT INTO t (id, source, expected_node, inserted_ms) VALUES ($1, 'app', $2, {now}) RETURNING id",
    insert_burst: "INSERT INTO t (source, expected_node, inserted_ms) \
                   SELECT 'burst', $1, {now} FROM generate_series(1, 30) RETURNING id",
    plant: plant_postgres,
    free_lease: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = now() WHERE node = $1",
    forget_holder: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = now(), last_timestamp = NULL WHERE namespace = 'default' AND node = $1",
    // The fence triggers bypassed (as a restore with triggers off would), the row becomes
    // another holder's.
    replace_row: "SET session_replication_role = replica; \
                  UPDATE idgen_worker_lease SET holder = 'restored-app' WHERE node = {node}; \
                  SET session_replication_role = DEFAULT",
    isolation: [
        &["BEGIN ISOLATION LEVEL REPEATABLE READ"],
        &["BEGIN ISOLATION LEVEL SERIALIZABLE"],
        &["BEGIN ISOLATION LEVEL READ COMMITTED"]
    ],
    sessions: [
        "SET TIME ZONE 'America/New_York'",
        "SET TIME ZONE 'Pacific/Kiritimati'",
        "SET TIME ZONE 'Europe/Berlin'"
    ],
    decode: "SELECT unix_ms, node, sequence FROM \"{f}\"($1)",
    min_id_at: "\"{f}\"(TIMESTAMPTZ 'epoch' + $1 * INTERVAL '1 millisecond')",
    max_id_at: "\"{f}\"(TIMESTAMPTZ 'epoch' + $1 * INTERVAL '1 millisecond')",
);

db_generator_cases!(
    mariadb, sqlx::MySql, idgen_testkit::mysql, Dialect::MySql,
    create_table: "CREATE TABLE t (id BIGINT NOT NULL DEFAULT 0, source VARCHAR(16) NOT NULL, \
                   expected_node BIGINT NOT NULL, inserted_ms BIGINT NOT NULL) ENGINE = InnoDB",
    now_ms: "CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000 AS SIGNED)",
    insert_default: "INSERT INTO t (source, expected_node, inserted_ms) VALUES ('sql', ?, {now}) RETURNING id",
    insert_app: "INSERT INTO t (id, source, expected_node, inserted_ms) VALUES (?, 'app', ?, {now}) RETURNING id",
    insert_burst: "INSERT INTO t (source, expected_node, inserted_ms) \
                   SELECT 'burst', ?, {now} FROM seq_1_to_30 RETURNING id",
    plant: plant_mariadb,
    free_lease: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = UTC_TIMESTAMP(6) WHERE node = ?",
    forget_holder: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = UTC_TIMESTAMP(6), last_timestamp = NULL WHERE namespace = 'default' AND node = ?",
    // TRUNCATE (no trigger fires) and a restore that brings the row back under another holder.
    replace_row: "TRUNCATE TABLE idgen_worker_lease; \
                  INSERT INTO idgen_worker_lease (namespace, node, holder, expires_at, last_timestamp) \
                  VALUES ('default', {node}, 'restored-app', UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, NULL)",
    isolation: [
        &[
            "SET SESSION innodb_snapshot_isolation = ON",
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "START TRANSACTION"
        ],
        &[
            "SET SESSION innodb_snapshot_isolation = ON",
            "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "START TRANSACTION"
        ]
    ],
    sessions: [
        "SET time_zone = '+13:00'",
        "SET time_zone = '-11:00'",
        // A frozen session clock: NOW() (and SYSDATE() under --sysdate-is-now) stand still.
        "SET timestamp = 1000000000"
    ],
    decode: "SELECT CAST(JSON_VALUE(j, '$.unix_ms') AS SIGNED), CAST(JSON_VALUE(j, '$.node') AS SIGNED), \
             CAST(JSON_VALUE(j, '$.sequence') AS SIGNED) FROM (SELECT `{f}`(?) AS j) s",
    min_id_at: "`{f}`(?)",
    max_id_at: "`{f}`(?)",
);

/// MariaDB sessions in zones with daylight saving (whose tables a fresh server lacks: they are
/// loaded here from the host's zoneinfo with `mariadb-tzinfo-to-sql`, which `scripts/test`
/// installs) get IDs of the true time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_sessions_in_daylight_saving_zones_get_ids_of_the_true_time() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = sqlx::MySqlPool::connect(db.url()).await.unwrap();
    let mut loader = pool.acquire().await.unwrap();
    loader.close_on_drop();
    for zone in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"] {
        let known: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM mysql.time_zone_name WHERE Name = ?")
                .bind(zone)
                .fetch_one(&mut *loader)
                .await
                .unwrap();
        if known == 0 {
            let out = std::process::Command::new("mariadb-tzinfo-to-sql")
                .arg(format!("/usr/share/zoneinfo/{zone}"))
                .arg(zone)
                .output()
                .expect(
                    "mariadb-tzinfo-to-sql (Debian's mariadb-server; scripts/test installs it)",
                );
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let sql = format!("USE mysql; {}", String::from_utf8(out.stdout).unwrap());
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&mut *loader)
                .await
                .unwrap();
        }
    }
    drop(loader);
    let layout = small_tick_layout();
    let generator = fresh(layout);
    db_generator::install(&pool, &generator).await.unwrap();
    let next_id = generator.next_id_sql(Dialect::MySql).unwrap();
    for zone in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe"] {
        let mut conn = pool.acquire().await.unwrap();
        conn.close_on_drop();
        sqlx::query("SET time_zone = ?")
            .bind(zone)
            .execute(&mut *conn)
            .await
            .unwrap();
        let local: String = sqlx::query_scalar("SELECT CAST(NOW(3) AS CHAR)")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        let before = now_ms();
        let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(next_id.clone()))
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        let after = now_ms();
        let parts = layout
            .decompose(SnowflakeId::try_from(id).unwrap())
            .unwrap();
        assert!(
            parts.unix_ms >= before - 100 && parts.unix_ms <= after,
            "{zone} (local time {local}): ID says {} ms, the call ran from {before} to {after}",
            parts.unix_ms
        );
    }
}

/// An uninstall that PostgreSQL refuses (a column default still calls the function) changes
/// nothing: the lease row stays held and inserts through the default go on (it used to free the
/// lease first, so every insert then failed with `IDG02`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_uninstall_refused_by_a_column_default_changes_nothing() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool().clone();
    let generator = fresh(Layout::TWITTER);
    let node = db_generator::install(&pool, &generator).await.unwrap();
    sqlx::raw_sql("CREATE TABLE t (id BIGINT NOT NULL, v INT)")
        .execute(&pool)
        .await
        .unwrap();
    let default = generator
        .column_default_sql(Dialect::Postgres, "t", "id")
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(default))
        .execute(&pool)
        .await
        .unwrap();
    let err = db_generator::uninstall(&pool, &generator)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("refused before anything changed"), "{err}");
    let store = SqlxLeaseStore::new(pool.clone());
    let rows = store.rows("default").await.unwrap();
    let row = rows.iter().find(|r| r.node == node).unwrap();
    assert!(
        row.holder
            .as_deref()
            .is_some_and(|h| h.starts_with("database:")),
        "still held: {row:?}"
    );
    for _ in 0..3 {
        let id: i64 = sqlx::query_scalar("INSERT INTO t (v) VALUES (1) RETURNING id")
            .fetch_one(&pool)
            .await
            .unwrap();
        let parts = Layout::TWITTER
            .decompose(SnowflakeId::try_from(id).unwrap())
            .unwrap();
        assert_eq!(parts.node, node);
    }
    // With the default gone, it uninstalls.
    sqlx::raw_sql("ALTER TABLE t ALTER COLUMN id DROP DEFAULT")
        .execute(&pool)
        .await
        .unwrap();
    db_generator::uninstall(&pool, &generator).await.unwrap();
    let rows = store.rows("default").await.unwrap();
    assert!(rows.iter().all(|r| r.holder.is_none()), "{rows:?}");
}

/// `count` IDs from each of `functions` (`SELECT f()` from `pool`), with no ID issued twice.
async fn ids_of_each<DB: sqlx::Database>(
    pool: &sqlx::Pool<DB>,
    functions: &[&str],
    count: usize,
) -> Vec<HashSet<i64>>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    i64: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let mut all = Vec::new();
    for f in functions {
        let mut conn = pool.acquire().await.unwrap();
        let mut ids = HashSet::new();
        for _ in 0..count {
            let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {f}()")))
                .fetch_one(&mut *conn)
                .await
                .unwrap_or_else(|e| panic!("{f}: {e}"));
            assert!(ids.insert(id));
        }
        all.push(ids);
    }
    assert!(all[0].is_disjoint(&all[1]), "IDs issued by both installs");
    all
}

/// Two installs of `idgen_next_id`, one per shard schema (`search_path = shard_X, public`),
/// sharing `public.idgen_worker_lease`: the lease table goes to `public` (not the first
/// shard's schema), each install holds a node of its own under a label of its own, both
/// functions work from a session on the default path, and both fences survive (each names
/// its triggers after its identity). On the old code both took node 0 and shard_b's install
/// dropped shard_a's fence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_installs_in_two_shard_schemas_share_the_lease_table_not_a_node() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let admin = db.pool().clone();
    sqlx::raw_sql("CREATE SCHEMA shard_a; CREATE SCHEMA shard_b")
        .execute(&admin)
        .await
        .unwrap();
    let shard = |schema: &str| {
        let options: sqlx::postgres::PgConnectOptions = db.url().parse().unwrap();
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(2)
            .connect_lazy_with(options.options([("search_path", format!("{schema}, public"))]))
    };
    let (pool_a, pool_b) = (shard("shard_a"), shard("shard_b"));
    let layout = Layout::TWITTER;
    let generator = fresh(layout);
    let node_a = db_generator::install(&pool_a, &generator).await.unwrap();
    let schemas: Vec<String> = sqlx::query_scalar(
        "SELECT table_schema::text FROM information_schema.tables WHERE table_name = 'idgen_worker_lease'",
    )
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(schemas, ["public"], "the lease table's schema");
    let node_b = db_generator::install(&pool_b, &generator).await.unwrap();
    assert_ne!(node_a, node_b, "each install holds a node of its own");
    // Installing again keeps each install's node.
    assert_eq!(
        db_generator::install(&pool_a, &generator).await.unwrap(),
        node_a
    );
    assert_eq!(
        db_generator::install(&pool_b, &generator).await.unwrap(),
        node_b
    );
    let holders: Vec<String> = sqlx::query_scalar(
        "SELECT holder FROM public.idgen_worker_lease WHERE namespace = 'default' AND holder IS NOT NULL ORDER BY node",
    )
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(holders.len(), 2, "{holders:?}");
    assert!(
        holders[0].starts_with("database:shard_a.idgen_next_id:"),
        "{holders:?}"
    );
    assert!(
        holders[1].starts_with("database:shard_b.idgen_next_id:"),
        "{holders:?}"
    );

    // From a session on the default search path.
    let functions = ["shard_a.idgen_next_id", "shard_b.idgen_next_id"];
    let ids = ids_of_each(&admin, &functions, 300).await;
    for (set, node) in ids.iter().zip([node_a, node_b]) {
        for id in set {
            let parts = layout
                .decompose(SnowflakeId::try_from(*id).unwrap())
                .unwrap();
            assert_eq!(parts.node, node);
        }
    }
    // Both fences survive: freeing a row stops that install's function at once, not the other.
    let fence_triggers: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.idgen_worker_lease'::regclass AND NOT tgisinternal",
    )
    .fetch_one(&admin)
    .await
    .unwrap();
    assert_eq!(fence_triggers, 4, "two fence triggers per install");
    // And an `sql_drop` event trigger each, where the user may create one (a superuser).
    let superuser: bool =
        sqlx::query_scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            .fetch_one(&admin)
            .await
            .unwrap();
    let drop_fences: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'idgen_fence_drop_%'",
    )
    .fetch_one(&admin)
    .await
    .unwrap();
    assert_eq!(drop_fences, if superuser { 2 } else { 0 });
    for (freed, (function, node)) in functions.iter().zip([node_a, node_b]).enumerate() {
        sqlx::query("UPDATE public.idgen_worker_lease SET holder = NULL, expires_at = now() WHERE node = $1")
            .bind(node as i64)
            .execute(&admin)
            .await
            .unwrap();
        // A session holding no block (a new connection) is refused at once; the sessions of
        // `admin` may still hand out the rest of theirs.
        let mut fresh_session = <sqlx::PgConnection as sqlx::Connection>::connect(db.url())
            .await
            .unwrap();
        let err = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(format!("SELECT {function}()")))
            .fetch_one(&mut fresh_session)
            .await
            .unwrap_err();
        assert_eq!(
            err.as_database_error().unwrap().code().as_deref(),
            Some("IDG02"),
            "{function}: {err}"
        );
        if freed == 0 {
            let other: Result<i64, _> =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {}()", functions[1])))
                    .fetch_one(&admin)
                    .await;
            assert!(other.is_ok(), "{other:?}");
        }
    }
}

/// Two installs in two MariaDB databases sharing the first one's lease table: nodes and fences
/// of their own (on the old code both took node 0 under one label, and the second could not
/// create its fence triggers in a database other than the lease table's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_installs_in_two_databases_share_the_lease_table_not_a_node() {
    let db_a = idgen_testkit::mysql().await.expect("a database");
    let db_b = idgen_testkit::mysql().await.expect("a database");
    let pool_a = sqlx::MySqlPool::connect(db_a.url()).await.unwrap();
    let pool_b = sqlx::MySqlPool::connect(db_b.url()).await.unwrap();
    let layout = Layout::TWITTER;
    let lease_table = format!("{}.idgen_worker_lease", db_a.name());
    let generator = fresh(layout).lease_table(&lease_table).unwrap();
    let node_a = db_generator::install(&pool_a, &generator).await.unwrap();
    let node_b = db_generator::install(&pool_b, &generator).await.unwrap();
    assert_ne!(node_a, node_b, "each install holds a node of its own");
    assert_eq!(
        db_generator::install(&pool_b, &generator).await.unwrap(),
        node_b
    );
    let functions = [
        format!("`{}`.idgen_next_id", db_a.name()),
        format!("`{}`.idgen_next_id", db_b.name()),
    ];
    let functions = [functions[0].as_str(), functions[1].as_str()];
    ids_of_each(&pool_a, &functions, 300).await;
    for (freed, (function, node)) in functions.iter().zip([node_a, node_b]).enumerate() {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {lease_table} SET holder = NULL, expires_at = UTC_TIMESTAMP(6) WHERE node = ?"
        )))
        .bind(node as i64)
        .execute(&pool_a)
        .await
        .unwrap();
        // A session holding no block (a new connection) is refused at once; the sessions of
        // `pool_a` may still hand out the rest of theirs.
        let mut fresh_session = <sqlx::MySqlConnection as sqlx::Connection>::connect(db_a.url())
            .await
            .unwrap();
        let err = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(format!("SELECT {function}()")))
            .fetch_one(&mut fresh_session)
            .await
            .unwrap_err();
        assert_eq!(
            err.as_database_error().unwrap().code().as_deref(),
            Some("IDG02"),
            "{function}: {err}"
        );
        if freed == 0 {
            let other: Result<i64, _> =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {}()", functions[1])))
                    .fetch_one(&pool_a)
                    .await;
            assert!(other.is_ok(), "{other:?}");
        }
    }
}

/// SplitMix64: random numbers the same on every run.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % bound
    }
}

/// Makes the next word the function draws `word` (a clock that stepped back: the last ID was
/// issued ahead of it), on a freshly installed PostgreSQL generator.
async fn plant_postgres(pool: &sqlx::PgPool, generator: &DbGenerator, word: i64) {
    let f = generator.function_name();
    // The next count is the last one plus the count's step (one block), or 1 if none was drawn.
    let block = generator.block_len();
    let sql = format!(
        "SELECT setval('{f}_base', {word} - coalesce(pg_sequence_last_value('{f}_count') + {block}, 1))"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .execute(pool)
        .await
        .unwrap();
}

/// The same on MariaDB, where the base is three sequences and `SETVAL` takes literals: on a
/// fresh install nothing was drawn yet (the next count is 1) and the upper levels are 0.
async fn plant_mariadb(pool: &sqlx::MySqlPool, generator: &DbGenerator, word: i64) {
    let f = generator.function_name();
    let sql = format!("SELECT SETVAL(`{f}_base_0`, {}, 0)", word - 1);
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .execute(pool)
        .await
        .unwrap();
}

/// Instagram's scheme, `nextval() % 8` under the same 100 ms, 8-ID ticks, repeats IDs when one
/// statement takes more than a tick's worth; ours (the test above) does not.
#[tokio::test]
async fn instagrams_modulo_sequence_repeats_ids_where_ours_moves_on() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let layout = small_tick_layout();
    let (time_shift, _, _) = (layout.node_bits() + layout.sequence_bits(), 0, 0);
    let sql = format!(
        "CREATE SEQUENCE insta_seq;
         CREATE FUNCTION insta_next_id() RETURNS bigint LANGUAGE plpgsql AS $$
         DECLARE now_ms bigint; seq bigint;
         BEGIN
             SELECT nextval('insta_seq') % 8 INTO seq;
             now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
             RETURN (((now_ms - {epoch}) / 100) << {time_shift}) | (5 << 3) | seq;
         END $$;",
        epoch = layout.epoch_ms()
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(db.pool())
        .await
        .unwrap();
    let ids: Vec<i64> = sqlx::query_scalar("SELECT insta_next_id() FROM generate_series(1, 30)")
        .fetch_all(db.pool())
        .await
        .unwrap();
    let distinct: HashSet<i64> = ids.iter().copied().collect();
    assert!(
        distinct.len() < ids.len(),
        "Instagram's scheme wraps within a tick: {ids:?}"
    );
}
