//! Order-line IDs: hi-lo blocks from one central counter (`order_lines`) in the control
//! database — a sequence on PostgreSQL and MariaDB, a row of `idgen_hilo` on SQLite — shared by
//! every instance, process and host.

use idgen_sqlx::hilo::{HiLo, MySqlCounter, PgSequence, SqliteCounter};

use crate::db::Pool;
use crate::{Result, on_pool};

/// The counter's name.
pub const COUNTER: &str = "order_lines";

/// IDs per block: one counter round trip per 1000 lines.
pub const BLOCK: u64 = 1000;

/// Creates the counter in the control database when missing.
pub async fn prepare(control: &Pool) -> Result<()> {
    match control {
        Pool::Sqlite(p) => SqliteCounter::new(p, COUNTER)?.create(BLOCK).await?,
        Pool::Postgres(p) => PgSequence::new(p, COUNTER)?.create(BLOCK).await?,
        Pool::MySql(p) => MySqlCounter::new(p, COUNTER)?.create(BLOCK).await?,
    }
    Ok(())
}

/// A hi-lo generator on the central counter, for one instance.
pub async fn line_ids(control: &Pool) -> Result<HiLo> {
    Ok(
        on_pool!(control, p => HiLo::builder(p.clone()).counter(COUNTER).block(BLOCK).build().await?),
    )
}
