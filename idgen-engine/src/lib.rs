//! # idgen-engine
//!
//! The coordination engines of idgen, async on tokio, over abstract stores:
//!
//! * **Node-ID leases** ([`lease`], feature `lease`): a [`WorkerLease`](lease::WorkerLease)
//!   claims a node ID no other live process holds from a [`LeaseStore`](lease::LeaseStore),
//!   renews it, and fences the generator before a lease it could not renew runs out.
//! * **Hi-lo blocks** ([`hilo`], feature `hilo`): [`HiLo`] hands out `i64` IDs from memory in
//!   blocks taken from one central counter (a [`HiLoSource`]), refilled in the background.
//! * **Operator signals** ([`observe`]): metrics (feature `metrics`) and `tracing` events
//!   (feature `tracing`) of both.
//!
//! The stores and sources for real databases are in the adapter crates (`idgen-sqlx`,
//! `idgen-diesel`, `idgen-seaorm`, `idgen-etcd`, `idgen-redis`); the SQL they share is in
//! `idgen-sql`. Everything of `idgen-core` is re-exported here, so an adapter re-exports this
//! crate alone and an application depends on one adapter.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! # #[cfg(all(feature = "lease", feature = "hilo"))] {
//! use idgen_engine::hilo::{HiLo, MemorySource};
//! use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
//! use idgen_engine::{Layout, Snowflake};
//!
//! let lease = WorkerLease::options()
//!     .skip_takeover_wait_for_tests_and_development(true) // a fresh in-memory store
//!     .acquire(MemoryLeaseStore::new(), &Layout::TWITTER)
//!     .await?;
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! assert!(ids.next_id()?.get() > 0);
//!
//! let lines = HiLo::new(MemorySource::new(), 100).await?;
//! assert_eq!(lines.next_id().await?, 1);
//! # }
//! # Ok::<(), idgen_engine::Error>(()) }).unwrap();
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "lease", feature = "hilo"))]
mod borrowed;
mod call_error;
mod error;
#[cfg(feature = "hilo")]
#[cfg_attr(docsrs, doc(cfg(feature = "hilo")))]
pub mod hilo;
#[cfg(feature = "lease")]
#[cfg_attr(docsrs, doc(cfg(feature = "lease")))]
pub mod lease;
mod name;
pub mod observe;

pub use idgen_core::*;

pub use call_error::CallError;
pub use error::{Error, ErrorKind, Result};
#[cfg(feature = "hilo")]
pub use hilo::{HiLo, HiLoSource};
/// `idgen_core::Error`, the error of the ID values and generators (what [`ErrorKind::Id`] holds),
/// named apart from this crate's [`Error`].
pub use idgen_core::Error as CoreError;
pub use name::SqlName;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(all(doctest, feature = "lease", feature = "hilo"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
