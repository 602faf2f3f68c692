//! The conformance suites: what every lease store and every hi-lo source promises, written
//! once and run by every adapter on every database it supports.
//!
//! An adapter's test file describes each store or source it offers on each database as a
//! *subject* ([`LeaseSubject`], [`HiLoSubject`]: how to open one on a URL and create its table
//! or counter) and instantiates the suites with the macros:
//!
//! | macro | cases |
//! |---|---|
//! | [`lease_suite!`](crate::lease_suite) | the lease store: claims, capacity, release, floor, TTL, outage, processes, lifecycle edges, calls given up on; with `mysql`, a server without autocommit; with `key_value` (etcd, Redis), all but the SQL table cases |
//! | [`hilo_suite!`](crate::hilo_suite) | the hi-lo source: increment check, missing counter, pooled-lo, transactions, set-back, outage, processes; a start-up bounded by its timeout while another session holds the counter; with `mysql`, a server without autocommit; with `key_value`, all but the transaction and lock cases |
//! | [`operator_suite!`](crate::operator_suite) | an operator's view of the leases (`idgen leases list\|free`): held leases listed, the free of an expired lease, of a live one only with force, never of another holder's ([`OperatorSubject`]) |
//! | [`startup_suite!`](crate::startup_suite) | eight processes starting together on twenty empty databases |
//! | [`cross_adapter_suite!`](crate::cross_adapter_suite) | processes of two adapters sharing one lease table and one counter |
//!
//! Each case gets a fresh database ([`Database`]) from the kit's discovery order; cases with
//! OS processes start the test binary again as a child ([`Children`]).
//!
//! ```
//! use idgen_engine::hilo::{BoxError, MemorySource};
//! use idgen_engine::lease::MemoryLeaseStore;
//! use idgen_testkit::conformance::{CounterUnderTest, DbKind, HiLoSubject, LeaseSubject};
//!
//! // An adapter's subject opens its store or source on a pool to `url`, e.g. a PgLeaseStore
//! // and a PgSequence; this stand-in only shows the shape.
//! struct Memory;
//!
//! impl LeaseSubject for Memory {
//!     type Store = MemoryLeaseStore;
//!     const DATABASE: DbKind = DbKind::Postgres;
//!     async fn store(_url: &str, _table: &str) -> Result<MemoryLeaseStore, BoxError> {
//!         Ok(MemoryLeaseStore::new())
//!     }
//!     async fn create_table(_store: &MemoryLeaseStore) -> Result<(), BoxError> {
//!         Ok(())
//!     }
//! }
//!
//! impl HiLoSubject for Memory {
//!     type Source = MemorySource;
//!     const DATABASE: DbKind = DbKind::Postgres;
//!     const COUNTER: CounterUnderTest = CounterUnderTest::Sequence;
//!     async fn source(_url: &str, counter: &str) -> Result<MemorySource, BoxError> {
//!         Ok(MemorySource::named(counter))
//!     }
//!     async fn create(_source: &MemorySource, _block: u64) -> Result<(), BoxError> {
//!         Ok(())
//!     }
//! }
//!
//! idgen_testkit::lease_suite!(postgres_lease, Memory);
//! idgen_testkit::hilo_suite!(postgres_hilo, Memory);
//! idgen_testkit::startup_suite!(postgres_startup, Memory, Memory);
//! # fn main() {}
//! ```

mod app_pool;
mod child;
pub mod connections;
mod database;
mod gate;
pub mod hilo;
pub mod hilo_forgetting;
mod key_value;
pub mod lease;
pub mod lease_abandoned;
pub mod lease_forgetting;
pub mod lease_lifecycle;
pub mod lease_processes;
mod lease_row;
mod macros;
pub mod operator;
mod sql_suites;
pub mod startup;

pub use app_pool::{AppFuture, AppPool, AppPoolSpec};
pub use child::Children;
pub use database::{Database, DbKind, OpenTransaction, Outage};
pub use hilo::{CounterUnderTest, HiLoSubject};
pub use lease::LeaseSubject;
pub use lease_row::LeaseRow;
pub use operator::OperatorSubject;

/// Runs one case on a multi-thread runtime with two workers, as each generated test does.
///
/// ```
/// idgen_testkit::conformance::run(async {
///     tokio::task::yield_now().await;
/// });
/// ```
pub fn run<F: std::future::Future<Output = ()>>(case: F) {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(case);
}

/// A stand-in subject for the macros' examples: idgen-engine's memory store and source, posing as
/// a MySQL subject with a counter table (an adapter's subject opens a pool to the URL instead).
#[doc(hidden)]
pub struct MemorySubject;

impl LeaseSubject for MemorySubject {
    type Store = idgen_engine::lease::MemoryLeaseStore;
    const DATABASE: DbKind = DbKind::MySql;
    async fn store(_url: &str, _table: &str) -> Result<Self::Store, idgen_engine::hilo::BoxError> {
        Ok(idgen_engine::lease::MemoryLeaseStore::new())
    }
    async fn create_table(_store: &Self::Store) -> Result<(), idgen_engine::hilo::BoxError> {
        Ok(())
    }
}

impl HiLoSubject for MemorySubject {
    type Source = idgen_engine::hilo::MemorySource;
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterUnderTest = CounterUnderTest::Table;
    async fn source(
        _url: &str,
        counter: &str,
    ) -> Result<Self::Source, idgen_engine::hilo::BoxError> {
        Ok(idgen_engine::hilo::MemorySource::named(counter))
    }
    async fn create(
        _source: &Self::Source,
        _block: u64,
    ) -> Result<(), idgen_engine::hilo::BoxError> {
        Ok(())
    }
}
