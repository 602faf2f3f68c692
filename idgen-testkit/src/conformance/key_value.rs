//! What the suites read and write on etcd and Redis without the store under test: the key
//! layouts of idgen-etcd and idgen-redis, as `database.rs` knows the SQL tables.

// Without both features, the arms for the missing store compile away.
#![cfg_attr(
    not(all(feature = "etcd", feature = "redis")),
    allow(unused_variables, unused_imports, dead_code)
)]

use super::LeaseRow;
use idgen_testdb::KeyPrefix;
use idgen_testdb::ServerKind;

/// The hi-lo counters' key prefix (the SQL counter table's default name).
const COUNTER_PREFIX: &str = "idgen_hilo";

/// What separates the parts of a key: `/` on etcd, `:` on Redis.
fn separator(keys: &KeyPrefix) -> char {
    match keys.kind() {
        ServerKind::Etcd => '/',
        _ => ':',
    }
}

/// The start of every lease key of `namespace` in `table` (the store's key prefix is
/// `<test prefix><table>`): `…table/namespace/` on etcd, `…table:namespace:` on Redis.
fn lease_keys(keys: &KeyPrefix, table: &str, namespace: &str) -> String {
    let sep = separator(keys);
    format!("{}{table}{sep}{namespace}{sep}", keys.prefix())
}

/// The counter `counter`'s key (Redis), or the start of its keys (etcd: `…/next`,
/// `…/increment`).
fn counter_key(keys: &KeyPrefix, counter: &str) -> String {
    format!(
        "{}{COUNTER_PREFIX}{}{counter}",
        keys.prefix(),
        separator(keys)
    )
}

/// Runs `$call` with `$store` naming this file's `etcd` or `redis` module, whichever store
/// `$keys` is on; any other store is a bug of the suite that calls it.
macro_rules! on_store {
    ($keys:expr, $what:literal, |$store:ident| $call:expr) => {
        match $keys.kind() {
            #[cfg(feature = "etcd")]
            ServerKind::Etcd => {
                use etcd as $store;
                $call
            }
            #[cfg(feature = "redis")]
            ServerKind::Redis => {
                use redis as $store;
                $call
            }
            other => panic!("no {} on {}", $what, other.name()),
        }
    };
}

/// The rows of `namespace` in the lease keys of `table` (the store's key prefix is
/// `<test prefix><table>`): a node ID with a holder key or a `last` key. `holder` is the holder
/// key's value, else the owner still named (a lease that expired unclaimed), and
/// `expires_at_ms` is 0 without a holder key. etcd gives a lease's remaining TTL in whole
/// seconds (rounded down): its expiry here is a lower bound.
pub(crate) async fn lease_rows(keys: &KeyPrefix, table: &str, namespace: &str) -> Vec<LeaseRow> {
    on_store!(keys, "lease rows", |store| store::lease_rows(
        keys,
        &lease_keys(keys, table, namespace)
    )
    .await)
}

/// Marks `nodes` held by `someone` for an hour, as other processes' claims would.
pub(crate) async fn hold(
    keys: &KeyPrefix,
    table: &str,
    namespace: &str,
    nodes: std::ops::Range<u64>,
) {
    on_store!(keys, "lease keys", |store| store::hold(
        keys,
        &lease_keys(keys, table, namespace),
        nodes
    )
    .await)
}

/// Deletes every lease key of `namespace`, as a store that forgot them would have none (Redis
/// restarted without persistence, etcd restored from an older snapshot).
pub(crate) async fn forget(keys: &KeyPrefix, table: &str, namespace: &str) {
    on_store!(keys, "lease keys", |store| store::forget(
        keys,
        &lease_keys(keys, table, namespace)
    )
    .await)
}

/// What a script does: takes a block of `step` from the counter `counter`; its first ID.
pub(crate) async fn raw_allocate(keys: &KeyPrefix, counter: &str, step: u64) -> i64 {
    match keys.kind() {
        #[cfg(feature = "etcd")]
        ServerKind::Etcd => etcd::raw_allocate(keys, &counter_key(keys, counter)).await,
        #[cfg(feature = "redis")]
        ServerKind::Redis => redis::raw_allocate(keys, &counter_key(keys, counter), step).await,
        other => panic!("no counters on {} ({step})", other.name()),
    }
}

/// Sets the counter to `next` (the start of the next block anyone takes), as restoring a
/// backup taken at that point would.
pub(crate) async fn set_next(keys: &KeyPrefix, counter: &str, next: i64) {
    on_store!(keys, "counters", |store| store::set_next(
        keys,
        &counter_key(keys, counter),
        next
    )
    .await)
}

/// The words a store's missing-counter error uses for `counter`.
pub(crate) fn missing_counter(keys: &KeyPrefix, counter: &str) -> String {
    let key = counter_key(keys, counter);
    match keys.kind() {
        ServerKind::Etcd => format!("no key {key}/next"),
        _ => format!("no key {key}"),
    }
}

fn now_ms() -> i64 {
    use idgen_core::Clock;
    idgen_core::SystemClock::new().now_ms()
}

#[cfg(feature = "etcd")]
mod etcd {
    use std::collections::BTreeMap;

    use etcd_client::{Compare, CompareOp, GetOptions, PutOptions, Txn, TxnOp};

    use super::{LeaseRow, now_ms};
    use idgen_testdb::KeyPrefix;
    use idgen_testdb::key_value::etcd::client;

    /// The rows of the lease keys that start with `base`.
    pub(super) async fn lease_rows(keys: &KeyPrefix, base: &str) -> Vec<LeaseRow> {
        let mut client = client(keys.server_url()).await.expect("an etcd client");
        let read = client
            .get(base, Some(GetOptions::new().with_prefix()))
            .await
            .expect("read the lease keys");
        let mut rows: BTreeMap<u64, LeaseRow> = BTreeMap::new();
        let row = |rows: &mut BTreeMap<u64, LeaseRow>, node| {
            rows.entry(node)
                .or_insert(LeaseRow {
                    node,
                    holder: None,
                    expires_at_ms: 0,
                    last_timestamp_ms: None,
                })
                .node
        };
        let mut owners = BTreeMap::new();
        for kv in read.kvs() {
            let key = kv.key_str().expect("a UTF-8 key");
            let rest = &key[base.len()..];
            let value = kv.value_str().expect("a UTF-8 value").to_owned();
            if let Some(node) = rest.strip_prefix("holder/").and_then(|n| n.parse().ok()) {
                let node = row(&mut rows, node);
                let ttl = client
                    .lease_time_to_live(kv.lease(), None)
                    .await
                    .expect("the lease's TTL")
                    .ttl();
                let entry = rows.get_mut(&node).unwrap();
                entry.holder = Some(value);
                entry.expires_at_ms = now_ms() + ttl.max(0) * 1000;
            } else if let Some(node) = rest.strip_prefix("last/").and_then(|n| n.parse().ok()) {
                let node = row(&mut rows, node);
                let (ts, owner) = match value.split_once(' ') {
                    Some((ts, owner)) => (ts.to_owned(), Some(owner.to_owned())),
                    None => (value, None),
                };
                rows.get_mut(&node).unwrap().last_timestamp_ms = ts.parse().ok();
                owners.insert(node, owner);
            }
        }
        for (node, owner) in owners {
            let entry = rows.get_mut(&node).unwrap();
            if entry.holder.is_none() {
                entry.holder = owner;
            }
        }
        rows.into_values().collect()
    }

    pub(super) async fn hold(keys: &KeyPrefix, base: &str, nodes: std::ops::Range<u64>) {
        let mut client = client(keys.server_url()).await.expect("an etcd client");
        let lease = client.lease_grant(3600, None).await.expect("a lease").id();
        let nodes: Vec<u64> = nodes.collect();
        for chunk in nodes.chunks(50) {
            let mut ops = Vec::new();
            for node in chunk {
                ops.push(TxnOp::put(
                    format!("{base}holder/{node}"),
                    "someone",
                    Some(PutOptions::new().with_lease(lease)),
                ));
                ops.push(TxnOp::put(format!("{base}last/{node}"), "- someone", None));
            }
            client
                .txn(Txn::new().and_then(ops))
                .await
                .expect("hold the node IDs");
        }
    }

    pub(super) async fn forget(keys: &KeyPrefix, base: &str) {
        let mut client = client(keys.server_url()).await.expect("an etcd client");
        client
            .delete(base, Some(etcd_client::DeleteOptions::new().with_prefix()))
            .await
            .expect("delete the lease keys");
    }

    /// A block from the counter whose keys start with `counter_key`.
    pub(super) async fn raw_allocate(keys: &KeyPrefix, counter_key: &str) -> i64 {
        let mut client = client(keys.server_url()).await.expect("an etcd client");
        let next_key = format!("{counter_key}/next");
        let inc_key = format!("{counter_key}/increment");
        loop {
            let next = client
                .get(next_key.as_str(), None)
                .await
                .expect("read next");
            let inc = client
                .get(inc_key.as_str(), None)
                .await
                .expect("read increment");
            let (next, inc) = (&next.kvs()[0], &inc.kvs()[0]);
            let value: i64 = next.value_str().unwrap().parse().unwrap();
            let step: i64 = inc.value_str().unwrap().parse().unwrap();
            let txn = Txn::new()
                .when([Compare::mod_revision(
                    next_key.as_str(),
                    CompareOp::Equal,
                    next.mod_revision(),
                )])
                .and_then([TxnOp::put(
                    next_key.as_str(),
                    (value + step).to_string(),
                    None,
                )]);
            if client.txn(txn).await.expect("advance").succeeded() {
                return value;
            }
        }
    }

    pub(super) async fn set_next(keys: &KeyPrefix, counter_key: &str, next: i64) {
        let mut client = client(keys.server_url()).await.expect("an etcd client");
        client
            .put(format!("{counter_key}/next"), next.to_string(), None)
            .await
            .expect("set the counter");
    }
}

#[cfg(feature = "redis")]
mod redis {
    use std::collections::BTreeMap;

    use ::redis::cmd;

    use super::{LeaseRow, now_ms};
    use idgen_testdb::KeyPrefix;
    use idgen_testdb::key_value::redis::{connection, query};

    /// The rows of the lease keys that start with `base`.
    pub(super) async fn lease_rows(keys: &KeyPrefix, base: &str) -> Vec<LeaseRow> {
        let url = keys.server_url();
        let mut conn = connection(url).await.expect("a Redis connection");
        let found: Vec<String> = query(&mut conn, url, cmd("KEYS").arg(format!("{base}*")).clone())
            .await
            .expect("KEYS");
        let mut nodes: Vec<u64> = found
            .iter()
            .filter_map(|k| {
                let rest = &k[base.len()..];
                rest.strip_prefix("holder:")
                    .or_else(|| rest.strip_prefix("node:"))
                    .and_then(|n| n.parse().ok())
            })
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut rows = BTreeMap::new();
        for node in nodes {
            let holder_key = format!("{base}holder:{node}");
            let holder: Option<String> = query(&mut conn, url, cmd("GET").arg(&holder_key).clone())
                .await
                .expect("GET");
            let ttl: i64 = query(&mut conn, url, cmd("PTTL").arg(&holder_key).clone())
                .await
                .expect("PTTL");
            let state = format!("{base}node:{node}");
            let (last, owner): (Option<i64>, Option<String>) = query(
                &mut conn,
                url,
                cmd("HMGET")
                    .arg(&state)
                    .arg("last_timestamp")
                    .arg("owner")
                    .clone(),
            )
            .await
            .expect("HMGET");
            let expires_at_ms = if holder.is_some() && ttl >= 0 {
                now_ms() + ttl
            } else {
                0
            };
            rows.insert(
                node,
                LeaseRow {
                    node,
                    holder: holder.or(owner.filter(|o| !o.is_empty())),
                    expires_at_ms,
                    last_timestamp_ms: last,
                },
            );
        }
        rows.into_values().collect()
    }

    pub(super) async fn hold(keys: &KeyPrefix, base: &str, nodes: std::ops::Range<u64>) {
        let url = keys.server_url();
        let mut conn = connection(url).await.expect("a Redis connection");
        let mut pipe = ::redis::pipe();
        for node in nodes {
            pipe.cmd("SET")
                .arg(format!("{base}holder:{node}"))
                .arg("someone")
                .arg("PX")
                .arg(3_600_000)
                .ignore();
            pipe.cmd("HSET")
                .arg(format!("{base}node:{node}"))
                .arg("owner")
                .arg("someone")
                .ignore();
        }
        pipe.query_async::<()>(&mut conn)
            .await
            .expect("hold the node IDs");
    }

    pub(super) async fn forget(keys: &KeyPrefix, base: &str) {
        let url = keys.server_url();
        let mut conn = connection(url).await.expect("a Redis connection");
        let found: Vec<String> = query(&mut conn, url, cmd("KEYS").arg(format!("{base}*")).clone())
            .await
            .expect("KEYS");
        for key in found {
            query::<()>(&mut conn, url, cmd("DEL").arg(&key).clone())
                .await
                .expect("DEL");
        }
    }

    /// A block of `step` from the counter at `counter_key`.
    pub(super) async fn raw_allocate(keys: &KeyPrefix, counter_key: &str, step: u64) -> i64 {
        let url = keys.server_url();
        let mut conn = connection(url).await.expect("a Redis connection");
        let next: i64 = query(
            &mut conn,
            url,
            cmd("INCRBY").arg(counter_key).arg(step).clone(),
        )
        .await
        .expect("INCRBY");
        next - step as i64
    }

    pub(super) async fn set_next(keys: &KeyPrefix, counter_key: &str, next: i64) {
        let url = keys.server_url();
        let mut conn = connection(url).await.expect("a Redis connection");
        query::<()>(
            &mut conn,
            url,
            cmd("SET").arg(counter_key).arg(next).clone(),
        )
        .await
        .expect("set the counter");
    }
}
