//! MariaDB / MySQL (InnoDB): its column types, `BINARY(16)` UUIDs and
//! `mysql.innodb_index_stats` measurements.
//!
//! InnoDB keeps the rows in the primary key's B-tree (a clustered index), so the `PRIMARY`
//! index's size is the table's size, payload included: compare its ratios, not its bytes, with
//! PostgreSQL's separate primary-key index.

use sqlx::mysql::MySqlConnectOptions;
use sqlx::query_builder::Separated;
use sqlx::{Executor, MySql, MySqlPool};

use crate::database::{Bench, Dialect};
use crate::error::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;

impl Dialect for MySql {
    const TITLE: &'static str = "MariaDB/MySQL";
    const INNODB: bool = true;
    const SETUP: Option<&'static str> = None;
    const IDENTITY_COLUMN: &'static str = "id BIGINT NOT NULL AUTO_INCREMENT";
    // Big-endian bytes: a UUIDv7's time prefix sorts first, as in PostgreSQL's UUID.
    const UUID_COLUMN: &'static str = "id BINARY(16) NOT NULL";
    const DROP_DATABASE_OPTIONS: &'static str = "";

    fn create_table(table: &str, id: &str) -> String {
        format!(
            "CREATE TABLE {table} ({id}, payload VARCHAR(255) NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB"
        )
    }

    fn nextval(sequence: &str) -> String {
        format!("SELECT NEXTVAL({sequence})")
    }

    fn increment(sequence: &str) -> String {
        format!("SELECT increment FROM {sequence}")
    }

    fn with_database(options: MySqlConnectOptions, name: &str) -> MySqlConnectOptions {
        options.database(name)
    }

    fn push_row(mut row: Separated<'_, MySql, &'static str>, key: Option<Key>, payload: &str) {
        match key {
            None => {}
            Some(Key::Int(id)) => {
                row.push_bind(id);
            }
            Some(Key::Uuid(id)) => {
                row.push_bind(id.as_bytes().to_vec());
            }
        }
        row.push_bind(payload);
    }

    fn on(pool: &MySqlPool) -> impl Executor<'_, Database = MySql> {
        pool
    }

    async fn scalar(pool: &MySqlPool, sql: String) -> BoxResult<i64> {
        Ok(sqlx::query_scalar(crate::database::sql(sql))
            .fetch_one(pool)
            .await?)
    }

    async fn version(pool: &MySqlPool) -> BoxResult<String> {
        let version: String = sqlx::query_scalar("SELECT VERSION()")
            .fetch_one(pool)
            .await?;
        Ok(format!("{version} (InnoDB)"))
    }

    /// `ANALYZE TABLE`, then the `PRIMARY` index's `size` and `n_leaf_pages` (in pages of
    /// `innodb_page_size`) and the row count.
    async fn measure(bench: &Bench<MySql>, kind: KeyKind) -> BoxResult<IndexStats> {
        let table = kind.table();
        let pool = &bench.pool;
        sqlx::raw_sql(crate::database::sql(format!("ANALYZE TABLE {table}")))
            .fetch_all(pool)
            .await?;
        let rows = Self::scalar(pool, format!("SELECT COUNT(*) FROM {table}")).await?;
        let page_size: u64 = sqlx::query_scalar("SELECT @@innodb_page_size")
            .fetch_one(pool)
            .await?;
        let stats: Vec<(String, u64)> = sqlx::query_as(
            "SELECT stat_name, stat_value FROM mysql.innodb_index_stats \
             WHERE database_name = ? AND table_name = ? AND index_name = 'PRIMARY' \
             AND stat_name IN ('size', 'n_leaf_pages')",
        )
        .bind(&bench.name)
        .bind(&table)
        .fetch_all(pool)
        .await?;
        let stat = |name: &str| {
            stats
                .iter()
                .find(|(stat, _)| stat == name)
                .map(|(_, value)| *value)
                .ok_or_else(|| format!("mysql.innodb_index_stats has no {name} for {table}"))
        };
        Ok(IndexStats {
            rows: u64::try_from(rows)?,
            index_bytes: stat("size")? * page_size,
            leaf_pages: stat("n_leaf_pages")?,
            leaf_density_pct: None,
            leaf_fragmentation_pct: None,
        })
    }
}
