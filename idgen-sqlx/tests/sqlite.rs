//! `SnowflakeId` on SQLite (a temporary file from idgen-testkit).

mod common;

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Sqlite> {
    let db = idgen_testkit::sqlite().await.expect("an SQLite database");
    sqlx::query("CREATE TABLE ids (id INTEGER PRIMARY KEY, generator INTEGER NOT NULL, seq INTEGER NOT NULL, parent INTEGER NULL)")
        .execute(db.pool())
        .await
        .unwrap();
    db
}

snowflake_cases!(sqlx::Sqlite, db_with_ids_table(), ["?", "?"]);
