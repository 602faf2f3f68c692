//! `SnowflakeId` on SQLite (a temporary file from idgen-testkit).

mod common;

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Sqlite> {
    common::with_tables(
        idgen_testkit::sqlite(),
        "CREATE TABLE ids (id INTEGER PRIMARY KEY, generator INTEGER NOT NULL, seq INTEGER NOT NULL, parent INTEGER NULL)",
    )
    .await
}

snowflake_cases!(sqlx::Sqlite, db_with_ids_table(), ["?", "?"]);
