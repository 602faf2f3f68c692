//! The database-side generator's per-session blocks on real PostgreSQL and MariaDB servers
//! (issue 42): one draw of the count sequence reserves a block of words that the session hands
//! out without a table read or a shared sequence call (MariaDB: user variables; PostgreSQL: a
//! temporary sequence). Each session's IDs strictly increase across refills, rollbacks,
//! savepoints and `DISCARD ALL`, no ID is handed out twice while reservations race a jump held
//! up on purpose, and a fence lets a session hand out at most the rest of its block, all of it
//! covered by the last timestamp the fence stores.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::lease::SqlxLeaseStore;
use idgen_sqlx::{Dialect, Layout, SnowflakeId};

mod common;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn unix_ms(id: i64) -> i64 {
    unix_ms_in(&Layout::TWITTER, id)
}

fn unix_ms_in(layout: &Layout, id: i64) -> i64 {
    layout
        .decompose(SnowflakeId::try_from(id).unwrap())
        .unwrap()
        .unix_ms
}

fn sqlstate(err: &sqlx::Error) -> String {
    err.as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.into_owned())
        .unwrap_or_else(|| err.to_string())
}

/// The cases every database runs, in a module of its own.
macro_rules! block_cases {
    ($module:ident, $db:ty, $testdb:path, $dialect:expr, free_lease: $free_lease:expr $(,)?) => {
        mod $module {
            use super::*;

            type Pool = sqlx::Pool<$db>;
            type Conn = sqlx::pool::PoolConnection<$db>;

            /// A fresh database, a pool of up to 12 connections, and the generator installed
            /// (Twitter layout: 1 ms ticks, blocks of 256).
            async fn installed() -> (idgen_testkit::TestDb<$db>, Pool, DbGenerator, u64) {
                installed_with(Layout::TWITTER).await
            }

            async fn installed_with(
                layout: Layout,
            ) -> (idgen_testkit::TestDb<$db>, Pool, DbGenerator, u64) {
                let (db, pool) = common::sql::database($testdb(), 12).await;
                let generator =
                    DbGenerator::new(layout).skip_takeover_wait_for_tests_and_development(true);
                let node = db_generator::install(&pool, &generator).await.unwrap();
                (db, pool, generator, node)
            }

            /// One ID on `conn`.
            async fn call(conn: &mut Conn, generator: &DbGenerator) -> Result<i64, sqlx::Error> {
                let sql = generator.next_id_sql($dialect).unwrap();
                sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .fetch_one(&mut **conn)
                    .await
            }

            /// Two sessions taking turns: each hands out its own block (its IDs follow each other, the
            /// other session's draws take none of them), and its IDs strictly increase across refills, the
            /// one after a block ran out and the one after a block's time ran out (1 s).
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_sessions_ids_strictly_increase_across_refills() {
                let (_db, pool, generator, _) = installed().await;
                assert_eq!(generator.block_len(), 256);
                let mut a = pool.acquire().await.unwrap();
                let mut b = pool.acquire().await.unwrap();
                let (mut ids_a, mut ids_b) = (Vec::new(), Vec::new());
                for round in 0..3 {
                    for _ in 0..150 {
                        ids_a.push(call(&mut a, &generator).await.unwrap());
                        ids_b.push(call(&mut b, &generator).await.unwrap());
                    }
                    if round < 2 {
                        // The blocks' time runs out: the next call draws again, in a later tick.
                        tokio::time::sleep(Duration::from_millis(1_100)).await;
                    }
                }
                let mut all = HashSet::new();
                for ids in [&ids_a, &ids_b] {
                    assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
                    for id in ids.iter() {
                        assert!(all.insert(*id), "{id} twice");
                    }
                    // Taking turns with another session, a session still gets consecutive IDs: its block.
                    // 450 calls take 2 blocks of 256 (and 2 more after the sleeps): a few steps (a few
                    // more for blocks cut short at a tick's end) are not +1, not half of them.
                    let steps = ids.windows(2).filter(|w| w[1] != w[0] + 1).count();
                    assert!(steps <= 16, "{steps} of 449 steps are not +1: no blocks");
                }
                // After each sleep, the next ID is from a new draw (its word may trail the clock by up to
                // 100 ms), not the old block's next (1 ms or less above the last).
                for ids in [&ids_a, &ids_b] {
                    for at in [150, 300] {
                        assert!(
                            unix_ms(ids[at]) >= unix_ms(ids[at - 1]) + 500,
                            "the block outlived its second"
                        );
                    }
                }
            }

            /// A session holding a block when the function's lease row is freed hands out at most the rest
            /// of that block, then fails `IDG02`; a session without one fails at once; the last timestamp
            /// the fence stored on the row covers every ID handed out, so the next holder of the node
            /// starts above them. (Sonyflake's layout: blocks of 16, so that a session going on past its
            /// block would show within the block's time.)
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_fence_lets_a_session_hand_out_at_most_the_rest_of_its_block() {
                let layout = Layout::SONYFLAKE;
                let (_db, pool, generator, node) = installed_with(layout).await;
                assert_eq!(generator.block_len(), 16);
                let mut holder = pool.acquire().await.unwrap();
                let mut issued = vec![call(&mut holder, &generator).await.unwrap()];
                let mut fresh = pool.acquire().await.unwrap();
                sqlx::query($free_lease)
                    .bind(node as i64)
                    .execute(&pool)
                    .await
                    .unwrap();
                let err = call(&mut fresh, &generator).await.unwrap_err();
                assert_eq!(sqlstate(&err), "IDG02", "a session without a block: {err}");
                let refused = loop {
                    match call(&mut holder, &generator).await {
                        Ok(id) => {
                            issued.push(id);
                            assert!(
                                issued.len() <= generator.block_len() as usize,
                                "{} IDs: more than one block",
                                issued.len()
                            );
                        }
                        Err(err) => break err,
                    }
                };
                assert_eq!(sqlstate(&refused), "IDG02", "{refused}");
                assert!(
                    issued.len() > 1,
                    "the premise: the session handed out the rest of its block ({} IDs)",
                    issued.len()
                );
                assert!(issued.windows(2).all(|w| w[0] < w[1]));
                let store = SqlxLeaseStore::new(pool.clone());
                let row = store
                    .rows("default")
                    .await
                    .unwrap()
                    .into_iter()
                    .find(|r| r.node == node)
                    .unwrap();
                let last = row
                    .last_timestamp_ms
                    .expect("the fence stored a last timestamp");
                for id in &issued {
                    let at = unix_ms_in(&layout, *id);
                    assert!(at <= last, "{id} at {at} ms, above the stored {last}");
                }
            }
        }
    };
}

block_cases!(
    postgres,
    sqlx::Postgres,
    idgen_testkit::postgres,
    Dialect::Postgres,
    free_lease: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = now() \
                 WHERE namespace = 'default' AND node = $1",
);
block_cases!(
    mariadb,
    sqlx::MySql,
    idgen_testkit::mysql,
    Dialect::MySql,
    free_lease: "UPDATE idgen_worker_lease SET holder = NULL, expires_at = UTC_TIMESTAMP(6) \
                 WHERE namespace = 'default' AND node = ?",
);

/// MariaDB's setup for the case below (its jump lock is a named lock another connection can
/// hold).
async fn mariadb_installed() -> (
    idgen_testkit::TestDb<sqlx::MySql>,
    sqlx::MySqlPool,
    DbGenerator,
    u64,
) {
    let (db, pool) = common::sql::database(idgen_testkit::mysql(), 12).await;
    let generator =
        DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
    let node = db_generator::install(&pool, &generator).await.unwrap();
    (db, pool, generator, node)
}

async fn mariadb_call(
    conn: &mut sqlx::pool::PoolConnection<sqlx::MySql>,
    generator: &DbGenerator,
) -> Result<i64, sqlx::Error> {
    let sql = generator.next_id_sql(Dialect::MySql).unwrap();
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(&mut **conn)
        .await
}

/// Sessions holding blocks and sessions without one, while another connection holds the jump
/// lock (inside a running statement, so it is not taken for a killed jump's) for 1.5 s: the
/// holders go on handing out their blocks (the fast path takes no lock), the others wait for the
/// jump, every session's blocks are refilled around it, and no ID is handed out twice; no ID's
/// time trails its call by more than a tick and a second, none is ahead of the clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mariadb_reservations_racing_a_held_up_jump_never_repeat_an_id() {
    let (_db, pool, generator, _) = mariadb_installed().await;
    const WARM: usize = 4;
    const COLD: usize = 4;
    for attempt in 1..=ATTEMPTS {
        let mut warm = Vec::new();
        for _ in 0..WARM {
            let mut conn = pool.acquire().await.unwrap();
            mariadb_call(&mut conn, &generator).await.unwrap();
            warm.push(conn);
        }
        let mut cold = Vec::new();
        for _ in 0..COLD {
            cold.push(pool.acquire().await.unwrap());
        }
        let mut gate = pool.acquire().await.unwrap();
        let lock = format!(
            "CONCAT('idgen_jump:', DATABASE(), '.{}:0')",
            generator.function_name()
        );
        let lock_name = lock.clone();
        // The gate takes the lock after this instant and holds it 1.5 s from then: so it surely
        // holds it until this instant + 1.5 s. (The instant its statement returns to this client is
        // no bound: on a loaded machine that answer comes late, after sessions were served again.)
        let surely_held_until = Instant::now() + Duration::from_millis(1_500);
        let gate = tokio::spawn(async move {
            let sql =
                format!("SELECT GET_LOCK({lock}, 0) + SLEEP(1.5) * 0 + RELEASE_LOCK({lock}) * 0");
            let got: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .fetch_one(&mut *gate)
                .await
                .unwrap();
            assert_eq!(got, 1, "the premise: the gate took the jump lock");
        });
        // Wait until the gate holds the lock (a loaded machine may start its statement late; a
        // session served before that is no proof of anything), read from another session.
        let mut watch = pool.acquire().await.unwrap();
        let held = format!("SELECT IS_USED_LOCK({lock_name}) IS NOT NULL");
        wait_until_held(&mut watch, &held).await;
        // And let the clock pass the 100 ms a word may trail it without a jump, so that a session
        // without a block needs one.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let until = Instant::now() + Duration::from_millis(2_500);
        let mut tasks = Vec::new();
        for (i, mut conn) in warm.into_iter().chain(cold).enumerate() {
            let generator = generator.clone();
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                while Instant::now() < until {
                    let called = now_ms();
                    let id = mariadb_call(&mut conn, &generator)
                        .await
                        .unwrap_or_else(|e| panic!("session {i}: {e}"));
                    got.push((id, called, Instant::now(), now_ms()));
                }
                got
            }));
        }
        gate.await.unwrap();
        let mut served = Vec::new();
        for task in tasks {
            served.push(task.await.unwrap());
        }
        // A word may trail the clock by 100 ms without a jump (MariaDB), and a session without a
        // block waits for the jump.
        if raced(
            attempt,
            check_race(&served, WARM, surely_held_until, 1 + 1_000 + 100, true),
        )
        .await
        {
            return;
        }
    }
}

/// PostgreSQL keeps a session's block in a temporary sequence, which a rollback does not
/// undo (`nextval` and `setval` are not transactional) and which a rolled-back transaction
/// that created it takes with it: after rollbacks, a savepoint's rollback, `DISCARD ALL` and
/// `DISCARD TEMP` the session's IDs still strictly increase and none comes twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rollbacks_and_discards_never_give_a_sessions_ids_again() {
    let (_db, pool) = common::sql::database(idgen_testkit::postgres(), 2).await;
    let generator =
        DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
    db_generator::install(&pool, &generator).await.unwrap();
    let sql = generator.next_id_sql(Dialect::Postgres).unwrap();
    let mut conn = pool.acquire().await.unwrap();
    // A call is `C`; anything else runs as it is.
    let script = [
        "BEGIN",
        "C",
        "C",
        "C",
        "ROLLBACK",
        "C",
        "C",
        "C", // the block made in a rolled-back transaction
        "BEGIN",
        "C",
        "SAVEPOINT a",
        "C",
        "C",
        "ROLLBACK TO SAVEPOINT a",
        "C",
        "COMMIT",
        "C",
        "BEGIN",
        "C",
        "C",
        "ROLLBACK",
        "C",
        "C", // the block kept from before: not undone
        "DISCARD ALL",
        "C",
        "C",
        "DISCARD TEMP",
        "C",
        "C",
    ];
    let mut ids = Vec::new();
    for step in script {
        if step == "C" {
            // Not prepared: `DISCARD ALL` drops prepared statements too.
            let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
                .persistent(false)
                .fetch_one(&mut *conn)
                .await
                .unwrap_or_else(|e| panic!("after {} IDs: {e}", ids.len()));
            ids.push(id);
        } else {
            sqlx::raw_sql(sqlx::AssertSqlSafe(step))
                .execute(&mut *conn)
                .await
                .unwrap();
        }
    }
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "not strictly increasing: {ids:?}"
    );
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
    // The premise: the session kept blocks (consecutive IDs within one), through the rollback
    // of a transaction that did not create it.
    let consecutive = ids.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(
        consecutive >= 10,
        "{consecutive} consecutive steps: no blocks kept: {ids:?}"
    );
}

/// A PostgreSQL session that may not create temporary objects (no `TEMPORARY` privilege on the
/// database) keeps no block: every call draws, and its IDs still strictly increase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_session_without_the_temporary_privilege_draws_every_id() {
    let (_db, pool) = common::sql::database(idgen_testkit::postgres(), 2).await;
    let generator =
        DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
    db_generator::install(&pool, &generator).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    sqlx::raw_sql(
        "DO $$ BEGIN
            EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
         END $$;
         CREATE ROLE idgen_no_temp;
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO idgen_no_temp;
         GRANT UPDATE ON ALL SEQUENCES IN SCHEMA public TO idgen_no_temp;
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO idgen_no_temp;
         SET ROLE idgen_no_temp;",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    let sql = generator.next_id_sql(Dialect::Postgres).unwrap();
    let mut ids = Vec::new();
    for _ in 0..20 {
        let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        ids.push(id);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let temporary: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema()",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!(
        temporary, 0,
        "the premise: the session made no temporary object"
    );
    // Each call drew a block of its own: no two IDs follow each other.
    assert!(ids.windows(2).all(|w| w[1] - w[0] >= 256), "{ids:?}");
}

/// PostgreSQL: sessions holding blocks and sessions without one, while another connection
/// holds the generator's jump lock (an advisory lock, inside a running statement) for 1.5 s:
/// the holders go on handing out their blocks (the fast path takes no lock), the others wait
/// for the jump or draw on until their draws reach the clock's tick, every session's blocks
/// are refilled around it, and no ID is handed out twice; no ID's time trails its call by more
/// than a tick and a second, none is ahead of the clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_reservations_racing_a_held_up_jump_never_repeat_an_id() {
    const WARM: usize = 4;
    const COLD: usize = 4;
    let (_db, pool) = common::sql::database(idgen_testkit::postgres(), 12).await;
    let generator =
        DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true);
    db_generator::install(&pool, &generator).await.unwrap();
    let sql = generator.next_id_sql(Dialect::Postgres).unwrap();
    // The jump lock's keys, as the installed function names them.
    let source: String =
        sqlx::query_scalar("SELECT prosrc FROM pg_proc WHERE proname = 'idgen_next_id'")
            .fetch_one(&pool)
            .await
            .unwrap();
    let (class, key) = source
        .split("pg_try_advisory_lock(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|keys| keys.split_once(", "))
        .map(|(a, b)| (a.parse::<i32>().unwrap(), b.parse::<i32>().unwrap()))
        .expect("the function takes its jump lock with pg_try_advisory_lock(class, key)");
    for attempt in 1..=ATTEMPTS {
        let mut warm = Vec::new();
        for _ in 0..WARM {
            let mut conn = pool.acquire().await.unwrap();
            sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.clone()))
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            warm.push(conn);
        }
        let mut cold = Vec::new();
        for _ in 0..COLD {
            cold.push(pool.acquire().await.unwrap());
        }
        let mut gate = pool.acquire().await.unwrap();
        let surely_held_until = Instant::now() + Duration::from_millis(1_500);
        let gate = tokio::spawn(async move {
            let sql = format!(
                "SELECT pg_advisory_lock({class}, {key})::text || pg_sleep(1.5)::text \
                 || pg_advisory_unlock({class}, {key})::text"
            );
            sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
                .fetch_one(&mut *gate)
                .await
                .unwrap();
        });
        let mut watch = pool.acquire().await.unwrap();
        let held = format!(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND classid::bigint = {} AND objid::bigint = {})",
            class as u32, key as u32
        );
        wait_until_held(&mut watch, &held).await;
        // Let the clock move past the base's tick, so that a session without a block needs a jump.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let until = Instant::now() + Duration::from_millis(2_500);
        let mut tasks = Vec::new();
        for (i, mut conn) in warm.into_iter().chain(cold).enumerate() {
            let sql = sql.clone();
            tasks.push(tokio::spawn(async move {
                let mut got = Vec::new();
                while Instant::now() < until {
                    let called = now_ms();
                    let id: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
                        .fetch_one(&mut *conn)
                        .await
                        .unwrap_or_else(|e| panic!("session {i}: {e}"));
                    got.push((id, called, Instant::now(), now_ms()));
                }
                got
            }));
        }
        gate.await.unwrap();
        let mut served = Vec::new();
        for task in tasks {
            served.push(task.await.unwrap());
        }
        // A session without a block is not stalled either: it waits for the jump, or its draws
        // (each a block further on) reach the clock's tick first.
        if raced(
            attempt,
            check_race(&served, WARM, surely_held_until, 1 + 1_000, false),
        )
        .await
        {
            return;
        }
    }
}

/// How many times a race is run before a missed premise fails its test.
const ATTEMPTS: usize = 3;

/// After a race's checks: `true` once it held its premise; `false` to run it again (after the
/// blocks its sessions hold ran out: the pool lends them again, and the cold ones must be cold
/// again) while attempts are left; a panic naming the premise missed after the last.
async fn raced(attempt: usize, premise: Result<(), String>) -> bool {
    match premise {
        Ok(()) => true,
        Err(why) if attempt < ATTEMPTS => {
            eprintln!("attempt {attempt}: {why}; once more");
            tokio::time::sleep(Duration::from_millis(1_100)).await;
            false
        }
        Err(why) => panic!("{why} (and so in each of {ATTEMPTS} attempts)"),
    }
}

/// One call of a session racing a held-up jump: its ID, the wall clock (ms) when it was made,
/// the instant and the wall clock when it returned.
type Served = (i64, i64, Instant, i64);

/// Polls `held` (a query answering whether the gate holds the jump lock) every 5 ms until it
/// does, for at most 10 s.
async fn wait_until_held<DB: sqlx::Database>(watch: &mut sqlx::pool::PoolConnection<DB>, held: &str)
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    bool: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let in_use: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(held.to_owned()))
            .fetch_one(&mut **watch)
            .await
            .unwrap();
        if in_use {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the gate never took the jump lock"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What the race cases check of each session's calls (the first `warm` sessions held a block
/// when the gate took the jump lock): strictly increasing, no ID twice, none ahead of the
/// clock, none trailing its call by more than `max_trail_ms`; each warm session handed out
/// more than one ID while the lock was surely held; each other one got IDs, and with
/// `cold_waits` none while the lock was held.
///
/// The first and the last are the race's premise, which a loaded machine can miss (a warm
/// session's block lasts a second from its tick: a set-up slower than that leaves it none);
/// they are returned as `Err` for the caller to run the race again. The others panic.
fn check_race(
    served: &[Vec<Served>],
    warm: usize,
    surely_held_until: Instant,
    max_trail_ms: i64,
    cold_waits: bool,
) -> Result<(), String> {
    let mut premise = Ok(());
    let mut all = HashSet::new();
    for (i, got) in served.iter().enumerate() {
        let ids: Vec<i64> = got.iter().map(|g| g.0).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "session {i}: not increasing"
        );
        for &(id, called, _, returned) in got {
            assert!(all.insert(id), "{id} twice");
            let at = unix_ms(id);
            assert!(at <= returned, "session {i}: {id} ahead of the clock");
            assert!(
                called - at <= max_trail_ms,
                "session {i}: {id} trails its call by {} ms",
                called - at
            );
        }
        let during = got.iter().filter(|g| g.2 < surely_held_until).count();
        if i < warm {
            if during <= 1 {
                premise = Err(format!(
                    "session {i} holding a block handed out {during} IDs while the jump lock was held"
                ));
            }
        } else {
            if cold_waits && during != 0 {
                premise = Err(format!(
                    "the premise: session {i} without a block got {during} IDs while the jump lock was held"
                ));
            }
            assert!(!got.is_empty(), "session {i}: no ID");
        }
    }
    premise
}
