//! Lease cases with OS processes (this test binary, started again as a child).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use idgen_core::{Layout, Snowflake, SnowflakeId};
use idgen_engine::ErrorKind;
use idgen_engine::lease::WorkerLease;

use super::child::{self, Child, Children, Orders, say};
use super::lease::{
    LeaseSubject, TABLE, generator, layout, no_wait, open_store, release_all, setup, short,
};

/// What a holding child does: `leases` acquirers at once in `namespace` of a layout with
/// `node_bits` node bits, then `count` IDs from the first lease (written to `out`, 8 bytes
/// each, little endian).
struct Hold<'a> {
    namespace: &'a str,
    node_bits: u8,
    leases: usize,
    count: usize,
    ttl_ms: u64,
    out: Option<&'a Path>,
}

fn spawn_holder(children: &Children, url: &str, hold: Hold<'_>) -> Child {
    let out = hold
        .out
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    children.spawn(
        "hold",
        &[
            ("URL", url.to_owned()),
            ("NAMESPACE", hold.namespace.to_owned()),
            ("NODE_BITS", hold.node_bits.to_string()),
            ("LEASES", hold.leases.to_string()),
            ("COUNT", hold.count.to_string()),
            ("TTL_MS", hold.ttl_ms.to_string()),
            ("OUT", out),
        ],
    )
}

/// The node IDs of a child's `NODES 3,7,…` line.
async fn nodes(child: &mut Child) -> Vec<u64> {
    child
        .line("NODES")
        .await
        .split(',')
        .map(|n| n.parse().expect("a node ID"))
        .collect()
}

/// A holder killed with SIGKILL (no release) keeps its node ID until the TTL runs out from its
/// last renewal; then the next holder gets it and issues only above what the killed one issued.
pub async fn a_killed_holder_loses_its_node_id_after_the_ttl<S: LeaseSubject>(children: Children) {
    let (db, store) = setup::<S>().await;
    // Store timeout a quarter: a child's first claim opens a connection on a loaded machine.
    let ttl_ms = 4_000;
    let hold = Hold {
        namespace: "killed",
        node_bits: 0,
        leases: 1,
        count: 1_000,
        ttl_ms,
        out: None,
    };
    let mut child = spawn_holder(&children, db.url(), hold);
    assert_eq!(nodes(&mut child).await, [0]);
    let child_last: i64 = child.line("LAST").await.parse().unwrap();
    child.kill().await;
    let killed_at = Instant::now();

    let options = || short(ttl_ms).namespace("killed");
    let err = options()
        .acquire(store.clone(), &layout(0))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::NoFreeNode { .. }),
        "{err:?}"
    );
    let lease = loop {
        match options().acquire(store.clone(), &layout(0)).await {
            Ok(lease) => break lease,
            Err(e)
                if matches!(e.kind(), ErrorKind::NoFreeNode { .. })
                    && killed_at.elapsed() < Duration::from_secs(60) =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("the node ID was not freed: {e}"),
        }
    };
    assert_eq!(lease.node(), 0);
    let (ids, handle) = generator(lease, layout(0));
    assert!(ids.next_id().unwrap().get() > child_last);
    handle.release().await.unwrap();
}

/// IDs each holding process issues.
const IDS_PER_PROCESS: usize = 250_000;

/// Four processes of 16 acquirers each (64 leases held at once) get 64 distinct node IDs, and
/// issue 250,000 IDs each: a million distinct IDs, each carrying its process's node ID.
pub async fn four_processes_hold_distinct_node_ids_and_issue_distinct_ids<S: LeaseSubject>(
    children: Children,
) {
    let (db, _store) = setup::<S>().await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut procs: Vec<(Child, std::path::PathBuf)> = (0..4)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            let hold = Hold {
                namespace: "procs",
                node_bits: 10,
                leases: 16,
                count: IDS_PER_PROCESS,
                ttl_ms: 30_000,
                out: Some(&out),
            };
            (spawn_holder(&children, db.url(), hold), out)
        })
        .collect();
    let mut all_nodes = Vec::new();
    let mut first_nodes = Vec::new();
    for (child, _) in &mut procs {
        let held = nodes(child).await;
        first_nodes.push(held[0]);
        all_nodes.extend(held);
    }
    for (child, _) in &mut procs {
        child.line("DONE").await;
    }
    // Each child still holds its 16 leases here.
    assert_eq!(all_nodes.len(), 64);
    let distinct: HashSet<u64> = all_nodes.iter().copied().collect();
    assert_eq!(distinct.len(), 64, "node IDs held twice: {all_nodes:?}");
    let held_in_table: HashSet<u64> = db
        .lease_rows(TABLE, "procs")
        .await
        .into_iter()
        .filter(|r| r.holder.is_some())
        .map(|r| r.node)
        .collect();
    assert_eq!(held_in_table, distinct);

    let mut all = HashSet::with_capacity(4 * IDS_PER_PROCESS);
    for ((child, out), node) in procs.into_iter().zip(first_nodes) {
        child.finish().await;
        let bytes = std::fs::read(out).expect("the child's IDs");
        assert_eq!(bytes.len(), IDS_PER_PROCESS * 8);
        for chunk in bytes.chunks_exact(8) {
            let id = i64::from_le_bytes(chunk.try_into().unwrap());
            let id = SnowflakeId::new(id).expect("an ID");
            assert_eq!(layout(10).decompose(id).unwrap().node, node);
            all.insert(id);
        }
    }
    assert_eq!(all.len(), 4 * IDS_PER_PROCESS, "IDs issued twice");
    // The children released: every row is free again.
    let rows = db.lease_rows(TABLE, "procs").await;
    assert!(rows.iter().all(|r| r.holder.is_none()), "{rows:?}");
}

/// A process whose `main` acquires a lease, issues and returns without calling `release()`
/// (the end of `#[tokio::main]`) frees its node ID within a second of exiting.
pub async fn a_process_that_returns_from_main_without_release_frees_its_node_id_within_a_second<
    S: LeaseSubject,
>(
    children: Children,
) {
    let (db, store) = setup::<S>().await;
    let mut child = children.spawn("exit", &[("URL", db.url().to_owned())]);
    assert_eq!(child.line("NODE").await, "0");
    let status = child.wait().await;
    let exited_at = Instant::now();
    assert!(status.success(), "the child exited with {status}");
    let row = db.lease_rows(TABLE, "exit").await.into_iter().next();
    // The child is gone, so nothing but the TTL (30 s) could free the row from here on: the
    // node ID is free at once or not for a long while. What counts is that an attempt begun
    // within the second finds it free, however long a loaded machine takes to answer it.
    let mut attempt_began;
    let next = loop {
        attempt_began = exited_at.elapsed();
        match no_wait()
            .namespace("exit")
            .capacity(1)
            .acquire(store.clone(), &Layout::TWITTER)
            .await
        {
            Ok(lease) => break lease,
            Err(e)
                if matches!(e.kind(), ErrorKind::NoFreeNode { .. })
                    && exited_at.elapsed() < Duration::from_secs(1) =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => panic!(
                "node 0 is still held {} ms after the process ended: {e}; its row at the exit: {row:?}",
                exited_at.elapsed().as_millis()
            ),
        }
    };
    assert!(
        attempt_began <= Duration::from_secs(1),
        "the node ID was free only for an attempt begun {} ms after the exit",
        attempt_began.as_millis()
    );
    assert_eq!(next.node(), 0);
    next.handle().release().await.unwrap();
}

/// Leases each process of [`processes_of_two_adapters_never_share_a_node_id`] holds.
const LEASES_PER_PROCESS: usize = 8;

/// Two child processes on store `S` and this process on store `T` (another adapter on the same
/// database and table) hold leases at once: no node ID is held twice.
pub async fn processes_of_two_adapters_never_share_a_node_id<S, T>(children: Children)
where
    S: LeaseSubject,
    T: LeaseSubject,
{
    assert_eq!(S::DATABASE, T::DATABASE);
    let (db, _store) = setup::<S>().await;
    let hold = || Hold {
        namespace: "default",
        node_bits: 10,
        leases: LEASES_PER_PROCESS,
        count: 0,
        ttl_ms: 30_000,
        out: None,
    };
    let mut procs: Vec<Child> = (0..2)
        .map(|_| spawn_holder(&children, db.url(), hold()))
        .collect();
    let here = open_store::<T>(db.url(), TABLE).await;
    let acquirers: Vec<_> = (0..LEASES_PER_PROCESS)
        .map(|_| {
            let here = here.clone();
            tokio::spawn(async move { no_wait().acquire(here, &layout(10)).await })
        })
        .collect();
    let mut leases = Vec::new();
    for acquirer in acquirers {
        leases.push(acquirer.await.unwrap().expect("acquire in this process"));
    }
    let mut all: Vec<u64> = leases.iter().map(|l| l.node()).collect();
    for child in &mut procs {
        all.extend(nodes(child).await);
    }
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(all.len(), 3 * LEASES_PER_PROCESS);
    assert_eq!(distinct.len(), all.len(), "node IDs held twice: {all:?}");
    release_all(&leases).await;
    for child in procs {
        child.finish().await;
    }
}

/// The child side of the lease cases (a no-op in a normal test run).
pub fn child_main<S: LeaseSubject>() {
    match child::role().as_deref() {
        Some("hold") => child::runtime().block_on(hold::<S>()),
        Some("exit") => exit_without_release::<S>(),
        _ => {}
    }
}

async fn hold<S: LeaseSubject>() {
    let url = child::var("URL");
    let store = open_store::<S>(&url, TABLE).await;
    let layout = layout(child::var("NODE_BITS").parse().unwrap());
    let options = short(child::var("TTL_MS").parse().unwrap()).namespace(child::var("NAMESPACE"));
    let acquirers: Vec<_> = (0..child::var("LEASES").parse::<usize>().unwrap())
        .map(|_| {
            let (store, options) = (store.clone(), options.clone());
            tokio::spawn(async move { options.acquire(store, &layout).await })
        })
        .collect();
    let mut leases = Vec::new();
    for acquirer in acquirers {
        leases.push(acquirer.await.unwrap().expect("acquire in the child"));
    }
    let nodes: Vec<String> = leases.iter().map(|l| l.node().to_string()).collect();
    say("NODES", nodes.join(","));
    let handles: Vec<_> = leases.iter().map(WorkerLease::handle).collect();
    let ids = Snowflake::builder()
        .layout(layout)
        .lease(leases.remove(0))
        .build()
        .unwrap();
    let count: usize = child::var("COUNT").parse().unwrap();
    let mut bytes = Vec::with_capacity(count * 8);
    let mut last = 0;
    for _ in 0..count {
        let id = ids.next_id_async().await.expect("an ID");
        bytes.extend_from_slice(&id.get().to_le_bytes());
        last = id.get();
    }
    let out = child::var("OUT");
    if !out.is_empty() {
        std::fs::write(out, &bytes).expect("write the IDs");
    }
    say("LAST", last);
    say("DONE", "ok");
    let mut orders = Orders::new();
    while orders.next().await.is_some() {}
    for handle in handles {
        handle.release().await.expect("release in the child");
    }
}

/// What a service's `#[tokio::main] async fn main` does when it forgets `release()`: acquire,
/// build the generator, issue, return. (This is `#[tokio::main]`'s expansion.)
fn exit_without_release<S: LeaseSubject>() {
    let runtime = child::runtime();
    runtime.block_on(async {
        let url = child::var("URL");
        let store = open_store::<S>(&url, TABLE).await;
        let lease = no_wait()
            .namespace("exit")
            .acquire(store, &Layout::TWITTER)
            .await
            .expect("acquire in the child");
        let node = lease.node();
        let ids = Snowflake::builder()
            .layout(Layout::TWITTER)
            .lease(lease)
            .build()
            .unwrap();
        ids.next_id().expect("an ID");
        say("NODE", node);
    });
}
