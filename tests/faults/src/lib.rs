//! Fault tests across hosts (not published).
//!
//! [`node`] is an idgen instance as a small program, `idgen-fault-node`: it leases a node ID
//! with `WorkerLease` (from PostgreSQL, or Redis, MariaDB or etcd with `IDGEN_FAULT_STORE`), issues
//! Snowflake IDs and hi-lo IDs in a loop, and prints every ID it issues and every state change
//! to stdout, one [`Line`] each. The tests in `tests/faults.rs` run several of them in
//! containers on a Docker network with the store in other containers ([`cluster`]), and:
//!
//! - cut one off (`docker network disconnect`), pause one (`docker pause`), restart the
//!   database;
//! - make the store forget what it acknowledged while three holders issue, and let three new
//!   processes go the moment it answers again: Redis restarted without persistence, Redis failed
//!   over to a replica whose link was cut, PostgreSQL replaced by an empty database, restored
//!   from a dump taken 15 s earlier, failed over to a streaming standby whose replay was paused
//!   and link cut, MariaDB restored from a `mariadb-dump` taken 15 s earlier, failed over to a
//!   replica whose threads were stopped, etcd restored from an older copy of its data;
//!
//! then count every ID every instance printed, check that no two instances issued on one node
//! ID at the same time, and report how long claims waited and how long old holders kept
//! issuing.

pub mod cluster;
pub mod line;
pub mod node;

pub use line::Line;
