//! Issue 38: after `idgen adopt` makes the database-side generator a table's key, writers get
//! their own row's key by the means they already use, on real servers: PostgreSQL
//! `RETURNING`, `lastval()` and `currval(pg_get_serial_sequence(…))`; MariaDB `RETURNING`,
//! the OK packet's insert id and `LAST_INSERT_ID()`. A means the switch cannot keep is named
//! by `plan`, and `apply` refuses, changing nothing, until it is acknowledged.

use idgen_sqlx::Layout;
use idgen_sqlx::adopt::{self, AdoptError, AdoptOptions};
use idgen_sqlx::db_generator::DbGenerator;

mod common;
use common::sql::run;

fn options() -> AdoptOptions {
    options_for("orders")
}

/// The switch of `table`'s key to the database generator (no takeover wait: a test database).
fn options_for(table: &str) -> AdoptOptions {
    AdoptOptions::snowflake(table, Layout::TWITTER)
        .unwrap()
        .db_generator(
            DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true),
        )
}

/// A MariaDB test database and a pool of `sessions` connections to it.
async fn mariadb(sessions: u32) -> (idgen_testkit::TestDb<sqlx::MySql>, sqlx::MySqlPool) {
    common::sql::database(idgen_testkit::mysql(), sessions).await
}

/// A key idgen issued (identity keys here stay far below 2^32).
fn from_idgen(key: i64) -> bool {
    key > 1 << 32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_returning_lastval_and_currval_give_the_rows_key() {
    let (_db, pool) = common::sql::database(idgen_testkit::postgres(), 1).await;
    run(&pool, "CREATE TABLE orders (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer BIGINT NOT NULL)").await;
    run(
        &pool,
        "INSERT INTO orders (customer) SELECT g FROM generate_series(1, 100) AS g",
    )
    .await;
    let plan = adopt::plan(&pool, &options()).await.unwrap();
    assert!(plan.lost_key_readback().is_empty(), "{plan}");
    assert!(plan.to_string().contains("kept: lastval()"), "{plan}");
    assert!(adopt::apply(&pool, &options()).await.unwrap().finished());

    let mut c = pool.acquire().await.unwrap();
    for customer in 1..=3 {
        let returned: i64 =
            sqlx::query_scalar("INSERT INTO orders (customer) VALUES ($1) RETURNING id")
                .bind(customer)
                .fetch_one(&mut *c)
                .await
                .unwrap();
        assert!(from_idgen(returned), "{returned}");
        let (lastval, currval): (i64, i64) =
            sqlx::query_as("SELECT lastval(), currval(pg_get_serial_sequence('orders', 'id'))")
                .fetch_one(&mut *c)
                .await
                .unwrap();
        assert_eq!((lastval, currval), (returned, returned));
    }
    // A multi-row insert: the last row's key, as an identity gives it.
    let keys: Vec<i64> =
        sqlx::query_scalar("INSERT INTO orders (customer) VALUES (7), (8), (9) RETURNING id")
            .fetch_all(&mut *c)
            .await
            .unwrap();
    let lastval: i64 = sqlx::query_scalar("SELECT lastval()")
        .fetch_one(&mut *c)
        .await
        .unwrap();
    assert_eq!(lastval, *keys.iter().max().unwrap());
    // The key sequence hands no key out to code that calls nextval on it itself.
    let foreign: i64 = sqlx::query_scalar("SELECT nextval(pg_get_serial_sequence('orders', 'id'))")
        .fetch_one(&mut *c)
        .await
        .unwrap();
    assert_eq!(foreign, i64::MIN);
    let returned: i64 =
        sqlx::query_scalar("INSERT INTO orders (customer) VALUES (10) RETURNING id")
            .fetch_one(&mut *c)
            .await
            .unwrap();
    let lastval: i64 = sqlx::query_scalar("SELECT lastval()")
        .fetch_one(&mut *c)
        .await
        .unwrap();
    assert_eq!(lastval, returned, "after a foreign nextval too");
}

/// A serial's sequence is kept but no longer owned by the column, so `currval` by its name
/// gives no new key: the plan says so, and apply refuses until acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_serial_currval_by_name_is_named_and_needs_acknowledging() {
    let (_db, pool) = common::sql::database(idgen_testkit::postgres(), 1).await;
    run(
        &pool,
        "CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, customer BIGINT NOT NULL)",
    )
    .await;
    run(
        &pool,
        "INSERT INTO orders (customer) SELECT g FROM generate_series(1, 100) AS g",
    )
    .await;
    let plan = adopt::plan(&pool, &options()).await.unwrap();
    let lost: Vec<&str> = plan
        .lost_key_readback()
        .iter()
        .map(|r| r.means.as_str())
        .collect();
    assert_eq!(
        lost,
        ["currval('public.orders_id_seq') by the old sequence's name"],
        "{plan}"
    );
    assert!(plan.to_string().contains("on PostgreSQL "), "{plan}");
    match adopt::apply(&pool, &options()).await {
        Err(AdoptError::KeyReadbackLost { means, .. }) => assert_eq!(means, lost),
        other => panic!("{other:?}"),
    }
    let progress: Option<String> = sqlx::query_scalar("SELECT to_regclass('idgen_adoption')::text")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(progress, None, "the refusal changed nothing");
    assert!(
        adopt::apply(&pool, &options().accept_lost_key_readback())
            .await
            .unwrap()
            .finished()
    );
    let (returned, lastval, currval, sequence): (i64, i64, i64, String) = {
        let mut c = pool.acquire().await.unwrap();
        let r: i64 = sqlx::query_scalar("INSERT INTO orders (customer) VALUES (1) RETURNING id")
            .fetch_one(&mut *c)
            .await
            .unwrap();
        let (l, cv, s) = sqlx::query_as("SELECT lastval(), currval(pg_get_serial_sequence('orders', 'id')), pg_get_serial_sequence('orders', 'id')")
            .fetch_one(&mut *c).await.unwrap();
        (r, l, cv, s)
    };
    assert!(from_idgen(returned));
    assert_eq!((lastval, currval), (returned, returned));
    assert_eq!(sequence, "public.orders_id_idgen_seq");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_ok_packet_and_last_insert_id_give_the_rows_key() {
    let (_db, pool) = mariadb(1).await;
    run(&pool, "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, customer BIGINT NOT NULL) ENGINE = InnoDB").await;
    run(&pool, "CREATE TABLE order_lines (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL) ENGINE = InnoDB").await;
    run(
        &pool,
        "INSERT INTO orders (customer) SELECT seq FROM seq_1_to_100",
    )
    .await;
    let plan = adopt::plan(&pool, &options()).await.unwrap();
    let lost: Vec<&str> = plan
        .lost_key_readback()
        .iter()
        .map(|r| r.means.as_str())
        .collect();
    assert_eq!(lost.len(), 2, "{plan}");
    assert!(
        lost[0].starts_with("consecutive keys of a multi-row INSERT"),
        "{plan}"
    );
    assert!(plan.to_string().contains("on MariaDB 1"), "{plan}");
    match adopt::apply(&pool, &options()).await {
        Err(AdoptError::KeyReadbackLost { server, .. }) => {
            assert!(server.starts_with("MariaDB "), "{server}")
        }
        other => panic!("{other:?}"),
    }
    let triggers: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(triggers, 0, "the refusal changed nothing");
    assert!(
        adopt::apply(&pool, &options().accept_lost_key_readback())
            .await
            .unwrap()
            .finished()
    );

    let mut c = pool.acquire().await.unwrap();
    for customer in 1..=3_i64 {
        let done = sqlx::query("INSERT INTO orders (customer) VALUES (?)")
            .bind(customer)
            .execute(&mut *c)
            .await
            .unwrap();
        let ok_packet = done.last_insert_id() as i64;
        let last: u64 = sqlx::query_scalar("SELECT LAST_INSERT_ID()")
            .fetch_one(&mut *c)
            .await
            .unwrap();
        let stored: i64 =
            sqlx::query_scalar("SELECT id FROM orders WHERE customer = ? ORDER BY id DESC LIMIT 1")
                .bind(customer)
                .fetch_one(&mut *c)
                .await
                .unwrap();
        assert!(from_idgen(stored), "{stored}");
        assert_eq!((ok_packet, last as i64), (stored, stored));
        // Another AUTO_INCREMENT table in between, as a writer's lines are.
        sqlx::query("INSERT INTO order_lines (order_id) VALUES (?)")
            .bind(stored)
            .execute(&mut *c)
            .await
            .unwrap();
        let returned: i64 =
            sqlx::query_scalar("INSERT INTO orders (customer) VALUES (?) RETURNING id")
                .bind(-customer)
                .fetch_one(&mut *c)
                .await
                .unwrap();
        let last: u64 = sqlx::query_scalar("SELECT LAST_INSERT_ID()")
            .fetch_one(&mut *c)
            .await
            .unwrap();
        assert_eq!(
            last as i64, returned,
            "RETURNING and LAST_INSERT_ID() agree"
        );
    }
    // A multi-row insert: LAST_INSERT_ID() is the first row's key, as AUTO_INCREMENT gives it;
    // every row's key is the generator's.
    let done = sqlx::query("INSERT INTO orders (customer) VALUES (7000), (7001), (7002)")
        .execute(&mut *c)
        .await
        .unwrap();
    let keys: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM orders WHERE customer IN (7000, 7001, 7002) ORDER BY customer",
    )
    .fetch_all(&mut *c)
    .await
    .unwrap();
    assert_eq!(done.last_insert_id() as i64, keys[0]);
    assert!(
        keys.iter().all(|k| from_idgen(*k)) && keys.windows(2).all(|k| k[0] < k[1]),
        "{keys:?}"
    );
    // An explicit key is kept, as before.
    sqlx::query("INSERT INTO orders (id, customer) VALUES (5000, 5000)")
        .execute(&mut *c)
        .await
        .unwrap();
    let id: i64 = sqlx::query_scalar("SELECT id FROM orders WHERE customer = 5000")
        .fetch_one(&mut *c)
        .await
        .unwrap();
    assert_eq!(id, 5000);
}

/// The row a statement's reported key names, by its natural key `u` (`None`: no row has it).
async fn reported_row(c: &mut sqlx::MySqlConnection, table: &str, key: u64) -> Option<i64> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT u FROM {table} WHERE id = ?"
    )))
    .bind(key as i64)
    .fetch_optional(&mut *c)
    .await
    .unwrap()
}

/// Statements whose first row is not the first row they insert (`INSERT IGNORE` of a
/// duplicate, `ON DUPLICATE KEY UPDATE`, `REPLACE`), run on an adopted table and on a plain
/// `AUTO_INCREMENT` twin, each in a session of its own (`LAST_INSERT_ID()` is the session's,
/// whatever the table): the OK packet's insert id and `LAST_INSERT_ID()`
/// name the same row (by its natural key) on both, and every key the adopted table got is the
/// generator's. With the trigger that gave only a statement's first *tried* row the forced key,
/// `INSERT IGNORE (dup), (new)` left `LAST_INSERT_ID()` on the session's previous row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_ignored_and_upserted_first_rows_read_back_as_auto_increment_does() {
    let (_db, pool) = mariadb(2).await;
    for t in ["orders", "plain"] {
        run(&pool, &format!("CREATE TABLE {t} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, u INT NOT NULL UNIQUE, v VARCHAR(8) NOT NULL) ENGINE = InnoDB")).await;
        run(
            &pool,
            &format!("INSERT INTO {t} (u, v) SELECT seq, 'old' FROM seq_1_to_20"),
        )
        .await;
    }
    assert!(
        adopt::apply(&pool, &options().accept_lost_key_readback())
            .await
            .unwrap()
            .finished()
    );
    let statements = [
        "INSERT INTO {t} (u, v) VALUES (101, 'a'), (102, 'b')",
        "INSERT IGNORE INTO {t} (u, v) VALUES (101, 'dup'), (103, 'c'), (104, 'd')",
        "INSERT IGNORE INTO {t} (u, v) VALUES (101, 'dup'), (102, 'dup'), (105, 'e'), (106, 'f')",
        "INSERT IGNORE INTO {t} (u, v) VALUES (105, 'dup')",
        "INSERT INTO {t} (u, v) VALUES (107, 'g')",
        "INSERT INTO {t} (u, v) VALUES (101, 'x'), (108, 'h') ON DUPLICATE KEY UPDATE v = VALUES(v)",
        "INSERT INTO {t} (u, v) VALUES (102, 'y') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), v = 'y'",
        "REPLACE INTO {t} (u, v) VALUES (109, 'r'), (109, 's'), (110, 't')",
        "INSERT IGNORE INTO {t} (u, v) SELECT u + 100, 'sel' FROM {t} WHERE u BETWEEN 5 AND 12",
        "INSERT INTO {t} (u, v) VALUES (200, 'z')",
    ];
    let mut sessions = [pool.acquire().await.unwrap(), pool.acquire().await.unwrap()];
    for statement in statements {
        let mut seen = Vec::new();
        for (t, c) in ["orders", "plain"].into_iter().zip(sessions.iter_mut()) {
            let c = &mut **c;
            let sql = statement.replace("{t}", t);
            let done = sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                .execute(&mut *c)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            let ok_packet = reported_row(c, t, done.last_insert_id()).await;
            let last: u64 = sqlx::query_scalar("SELECT LAST_INSERT_ID()")
                .fetch_one(&mut *c)
                .await
                .unwrap();
            let last = reported_row(c, t, last).await;
            seen.push((t, done.rows_affected(), ok_packet, last));
        }
        let (adopted, plain) = (&seen[0], &seen[1]);
        assert_eq!(
            (adopted.1, adopted.2, adopted.3),
            (plain.1, plain.2, plain.3),
            "{statement}: (rows affected, the OK packet's row, LAST_INSERT_ID()'s row) differ from AUTO_INCREMENT's"
        );
    }
    // Every row the adopted table got since is the generator's, and the two tables hold the
    // same rows.
    let c = &mut *sessions[0];
    let rows = |t: &str| format!("SELECT u, v, id FROM {t} WHERE u > 20 ORDER BY u");
    let adopted: Vec<(i32, String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(rows("orders")))
        .fetch_all(&mut *c)
        .await
        .unwrap();
    let plain: Vec<(i32, String, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(rows("plain")))
        .fetch_all(&mut *c)
        .await
        .unwrap();
    assert!(adopted.iter().all(|r| from_idgen(r.2)), "{adopted:?}");
    let strip = |v: &[(i32, String, i64)]| -> Vec<(i32, String)> {
        v.iter().map(|r| (r.0, r.1.clone())).collect()
    };
    assert_eq!(strip(&adopted), strip(&plain));
    assert_eq!(adopted.len(), 13, "{adopted:?}");
}

/// An application trigger on one adopted table that inserts into a second adopted table while
/// the first's statement runs: each row of both gets a key of its own from the generator (no
/// key twice across the two tables: a second forced value in one statement is not taken, the
/// run of the first goes on), and the statement's `LAST_INSERT_ID()` is its first row's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_an_application_trigger_into_a_second_adopted_table_takes_no_key_twice() {
    let (_db, pool) = mariadb(1).await;
    run(&pool, "CREATE TABLE orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, u INT NOT NULL UNIQUE) ENGINE = InnoDB").await;
    run(&pool, "CREATE TABLE audit (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, order_id BIGINT NOT NULL, u INT NOT NULL UNIQUE) ENGINE = InnoDB").await;
    run(&pool, "INSERT INTO orders (u) VALUES (0)").await;
    run(&pool, "INSERT INTO audit (order_id, u) VALUES (0, 0)").await;
    for table in ["orders", "audit"] {
        let options = options_for(table).accept_lost_key_readback();
        assert!(adopt::apply(&pool, &options).await.unwrap().finished());
    }
    run(&pool, "CREATE TRIGGER orders_audit AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (order_id, u) VALUES (NEW.id, NEW.u)").await;
    let mut c = pool.acquire().await.unwrap();
    for statement in [
        "INSERT INTO orders (u) VALUES (1), (2), (3)",
        "INSERT IGNORE INTO orders (u) VALUES (1), (4), (5)",
        "INSERT INTO orders (u) VALUES (6)",
    ] {
        let done = sqlx::query(statement).execute(&mut *c).await.unwrap();
        let first_new: i64 = sqlx::query_scalar(
            "SELECT id FROM orders WHERE u = (SELECT MIN(o.u) FROM orders o JOIN audit a ON a.order_id = o.id WHERE o.id >= ?)",
        )
        .bind(done.last_insert_id() as i64)
        .fetch_one(&mut *c)
        .await
        .unwrap();
        assert_eq!(done.last_insert_id() as i64, first_new, "{statement}");
    }
    let keys: Vec<(String, i64)> = sqlx::query_as(
        "SELECT 'orders', id FROM orders WHERE u > 0 UNION ALL SELECT 'audit', id FROM audit WHERE u > 0",
    )
    .fetch_all(&mut *c)
    .await
    .unwrap();
    assert_eq!(keys.len(), 12, "{keys:?}");
    let mut ids: Vec<i64> = keys.iter().map(|k| k.1).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 12, "a key twice across the two tables: {keys:?}");
    assert!(ids.iter().all(|k| from_idgen(*k)), "{keys:?}");
    let linked: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM orders o JOIN audit a ON a.order_id = o.id AND a.u = o.u WHERE o.u > 0",
    )
    .fetch_one(&mut *c)
    .await
    .unwrap();
    assert_eq!(linked, 6);
}
