//! Each app instance leases its node ID from a table in the control database, so no two running
//! instances (tasks, processes or hosts) ever share one.

use idgen_sqlx::Layout;
use idgen_sqlx::lease::{WorkerLease, create_lease_table};

use crate::db::Pool;
use crate::{Result, on_pool};

/// The ID layout: Twitter's (41 bits of milliseconds, 10 bits of node, 12 of sequence).
pub const LAYOUT: Layout = Layout::TWITTER;

/// A debug build (`cargo run -p bookstore`) is development: its leases issue at once after a
/// claim of a new row, instead of waiting one TTL (30 s) in case the control database forgot a
/// holder (restored from a backup, recreated empty) that still runs. A release build, as
/// deployed, waits: only a node ID given back with `release` is taken at once.
pub const DEVELOPMENT: bool = cfg!(debug_assertions);

/// Creates the lease table `idgen_worker_lease` in the control database when missing.
pub async fn prepare(control: &Pool) -> Result<()> {
    on_pool!(control, p => create_lease_table(p).await?);
    Ok(())
}

/// Leases the lowest free node ID of [`LAYOUT`] for one instance; renewed in the background
/// until the instance stops.
pub async fn lease(control: &Pool) -> Result<WorkerLease> {
    let options = WorkerLease::options()
        .namespace("orders")
        .skip_takeover_wait_for_tests_and_development(DEVELOPMENT);
    Ok(on_pool!(control, p => options.acquire(p, &LAYOUT).await?))
}
