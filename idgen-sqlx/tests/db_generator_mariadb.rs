//! The database-side generator on a real MariaDB server, where MariaDB differs from PostgreSQL:
//! a claim made through a transaction of idgen's own (not one `UPDATE … RETURNING`), the jump
//! lock (a named lock, `GET_LOCK`, which a killed statement keeps), literals parsed under the
//! session's `sql_mode`, and the in-transaction check of a pooled connection.

use std::time::Duration;

use idgen_sqlx::db_generator::{self, DbGenerator};
use idgen_sqlx::lease::{ClaimRequest, LeaseStore, SqlxLeaseStore};
use idgen_sqlx::{Dialect, Layout, SnowflakeId};

mod common;

type Pool = sqlx::MySqlPool;

/// A fresh database and a pool of up to 8 connections to it.
async fn database() -> (idgen_testkit::TestDb<sqlx::MySql>, Pool) {
    common::sql::database(idgen_testkit::mysql(), 8).await
}

/// `n` IDs from the function; the last one.
async fn issue(pool: &Pool, generator: &DbGenerator, n: usize) -> i64 {
    let sql = generator.next_id_sql(Dialect::MySql).unwrap();
    let mut last = 0;
    for _ in 0..n {
        last = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .fetch_one(pool)
            .await
            .unwrap();
    }
    last
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn unix_ms(layout: &Layout, id: i64) -> i64 {
    layout
        .decompose(SnowflakeId::try_from(id).unwrap())
        .unwrap()
        .unix_ms
}

/// Issue 36, item 5: the fence trigger raises the row's last timestamp as a claim takes the
/// database's row (an operator ended its lease, holder kept); the claim must start after it.
/// On MariaDB the claim locks the row, then updates it: the last timestamp it read with the
/// lock is the one from before the trigger ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_of_the_databases_row_starts_after_what_the_function_issued() {
    let (_db, pool) = database().await;
    let layout = Layout::TWITTER;
    let generator = DbGenerator::new(layout);
    let node = db_generator::install(&pool, &generator).await.unwrap();
    assert_eq!(node, 0, "a fresh lease table: the lowest node ID");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let issued_ms = unix_ms(&layout, issue(&pool, &generator, 20).await);

    // An operator ends the database's lease by hand, its holder kept: the trigger leaves such
    // an update alone, and the row is now expired, the lowest one.
    sqlx::query(
        "UPDATE idgen_worker_lease SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND \
         WHERE namespace = 'default' AND node = ?",
    )
    .bind(node as i64)
    .execute(&pool)
    .await
    .unwrap();
    let store = SqlxLeaseStore::new(pool.clone());
    let stored = store.rows("default").await.unwrap()[0].last_timestamp_ms;
    assert!(
        stored.is_none_or(|ms| ms < issued_ms),
        "the premise: the row's last timestamp ({stored:?}) is below the last ID's ({issued_ms})"
    );

    let claim = LeaseStore::claim(
        &store,
        ClaimRequest {
            namespace: "default",
            capacity: layout.node_capacity(),
            holder: "app-1",
            ttl: Duration::from_secs(10),
        },
    )
    .await
    .unwrap()
    .expect("a node ID");
    assert_eq!(claim.node, node, "the database's expired row");
    let row = store.rows("default").await.unwrap()[0].last_timestamp_ms;
    assert!(
        row.is_some_and(|ms| ms >= issued_ms),
        "the trigger raised the row to {row:?}, at or above {issued_ms}"
    );
    assert!(
        claim.last_timestamp_ms.is_some_and(|ms| ms >= issued_ms),
        "the claim starts from {:?}, below the function's last ID at {issued_ms} ms: its IDs \
         could repeat the function's",
        claim.last_timestamp_ms
    );
}

/// Issue 36, item 4: a statement killed in the middle of a jump (`KILL QUERY` here;
/// `max_statement_time` or a client's time-out cut it the same way) leaves the jump lock on its
/// idle connection. Another session that needs a jump must go on at once, not wait 10 s and
/// fail `IDG05` until that connection runs the function again or closes.
///
/// The jump is made long enough to be killed in its middle for sure: the base is planted far
/// behind the clock, so that the jump takes tens of thousands of `NEXTVAL`s (a few hundred ms),
/// and the kill is sent as soon as the call holds the jump lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_statement_killed_mid_jump_does_not_hold_up_other_sessions() {
    let (_db, pool) = database().await;
    let layout = Layout::TWITTER;
    let generator = DbGenerator::new(layout);
    db_generator::install(&pool, &generator).await.unwrap();
    let f = generator.function_name();
    let next = generator.next_id_sql(Dialect::MySql).unwrap();
    let bits = layout.sequence_bits();
    // Who holds the jump lock (named `idgen_jump:<database>.<function>:<generation>`; before
    // the fixes, `idgen_jump:<function>`).
    let lock_holder = format!(
        "SELECT CAST(COALESCE(IS_USED_LOCK(CONCAT('idgen_jump:', DATABASE(), '.{f}:0')), \
         IS_USED_LOCK('idgen_jump:{f}:0'), IS_USED_LOCK('idgen_jump:{f}'), 0) AS SIGNED)"
    );
    let base = format!(
        "SELECT CAST(b0.next_not_cached_value + b1.next_not_cached_value + b2.next_not_cached_value AS SIGNED) \
         FROM `{f}_base_0` b0, `{f}_base_1` b1, `{f}_base_2` b2"
    );

    // Nothing was drawn yet: plant the base far behind the clock, at a gap whose every level
    // takes many steps (the jump steps three sequences by 2^28, 2^14 and 1 ticks): about 1,900,
    // 16,000 and 10,000, whatever few ms pass until the call (no carry into the level above).
    let now_tick = layout.ticks_at(now_ms()).unwrap() as i64;
    let gap = (((now_tick >> 28) - 1) << 28) | (16_000 << 14) | 10_000;
    let plant = format!(
        "ALTER SEQUENCE `{f}_base_0` RESTART WITH {}",
        (now_tick - gap) << bits
    );
    sqlx::query(sqlx::AssertSqlSafe(plant))
        .execute(&pool)
        .await
        .unwrap();

    let mut killed = pool.acquire().await.unwrap();
    let killed_id: i64 = sqlx::query_scalar("SELECT CAST(CONNECTION_ID() AS SIGNED)")
        .fetch_one(&mut *killed)
        .await
        .unwrap();
    let mut monitor = pool.acquire().await.unwrap();
    let call = {
        let next = next.clone();
        tokio::spawn(async move {
            let outcome = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next))
                .fetch_one(&mut *killed)
                .await;
            (killed, outcome)
        })
    };
    let waited_since = std::time::Instant::now();
    loop {
        let held_by: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(lock_holder.clone()))
            .fetch_one(&mut *monitor)
            .await
            .unwrap();
        if held_by == killed_id {
            break;
        }
        assert!(
            waited_since.elapsed() < Duration::from_secs(10) && !call.is_finished(),
            "the call never held the jump lock"
        );
    }
    sqlx::query(sqlx::AssertSqlSafe(format!("KILL QUERY {killed_id}")))
        .execute(&mut *monitor)
        .await
        .unwrap();
    let (mut killed, outcome) = call.await.unwrap();
    let err = outcome.expect_err("the call was killed");
    assert!(err.to_string().contains("interrupted"), "{err}");
    let held_by: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(lock_holder))
        .fetch_one(&mut *monitor)
        .await
        .unwrap();
    assert_eq!(
        held_by, killed_id,
        "the premise: the killed call's idle connection kept the jump lock"
    );
    let left: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(base))
        .fetch_one(&mut *monitor)
        .await
        .unwrap();
    assert!(
        left >> bits < now_tick - 1000,
        "the premise: the jump was cut halfway (the base is {} ticks behind)",
        now_tick - (left >> bits)
    );

    // Another session needs a jump: it goes on promptly.
    let started = std::time::Instant::now();
    let first: i64 = tokio::time::timeout(
        Duration::from_secs(20),
        sqlx::query_scalar(sqlx::AssertSqlSafe(next.clone())).fetch_one(&pool),
    )
    .await
    .expect("an answer within 20 s")
    .unwrap_or_else(|e| {
        panic!(
            "another session's call failed after {:?} while the killed connection sat idle with the jump lock: {e}",
            started.elapsed()
        )
    });
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "another session's call took {:?}",
        started.elapsed()
    );

    // Calls on every connection, the killed one too, go on, each session's IDs increasing (a
    // session hands out its own block: IDs of two sessions interleave), no ID twice, none
    // ahead of the clock (no gap was added twice).
    let mut other = pool.acquire().await.unwrap();
    let (mut last_killed, mut last_other) = (0, 0);
    let mut all = std::collections::HashSet::from([first]);
    for _ in 0..50 {
        let id = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next.clone()))
            .fetch_one(&mut *killed)
            .await
            .unwrap();
        assert!(id > last_killed, "{id} after {last_killed}");
        last_killed = id;
        let id = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next.clone()))
            .fetch_one(&mut *other)
            .await
            .unwrap();
        assert!(id > last_other, "{id} after {last_other}");
        last_other = id;
        assert!(
            all.insert(last_killed) && all.insert(last_other),
            "an ID twice"
        );
    }
    let last = last_killed.max(last_other);
    assert!(
        unix_ms(&layout, last) <= now_ms() + 5,
        "the last ID is {} ms ahead of the clock",
        unix_ms(&layout, last) - now_ms()
    );
}

/// A pool whose connections run `on_connect` first.
async fn pool_with<DB: sqlx::Database>(url: &str, on_connect: &'static str) -> sqlx::Pool<DB>
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(4)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                sqlx::Executor::execute(&mut *conn, on_connect).await?;
                Ok(())
            })
        })
        .connect(url)
        .await
        .expect("a pool")
}

/// The SQLSTATE of a failed call.
fn sqlstate(err: &sqlx::Error) -> Option<String> {
    err.as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.into_owned())
}

/// Issue 36, item 6: the namespace is written into the fence trigger. A namespace with a quote
/// and a backslash, installed from sessions under `NO_BACKSLASH_ESCAPES` (a trigger body is
/// parsed under the `sql_mode` it was created with) and under the default mode, still fences
/// the function when its row is freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_a_namespace_with_a_quote_and_a_backslash_fences_under_every_sql_mode() {
    let db = idgen_testkit::mysql().await.expect("a database");
    for (i, (on_connect, namespace)) in [
        (
            "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')",
            r"o'k\n",
        ),
        ("SET SESSION sql_mode = @@sql_mode", r"a\b'c\\"),
    ]
    .into_iter()
    .enumerate()
    {
        let pool: Pool = pool_with(db.url(), on_connect).await;
        let generator = DbGenerator::new(Layout::TWITTER)
            .function(&format!("ns{i}_next_id"))
            .unwrap()
            .namespace(namespace);
        let node = db_generator::install(&pool, &generator).await.unwrap();
        issue(&pool, &generator, 3).await;
        let freed = sqlx::query(
            "UPDATE idgen_worker_lease SET holder = NULL, expires_at = UTC_TIMESTAMP(6) \
             WHERE namespace = ? AND node = ?",
        )
        .bind(namespace)
        .bind(node as i64)
        .execute(&pool)
        .await
        .unwrap();
        assert_eq!(freed.rows_affected(), 1, "{on_connect}: the row is freed");
        // A session holding no block (a new pool's): the fence refuses it at once (`IDG02`). Had
        // the trigger not recognised the row, the function's own check would say `IDG06`.
        let fresh: Pool = pool_with(db.url(), on_connect).await;
        let next = generator.next_id_sql(Dialect::MySql).unwrap();
        let outcome = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next))
            .fetch_one(&fresh)
            .await;
        match outcome {
            Err(e) => assert_eq!(sqlstate(&e).as_deref(), Some("IDG02"), "{on_connect}: {e}"),
            Ok(id) => panic!(
                "{on_connect}: the function issued {id} after its row of namespace {namespace:?} was freed: the fence trigger did not recognise it"
            ),
        }
    }
}

/// The same on PostgreSQL, where the trigger's `WHEN` clause is parsed under the installing
/// session's `standard_conforming_strings`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_namespace_with_a_quote_and_a_backslash_fences_whatever_standard_conforming_strings_says()
 {
    let db = idgen_testkit::postgres().await.expect("a database");
    for (i, on_connect) in [
        "SET standard_conforming_strings = off",
        "SET standard_conforming_strings = on",
    ]
    .into_iter()
    .enumerate()
    {
        let namespace = r"o'k\n";
        let pool: sqlx::PgPool = pool_with(db.url(), on_connect).await;
        let generator = DbGenerator::new(Layout::TWITTER)
            .function(&format!("ns{i}_next_id"))
            .unwrap()
            .namespace(format!("{namespace}{i}"));
        let node = db_generator::install(&pool, &generator).await.unwrap();
        let next = generator.next_id_sql(Dialect::Postgres).unwrap();
        sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next.clone()))
            .fetch_one(&pool)
            .await
            .unwrap();
        let freed = sqlx::query(
            "UPDATE idgen_worker_lease SET holder = NULL, expires_at = now() \
             WHERE namespace = $1 AND node = $2",
        )
        .bind(format!("{namespace}{i}"))
        .bind(node as i64)
        .execute(&pool)
        .await
        .unwrap();
        assert_eq!(freed.rows_affected(), 1, "{on_connect}: the row is freed");
        // A new session (holding no block, which a fenced function may still hand out).
        let fresh: sqlx::PgPool = pool_with(db.url(), on_connect).await;
        let outcome = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(next))
            .fetch_one(&fresh)
            .await;
        match outcome {
            Err(e) => assert_eq!(sqlstate(&e).as_deref(), Some("IDG02"), "{on_connect}: {e}"),
            Ok(id) => panic!(
                "{on_connect}: the function issued {id} after its row was freed: the fence trigger did not recognise the namespace"
            ),
        }
    }
}

/// A MariaDB connection that answers like MySQL, which has no `@@in_transaction`: the check
/// then takes MySQL's way (and, MariaDB 10.11 knowing no `@@transaction_isolation` either, the
/// one of MySQL before 5.7.20: `@@tx_isolation`).
struct LikeMySql<'c>(&'c mut sqlx::MySqlConnection);

impl idgen_sql::Session for LikeMySql<'_> {
    type Error = sqlx::Error;

    fn dialect(&self) -> Dialect {
        Dialect::MySql
    }

    fn classify(&self, _: &sqlx::Error) -> idgen_sql::ErrorClass {
        idgen_sql::ErrorClass::Other
    }

    async fn execute(&mut self, st: idgen_sql::Statement<'_>) -> Result<u64, sqlx::Error> {
        assert!(st.params.is_empty(), "the check binds nothing");
        let done = sqlx::raw_sql(sqlx::AssertSqlSafe(st.sql))
            .execute(&mut *self.0)
            .await?;
        Ok(done.rows_affected())
    }

    async fn fetch_i64(
        &mut self,
        st: idgen_sql::Statement<'_>,
    ) -> Result<Option<i64>, sqlx::Error> {
        let sql = st
            .sql
            .replace("@@in_transaction", "@@no_such_variable_on_mysql");
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_optional(&mut *self.0)
            .await
    }

    async fn fetch_text(
        &mut self,
        _: idgen_sql::Statement<'_>,
    ) -> Result<Option<String>, sqlx::Error> {
        unimplemented!("not used by the check")
    }

    async fn fetch_claim(
        &mut self,
        _: idgen_sql::Statement<'_>,
    ) -> Result<Option<(i64, Option<i64>)>, sqlx::Error> {
        unimplemented!("not used by the check")
    }

    async fn fetch_lease_rows(
        &mut self,
        _: idgen_sql::Statement<'_>,
    ) -> Result<Vec<idgen_sql::LeaseRow>, sqlx::Error> {
        unimplemented!("not used by the check")
    }

    async fn pause(&mut self, pause: Duration) {
        tokio::time::sleep(pause).await;
    }
}

/// Issue 37, item 5: on a server without `@@in_transaction` (MySQL) a connection the
/// application left inside a transaction (`autocommit=0`, a row written, no `COMMIT`) is
/// refused, and the application's work stays uncommitted; where no transaction is active the
/// check passes. Each answer agrees with MariaDB's own `@@in_transaction`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_inside_the_applications_transaction_is_found_without_in_transaction() {
    let (_db, pool) = database().await;
    sqlx::raw_sql("CREATE TABLE app (id BIGINT PRIMARY KEY) ENGINE = InnoDB")
        .execute(&pool)
        .await
        .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    conn.close_on_drop();
    for (setup, inside) in [
        ("SET autocommit = 1", false),
        ("SET autocommit = 0", false),
        ("SELECT 1", false),
        ("SELECT COUNT(*) FROM app", true),
        ("COMMIT", false),
        ("INSERT INTO app VALUES (1)", true),
    ] {
        sqlx::raw_sql(setup).execute(&mut *conn).await.unwrap();
        let mariadb_says: i64 = sqlx::query_scalar("SELECT CAST(@@in_transaction AS SIGNED)")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(mariadb_says == 1, inside, "after {setup}: @@in_transaction");
        let outcome = idgen_sql::check_outside_transaction(&mut LikeMySql(&mut conn)).await;
        match outcome {
            Ok(()) => assert!(
                !inside,
                "after {setup}: the check passed inside a transaction"
            ),
            Err(e) => {
                assert!(inside, "after {setup}: {e}");
                assert!(
                    e.to_string()
                        .contains("inside a transaction of the application's"),
                    "{e}"
                );
            }
        }
    }
    // The application's row is still uncommitted: the check ended nothing.
    let seen_elsewhere: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM app")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(seen_elsewhere, 0);
    sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.unwrap();
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM app")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(kept, 0, "the application's row went with its rollback");
}
