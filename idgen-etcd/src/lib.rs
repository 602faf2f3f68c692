//! # idgen-etcd
//!
//! idgen on [etcd](https://etcd.io): node IDs leased on etcd's own leases, and hi-lo blocks
//! from a counter advanced by compare-and-swap, with everything of `idgen-engine` (and so `idgen-core`) re-exported,
//! so this is the one crate to depend on:
//!
//! ```toml
//! idgen-etcd = "0.1"
//! ```
//!
//! | what | type | how |
//! |---|---|---|
//! | the cluster | [`Etcd`] | endpoints, a client connected on first use |
//! | node-ID leases | [`lease::EtcdLeaseStore`] | an etcd lease per claim (TTL, keep-alive); the key `<prefix>/<ns>/holder/<node>` created only if absent; the bound in `<prefix>/<ns>/last/<node>`, which has no lease |
//! | operators | [`lease::LeaseOperator`] on [`lease::EtcdLeaseStore`] (`held_leases`, `free`) | the held node IDs, and the free of one with the SQL stores' rule (what `idgen leases --etcd` runs) |
//! | hi-lo counter | [`hilo::EtcdCounter`] | `<prefix>/<name>/next` advanced by a compare-and-swap transaction per block, by the increment stored beside it |
//!
//! The call shapes are those of the SQL adapters, with an [`Etcd`] where they take a pool:
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_etcd::hilo::{EtcdCounter, HiLo};
//! use idgen_etcd::lease::WorkerLease;
//! use idgen_etcd::{Etcd, Layout, Snowflake, SnowflakeId};
//!
//! let etcd = Etcd::new(["http://10.0.0.1:2379", "http://10.0.0.2:2379", "http://10.0.0.3:2379"]);
//!
//! // start-up
//! let lease = WorkerLease::acquire(&etcd, &Layout::TWITTER).await?; // node ID from etcd
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! EtcdCounter::new(&etcd, "hilo")?.create(1000).await?; // once; harmless when it exists
//! let line_ids = HiLo::new(&etcd, 1000).await?;          // blocks of 1000
//!
//! // per request
//! let id: SnowflakeId = ids.next_id()?;
//! let line_id: i64 = line_ids.next_id().await?;
//! # let _ = (id, line_id);
//!
//! // shutdown
//! handle.release().await?;
//! # Ok(()) }
//! ```
//!
//! ## Why etcd is the strict choice
//!
//! * Every claim, renewal and counter step is committed to a quorum of members (Raft) before
//!   it is answered: a member failing, or a leader change, loses nothing.
//! * A lease's expiry is measured by the leader on a monotonic clock, from the keep-alive it
//!   received; a new leader extends every lease rather than expiring it early. The generator
//!   stops (`Fenced`) at `ttl - safety_margin` after it **sent** its last successful renewal,
//!   so it has stopped before etcd can expire the lease and hand the node ID to anyone.
//! * Without a quorum nothing can be claimed, and renewals fail (the client asks for a
//!   leader): every generator fences itself, then resumes when the quorum is back (the
//!   three-member cluster test in `tests/cluster.rs` kills members with SIGKILL and counts
//!   duplicates across four processes: none).
//! * The last-timestamp bound of a node ID outlives its lease, so its next holder never
//!   reissues an ID, even with a clock behind.
//!
//! etcd TTLs are whole seconds: a TTL is rounded up, and etcd raises one below its minimum
//! (about 2 s with the default election timeout). Longer leases are safe; the fence still
//! closes by the TTL you asked for.
//!
//! ## Keys
//!
//! With the default prefixes, namespace `default` and counter `hilo`:
//!
//! | key | lease | holds |
//! |---|---|---|
//! | `idgen_worker_lease/default/holder/<node>` | the claim's | the holder's name |
//! | `idgen_worker_lease/default/last/<node>` | none | the bound, 19 digits of Unix ms, and the current claim's holder |
//! | `idgen_hilo/hilo/next` | none | the next free ID (starts at 1) |
//! | `idgen_hilo/hilo/increment` | none | the block size the counter was created with |
//!
//! ## Features
//!
//! | feature | what |
//! |---|---|
//! | `metrics` | idgen-engine's operator metrics through the `metrics` facade |
//! | `tracing` | idgen-engine's operator events as `tracing` events |
//!
//! Building needs `protoc` (Debian: `apt-get install protobuf-compiler`): `etcd-client`
//! compiles etcd's protocol definitions.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use idgen_engine::*;

/// The `etcd-client` crate this one is built on (for its `ConnectOptions`).
pub use etcd_client;

mod connection;
pub mod hilo;
mod last;
pub mod lease;

pub use connection::Etcd;

/// The README's example, compiled as a doctest (it needs a server, so it is not run) so it
/// cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
