//! idgen-testkit's conformance suites on idgen-etcd: the lease store (with its operator's
//! view, its `LeaseOperator`) and the hi-lo counter on a real etcd server (`IDGEN_ETCD_ENDPOINTS`, a container, or a local `etcd`).

use idgen_etcd::Etcd;
use idgen_etcd::hilo::EtcdCounter;
use std::time::Duration;

use idgen_etcd::lease::{BoxError, ClaimRequest, EtcdLeaseStore, LeaseStore, RenewRequest};
use idgen_testkit::conformance::{CounterUnderTest, DbKind, HiLoSubject, LeaseSubject};
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
    const COUNTER: CounterUnderTest = CounterUnderTest::Sequence;
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
idgen_testkit::operator_suite!(etcd_operator, EtcdStores);

/// A holder whose etcd lease expired while nobody claimed its node ID (a paused process, or an
/// etcd restored from a snapshot that never had the lease) takes it back at its next renewal.
/// etcd-client reports the keep-alive of an expired lease as an error; taken for a store
/// failure, it once failed every renewal, and the holder stayed fenced for good.
#[tokio::test(flavor = "multi_thread")]
async fn a_holder_whose_etcd_lease_expired_takes_its_node_id_back_at_its_next_renewal() {
    let keys = idgen_testkit::etcd().await.expect("an etcd server");
    let (server, prefix) = split_url(keys.url());
    let store = EtcdLeaseStore::new(&etcd(server))
        .with_prefix(&format!("{prefix}leases"))
        .unwrap();
    let ttl = Duration::from_secs(2);
    let claim = store
        .claim(ClaimRequest {
            namespace: "default",
            capacity: 4,
            holder: "a",
            ttl,
        })
        .await
        .unwrap()
        .expect("a free node ID");
    // Past the TTL: etcd's leader revokes expired leases every 500 ms.
    tokio::time::sleep(ttl + Duration::from_millis(1500)).await;
    let renewed = store
        .renew(RenewRequest {
            namespace: "default",
            node: claim.node,
            holder: "a",
            ttl,
            last_timestamp_ms: None,
        })
        .await;
    assert!(
        matches!(renewed, Ok(true)),
        "the renewal after the lease expired: {renewed:?}"
    );
}
