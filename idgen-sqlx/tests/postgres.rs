//! `SnowflakeId` on a real PostgreSQL server (through idgen-testkit).

mod common;

use idgen_sqlx::SnowflakeId;

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Postgres> {
    common::with_tables(
        idgen_testkit::postgres(),
        "CREATE TABLE ids (id BIGINT PRIMARY KEY, generator INT NOT NULL, seq INT NOT NULL, parent BIGINT NULL)",
    )
    .await
}

snowflake_cases!(sqlx::Postgres, db_with_ids_table(), ["$1", "$2"]);

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
