//! `SnowflakeId` on a real PostgreSQL server (through idgen-testkit).

mod common;

use common::IdRow;
use idgen_sqlx::SnowflakeId;

const SELECT_ALL: &str = "SELECT id, generator, seq, parent FROM ids ORDER BY id";

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Postgres> {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    sqlx::query("CREATE TABLE ids (id BIGINT PRIMARY KEY, generator INT NOT NULL, seq INT NOT NULL, parent BIGINT NULL)")
        .execute(db.pool())
        .await
        .unwrap();
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_ids_from_concurrent_tasks_round_trip_in_order() {
    let db = db_with_ids_table().await;
    let inserted = insert_concurrently!(sqlx::Postgres, db.pool());
    let read: Vec<IdRow> = sqlx::query_as(SELECT_ALL)
        .fetch_all(db.pool())
        .await
        .unwrap();
    common::check_read_back(inserted, &read);
}

#[tokio::test]
async fn arrays_bind_to_any_and_decode() {
    let db = db_with_ids_table().await;
    let inserted = insert_concurrently!(sqlx::Postgres, db.pool());
    let wanted: Vec<SnowflakeId> = inserted.iter().step_by(997).map(|r| r.id).collect();

    let mut found: Vec<SnowflakeId> = sqlx::query_scalar("SELECT id FROM ids WHERE id = ANY($1)")
        .bind(&wanted)
        .fetch_all(db.pool())
        .await
        .unwrap();
    found.sort();
    let mut expected = wanted.clone();
    expected.sort();
    assert_eq!(found, expected);

    let echoed: Vec<SnowflakeId> = sqlx::query_scalar("SELECT $1::INT8[]")
        .bind(&wanted)
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(echoed, wanted);
    let with_null: Vec<Option<SnowflakeId>> = sqlx::query_scalar("SELECT ARRAY[7, NULL]::INT8[]")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(with_null, vec![SnowflakeId::new(7), None]);
}

#[tokio::test]
async fn null_round_trips_as_none() {
    let db = db_with_ids_table().await;
    let id = SnowflakeId::new(42).unwrap();
    sqlx::query("INSERT INTO ids VALUES ($1, 0, 0, $2)")
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
    sqlx::raw_sql("INSERT INTO ids VALUES (-5, 0, 0, -6)")
        .execute(db.pool())
        .await
        .unwrap();

    let err = sqlx::query_as::<_, IdRow>(SELECT_ALL)
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    assert!(matches!(err, sqlx::Error::ColumnDecode { .. }), "{err:?}");
    assert!(
        err.to_string().contains("-5 is not a Snowflake ID"),
        "{err}"
    );

    let err = sqlx::query_scalar::<_, Option<SnowflakeId>>("SELECT parent FROM ids")
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("-6 is not a Snowflake ID"),
        "{err}"
    );
}
