//! idgen-testkit's conformance suites on idgen-etcd: the lease store and the hi-lo counter on
//! a real etcd server (`IDGEN_ETCD_ENDPOINTS`, a container, or a local `etcd`).

use idgen_etcd::Etcd;
use idgen_etcd::hilo::EtcdCounter;
use idgen_etcd::lease::{BoxError, EtcdLeaseStore};
use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};
use idgen_testkit::key_value::split_url;

/// idgen-etcd: `EtcdLeaseStore`, `EtcdCounter`, each under the case's key prefix.
struct EtcdStores;

fn etcd(server: &str) -> Etcd {
    Etcd::new(server.split(','))
}

impl LeaseSubject for EtcdStores {
    type Store = EtcdLeaseStore;
    const DATABASE: DbKind = DbKind::Etcd;
    async fn store(url: &str, table: &str) -> Result<EtcdLeaseStore, BoxError> {
        let (server, prefix) = split_url(url);
        Ok(EtcdLeaseStore::new(&etcd(server)).with_prefix(&format!("{prefix}{table}"))?)
    }
}

impl HiLoSubject for EtcdStores {
    type Source = EtcdCounter;
    const DATABASE: DbKind = DbKind::Etcd;
    const COUNTER: CounterKind = CounterKind::Sequence;
    async fn source(url: &str, counter: &str) -> Result<EtcdCounter, BoxError> {
        let (server, prefix) = split_url(url);
        let counter = EtcdCounter::new(&etcd(server), counter)?;
        Ok(counter.with_prefix(&format!("{prefix}{}", idgen_etcd::hilo::DEFAULT_PREFIX))?)
    }
    async fn create(source: &EtcdCounter, block: u64) -> Result<(), BoxError> {
        Ok(source.create(block).await?)
    }
}

idgen_testkit::lease_suite!(etcd_lease, EtcdStores, key_value);
idgen_testkit::hilo_suite!(etcd_hilo, EtcdStores, key_value);
idgen_testkit::startup_suite!(etcd_startup, EtcdStores, EtcdStores);
