//! `SnowflakeId` on SQLite (a temporary file from idgen-testkit).

mod common;

/// The `ids` table.
const IDS_TABLE: &str = "CREATE TABLE ids (id INTEGER PRIMARY KEY, generator INTEGER NOT NULL, seq INTEGER NOT NULL, parent INTEGER NULL)";

async fn db_with_ids_table() -> idgen_testkit::TestDb<sqlx::Sqlite> {
    common::with_tables(idgen_testkit::sqlite(), IDS_TABLE).await
}

snowflake_cases!(sqlx::Sqlite, db_with_ids_table(), ["?", "?"]);
