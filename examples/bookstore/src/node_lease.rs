//! Each app instance leases its node ID, so no two running instances share one.

use std::sync::OnceLock;

use idgen_core::lease::{MemoryLeaseStore, WorkerLease};
use idgen_sqlx::Layout;

use crate::Result;
use crate::db::Pool;

/// The ID layout: Twitter's (41 bits of milliseconds, 10 bits of node, 12 of sequence).
pub const LAYOUT: Layout = Layout::TWITTER;

/// Prepares the lease table in the control database (once, before any instance starts).
pub async fn prepare(_control: &Pool) -> Result<()> {
    Ok(())
}

/// Leases a free node ID of [`LAYOUT`] for one instance.
///
/// TEMPORARY until idgen-sqlx's SQL lease store lands: the leases are kept in one in-memory
/// store per process, which keeps the tasks of one process apart but not two processes.
pub async fn lease(_control: &Pool) -> Result<WorkerLease> {
    static STORE: OnceLock<MemoryLeaseStore> = OnceLock::new();
    let store = STORE.get_or_init(MemoryLeaseStore::new).clone();
    Ok(WorkerLease::options()
        .namespace("orders")
        .acquire(store, &LAYOUT)
        .await?)
}
