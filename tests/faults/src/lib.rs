//! Fault tests across hosts (not published).
//!
//! [`node`] is an idgen instance as a small program, `idgen-fault-node`: it leases a node ID
//! from PostgreSQL with `WorkerLease`, issues Snowflake IDs and hi-lo IDs in a loop, and prints
//! every ID it issues and every state change to stdout, one [`Line`] each. The tests in
//! `tests/faults.rs` run several of them in containers on a Docker network with PostgreSQL in
//! another container, cut one off (`docker network disconnect`), pause one (`docker pause`),
//! restart the database, and then count every ID every instance printed.

pub mod cluster;
pub mod line;
pub mod node;

pub use line::Line;
