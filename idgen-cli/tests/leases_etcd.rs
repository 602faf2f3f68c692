//! `idgen leases list|free --etcd ENDPOINTS` over a real etcd server (idgen-testkit): the rule
//! of idgen-sql's `procedure::free`, with the output of the SQL stores.

mod common;
#[path = "common/leases.rs"]
mod leases;

use idgen_etcd::Etcd;
use idgen_etcd::lease::EtcdLeaseStore;
use leases::KvStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_on_etcd_are_listed_and_freed_as_on_a_database() {
    let keys = idgen_testkit::etcd().await.expect("an etcd server");
    let kv = KvStore::on("--etcd", keys.url(), |server, table| {
        EtcdLeaseStore::new(&Etcd::new(server.split(',')))
            .with_prefix(table)
            .unwrap()
    })
    .await;
    leases::leases_are_listed_and_freed_as_on_a_database(kv).await;
}

#[test]
fn etcd_and_a_database_are_not_given_together() {
    leases::a_database_is_not_given_with("--etcd", "http://127.0.0.1:1");
}
