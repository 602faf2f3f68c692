//! MariaDB / MySQL (InnoDB): tables, batched inserts and `mysql.innodb_index_stats` measurements.
//!
//! InnoDB keeps the rows in the primary key's B-tree (a clustered index), so the `PRIMARY`
//! index's size is the table's size, payload included: compare its ratios, not its bytes, with
//! PostgreSQL's separate primary-key index.

use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{MySql, MySqlPool, QueryBuilder};
use std::str::FromStr;

use crate::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;
use crate::sequence::{BLOCK, SEQUENCE};

/// InnoDB's page size on the measured server (`innodb_page_size`), read at start.
const PAGE_SIZE_QUERY: &str = "SELECT @@innodb_page_size";

/// The benchmark's own database on one server: created on connect, dropped by [`Self::drop`].
pub(crate) struct MyBench {
    admin: MySqlPool,
    options: MySqlConnectOptions,
    name: String,
    page_size: u64,
    /// Connections for the writers and the measurements.
    pub(crate) pool: MySqlPool,
}

impl MyBench {
    /// Creates database `name` on the server at `url` and connects `connections` to it.
    pub(crate) async fn create(url: &str, name: &str, connections: u32) -> BoxResult<MyBench> {
        let options = MySqlConnectOptions::from_str(url)?;
        let admin = MySqlPoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await?;
        sqlx::raw_sql(crate::sql(format!("DROP DATABASE IF EXISTS {name}")))
            .execute(&admin)
            .await?;
        sqlx::raw_sql(crate::sql(format!("CREATE DATABASE {name}")))
            .execute(&admin)
            .await?;
        let options = options.database(name);
        let pool = MySqlPoolOptions::new()
            .max_connections(connections)
            .connect_with(options.clone())
            .await?;
        let page_size: u64 = sqlx::query_scalar(PAGE_SIZE_QUERY).fetch_one(&pool).await?;
        Ok(MyBench {
            admin,
            options,
            name: name.to_owned(),
            page_size,
            pool,
        })
    }

    /// A separate small pool, for the hi-lo sequence (its own connections, autocommit).
    pub(crate) async fn side_pool(&self) -> BoxResult<MySqlPool> {
        Ok(MySqlPoolOptions::new()
            .max_connections(2)
            .connect_with(self.options.clone())
            .await?)
    }

    /// A fresh table (and, for hi-lo, a fresh sequence) for `kind`.
    pub(crate) async fn create_table(&self, kind: KeyKind) -> BoxResult<()> {
        let table = kind.table();
        let id = match kind {
            KeyKind::Identity => "id BIGINT NOT NULL AUTO_INCREMENT",
            // Big-endian bytes: a UUIDv7's time prefix sorts first, as in PostgreSQL's UUID.
            kind if kind.is_uuid() => "id BINARY(16) NOT NULL",
            _ => "id BIGINT NOT NULL",
        };
        sqlx::raw_sql(crate::sql(format!("DROP TABLE IF EXISTS {table}")))
            .execute(&self.pool)
            .await?;
        sqlx::raw_sql(crate::sql(format!(
            "CREATE TABLE {table} ({id}, payload VARCHAR(255) NOT NULL, PRIMARY KEY (id)) \
                     ENGINE=InnoDB"
        )))
        .execute(&self.pool)
        .await?;
        if kind == KeyKind::HiLo {
            sqlx::raw_sql(crate::sql(format!("DROP SEQUENCE IF EXISTS {SEQUENCE}")))
                .execute(&self.pool)
                .await?;
            sqlx::raw_sql(crate::sql(format!(
                "CREATE SEQUENCE {SEQUENCE} INCREMENT BY {BLOCK} START WITH 1"
            )))
            .execute(&self.pool)
            .await?;
        }
        Ok(())
    }

    /// One multi-row `INSERT` of `rows`.
    pub(crate) async fn insert(
        &self,
        kind: KeyKind,
        rows: &[(Option<Key>, String)],
    ) -> BoxResult<()> {
        let table = kind.table();
        let mut sql = QueryBuilder::<MySql>::new(if kind == KeyKind::Identity {
            format!("INSERT INTO {table} (payload) ")
        } else {
            format!("INSERT INTO {table} (id, payload) ")
        });
        sql.push_values(rows, |mut row, (key, payload)| {
            match key {
                None => {}
                Some(Key::Int(id)) => {
                    row.push_bind(*id);
                }
                Some(Key::Uuid(id)) => {
                    row.push_bind(id.as_bytes().to_vec());
                }
            }
            row.push_bind(payload.as_str());
        });
        sql.build().execute(&self.pool).await?;
        Ok(())
    }

    /// `ANALYZE TABLE`, then the `PRIMARY` index's `size` and `n_leaf_pages` and the row count.
    pub(crate) async fn measure(&self, kind: KeyKind) -> BoxResult<IndexStats> {
        let table = kind.table();
        sqlx::raw_sql(crate::sql(format!("ANALYZE TABLE {table}")))
            .fetch_all(&self.pool)
            .await?;
        let rows: i64 = sqlx::query_scalar(crate::sql(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&self.pool)
            .await?;
        let stats: Vec<(String, u64)> = sqlx::query_as(
            "SELECT stat_name, stat_value FROM mysql.innodb_index_stats \
             WHERE database_name = ? AND table_name = ? AND index_name = 'PRIMARY' \
             AND stat_name IN ('size', 'n_leaf_pages')",
        )
        .bind(&self.name)
        .bind(&table)
        .fetch_all(&self.pool)
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
            index_bytes: stat("size")? * self.page_size,
            leaf_pages: stat("n_leaf_pages")?,
            leaf_density_pct: None,
            leaf_fragmentation_pct: None,
        })
    }

    /// Drops `kind`'s table (and sequence), so the next kind runs beside no leftover data.
    pub(crate) async fn drop_table(&self, kind: KeyKind) -> BoxResult<()> {
        sqlx::raw_sql(crate::sql(format!("DROP TABLE IF EXISTS {}", kind.table())))
            .execute(&self.pool)
            .await?;
        sqlx::raw_sql(crate::sql(format!("DROP SEQUENCE IF EXISTS {SEQUENCE}")))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Closes the pools and drops the database.
    pub(crate) async fn drop(self) -> BoxResult<()> {
        self.pool.close().await;
        sqlx::raw_sql(crate::sql(format!("DROP DATABASE IF EXISTS {}", self.name)))
            .execute(&self.admin)
            .await?;
        self.admin.close().await;
        Ok(())
    }
}
