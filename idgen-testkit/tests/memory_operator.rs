//! The operator suite on idgen-engine's memory store: its `rows`, `now_ms` and `free` keep the
//! rule of the database stores (a free never makes the next claim exact). The case's database
//! is a SQLite file the memory store does not use: the cheapest the suite can provision.

use idgen_engine::lease::{BoxError, Freed, HeldLease, MemoryLeaseStore, NotFreed};
use idgen_testkit::conformance::{DbKind, LeaseSubject, MemorySubject, OperatorSubject};

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

impl OperatorSubject for Memory {
    async fn rows(store: &MemoryLeaseStore, namespace: &str) -> Result<Vec<HeldLease>, BoxError> {
        <MemorySubject as OperatorSubject>::rows(store, namespace).await
    }
    async fn now_ms(store: &MemoryLeaseStore) -> Result<i64, BoxError> {
        <MemorySubject as OperatorSubject>::now_ms(store).await
    }
    async fn free(
        store: &MemoryLeaseStore,
        namespace: &str,
        node: u64,
        holder: Option<&str>,
        force: bool,
    ) -> Result<Result<Freed, NotFreed>, BoxError> {
        <MemorySubject as OperatorSubject>::free(store, namespace, node, holder, force).await
    }
}

idgen_testkit::operator_suite!(memory_operator, Memory);
