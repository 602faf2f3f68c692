//! `idgen leases list|free --redis URL` over a real Redis server (idgen-testkit): the rule
//! of idgen-sql's `procedure::free`, with the output of the SQL stores.

mod common;
#[path = "common/leases.rs"]
mod leases;

use idgen_redis::lease::{LeaseOperator, RedisLeaseStore};
use idgen_testkit::key_value::split_url;
use leases::KvStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_on_redis_are_listed_and_freed_as_on_a_database() {
    let keys = idgen_testkit::redis().await.expect("a Redis server");
    let (server, prefix) = split_url(keys.url());
    let table = format!("{prefix}leases");
    let client = idgen_redis::redis::Client::open(server).unwrap();
    let store = RedisLeaseStore::new(client).with_prefix(&table).unwrap();
    let now_ms = store.now_ms().await.unwrap();
    leases::leases_are_listed_and_freed_as_on_a_database(KvStore {
        flag: "--redis",
        server,
        table: &table,
        store,
        now_ms,
    })
    .await;
}

#[test]
fn redis_and_a_database_are_not_given_together() {
    leases::a_database_is_not_given_with("--redis", "redis://127.0.0.1:1/");
}
