//! `SnowflakeId` on a real MySQL/MariaDB server (through idgen-testkit).

mod common;

use common::IdRow;
use idgen_sqlx::SnowflakeId;
use sqlx::Row;

use common::SELECT_IDS as SELECT_ALL;

async fn db_with_ids_table(id_type: &str) -> idgen_testkit::TestDb<sqlx::MySql> {
    let ddl = format!(
        "CREATE TABLE ids (id {id_type} PRIMARY KEY, generator INT NOT NULL, seq INT NOT NULL, parent {id_type} NULL)"
    );
    common::with_tables(idgen_testkit::mysql(), sqlx::AssertSqlSafe(ddl)).await
}

/// `insert` written through the text protocol, then `ids.parent` read back through it: the error.
async fn text_protocol_parent_error(
    db: &idgen_testkit::TestDb<sqlx::MySql>,
    insert: &'static str,
) -> String {
    sqlx::raw_sql(insert).execute(db.pool()).await.unwrap();
    let row = sqlx::raw_sql("SELECT parent FROM ids")
        .fetch_one(db.pool())
        .await
        .unwrap();
    row.try_get::<Option<SnowflakeId>, _>(0)
        .unwrap_err()
        .to_string()
}

snowflake_cases!(sqlx::MySql, db_with_ids_table("BIGINT"), ["?", "?"]);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bigint_unsigned_columns_round_trip_too() {
    let db = db_with_ids_table("BIGINT UNSIGNED").await;
    let inserted = insert_concurrently!(sqlx::MySql, db.pool());
    let read: Vec<IdRow> = sqlx::query_as(SELECT_ALL)
        .fetch_all(db.pool())
        .await
        .unwrap();
    common::check_read_back(inserted, &read);

    // The largest ID fits, through the binary (prepared) and the text protocol.
    sqlx::query("INSERT INTO ids VALUES (?, 99, 0, NULL)")
        .bind(SnowflakeId::MAX)
        .execute(db.pool())
        .await
        .unwrap();
    let max: SnowflakeId = sqlx::query_scalar("SELECT id FROM ids WHERE generator = 99")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(max, SnowflakeId::MAX);
    let text = sqlx::raw_sql("SELECT id FROM ids WHERE generator = 99")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(text.try_get::<SnowflakeId, _>(0).unwrap(), SnowflakeId::MAX);
}

#[tokio::test]
async fn unsigned_value_above_i64_max_is_a_decode_error_naming_it() {
    let db = db_with_ids_table("BIGINT UNSIGNED").await;
    let err = text_protocol_parent_error(
        &db,
        "INSERT INTO ids VALUES (9223372036854775808, 0, 0, 18446744073709551615)",
    )
    .await;
    assert!(
        err.contains("18446744073709551615 is not a Snowflake ID"),
        "{err}"
    );

    let err = sqlx::query_as::<_, IdRow>(SELECT_ALL)
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    common::check_decode_error(&err, &["9223372036854775808 is not a Snowflake ID"]);
}

/// The text protocol (unprepared statements) checks stored values as the binary one does.
#[tokio::test]
async fn the_text_protocol_refuses_a_negative_value_too() {
    let db = db_with_ids_table("BIGINT").await;
    let err = text_protocol_parent_error(&db, "INSERT INTO ids VALUES (-5, 0, 0, -6)").await;
    assert!(err.contains("-6 is not a Snowflake ID"), "{err}");
}
