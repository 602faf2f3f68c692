//! Hi-lo counters as database sequences with `INCREMENT BY` the block size.
//!
//! The PostgreSQL source of `idgen-sqlx` was not in `main` when this benchmark was written, so
//! these are local [`HiLoSource`] implementations: one `nextval` per block, pooled-lo
//! (a value `v` is the block `[v, v + block)`), the increment read from the catalog.

use idgen_core::hilo::{BoxError, HiLoSource, Increment};
use sqlx::{MySqlPool, PgPool};

/// The sequence's name in both databases.
pub(crate) const SEQUENCE: &str = "hilo_seq";

/// IDs per block and the sequence's increment.
pub(crate) const BLOCK: u64 = 1000;

fn increment_of(value: i64, name: &str) -> Result<Increment, BoxError> {
    u64::try_from(value)
        .map(Increment::Fixed)
        .map_err(|_| format!("sequence {name} has a negative increment {value}").into())
}

/// A PostgreSQL `SEQUENCE`, read on its own pool (autocommit).
pub(crate) struct PgSequence {
    pub(crate) pool: PgPool,
}

impl HiLoSource for PgSequence {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        let sql = format!("SELECT nextval('{SEQUENCE}')");
        Ok(sqlx::query_scalar(crate::sql(sql))
            .fetch_one(&self.pool)
            .await?)
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let value: i64 = sqlx::query_scalar(
            "SELECT increment_by FROM pg_sequences \
             WHERE schemaname = current_schema() AND sequencename = $1",
        )
        .bind(SEQUENCE)
        .fetch_one(&self.pool)
        .await?;
        increment_of(value, SEQUENCE)
    }

    fn name(&self) -> &str {
        SEQUENCE
    }
}

/// A MariaDB `SEQUENCE` (10.3 and later), read on its own pool (autocommit).
pub(crate) struct MySequence {
    pub(crate) pool: MySqlPool,
}

impl HiLoSource for MySequence {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        let sql = format!("SELECT NEXTVAL({SEQUENCE})");
        Ok(sqlx::query_scalar(crate::sql(sql))
            .fetch_one(&self.pool)
            .await?)
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let sql = format!("SELECT increment FROM {SEQUENCE}");
        let value: i64 = sqlx::query_scalar(crate::sql(sql))
            .fetch_one(&self.pool)
            .await?;
        increment_of(value, SEQUENCE)
    }

    fn name(&self) -> &str {
        SEQUENCE
    }
}
