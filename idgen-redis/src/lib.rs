//! # idgen-redis
//!
//! idgen on [Redis](https://redis.io): node IDs leased from Redis keys with an expiry, and
//! hi-lo blocks from a Redis counter, with everything of `idgen-engine` (and so `idgen-core`) re-exported, so this is
//! the one crate to depend on:
//!
//! ```toml
//! idgen-redis = "0.1"
//! ```
//!
//! | what | type | how |
//! |---|---|---|
//! | node-ID leases | [`lease::RedisLeaseStore`] | `SET <prefix>:<ns>:holder:<node> <holder> NX PX <ttl>`; renew and release are scripts that check the holder; the last-timestamp bound in a hash without expiry |
//! | operators | [`lease::LeaseOperator`] on [`lease::RedisLeaseStore`] (`held_leases`, `free`) | the held node IDs, and the free of one with the SQL stores' rule (what `idgen leases --redis` runs) |
//! | hi-lo counter | [`hilo::RedisCounter`] | `INCRBY <prefix>:<name> <block>` in a script that refuses a missing counter |
//!
//! The call shapes are those of the SQL adapters, with a [`redis::Client`] where they take a
//! pool:
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_redis::hilo::{HiLo, RedisCounter};
//! use idgen_redis::lease::WorkerLease;
//! use idgen_redis::{Layout, Snowflake, SnowflakeId};
//!
//! let client = redis::Client::open("redis://127.0.0.1:6379/")?;
//!
//! // start-up
//! let lease = WorkerLease::acquire(&client, &Layout::TWITTER).await?; // node ID from Redis
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! RedisCounter::new(&client, "hilo")?.create().await?; // once; harmless when it exists
//! let line_ids = HiLo::new(&client, 1000).await?;          // blocks of 1000
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
//! The store keeps the promises of [`WorkerLease`](lease::WorkerLease) on one Redis server:
//! the lease's expiry is measured on the server's clock, the generator stops (`Fenced`) before
//! a lease it could not renew can expire there, the next holder of a node ID issues only after
//! the last timestamp its predecessor stored, and a renewal answered after a release never
//! takes the node ID back. The conformance suites of the SQL stores run on it unchanged
//! (`tests/conformance.rs`).
//!
//! ## What Redis does not guarantee
//!
//! Redis is the popular choice, not the strict one. Know what it does not promise:
//!
//! * **Replication is asynchronous.** A primary acknowledges a claim or a renewal before any
//!   replica has it. If the primary fails and a replica is promoted (Sentinel, a managed
//!   service), the claims and renewals of the last moments can be lost. A claim of a node ID
//!   with no release record (no key, or a lease that expired) then issues only after one TTL
//!   plus the clock allowance, and the old holder fences at its next renewal, so Snowflake IDs
//!   stay unique at the cost of that wait. Not covered: a replica that still shows a release
//!   older than a later claim lets a new process take that node ID at once, while the old
//!   holder issues until its next renewal.
//! * **Persistence is the server's setting.** After a restart without `appendonly yes` and
//!   `appendfsync always`, leases and the last-timestamp bounds of the last second(s) are gone
//!   (new claims wait one TTL plus the allowance, as above), and a hi-lo counter can be behind
//!   the blocks already handed out: a generator still running fails closed only when its
//!   next block comes out at or below its own blocks (one whose blocks lie below the restored
//!   value takes blocks another process still serves), and new ones hand those blocks out
//!   again, unless given a floor (`HiLoBuilder::floor_from`, read again before every block).
//! * **Expiry follows the server's wall clock.** Redis stores expiry as a Unix time; a server
//!   clock stepped forward expires leases early (before the holder's fence closes), and one
//!   stepped back keeps them longer. Keep the server's clock slewed by NTP, never stepped.
//! * **One server, not Redis Cluster.** The claim script walks the node IDs of a namespace in
//!   keys it computes, which Redis Cluster does not allow across slots; idgen-redis is tested on
//!   a single server.
//!
//! **Pick etcd (`idgen-etcd`)** when a failover must cost no wait: etcd commits every claim,
//! renewal and counter step to a quorum before answering (Raft), measures lease expiry on a
//! monotonic clock, and keeps leases alive across a leader change. Pick Redis when you already
//! run one server you trust with its persistence settings, and a claim's wait of one TTL after a
//! failover is acceptable.
//!
//! ## Keys
//!
//! With the default prefixes (`idgen_worker_lease`, `idgen_hilo`), namespace `default` and
//! counter `hilo`:
//!
//! | key | type | expiry | holds |
//! |---|---|---|---|
//! | `idgen_worker_lease:default:holder:<node>` | string | the lease's TTL | the holder's name |
//! | `idgen_worker_lease:default:node:<node>` | hash | none | `last_timestamp` (Unix ms), `owner` (the current claim's holder) |
//! | `idgen_hilo:hilo` | string | none | the next free ID (starts at 1) |
//!
//! A script (or another language) takes a block of `n` from a counter with `INCRBY key n`
//! (the block is `[result - n, result)`), as idgen does.
//!
//! ## Features
//!
//! | feature | what |
//! |---|---|
//! | `metrics` | idgen-engine's operator metrics through the `metrics` facade |
//! | `tracing` | idgen-engine's operator events as `tracing` events |

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use idgen_engine::*;

/// The `redis` crate this one is built on (for [`redis::Client`]).
pub use redis;

mod connection;
pub mod hilo;
pub mod lease;
mod scripts;

/// The README's example, compiled as a doctest (it needs a server, so it is not run) so it
/// cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
