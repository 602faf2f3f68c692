//! The operator suite on idgen-engine's memory store: its `LeaseOperator` (`held_leases`, `now_ms`, `free`) keeps the
//! rule of the database stores (a free never makes the next claim exact). The case's database
//! is a SQLite file the memory store does not use: the cheapest the suite can provision.

use idgen_engine::lease::{BoxError, MemoryLeaseStore};
use idgen_testkit::conformance::{DbKind, LeaseSubject};

struct Memory;

impl LeaseSubject for Memory {
    type Store = MemoryLeaseStore;
    const DATABASE: DbKind = DbKind::Sqlite;
    async fn store(_url: &str, _table: &str) -> Result<MemoryLeaseStore, BoxError> {
        Ok(MemoryLeaseStore::new())
    }
    async fn create_table(_store: &MemoryLeaseStore) -> Result<(), BoxError> {
        Ok(())
    }
}

idgen_testkit::operator_suite!(memory_operator, Memory);
