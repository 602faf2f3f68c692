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

/// Start-up as an application user without the right to create anything (PostgreSQL 15's
/// default on `public`, and a common production grant): `WorkerLease::acquire` and
/// `HiLo::new`, which create what is missing, look for the lease table and the counter first
/// and run no DDL when they exist, so such an application starts and restarts (issue 27,
/// item 1). The user's own `CREATE TABLE IF NOT EXISTS` of the existing table fails: what a
/// start-up that created first would run.
#[tokio::test]
async fn start_up_needs_no_create_privilege_once_the_table_and_counter_exist() {
    use idgen_sqlx::Layout;
    use idgen_sqlx::hilo::{HiLo, PgSequence};
    use idgen_sqlx::lease::{DEFAULT_LEASE_TABLE, WorkerLease};
    use std::str::FromStr;

    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    idgen_sqlx::lease::create_lease_table(db.pool())
        .await
        .unwrap();
    PgSequence::new(db.pool(), "hilo")
        .unwrap()
        .create(1000)
        .await
        .unwrap();
    let role: String = format!("{}_app", db.name()).chars().take(63).collect();
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'app';
         REVOKE CREATE ON SCHEMA public FROM PUBLIC;
         GRANT USAGE ON SCHEMA public TO {role};
         GRANT SELECT, INSERT, UPDATE, DELETE ON {DEFAULT_LEASE_TABLE} TO {role};
         GRANT USAGE, SELECT, UPDATE ON SEQUENCE hilo TO {role};"
    )))
    .execute(db.pool())
    .await
    .unwrap();
    let options = sqlx::postgres::PgConnectOptions::from_str(db.url())
        .unwrap()
        .username(&role)
        .password("app");
    let app = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();

    let ddl = idgen_sql::LeaseSql::new(idgen_sql::Dialect::Postgres, DEFAULT_LEASE_TABLE)
        .unwrap()
        .create_table();
    let refused = sqlx::raw_sql(sqlx::AssertSqlSafe(ddl))
        .execute(&app)
        .await
        .expect_err("the application's user may not create the table");
    assert!(
        refused.to_string().contains("permission denied"),
        "{refused}"
    );

    for _restart in 0..2 {
        let lease = WorkerLease::options()
            .skip_takeover_wait_for_tests_and_development(true)
            .acquire(&app, &Layout::TWITTER)
            .await
            .expect("acquire without the right to create");
        let ids = HiLo::new(&app, 1000)
            .await
            .expect("HiLo::new without the right to create");
        assert!(ids.next_id().await.unwrap() >= 1);
        lease.handle().release().await.unwrap();
    }
    app.close().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP OWNED BY {role}; DROP ROLE {role}"
    )))
    .execute(db.pool())
    .await
    .unwrap();
}
