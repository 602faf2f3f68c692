//! PostgreSQL: its column types, `uuid` binding and `pgstatindex` measurements.

use sqlx::postgres::PgConnectOptions;
use sqlx::query_builder::Separated;
use sqlx::{Executor, PgPool, Postgres};

use crate::database::{Bench, Dialect};
use crate::error::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;

impl Dialect for Postgres {
    const TITLE: &'static str = "PostgreSQL";
    const INNODB: bool = false;
    const SETUP: Option<&'static str> = Some("CREATE EXTENSION IF NOT EXISTS pgstattuple");

    const IDENTITY_COLUMN: &'static str = "id BIGINT GENERATED ALWAYS AS IDENTITY";
    const UUID_COLUMN: &'static str = "id UUID NOT NULL";
    // A connection left behind by a failed run does not keep the database.
    const DROP_DATABASE_OPTIONS: &'static str = " WITH (FORCE)";

    fn create_table(table: &str, id: &str) -> String {
        format!(
            "CREATE TABLE {table} ({id}, payload TEXT NOT NULL, CONSTRAINT {table}_pkey PRIMARY KEY (id))"
        )
    }

    fn nextval(sequence: &str) -> String {
        format!("SELECT nextval('{sequence}')")
    }

    fn increment(sequence: &str) -> String {
        format!(
            "SELECT increment_by FROM pg_sequences \
             WHERE schemaname = current_schema() AND sequencename = '{sequence}'"
        )
    }

    fn with_database(options: PgConnectOptions, name: &str) -> PgConnectOptions {
        options.database(name)
    }

    fn push_row(mut row: Separated<'_, Postgres, &'static str>, key: Option<Key>, payload: &str) {
        match key {
            None => {}
            Some(Key::Int(id)) => {
                row.push_bind(id);
            }
            Some(Key::Uuid(id)) => {
                row.push_bind(id);
            }
        }
        row.push_bind(payload);
    }

    fn on(pool: &PgPool) -> impl Executor<'_, Database = Postgres> {
        pool
    }

    async fn scalar(pool: &PgPool, sql: String) -> BoxResult<i64> {
        Ok(sqlx::query_scalar(crate::database::sql(sql))
            .fetch_one(pool)
            .await?)
    }

    async fn version(pool: &PgPool) -> BoxResult<String> {
        Ok(sqlx::query_scalar("SHOW server_version")
            .fetch_one(pool)
            .await?)
    }

    /// `VACUUM (ANALYZE)`, then the primary key's `pgstatindex` and the row count.
    async fn measure(bench: &Bench<Postgres>, kind: KeyKind) -> BoxResult<IndexStats> {
        let table = kind.table();
        let pool = &bench.pool;
        sqlx::raw_sql(crate::database::sql(format!("VACUUM (ANALYZE) {table}")))
            .execute(pool)
            .await?;
        let rows = Self::scalar(pool, format!("SELECT count(*) FROM {table}")).await?;
        let (index_bytes, leaf_pages, density, fragmentation): (i64, i64, f64, f64) = sqlx::query_as(
            "SELECT index_size, leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex($1)",
        )
        .bind(format!("{table}_pkey"))
        .fetch_one(pool)
        .await?;
        Ok(IndexStats {
            rows: u64::try_from(rows)?,
            index_bytes: u64::try_from(index_bytes)?,
            leaf_pages: u64::try_from(leaf_pages)?,
            leaf_density_pct: Some(density),
            leaf_fragmentation_pct: Some(fragmentation),
        })
    }
}
