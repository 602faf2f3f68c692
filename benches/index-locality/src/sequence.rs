//! Hi-lo counters as database sequences with `INCREMENT BY` the block size.
//!
//! The PostgreSQL source of `idgen-sqlx` was not in `main` when this benchmark was written, so
//! this is a local [`HiLoSource`] implementation: one `nextval` per block, pooled-lo (a value `v`
//! is the block `[v, v + block)`), the increment read from the catalog, each in the server's
//! own SQL ([`Dialect::nextval`], [`Dialect::increment`]).

use idgen_engine::hilo::{BoxError, HiLoSource, Increment};
use sqlx::Pool;

use crate::database::Dialect;

/// The sequence's name in both databases.
pub(crate) const SEQUENCE: &str = "hilo_seq";

/// IDs per block and the sequence's increment.
pub(crate) const BLOCK: u64 = 1000;

/// A PostgreSQL or MariaDB (10.3 and later) `SEQUENCE`, read on its own pool (autocommit).
pub(crate) struct Sequence<DB: Dialect> {
    pub(crate) pool: Pool<DB>,
}

impl<DB: Dialect> HiLoSource for Sequence<DB> {
    async fn allocate(&self, _size: u64) -> Result<i64, BoxError> {
        DB::scalar(&self.pool, DB::nextval(SEQUENCE)).await
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let value = DB::scalar(&self.pool, DB::increment(SEQUENCE)).await?;
        u64::try_from(value)
            .map(Increment::Fixed)
            .map_err(|_| format!("sequence {SEQUENCE} has a negative increment {value}").into())
    }

    fn name(&self) -> &str {
        SEQUENCE
    }
}
