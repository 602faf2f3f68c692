//! Node IDs leased from a database: [`WorkerLease`] over a [`LeaseStore`] (feature `lease`).
//!
//! Two generators with one node ID silently issue the same IDs. A lease makes that impossible:
//! each process claims a free node ID from a table in the database it already has, renews the
//! claim in the background, and stops its generator (through a [`Fence`](idgen_core::Fence)) before a
//! claim it could not renew can expire and pass to another process. The table also keeps each
//! node ID's last timestamp, so a restarted process whose clock is behind never reissues.
//!
//! The database stores live in the adapter crates (`idgen-sqlx`, `idgen-diesel`,
//! `idgen-seaorm`), which all use the same table; [`MemoryLeaseStore`] serves one process.
//! What an operator lists and frees of any store (`idgen leases list|free`) is typed here
//! once: [`LeaseOperator`], [`HeldLease`], [`Freed`], [`NotFreed`].

mod claim;
mod fence;
mod heartbeat;
mod layout_key;
mod memory;
mod operator;
mod options;
mod release;
mod shared;
mod status;
mod store;
mod takeover;
mod worker;

pub use crate::borrowed::Borrowed;
pub use layout_key::layout_key;
pub use memory::MemoryLeaseStore;
pub use operator::{FREED_HOLDER, FreeRequest, Freed, HeldLease, LeaseOperator, NotFreed};
pub use options::{DEFAULT_LEASE_TABLE, LeaseOptions};
pub use status::LeaseStatus;
pub use store::{
    BoxError, Claim, ClaimRequest, IntoLeaseStore, LeaseStore, ReleaseRequest, RenewRequest,
};
pub use worker::{LeaseHandle, WorkerLease};

#[cfg(test)]
mod tests;
