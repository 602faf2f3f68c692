//! The whole fleet under a nemesis (issue 40, not published): a chaos soak with an independent
//! checker.
//!
//! - [`fleet`]: PostgreSQL, MariaDB, Redis and etcd in containers on one Docker network (the
//!   machinery of `tests/faults`), two application processes leasing node IDs and taking hi-lo
//!   blocks from each, and a process per database (PostgreSQL, MariaDB) inserting rows whose
//!   keys come from the database-side generator's key default (on a node ID from that
//!   database's lease table);
//! - [`schedule`]: a seeded schedule of faults over them (`kill -9`, `SIGSTOP` past the TTL,
//!   a process or a store cut off the network, Redis restarted without persistence, a process
//!   restarted with its wall clock stepped, a burst past the layout's cap, a database's lease
//!   table truncated or dropped under its holders, a database restarted, a database restored
//!   from a dump taken seconds earlier by the documented procedure, and the operator's
//!   `idgen leases list` / `free` of expired and, rarely, live leases);
//! - [`node`]: the issuing process, which records its IDs compactly as runs ([`record`]);
//! - [`checker`]: reads nothing but the records and the rows, finds every ID issued twice and
//!   reports it with both issuers, their nodes, the faults in force and the seed.
//!
//! The short soak runs in `cargo test` (`tests/soak.rs`); the long form is the
//! `idgen-nemesis` binary (`--seed`, `--ids`, `--hours`); RELIABILITY.md has its report.

pub mod checker;
pub mod fleet;
pub mod node;
pub mod record;
pub mod schedule;
