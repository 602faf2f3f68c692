//! The operator view of `idgen web --etcd …` and `idgen web --redis …` (the stores and the code
//! of `idgen leases`), over real servers (idgen-testkit), through the page's API: the holders,
//! the layout the namespace recorded (and that it differs from `--layout`), and the free's
//! refusals (another holder: `changed`; a live lease: `live`) before a forced free.

mod browser;

use std::time::Duration;

use browser::Server;
use browser::http::{get_json, post};
use idgen_core::Layout;
use idgen_engine::lease::{IntoLeaseStore, WorkerLease};
use idgen_testkit::key_value::split_url;
use serde_json::json;

/// A process of namespace `orders` holds a node ID on `store` with the js-safe layout (which
/// records it); `idgen web FLAG SERVER` (its `--layout` is twitter) shows and frees it.
async fn the_operator_view_works_on<M>(
    flag: &str,
    server: &str,
    table: &str,
    store: impl IntoLeaseStore<M>,
) {
    let lease = WorkerLease::options()
        .namespace("orders")
        .holder("orders-a")
        .ttl(Duration::from_secs(60))
        .renew_every(Duration::from_secs(20))
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(store, &Layout::JS_SAFE)
        .await
        .unwrap();
    let web = Server::start(&[
        flag,
        server,
        "--lease-table",
        table,
        "--namespace",
        "orders",
    ]);
    let config = get_json(&web, "/api/config");
    assert!(
        config["store"]
            .as_str()
            .unwrap()
            .contains(&format!("key prefix {table}")),
        "{config}"
    );
    let listed = get_json(&web, "/api/leases");
    let node = lease.node().to_string();
    assert_eq!(listed["leases"][0]["node"], node, "{listed}");
    assert_eq!(listed["leases"][0]["holder"], lease.holder(), "{listed}");
    assert_eq!(listed["leases"][0]["live"], true, "{listed}");
    assert_eq!(listed["layout"]["shown"], "js-safe", "{listed}");
    assert_eq!(listed["layout"]["server"], "twitter", "{listed}");
    assert_eq!(listed["layout"]["differs"], true, "{listed}");

    // The page showed another holder: refused as a changed row, nothing freed.
    let stale = json!({ "node": node, "holder": "orders-old", "force": true });
    let answer = post(&web, "/api/leases/free", &stale);
    assert_eq!(answer.status, 409, "{answer:?}");
    assert_eq!(answer.json()["reason"], "changed", "{answer:?}");
    let again = get_json(&web, "/api/leases");
    assert_eq!(again["leases"][0]["holder"], lease.holder(), "{again}");

    // The holder shown, not forced: a live lease, with what forcing would end.
    let shown = json!({ "node": node, "holder": lease.holder(), "force": false });
    let answer = post(&web, "/api/leases/free", &shown);
    assert_eq!(answer.status, 409, "{answer:?}");
    let body = answer.json();
    assert_eq!(body["reason"], "live", "{body}");
    assert_eq!(body["holder"], lease.holder(), "{body}");
    assert!(
        body["remaining"].as_str().unwrap().ends_with(" s"),
        "{body}"
    );

    // Forced: freed.
    let forced = json!({ "node": node, "holder": lease.holder(), "force": true });
    let answer = post(&web, "/api/leases/free", &forced);
    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(&format!("node {node} freed by force")),
        "{message}"
    );
    drop(lease);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_view_on_etcd() {
    let keys = idgen_testkit::etcd().await.expect("an etcd server");
    let (server, prefix) = split_url(keys.url());
    let table = format!("{prefix}leases");
    let etcd = idgen_etcd::Etcd::new(server.split(','));
    let store = idgen_etcd::lease::EtcdLeaseStore::new(&etcd)
        .with_prefix(&table)
        .unwrap();
    the_operator_view_works_on("--etcd", server, &table, store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_view_on_redis() {
    let keys = idgen_testkit::redis().await.expect("a Redis server");
    let (server, prefix) = split_url(keys.url());
    let table = format!("{prefix}leases");
    let client = idgen_redis::redis::Client::open(server).unwrap();
    let store = idgen_redis::lease::RedisLeaseStore::new(client)
        .with_prefix(&table)
        .unwrap();
    the_operator_view_works_on("--redis", server, &table, store).await;
}
