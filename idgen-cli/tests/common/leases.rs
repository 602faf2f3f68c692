//! `idgen leases list|free` over a key-value store (`--etcd`, `--redis`), written once for
//! `leases_etcd.rs` and `leases_redis.rs`: the rule of idgen-sql's `procedure::free`, with the
//! output of the SQL stores. Included by those two files with `#[path]`, next to `mod common`.

use idgen_engine::lease::{LeaseOperator, LeaseStore};
use idgen_testkit::conformance::operator::{self, NS};
use idgen_testkit::key_value::split_url;
use serde_json::Value;

use crate::common;

/// A key-value store as `idgen leases` is pointed at it, and the same store opened here.
pub(crate) struct KvStore<S> {
    /// `--etcd` or `--redis`.
    flag: &'static str,
    /// What follows the flag: etcd's endpoints, or Redis's URL.
    server: String,
    /// The key prefix (`--lease-table`).
    table: String,
    /// The store on `server` with that prefix, to hold leases as processes would.
    store: S,
    /// The store's clock now (Unix ms): the bounds the holders store are taken above it.
    now_ms: i64,
}

impl<S: LeaseStore + LeaseOperator> KvStore<S> {
    /// The store `open` makes from a server and a key prefix, on the server of the test's
    /// `keys` (its URL, as idgen-testkit gives it), under a prefix of the test's own.
    pub(crate) async fn on(
        flag: &'static str,
        keys: &str,
        open: impl FnOnce(&str, &str) -> S,
    ) -> Self {
        let (server, prefix) = split_url(keys);
        let table = format!("{prefix}leases");
        let store = open(server, &table);
        let now_ms = store.now_ms().await.unwrap();
        KvStore {
            flag,
            server: server.to_owned(),
            table,
            store,
            now_ms,
        }
    }
    /// Claims a node ID for `holder` straight on the store (a process that never renews by
    /// itself), storing the bound a first renewal stores.
    async fn hold(&self, holder: &str) -> u64 {
        operator::hold(&self.store, holder, self.now_ms + 1_500).await
    }

    /// `leases SUBCOMMAND ARGS… FLAG SERVER --lease-table TABLE --namespace orders`.
    fn args(&self, sub: &str, args: &[&str]) -> Vec<String> {
        let mut all = vec!["leases", sub];
        all.extend(args);
        all.extend([
            self.flag,
            self.server.as_str(),
            "--lease-table",
            self.table.as_str(),
            "--namespace",
            NS,
        ]);
        all.into_iter().map(str::to_owned).collect()
    }

    fn list(&self) -> Value {
        common::json(&strs(&self.args("list", &[])))
    }

    fn list_text(&self) -> String {
        common::stdout(&strs(&self.args("list", &[])))
    }

    fn free(&self, args: &[&str]) -> String {
        common::stdout(&strs(&self.args("free", args)))
    }

    /// `idgen leases free ARGS…` fails: its stderr.
    fn refused(&self, args: &[&str]) -> String {
        let out = common::idgen(&strs(&self.args("free", args)))
            .assert()
            .code(1)
            .get_output()
            .clone();
        String::from_utf8(out.stderr).unwrap()
    }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Lists, refuses and frees on `kv` as on a database: the same JSON and table, the same
/// messages.
pub(crate) async fn leases_are_listed_and_freed_as_on_a_database<S>(kv: KvStore<S>)
where
    S: LeaseStore + LeaseOperator,
{
    assert_eq!(kv.list()["leases"], Value::Array(vec![]));
    // The store given on the command line wins over a database URL in the environment.
    common::idgen(&strs(&kv.args("list", &[])))
        .env("IDGEN_DATABASE_URL", "sqlite::memory:")
        .assert()
        .success();
    let a = kv.hold("holder-a").await;
    let b = kv.hold("holder-b").await;
    assert_eq!((a, b), (0, 1));

    // Two holders, live, in the SQL stores' JSON and table.
    let listed = kv.list();
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
    let text = kv.list_text();
    assert!(
        text.contains("holder-a") && text.contains("holder-b") && text.contains("node"),
        "{text}"
    );

    // Live: refused, saying what forcing risks.
    let err = kv.refused(&["0"]);
    assert!(
        err.contains("node 0 is leased by holder-a")
            && err.contains(
                "two processes issue with the same node ID until the old holder's fence deadline"
            )
            && err.contains("--force"),
        "{err}"
    );
    // A stale holder: refused.
    let err = kv.refused(&["1", "--force", "--holder", "holder-x"]);
    assert!(
        err.contains("node 1 is held by holder-b now, not holder-x"),
        "{err}"
    );

    // Forced: freed; listed as ended, with its holder.
    let forced = kv.free(&["0", "--force", "--holder", "holder-a"]);
    assert!(forced.starts_with("node 0 freed by force"), "{forced}");
    let listed = kv.list();
    assert_eq!(listed["leases"][0]["holder"], "holder-a");
    assert_eq!(listed["leases"][0]["live"], false);
    assert_eq!(listed["leases"][0]["expires_at_ms"], Value::Null);
    let text = kv.list_text();
    assert!(text.contains("expired"), "{text}");

    // Ended: freed without force, saying the next claim is a takeover; no longer listed.
    let freed = kv.free(&["0"]);
    assert!(
        freed.contains("had expired")
            && freed.contains("holder-a can no longer renew it; the next claim is a takeover")
            && !freed.contains("at once"),
        "{freed}"
    );
    let listed = kv.list();
    assert_eq!(listed["leases"].as_array().unwrap().len(), 1, "{listed}");
    assert!(kv.refused(&["0"]).contains("is not held by anyone"));
    assert!(
        kv.refused(&["5"])
            .contains("node 5 has no lease row or keys")
    );
}

/// `FLAG SERVER` with `--database-url` is refused, before anything is connected.
pub(crate) fn a_database_is_not_given_with(flag: &str, server: &str) {
    common::idgen(&[
        "leases",
        "list",
        flag,
        server,
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
