//! What `idgen adopt` checks before it takes a table over, on real PostgreSQL and MariaDB
//! servers (issue 38, items 3 to 5): a named hi-lo sequence is the one the writers use (and
//! never gets past `AUTO_INCREMENT`), a narrow key has room for the blocks, and mixed-case
//! names (Prisma/EF style `"Order"` with `"publicId"`) are quoted everywhere, with the unique
//! index recorded only once it is valid.

use std::time::Duration;

use idgen_sqlx::Layout;
use idgen_sqlx::adopt::{self, AdoptError, AdoptOptions};

/// Runs each statement on `pool`, panicking with the statement on error.
macro_rules! run {
    ($pool:expr, [$($sql:expr),+ $(,)?]) => {
        $(
            sqlx::raw_sql(sqlx::AssertSqlSafe(String::from($sql)))
                .execute($pool)
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", $sql));
        )+
    };
}

async fn count(pool: &sqlx::PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn hilo(table: &str, block: u64) -> AdoptOptions {
    AdoptOptions::hilo(table, block).unwrap()
}

fn named(table: &str, block: u64, sequence: &str) -> AdoptOptions {
    hilo(table, block).sequence(sequence).unwrap()
}

/// MariaDB: naming a sequence does not get hi-lo past `AUTO_INCREMENT`, which would go on
/// handing out keys inside the blocks: refused exactly as without the name, changing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_a_named_sequence_on_auto_increment_is_refused_as_without_it() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = db.pool();
    run!(
        pool,
        [
            "CREATE TABLE order_lines (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, qty INT NOT NULL)",
            "CREATE SEQUENCE order_lines_seq",
            "INSERT INTO order_lines (qty) SELECT seq FROM seq_1_to_100",
        ]
    );
    let without = adopt::plan(pool, &hilo("order_lines", 1000))
        .await
        .unwrap_err();
    let with = adopt::plan(pool, &named("order_lines", 1000, "order_lines_seq"))
        .await
        .unwrap_err();
    assert!(matches!(with, AdoptError::Unsupported { .. }), "{with:?}");
    assert_eq!(with.to_string(), without.to_string());
    let applied = adopt::apply(
        pool,
        &named("order_lines", 1000, "order_lines_seq").writers_use_sequence(),
    )
    .await;
    assert!(
        matches!(applied, Err(AdoptError::Unsupported { .. })),
        "{applied:?}"
    );
    let extra: String = sqlx::query_scalar(
        "SELECT EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'order_lines' AND COLUMN_NAME = 'id'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert!(
        extra.to_lowercase().contains("auto_increment"),
        "untouched: {extra}"
    );
    let increment: i64 =
        sqlx::query_scalar("SELECT CAST(increment AS SIGNED) FROM order_lines_seq")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(increment, 1, "the sequence is untouched");
}

/// PostgreSQL: a named sequence must be the column's own (its identity's, or the one its
/// default calls, owned by the column or not), unless the user moves the writers to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_sequence_the_writers_do_not_use_is_refused() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    run!(
        pool,
        [
            "CREATE TABLE lines (id BIGSERIAL PRIMARY KEY)",
            "CREATE SEQUENCE other_seq",
            "CREATE SEQUENCE shared_ids",
            "CREATE TABLE notes (id BIGINT PRIMARY KEY DEFAULT nextval('shared_ids'))",
            "CREATE TABLE keyed (id BIGINT PRIMARY KEY)",
        ]
    );
    let err = adopt::plan(pool, &named("lines", 1000, "other_seq"))
        .await
        .unwrap_err();
    match &err {
        AdoptError::SequenceNotUsed {
            table,
            column,
            sequence,
            key_source,
        } => {
            assert_eq!(
                (table.as_str(), column.as_str(), sequence.as_str()),
                ("lines", "id", "other_seq")
            );
            assert_eq!(key_source, "its default, nextval of public.lines_id_seq");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("sequence other_seq is not what lines.id takes its keys from"),
        "{err}"
    );
    for ok in ["lines_id_seq", "public.lines_id_seq"] {
        adopt::plan(pool, &named("lines", 1000, ok)).await.unwrap();
    }
    adopt::plan(
        pool,
        &named("lines", 1000, "other_seq").writers_use_sequence(),
    )
    .await
    .unwrap();
    // A default that calls a sequence the column does not own is the writers' sequence too.
    adopt::plan(pool, &hilo("notes", 1000)).await.unwrap();
    adopt::plan(pool, &named("notes", 1000, "shared_ids"))
        .await
        .unwrap();
    // No default: the writers give every key, from where idgen cannot see.
    let err = adopt::plan(pool, &named("keyed", 1000, "other_seq"))
        .await
        .unwrap_err();
    assert!(matches!(err, AdoptError::SequenceNotUsed { .. }), "{err:?}");
    adopt::plan(
        pool,
        &named("keyed", 1000, "other_seq").writers_use_sequence(),
    )
    .await
    .unwrap();
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM pg_tables WHERE tablename = 'idgen_adoption'"
        )
        .await,
        0
    );
}

/// MariaDB: the same with `DEFAULT NEXTVAL(seq)`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_a_sequence_the_writers_do_not_use_is_refused() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = db.pool();
    run!(
        pool,
        [
            "CREATE SEQUENCE lines_seq",
            "CREATE SEQUENCE other_seq",
            "CREATE TABLE items (id BIGINT NOT NULL DEFAULT NEXTVAL(lines_seq) PRIMARY KEY)",
        ]
    );
    let err = adopt::plan(pool, &named("items", 1000, "other_seq"))
        .await
        .unwrap_err();
    match &err {
        AdoptError::SequenceNotUsed {
            table,
            column,
            sequence,
            ..
        } => {
            assert_eq!(
                (table.as_str(), column.as_str(), sequence.as_str()),
                ("items", "id", "other_seq")
            );
        }
        other => panic!("{other:?}"),
    }
    adopt::plan(pool, &named("items", 1000, "lines_seq"))
        .await
        .unwrap();
    let database: String = sqlx::query_scalar("SELECT DATABASE()")
        .fetch_one(pool)
        .await
        .unwrap();
    adopt::plan(
        pool,
        &named("items", 1000, &format!("{database}.lines_seq")),
    )
    .await
    .unwrap();
    adopt::plan(
        pool,
        &named("items", 1000, "other_seq").writers_use_sequence(),
    )
    .await
    .unwrap();
}

/// Hi-lo on a 32-bit key: the plan states the room left (every old writer's `nextval` takes a
/// whole block), and refuses too little unless accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_integer_key_states_its_capacity_and_refuses_too_little() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    run!(
        pool,
        [
            "CREATE TABLE lines (id SERIAL PRIMARY KEY, qty INT NOT NULL)",
            "INSERT INTO lines (qty) SELECT 1 FROM generate_series(1, 3000)",
        ]
    );
    let plan = adopt::plan(pool, &hilo("lines", 1000)).await.unwrap();
    let step = plan
        .steps
        .iter()
        .find(|s| s.name == "hilo-sequence")
        .unwrap();
    assert!(
        step.description.contains(
            "Capacity: id (integer) and the sequence hold keys up to 2147483647, so with INCREMENT BY 1000 there is room for 2147480 more values above 3000"
        ),
        "{}",
        step.description
    );
    let err = adopt::plan(pool, &hilo("lines", 10_000)).await.unwrap_err();
    match &err {
        AdoptError::KeyCapacity {
            data_type,
            block,
            capacity,
            type_max,
            ..
        } => {
            assert_eq!(
                (data_type.as_str(), *block, *capacity, *type_max),
                ("integer", 10_000, 214_748, 2_147_483_647)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains("widen the key to bigint, use a smaller block, or accept it"),
        "{err}"
    );
    let accepted = adopt::apply(pool, &hilo("lines", 10_000).accept_key_capacity())
        .await
        .unwrap();
    assert!(accepted.finished());
    assert_eq!(
        count(
            pool,
            "SELECT increment_by FROM pg_sequences WHERE sequencename = 'lines_id_seq'"
        )
        .await,
        10_000
    );
}

/// MariaDB: an `INT` key on a (64-bit) sequence: the key type is the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_an_int_key_on_a_bigint_sequence_is_limited_by_the_key() {
    let db = idgen_testkit::mysql().await.expect("a database");
    let pool = db.pool();
    run!(
        pool,
        [
            "CREATE SEQUENCE lines_seq NOCACHE",
            "CREATE TABLE items (id INT NOT NULL DEFAULT NEXTVAL(lines_seq) PRIMARY KEY)",
            "INSERT INTO items (id) SELECT NEXTVAL(lines_seq) FROM seq_1_to_100",
        ]
    );
    let err = adopt::plan(pool, &hilo("items", 5000)).await.unwrap_err();
    assert!(
        matches!(
            err,
            AdoptError::KeyCapacity {
                type_max: 2_147_483_647,
                capacity: 429_496,
                ..
            }
        ),
        "{err:?}"
    );
    let plan = adopt::plan(pool, &hilo("items", 1000)).await.unwrap();
    assert!(
        plan.steps.iter().any(|s| s
            .description
            .contains("room for 2147483 more values above 100")),
        "{plan}"
    );
}

/// The mixed-case shop of an ORM: `"Order"` keyed by `"Id"` with `"publicId"`, and
/// `"OrderLine"` on an integer identity.
async fn mixed_case_shop(pool: &sqlx::PgPool) {
    run!(
        pool,
        [
            "CREATE TABLE \"Order\" (\"Id\" BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \"customerId\" BIGINT NOT NULL)",
            "CREATE TABLE \"OrderLine\" (\"Id\" INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \
         \"orderId\" BIGINT NOT NULL REFERENCES \"Order\" (\"Id\"))",
            "INSERT INTO \"Order\" (\"customerId\") SELECT g FROM generate_series(1, 2000) AS g",
            "INSERT INTO \"OrderLine\" (\"orderId\") SELECT \"Id\" FROM \"Order\"",
        ]
    );
}

/// PostgreSQL, mixed case end to end: Snowflake keys and public IDs on `"Order"`, with an
/// invalid `"Order_publicId_key"` left by a stopped build of the unique index (dropped and
/// built again), and hi-lo on `"OrderLine"`'s identity sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_mixed_case_names_are_adopted_end_to_end() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool();
    mixed_case_shop(pool).await;
    let options = AdoptOptions::snowflake("Order", Layout::TWITTER)
        .unwrap()
        .public_id("publicId")
        .unwrap();
    // progress-table, check-keys, retire-default, public-id-column, public-id-backfill.
    let partly = adopt::apply_first(pool, &options, 5).await.unwrap();
    assert_eq!(
        partly.steps.iter().filter(|s| !s.done).count(),
        2,
        "{partly}"
    );
    // A stopped build: two rows share a public ID, the concurrent build fails and leaves
    // an invalid index of the step's own name.
    run!(
        pool,
        [
            "UPDATE \"Order\" SET \"publicId\" = (SELECT \"publicId\" FROM \"Order\" WHERE \"Id\" = 1) WHERE \"Id\" = 2"
        ]
    );
    let failed = sqlx::raw_sql(
        "CREATE UNIQUE INDEX CONCURRENTLY \"Order_publicId_key\" ON \"Order\" (\"publicId\")",
    )
    .execute(pool)
    .await;
    assert!(failed.is_err(), "the build fails on the duplicate");
    let invalid =
        "SELECT count(*) FROM pg_index WHERE indrelid = '\"Order\"'::regclass AND NOT indisvalid";
    assert_eq!(count(pool, invalid).await, 1);
    run!(
        pool,
        ["UPDATE \"Order\" SET \"publicId\" = gen_random_uuid() WHERE \"Id\" = 2"]
    );

    let applied = adopt::apply(pool, &options).await.unwrap();
    assert!(applied.finished(), "{applied}");
    assert_eq!(count(pool, invalid).await, 0, "no invalid index is left");
    assert_eq!(
        count(
            pool,
            "SELECT count(*) FROM pg_index WHERE indrelid = '\"Order\"'::regclass"
        )
        .await,
        2,
        "the key and the public ID's index, nothing folded to lower case beside them"
    );
    assert_eq!(
        count(pool, "SELECT count(*) FROM pg_constraint WHERE conrelid = '\"Order\"'::regclass AND conname = 'Order_publicId_key' AND contype = 'u'").await,
        1
    );
    assert_eq!(
        count(pool, "SELECT count(*) FROM pg_attribute WHERE attrelid = '\"Order\"'::regclass AND attname = 'publicId' AND attnotnull").await,
        1
    );
    assert_eq!(
        count(pool, "SELECT count(DISTINCT \"publicId\") FROM \"Order\"").await,
        2000
    );
    let keyless = sqlx::raw_sql("INSERT INTO \"Order\" (\"customerId\") VALUES (1)")
        .execute(pool)
        .await;
    assert!(
        keyless.is_err(),
        "the identity is retired: only idgen writes keys"
    );

    // Hi-lo on the integer identity of "OrderLine": its sequence public."OrderLine_Id_seq".
    let lines = adopt::apply(pool, &hilo("OrderLine", 100)).await.unwrap();
    assert!(lines.finished(), "{lines}");
    assert_eq!(
        lines.key_source,
        "identity (by default) on public.OrderLine_Id_seq"
    );
    assert_eq!(
        count(
            pool,
            "SELECT increment_by FROM pg_sequences WHERE sequencename = 'OrderLine_Id_seq'"
        )
        .await,
        100
    );
    let old_writer: i32 =
        sqlx::query_scalar("INSERT INTO \"OrderLine\" (\"orderId\") VALUES (1) RETURNING \"Id\"")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(
        old_writer, 2100,
        "an old writer's key is above the old ones, on the grid"
    );
}

/// PostgreSQL: an index of the step's name that appears invalid between the step's check and
/// its build (here another session's build, committed invalid while the step waited for its
/// lock) is not recorded done: the step drops it and builds it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_index_left_invalid_during_the_build_is_never_recorded_done() {
    let db = idgen_testkit::postgres().await.expect("a database");
    let pool = db.pool().clone();
    mixed_case_shop(&pool).await;
    let options = AdoptOptions::keep_keys("Order")
        .unwrap()
        .public_id("publicId")
        .unwrap();
    // progress-table, public-id-column, public-id-backfill.
    adopt::apply_first(&pool, &options, 3).await.unwrap();
    let mut other = pool.acquire().await.unwrap();
    run!(
        &mut *other,
        [
            "BEGIN",
            "CREATE UNIQUE INDEX \"Order_publicId_key\" ON \"Order\" (\"publicId\")",
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = '\"Order_publicId_key\"'::regclass",
        ]
    );
    let step = tokio::spawn({
        let (pool, options) = (pool.clone(), options.clone());
        async move { adopt::apply_first(&pool, &options, 1).await }
    });
    // The step's build waits for the table's lock, held by the other session's build.
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE UNIQUE INDEX CONCURRENTLY%'";
    let mut waited = Duration::ZERO;
    while count(&pool, waiting).await == 0 {
        assert!(
            waited < Duration::from_secs(30),
            "the step's build never waited"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += Duration::from_millis(20);
    }
    run!(&mut *other, ["COMMIT"]);
    let plan = step.await.unwrap().unwrap();
    let index = plan
        .steps
        .iter()
        .find(|s| s.name == "public-id-unique-index")
        .unwrap();
    assert!(index.done);
    assert_eq!(
        count(&pool, "SELECT count(*) FROM pg_index WHERE indexrelid = '\"Order_publicId_key\"'::regclass AND indisvalid").await,
        1,
        "the step is recorded with a valid index"
    );
    let finished = adopt::apply(&pool, &options).await.unwrap();
    assert!(finished.finished(), "{finished}");
}
