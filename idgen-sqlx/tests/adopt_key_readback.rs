//! Issue 38: after `idgen adopt` makes the database-side generator a table's key, writers get
//! their own row's key by the means they already use, on real servers: PostgreSQL
//! `RETURNING`, `lastval()` and `currval(pg_get_serial_sequence(…))`; MariaDB `RETURNING`,
//! the OK packet's insert id and `LAST_INSERT_ID()`. A means the switch cannot keep is named
//! by `plan`, and `apply` refuses, changing nothing, until it is acknowledged.

use idgen_sqlx::Layout;
use idgen_sqlx::adopt::{self, AdoptError, AdoptOptions};
use idgen_sqlx::db_generator::DbGenerator;

fn options() -> AdoptOptions {
    AdoptOptions::snowflake("orders", Layout::TWITTER)
        .unwrap()
        .db_generator(
            DbGenerator::new(Layout::TWITTER).skip_takeover_wait_for_tests_and_development(true),
        )
}

async fn run<DB: sqlx::Database>(pool: &sqlx::Pool<DB>, sql: &str)
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// A key idgen issued (identity keys here stay far below 2^32).
fn from_idgen(key: i64) -> bool {
    key > 1 << 32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_returning_lastval_and_currval_give_the_rows_key() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(db.url())
        .await
        .unwrap();
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
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(db.url())
        .await
        .unwrap();
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
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = sqlx::mysql::MySqlPoolOptions::new()
        .max_connections(1)
        .connect(db.url())
        .await
        .unwrap();
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
