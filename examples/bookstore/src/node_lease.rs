//! Each app instance leases its node ID from a table in the control database, so no two running
//! instances (tasks, processes or hosts) ever share one.

use idgen_sqlx::Layout;
use idgen_sqlx::lease::{WorkerLease, create_lease_table};

use crate::db::Pool;
use crate::{Result, on_pool};

/// The ID layout: Twitter's (41 bits of milliseconds, 10 bits of node, 12 of sequence).
pub const LAYOUT: Layout = Layout::TWITTER;

/// Creates the lease table `idgen_worker_lease` in the control database when missing.
pub async fn prepare(control: &Pool) -> Result<()> {
    on_pool!(control, p => create_lease_table(p).await?);
    Ok(())
}

/// Leases the lowest free node ID of [`LAYOUT`] for one instance; renewed in the background
/// until the instance stops.
pub async fn lease(control: &Pool) -> Result<WorkerLease> {
    // A claim of a new row (a fresh control database) issues at once, its IDs' time field
    // ahead of the clock by up to one TTL while a holder the database may have forgotten
    // could still issue below it.
    let options = WorkerLease::options().namespace("orders");
    Ok(on_pool!(control, p => options.acquire(p, &LAYOUT).await?))
}
