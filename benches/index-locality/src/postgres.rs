//! PostgreSQL: tables, batched inserts and `pgstatindex` measurements.

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgPool, Postgres, QueryBuilder};
use std::str::FromStr;

use crate::BoxResult;
use crate::keys::{Key, KeyKind};
use crate::measure::IndexStats;
use crate::sequence::{BLOCK, SEQUENCE};

/// The benchmark's own database on one server: created on connect, dropped by [`Self::drop`].
pub(crate) struct PgBench {
    admin: PgPool,
    options: PgConnectOptions,
    name: String,
    /// Connections for the writers and the measurements.
    pub(crate) pool: PgPool,
}

impl PgBench {
    /// Creates database `name` on the server at `url` and connects `connections` to it.
    pub(crate) async fn create(url: &str, name: &str, connections: u32) -> BoxResult<PgBench> {
        let options = PgConnectOptions::from_str(url)?;
        let admin = PgPoolOptions::new()
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
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            .connect_with(options.clone())
            .await?;
        pool.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
            .await?;
        Ok(PgBench {
            admin,
            options,
            name: name.to_owned(),
            pool,
        })
    }

    /// A separate small pool, for the hi-lo sequence (its own connections, autocommit).
    pub(crate) async fn side_pool(&self) -> BoxResult<PgPool> {
        Ok(PgPoolOptions::new()
            .max_connections(2)
            .connect_with(self.options.clone())
            .await?)
    }

    /// A fresh table (and, for hi-lo, a fresh sequence) for `kind`.
    pub(crate) async fn create_table(&self, kind: KeyKind) -> BoxResult<()> {
        let table = kind.table();
        let id = match kind {
            KeyKind::Identity => "id BIGINT GENERATED ALWAYS AS IDENTITY",
            kind if kind.is_uuid() => "id UUID NOT NULL",
            _ => "id BIGINT NOT NULL",
        };
        sqlx::raw_sql(crate::sql(format!("DROP TABLE IF EXISTS {table}")))
            .execute(&self.pool)
            .await?;
        sqlx::raw_sql(crate::sql(format!(
            "CREATE TABLE {table} ({id}, payload TEXT NOT NULL, \
                     CONSTRAINT {table}_pkey PRIMARY KEY (id))"
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
        let mut sql = QueryBuilder::<Postgres>::new(if kind == KeyKind::Identity {
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
                    row.push_bind(*id);
                }
            }
            row.push_bind(payload.as_str());
        });
        sql.build().execute(&self.pool).await?;
        Ok(())
    }

    /// `VACUUM (ANALYZE)`, then the primary key's `pgstatindex` and the row count.
    pub(crate) async fn measure(&self, kind: KeyKind) -> BoxResult<IndexStats> {
        let table = kind.table();
        sqlx::raw_sql(crate::sql(format!("VACUUM (ANALYZE) {table}")))
            .execute(&self.pool)
            .await?;
        let rows: i64 = sqlx::query_scalar(crate::sql(format!("SELECT count(*) FROM {table}")))
            .fetch_one(&self.pool)
            .await?;
        let (index_bytes, leaf_pages, density, fragmentation): (i64, i64, f64, f64) = sqlx::query_as(
            "SELECT index_size, leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex($1)",
        )
        .bind(format!("{table}_pkey"))
        .fetch_one(&self.pool)
        .await?;
        Ok(IndexStats {
            rows: u64::try_from(rows)?,
            index_bytes: u64::try_from(index_bytes)?,
            leaf_pages: u64::try_from(leaf_pages)?,
            leaf_density_pct: Some(density),
            leaf_fragmentation_pct: Some(fragmentation),
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
        sqlx::raw_sql(crate::sql(format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        )))
        .execute(&self.admin)
        .await?;
        self.admin.close().await;
        Ok(())
    }
}
