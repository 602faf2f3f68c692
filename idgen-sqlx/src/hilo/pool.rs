//! The allocator's own small pool: one connection, separate from the caller's pool.

use std::time::Duration;

use sqlx::pool::PoolOptions;
use sqlx::{Database, Pool};

/// How long a fetch waits for the allocator's connection (the engine retries after that).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// A pool of at most one connection with the same connect options as `pool`, connected lazily.
///
/// Allocations run here, in autocommit, never on a connection the caller may hold in a
/// transaction, and never waiting for a slot in a pool the caller's tasks may have exhausted.
pub(crate) fn dedicated<DB: Database>(pool: &Pool<DB>) -> Pool<DB> {
    options().connect_lazy_with((*pool.connect_options()).clone())
}

/// The options of [`dedicated`], for a database that needs a hook on each new connection.
pub(crate) fn options<DB: Database>() -> PoolOptions<DB> {
    PoolOptions::<DB>::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        // A broken connection is closed after its failed statement (`close_on_drop`), so the
        // extra ping per fetch is not needed.
        .test_before_acquire(false)
        .idle_timeout(Duration::from_secs(600))
}
