//! `SnowflakeId` on SQLite (a temporary file from idgen-testkit).

mod common;

use common::IdRow;
use idgen_sqlx::SnowflakeId;

const SELECT_ALL: &str = "SELECT id, generator, seq, parent FROM ids ORDER BY id";

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Sqlite> {
    let db = idgen_testkit::sqlite().await.expect("an SQLite database");
    sqlx::query("CREATE TABLE ids (id INTEGER PRIMARY KEY, generator INTEGER NOT NULL, seq INTEGER NOT NULL, parent INTEGER NULL)")
        .execute(db.pool())
        .await
        .unwrap();
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_ids_from_concurrent_tasks_round_trip_in_order() {
    let db = db_with_ids_table().await;
    let inserted = insert_concurrently!(sqlx::Sqlite, db.pool());
    let read: Vec<IdRow> = sqlx::query_as(SELECT_ALL)
        .fetch_all(db.pool())
        .await
        .unwrap();
    common::check_read_back(inserted, &read);
}

#[tokio::test]
async fn null_round_trips_as_none() {
    let db = db_with_ids_table().await;
    let id = SnowflakeId::MAX;
    sqlx::query("INSERT INTO ids VALUES (?, 0, 0, ?)")
        .bind(id)
        .bind(None::<SnowflakeId>)
        .execute(db.pool())
        .await
        .unwrap();
    let row: IdRow = sqlx::query_as(SELECT_ALL)
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(
        row,
        IdRow {
            id,
            generator: 0,
            seq: 0,
            parent: None
        }
    );
}

#[tokio::test]
async fn negative_value_is_a_decode_error_naming_it() {
    let db = db_with_ids_table().await;
    sqlx::raw_sql("INSERT INTO ids VALUES (-9223372036854775808, 0, 0, -1)")
        .execute(db.pool())
        .await
        .unwrap();

    let err = sqlx::query_as::<_, IdRow>(SELECT_ALL)
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    assert!(matches!(err, sqlx::Error::ColumnDecode { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("-9223372036854775808 is not a Snowflake ID"),
        "{err}"
    );

    let err = sqlx::query_scalar::<_, Option<SnowflakeId>>("SELECT parent FROM ids")
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("-1 is not a Snowflake ID"),
        "{err}"
    );
}
