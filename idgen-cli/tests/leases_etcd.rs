//! `idgen leases list|free --etcd ENDPOINTS` over a real etcd server (idgen-testkit): the rule
//! of idgen-sql's `procedure::free`, with the output of the SQL stores.

mod common;

use std::time::Duration;

use idgen_etcd::Etcd;
use idgen_etcd::lease::{ClaimRequest, EtcdLeaseStore, LeaseStore, RenewRequest};
use idgen_testkit::key_value::split_url;
use serde_json::Value;

const NS: &str = "orders";
const TTL: Duration = Duration::from_secs(2);

/// Claims a node ID for `holder` straight on the store (a process that never renews by
/// itself), storing the bound a first renewal stores.
async fn hold(store: &EtcdLeaseStore, holder: &str) -> u64 {
    let claim = store
        .claim(ClaimRequest {
            namespace: NS,
            capacity: 8,
            holder,
            ttl: TTL,
        })
        .await
        .unwrap()
        .unwrap();
    let bound = store.now_ms() + 1_500;
    let renewed = store
        .renew(RenewRequest {
            namespace: NS,
            node: claim.node,
            holder,
            ttl: TTL,
            last_timestamp_ms: Some(bound),
        })
        .await
        .unwrap();
    assert!(renewed);
    claim.node
}

/// `idgen leases SUBCOMMAND ARGS… --etcd … --lease-table … --namespace orders`.
fn with_store(sub: &str, args: &[&str], server: &str, table: &str) -> Vec<String> {
    let mut all = vec!["leases".to_owned(), sub.to_owned()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    all.extend(
        ["--etcd", server, "--lease-table", table, "--namespace", NS]
            .iter()
            .map(|a| (*a).to_owned()),
    );
    all
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_on_etcd_are_listed_and_freed_as_on_a_database() {
    let keys = idgen_testkit::etcd().await.expect("an etcd server");
    let (server, prefix) = split_url(keys.url());
    let table = format!("{prefix}leases");
    let store = EtcdLeaseStore::new(&Etcd::new(server.split(',')))
        .with_prefix(&table)
        .unwrap();
    let list = || common::json(&strs(&with_store("list", &[], server, &table)));
    let free = |args: &[&str]| common::stdout(&strs(&with_store("free", args, server, &table)));
    let refused = |args: &[&str]| {
        let out = common::idgen(&strs(&with_store("free", args, server, &table)))
            .assert()
            .code(1)
            .get_output()
            .clone();
        String::from_utf8(out.stderr).unwrap()
    };

    assert_eq!(list()["leases"], Value::Array(vec![]));
    // The store given on the command line wins over a database URL in the environment.
    common::idgen(&strs(&with_store("list", &[], server, &table)))
        .env("IDGEN_DATABASE_URL", "sqlite::memory:")
        .assert()
        .success();
    let a = hold(&store, "holder-a").await;
    let b = hold(&store, "holder-b").await;
    assert_eq!((a, b), (0, 1));

    // Two holders, live, in the SQL stores' JSON and table.
    let listed = list();
    assert_eq!(listed["namespace"], NS);
    let leases = listed["leases"].as_array().unwrap();
    assert_eq!(leases.len(), 2, "{listed}");
    assert_eq!(leases[0]["holder"], "holder-a");
    assert_eq!(leases[1]["holder"], "holder-b");
    assert!(leases.iter().all(|l| l["live"] == true), "{listed}");
    assert!(leases.iter().all(|l| l["expires_at_ms"].is_i64()
        && l["expires_in_ms"].is_i64()
        && l["last_timestamp_ms"].is_i64()
        && l["last_timestamp_utc"].is_string()));
    let text = common::stdout(&strs(&with_store("list", &[], server, &table)));
    assert!(
        text.contains("holder-a") && text.contains("holder-b") && text.contains("node"),
        "{text}"
    );

    // Live: refused, saying what forcing risks.
    let err = refused(&["0"]);
    assert!(
        err.contains("node 0 is leased by holder-a")
            && err.contains(
                "two processes issue with the same node ID until the old holder's fence deadline"
            )
            && err.contains("--force"),
        "{err}"
    );
    // A stale holder: refused.
    let err = refused(&["1", "--force", "--holder", "holder-x"]);
    assert!(
        err.contains("node 1 is held by holder-b now, not holder-x"),
        "{err}"
    );

    // Forced: freed; listed as ended, with its holder.
    let forced = free(&["0", "--force", "--holder", "holder-a"]);
    assert!(forced.starts_with("node 0 freed by force"), "{forced}");
    let listed = list();
    assert_eq!(listed["leases"][0]["holder"], "holder-a");
    assert_eq!(listed["leases"][0]["live"], false);
    assert_eq!(listed["leases"][0]["expires_at_ms"], Value::Null);
    let text = common::stdout(&strs(&with_store("list", &[], server, &table)));
    assert!(text.contains("expired"), "{text}");

    // Ended: freed without force; no longer listed.
    let freed = free(&["0"]);
    assert!(freed.contains("had expired"), "{freed}");
    let listed = list();
    assert_eq!(listed["leases"].as_array().unwrap().len(), 1, "{listed}");
    assert!(refused(&["0"]).contains("is not held by anyone"));
    assert!(refused(&["5"]).contains("node 5 has no lease row or keys"));
}

#[test]
fn etcd_and_a_database_are_not_given_together() {
    common::idgen(&[
        "leases",
        "list",
        "--etcd",
        "http://127.0.0.1:1",
        "--database-url",
        "sqlite::memory:",
    ])
    .env_remove("IDGEN_DATABASE_URL")
    .assert()
    .code(1)
    .stderr(predicates::str::contains(
        "give one lease store, not both --database-url and",
    ));
}
