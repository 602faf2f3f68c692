//! `idgen leases list|free --redis URL` over a real Redis server (idgen-testkit): the rule
//! of idgen-sql's `procedure::free`, with the output of the SQL stores.

mod common;
#[path = "common/leases.rs"]
mod leases;

use idgen_redis::lease::RedisLeaseStore;
use leases::KvStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_on_redis_are_listed_and_freed_as_on_a_database() {
    let keys = idgen_testkit::redis().await.expect("a Redis server");
    let kv = KvStore::on("--redis", keys.url(), |server, table| {
        let client = idgen_redis::redis::Client::open(server).unwrap();
        RedisLeaseStore::new(client).with_prefix(table).unwrap()
    })
    .await;
    leases::leases_are_listed_and_freed_as_on_a_database(kv).await;
}

#[test]
fn redis_and_a_database_are_not_given_together() {
    leases::a_database_is_not_given_with("--redis", "redis://127.0.0.1:1/");
}
