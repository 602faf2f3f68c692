//! `SnowflakeId` on a real PostgreSQL server (through idgen-testkit).

mod common;

use idgen_sqlx::SnowflakeId;

/// The `ids` table.
const IDS_TABLE: &str = "CREATE TABLE ids (id BIGINT PRIMARY KEY, generator INT NOT NULL, seq INT NOT NULL, parent BIGINT NULL)";

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Postgres> {
    common::with_tables(idgen_testkit::postgres(), IDS_TABLE).await
}

snowflake_cases!(sqlx::Postgres, db_with_ids_table(), ["$1", "$2"]);

#[tokio::test]
async fn arrays_bind_to_any_and_decode() {
    let db = db_with_ids_table().await;
    let inserted = insert_concurrently!(sqlx::Postgres, db.pool());
    let wanted: Vec<SnowflakeId> = inserted.iter().step_by(997).map(|r| r.id).collect();

    common::check_pg_arrays(
        db.pool(),
        "SELECT id FROM ids WHERE id = ANY($1)",
        "SELECT $1::INT8[]",
        &wanted,
    )
    .await;
    let with_null: Vec<Option<SnowflakeId>> = sqlx::query_scalar("SELECT ARRAY[7, NULL]::INT8[]")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(with_null, vec![SnowflakeId::new(7), None]);
}
