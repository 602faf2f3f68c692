//! Instances that start together: processes that run the whole start-up (create the lease
//! table, acquire a lease, create the hi-lo counter, start hi-lo, take an ID) on an empty
//! database at the same moment all succeed, both with the explicit `create` calls and with the
//! one-call form (`WorkerLease::acquire` and `HiLo::new`, which create what is missing; on etcd
//! and Redis, whose counters are never created by default, `create_if_missing(true)`).

use std::collections::HashSet;

use idgen_core::Layout;
use idgen_engine::hilo::{HiLo, HiLoSource};
use idgen_engine::lease::WorkerLease;

use super::Database;
use super::child::{self, Child, Children, Orders, say};
use super::hilo::HiLoSubject;
use super::lease::{LeaseSubject, TABLE, no_wait};

/// Processes that start at once.
const PROCESSES: usize = 8;
/// Empty databases they start on, one after the other.
const DATABASES: usize = 20;
/// The counter and block of the start-up.
const COUNTER: &str = "hilo";
const BLOCK: u64 = 100;

/// Eight processes start together on each of twenty empty databases (lease store `L`, hi-lo
/// source `H`, on the same database): all 160 start-ups succeed, the eight of each database
/// hold distinct node IDs and drew distinct IDs. On even databases they create the table and
/// the counter with explicit calls, on odd ones with the one-call form.
pub async fn eight_processes_start_together_on_twenty_empty_databases<L, H>(children: Children)
where
    L: LeaseSubject,
    H: HiLoSubject,
{
    assert_eq!(L::DATABASE, H::DATABASE);
    let mut dbs = Vec::with_capacity(DATABASES);
    for _ in 0..DATABASES {
        dbs.push(Database::fresh(L::DATABASE).await);
    }
    let urls: Vec<&str> = dbs.iter().map(Database::url).collect();
    let mut procs: Vec<Child> = (0..PROCESSES)
        .map(|_| children.spawn("startup", &[("URLS", urls.join("\n"))]))
        .collect();
    for child in &mut procs {
        child.line("READY").await;
    }
    let mut failures = Vec::new();
    for i in 0..DATABASES {
        for child in &mut procs {
            child.send(&format!("GO {i}")).await;
        }
        let (mut nodes, mut ids) = (HashSet::new(), HashSet::new());
        for child in &mut procs {
            let done = child.line(&format!("DONE{i}")).await;
            match done.split_once(' ') {
                Some(("ok", rest)) => {
                    let (node, id) = rest.split_once(' ').expect("`ok <node> <id>`");
                    assert!(
                        nodes.insert(node.to_owned()),
                        "database {i}: node {node} twice"
                    );
                    assert!(ids.insert(id.to_owned()), "database {i}: ID {id} twice");
                }
                _ => failures.push(format!("database {i}: {done}")),
            }
        }
        // Every process holds its lease until now; then lets go of it before the next round.
        for child in &mut procs {
            child.send("RELEASE").await;
        }
        for child in &mut procs {
            child.line("RELEASED").await;
        }
    }
    for child in procs {
        child.finish().await;
    }
    assert!(
        failures.is_empty(),
        "{} of {} start-ups failed:\n{}",
        failures.len(),
        PROCESSES * DATABASES,
        failures.join("\n")
    );
}

/// The child side (a no-op in a normal test run): on `GO i`, the start-up on database `i`; it
/// holds what it started until `RELEASE`.
pub fn child_main<L: LeaseSubject, H: HiLoSubject>() {
    if child::role().as_deref() != Some("startup") {
        return;
    }
    child::runtime().block_on(async {
        let urls: Vec<String> = child::var("URLS").lines().map(str::to_owned).collect();
        let mut orders = Orders::new();
        say("READY", "ok");
        let mut held = None;
        while let Some(order) = orders.next().await {
            if order == "RELEASE" {
                if let Some((lease, ids)) = held.take() {
                    let lease: WorkerLease = lease;
                    lease.handle().release().await.expect("release");
                    drop((lease, ids));
                }
                say("RELEASED", "ok");
                continue;
            }
            let i: usize = order
                .strip_prefix("GO ")
                .and_then(|i| i.parse().ok())
                .expect("GO <database>");
            let how = if i.is_multiple_of(2) {
                StartUp::Explicit
            } else {
                StartUp::CreatingWhatIsMissing
            };
            let started = start_up::<L, H>(&urls[i], how).await;
            match started {
                Ok((lease, ids, id)) => {
                    say(&format!("DONE{i}"), format!("ok {} {id}", lease.node()));
                    held = Some((lease, ids));
                }
                Err(e) => say(&format!("DONE{i}"), format!("err {e}")),
            }
        }
    });
}

/// The two start-ups of the README.
#[derive(Clone, Copy)]
enum StartUp {
    /// Create the table, acquire, create the counter, start hi-lo, draw.
    Explicit,
    /// Acquire and start hi-lo with their defaults, which create what is missing (the block
    /// size given once; `create_if_missing(true)` for a counter the store never creates by
    /// default), draw.
    CreatingWhatIsMissing,
}

/// One process's start-up on the database at `url`, the way `how` says: the lease, hi-lo, and
/// the first ID drawn; or what failed.
async fn start_up<L: LeaseSubject, H: HiLoSubject>(
    url: &str,
    how: StartUp,
) -> Result<(WorkerLease, HiLo, i64), String> {
    let store = L::store(url, TABLE)
        .await
        .map_err(|e| format!("a lease store: {e}"))?;
    let lease = match how {
        StartUp::Explicit => {
            L::create_table(&store)
                .await
                .map_err(|e| format!("create the lease table: {e}"))?;
            no_wait()
                .acquire(store, &Layout::TWITTER)
                .await
                .map_err(|e| format!("acquire: {e}"))?
        }
        StartUp::CreatingWhatIsMissing => no_wait()
            .acquire(store, &Layout::TWITTER)
            .await
            .map_err(|e| format!("acquire, creating the table: {e}"))?,
    };
    let source = H::source(url, COUNTER)
        .await
        .map_err(|e| format!("a hi-lo source: {e}"))?;
    let ids = match how {
        StartUp::Explicit => {
            H::create(&source, BLOCK)
                .await
                .map_err(|e| format!("create the counter: {e}"))?;
            HiLo::new(source, BLOCK)
                .await
                .map_err(|e| format!("start hi-lo: {e}"))?
        }
        StartUp::CreatingWhatIsMissing if source.create_if_missing_by_default() => {
            HiLo::new(source, BLOCK)
                .await
                .map_err(|e| format!("start hi-lo, creating the counter: {e}"))?
        }
        StartUp::CreatingWhatIsMissing => HiLo::builder(source)
            .block(BLOCK)
            .create_if_missing(true)
            .build()
            .await
            .map_err(|e| format!("start hi-lo, creating the counter: {e}"))?,
    };
    let id = ids.next_id().await.map_err(|e| format!("draw: {e}"))?;
    Ok((lease, ids, id))
}
