//! `idgen leases list|free --etcd ENDPOINTS` over a real etcd server (idgen-testkit): the rule
//! of idgen-sql's `procedure::free`, with the output of the SQL stores.

mod common;
#[path = "common/leases.rs"]
mod leases;

use idgen_etcd::Etcd;
use idgen_etcd::lease::{EtcdLeaseStore, LeaseOperator};
use idgen_testkit::key_value::split_url;
use leases::KvStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_on_etcd_are_listed_and_freed_as_on_a_database() {
    let keys = idgen_testkit::etcd().await.expect("an etcd server");
    let (server, prefix) = split_url(keys.url());
    let table = format!("{prefix}leases");
    let store = EtcdLeaseStore::new(&Etcd::new(server.split(',')))
        .with_prefix(&table)
        .unwrap();
    let now_ms = store.now_ms().await.unwrap();
    leases::leases_are_listed_and_freed_as_on_a_database(KvStore {
        flag: "--etcd",
        server,
        table: &table,
        store,
        now_ms,
    })
    .await;
}

#[test]
fn etcd_and_a_database_are_not_given_together() {
    leases::a_database_is_not_given_with("--etcd", "http://127.0.0.1:1");
}
