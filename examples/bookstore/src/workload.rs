//! The demo workload: several app instances creating orders for random customers at once, as
//! tokio tasks in this process or as separate OS processes.
//!
//! Every instance gives its node ID back however the run ends: done, an error in any instance,
//! Ctrl-C or SIGTERM ([`Shutdown`]). Worker processes also stop when their parent closes their
//! stdin (which the parent does on any error or stop request, and which happens by itself when
//! the parent dies), so no worker outlives its run holding a node ID.
//!
//! In both forms every instance has leased its node ID before any creates an order, so the
//! instances of one run run side by side, each on a node ID of its own: an instance that is done
//! early gives its node ID back, and one that only then started could otherwise lease it again.

use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use idgen_sqlx::Id;
use indicatif::ProgressBar;
use rand::Rng;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::db::Cluster;
use crate::instance::Instance;
use crate::model::{Customer, NewLine, Order};
use crate::node_lease::LAYOUT;
use crate::shards::{ShardCount, Shards};
use crate::shutdown::Shutdown;
use crate::{Error, Result};

/// What to run.
#[derive(Clone, Debug)]
pub struct Workload {
    /// App instances, each with its own leased node ID (1 to [`node_capacity`]).
    pub instances: u32,
    /// Orders in all (split evenly over the instances).
    pub orders: u32,
    /// Customers are `1..=customers` (at least 1).
    pub customers: u64,
}

/// How many node IDs [`LAYOUT`] has: the most instances that can run at once.
pub fn node_capacity() -> u64 {
    LAYOUT.max_node() + 1
}

/// Why `instances` cannot run, if it cannot: 0, or more than the layout has node IDs.
pub fn instances_problem(instances: u64) -> Option<String> {
    if instances == 0 {
        return Some("0 instances would create no orders: run at least 1".into());
    }
    let capacity = node_capacity();
    (instances > capacity).then(|| {
        format!(
            "{instances} instances need {instances} node IDs, but the layout has {capacity} \
             ({} node bits), one per running instance: run at most {capacity}",
            LAYOUT.node_bits()
        )
    })
}

impl Workload {
    /// Checks the numbers before anything is leased.
    pub fn check(&self) -> Result<()> {
        if let Some(problem) = instances_problem(self.instances.into()) {
            return Err(problem.into());
        }
        if self.customers == 0 {
            return Err("0 customers: orders need at least 1 customer".into());
        }
        Ok(())
    }
}

/// What one instance did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct InstanceRun {
    /// Its leased node ID.
    pub node: u64,
    /// Orders it created.
    pub orders: u32,
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunSummary {
    /// Per instance.
    pub instances: Vec<InstanceRun>,
    /// Wall time, in seconds (JSON `elapsed_secs`, a number).
    #[serde(rename = "elapsed_secs", serialize_with = "as_secs")]
    pub elapsed: Duration,
    /// Whether the instances were OS processes.
    pub processes: bool,
    /// The run's start under [`LAYOUT`] (node 0, sequence 0): every key this run made is at or
    /// above it. Not a boundary between runs: a node ID taken over issues ahead of the clock
    /// for up to one TTL, so an earlier run's keys can lie above it too.
    pub first_key: Id<Order>,
    /// The row counts per shard before the run: the report's "this run" is what was added.
    #[serde(skip)]
    pub stored_before: Vec<ShardCount>,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// When a run started: its clock and the smallest key it can make.
struct Start {
    at: Instant,
    first_key: Id<Order>,
    stored_before: Vec<ShardCount>,
}

impl Start {
    async fn now(shards: &Shards) -> Result<Start> {
        Ok(Start {
            at: Instant::now(),
            first_key: first_key_from_now()?,
            stored_before: shards.counts(Id::MIN).await?,
        })
    }

    /// The run's summary from its instances' runs, or its first error: the stop request's when
    /// there was one (the other errors followed from it).
    fn summary(
        self,
        mut runs: Vec<InstanceRun>,
        first_error: Option<Error>,
        shutdown: &Shutdown,
        processes: bool,
    ) -> Result<RunSummary> {
        if let Some(e) = first_error {
            return Err(shutdown.reason().map(stopped).unwrap_or(e));
        }
        runs.sort_by_key(|r| r.node);
        Ok(RunSummary {
            instances: runs,
            elapsed: self.at.elapsed(),
            processes,
            first_key: self.first_key,
            stored_before: self.stored_before,
        })
    }
}

/// The smallest key an order created from now on can have.
fn first_key_from_now() -> Result<Id<Order>> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("the system clock is before 1970: {e}"))?
        .as_millis();
    let now_ms = i64::try_from(now_ms).map_err(|_| "the system clock is past year 292 million")?;
    Ok(Id::from_snowflake(LAYOUT.compose_at(now_ms, 0, 0)?))
}

const BOOKS: &[(&str, i64)] = &[
    ("Middlemarch", 1299),
    ("The Left Hand of Darkness", 999),
    ("Things Fall Apart", 1150),
    ("The Master and Margarita", 1399),
    ("Beloved", 1099),
    ("Dune", 1250),
    ("Pedro Páramo", 899),
    ("The Remains of the Day", 1050),
    ("Invisible Cities", 950),
    ("Kindred", 1199),
];

/// A random customer of `1..=customers` and 1 to 4 lines.
pub fn random_order(customers: u64) -> (Id<Customer>, Vec<NewLine>) {
    let mut rng = rand::rng();
    let customer = rng.random_range(1..=customers.clamp(1, i64::MAX as u64));
    let lines = (0..rng.random_range(1..=4))
        .map(|_| {
            let (title, price) = BOOKS[rng.random_range(0..BOOKS.len())];
            NewLine {
                title: title.into(),
                quantity: rng.random_range(1..=3),
                price_cents: price,
            }
        })
        .collect();
    (Id::try_from(customer).unwrap_or(Id::MAX), lines)
}

/// The orders instance `i` of `n` creates.
fn share(orders: u32, n: u32, i: u32) -> u32 {
    orders / n + u32::from(i < orders % n)
}

/// The error for a run ended by a stop request.
fn stopped(reason: &str) -> Error {
    format!("stopped by {reason} before the run finished; every node ID was released").into()
}

/// Stops (releases) every instance, keeping the first failure.
async fn stop_all(instances: &[Instance]) -> Result<()> {
    let mut first = Ok(());
    for instance in instances {
        if let Err(e) = instance.stop().await {
            first = first.and(Err(e));
        }
    }
    first
}

/// Runs the instances as tokio tasks of this process. Any instance's error, or a stop request,
/// stops them all; each releases its node ID before this returns.
pub async fn run_tasks(
    cluster: &Cluster,
    shards: &Shards,
    work: &Workload,
    bar: &ProgressBar,
    shutdown: &Shutdown,
) -> Result<RunSummary> {
    work.check()?;
    let start = Start::now(shards).await?;
    let n = work.instances;
    let mut instances = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let next = match shutdown.reason() {
            Some(reason) => Err(stopped(reason)),
            None => Instance::start(cluster, shards.clone()).await,
        };
        match next {
            Ok(instance) => instances.push(instance),
            Err(e) => {
                // Give back what was leased before reporting the failure.
                let _ = stop_all(&instances).await;
                return Err(e);
            }
        }
    }
    // Stops the other instances when one fails.
    let failed = Shutdown::new();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, instance) in instances.into_iter().enumerate() {
        let count = share(work.orders, n, i as u32);
        let (customers, bar) = (work.customers, bar.clone());
        let (shutdown, failed) = (shutdown.clone(), failed.clone());
        tasks.spawn(async move {
            let result = tokio::select! {
                r = create_orders(&instance, count, customers, || {
                    bar.inc(1);
                    Ok(())
                }) => r,
                reason = shutdown.requested() => Err(stopped(reason)),
                reason = failed.requested() => Err(reason.into()),
            };
            if result.is_err() {
                failed.request("another instance failed");
            }
            let released = instance.stop().await;
            result?;
            released?;
            Ok::<_, Error>(InstanceRun {
                node: instance.node(),
                orders: count,
            })
        });
    }
    let mut runs = Vec::with_capacity(n as usize);
    let mut first_error = None;
    while let Some(joined) = tasks.join_next().await {
        match joined.map_err(|e| Error::from(format!("an instance task failed: {e}"))) {
            Ok(Ok(run)) => runs.push(run),
            Ok(Err(e)) | Err(e) => {
                failed.request("another instance failed");
                first_error.get_or_insert(e);
            }
        }
    }
    start.summary(runs, first_error, shutdown, false)
}

/// Creates `count` orders, calling `done` after each; an error from `done` stops the run.
async fn create_orders(
    instance: &Instance,
    count: u32,
    customers: u64,
    mut done: impl FnMut() -> Result<()>,
) -> Result<()> {
    for _ in 0..count {
        let (customer, lines) = random_order(customers);
        instance.create_order(customer, &lines).await?;
        done()?;
    }
    Ok(())
}

/// Sends `go` to every worker still running (its stdin still open).
async fn tell_all_go(stdins: &mut [Option<tokio::process::ChildStdin>]) -> Result<()> {
    use tokio::io::AsyncWriteExt;
    for stdin in stdins.iter_mut().flatten() {
        stdin
            .write_all(b"go\n")
            .await
            .map_err(|e| format!("a worker process is gone before its start ({e})"))?;
        stdin.flush().await?;
    }
    Ok(())
}

/// Writes one line to stdout, the worker's channel to its parent. A failed write (the parent
/// is gone: a broken pipe) is an error, never a panic, so the worker still releases its lease.
fn tell_parent(line: std::fmt::Arguments<'_>) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_fmt(line)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| format!("stopped: the parent process is gone ({e})").into())
}

/// Why a worker stops when its stdin ends.
const PARENT_CLOSED: &str = "stopped: the parent process closed stdin";

/// A worker's stdin, read on a plain thread (which never holds up the end of the process): the
/// line `go`, then its end, when the parent closes it (to stop this worker) or dies.
struct ParentOrders {
    go: Option<tokio::sync::oneshot::Receiver<()>>,
    closed: tokio::sync::oneshot::Receiver<()>,
}

impl ParentOrders {
    fn read_stdin() -> ParentOrders {
        let (go_tx, go) = tokio::sync::oneshot::channel();
        let (closed_tx, closed) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut go_tx = Some(go_tx);
            for line in std::io::stdin().lock().lines() {
                match line {
                    Ok(line) if line == "go" => {
                        if let Some(tx) = go_tx.take() {
                            let _ = tx.send(());
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            // Dropping a `go` never sent tells the waiter that stdin ended first.
            drop(go_tx);
            let _ = closed_tx.send(());
        });
        ParentOrders {
            go: Some(go),
            closed,
        }
    }

    /// Resolves on the line `go`; an error when stdin ended before it.
    async fn go(&mut self) -> Result<()> {
        match self.go.take() {
            Some(go) => go.await.map_err(|_| Error::from(PARENT_CLOSED)),
            None => Ok(()),
        }
    }

    /// Resolves when stdin has ended.
    async fn closed(&mut self) {
        let _ = (&mut self.closed).await;
    }
}

/// The body of one worker process (`bookstore worker`): one instance. It tells its parent
/// `leased NODE` once it holds its node ID, waits for the line `go` on stdin (sent when every
/// worker has leased), then creates its orders with progress on stdout (`progress 1` per
/// order, then `done NODE`). Stops, releasing its node ID, on Ctrl-C, SIGTERM or the end of
/// stdin.
pub async fn run_worker(
    cluster: &Cluster,
    shards: &Shards,
    orders: u32,
    customers: u64,
    shutdown: &Shutdown,
) -> Result<()> {
    let mut parent = ParentOrders::read_stdin();
    let instance = Instance::start(cluster, shards.clone()).await?;
    let result = async {
        tell_parent(format_args!("leased {}", instance.node()))?;
        tokio::select! {
            go = parent.go() => go?,
            reason = shutdown.requested() => return Err(stopped(reason)),
        }
        tokio::select! {
            r = create_orders(&instance, orders, customers, || tell_parent(format_args!("progress 1"))) => r,
            reason = shutdown.requested() => Err(stopped(reason)),
            () = parent.closed() => Err(PARENT_CLOSED.into()),
        }
    }
    .await;
    let released = instance.stop().await;
    result?;
    released?;
    tell_parent(format_args!("done {}", instance.node()))
}

/// How long stopped workers get to release their node IDs before they are killed.
const WORKER_GRACE: Duration = Duration::from_secs(15);

/// Runs the instances as OS processes, each this program again with `worker`. `args` are the
/// database arguments to pass on. Once every worker has leased its node ID, each is told `go`.
/// On a worker's failure or a stop request, every worker's stdin is closed, so each stops and
/// releases its node ID; this returns once all have exited.
pub async fn run_processes(
    shards: &Shards,
    work: &Workload,
    args: &[String],
    bar: &ProgressBar,
    shutdown: &Shutdown,
) -> Result<RunSummary> {
    work.check()?;
    let start = Start::now(shards).await?;
    let exe = std::env::current_exe()?;
    let n = work.instances;
    let mut children = tokio::task::JoinSet::new();
    let mut stdins = Vec::with_capacity(n as usize);
    let (leased_tx, mut leased_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut leased = 0;
    for i in 0..n {
        let count = share(work.orders, n, i);
        let mut child = tokio::process::Command::new(&exe)
            .args(args)
            .args([
                "worker",
                "--orders",
                &count.to_string(),
                "--customers",
                &work.customers.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // A last resort only: a worker is killed if this future is dropped.
            .kill_on_drop(true)
            .spawn()?;
        stdins.push(child.stdin.take());
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from a worker process")?;
        let (bar, leased_tx) = (bar.clone(), leased_tx.clone());
        children.spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut node = None;
            while let Some(line) = lines.next_line().await? {
                if line == "progress 1" {
                    bar.inc(1);
                } else if line.starts_with("leased ") {
                    let _ = leased_tx.send(());
                } else if let Some(n) = line.strip_prefix("done ") {
                    node = n.parse::<u64>().ok();
                }
            }
            let status = match tokio::time::timeout(WORKER_GRACE, child.wait()).await {
                Ok(status) => status?,
                Err(_) => {
                    child.kill().await?;
                    return Err(Error::from(format!(
                        "worker process {i} did not stop within {WORKER_GRACE:?} and was killed"
                    )));
                }
            };
            match (status.success(), node) {
                (true, Some(node)) => Ok(InstanceRun {
                    node,
                    orders: count,
                }),
                _ => Err(Error::from(format!("worker process {i} failed: {status}"))),
            }
        });
    }
    let mut runs = Vec::with_capacity(n as usize);
    let mut first_error = None;
    loop {
        tokio::select! {
            Some(()) = leased_rx.recv(), if leased < n => {
                leased += 1;
                if leased == n
                    && let Err(e) = tell_all_go(&mut stdins).await
                {
                    first_error.get_or_insert(e);
                    stdins.clear();
                }
            }
            joined = children.join_next() => match joined {
                None => break,
                Some(Ok(Ok(run))) => runs.push(run),
                Some(Ok(Err(e))) => {
                    first_error.get_or_insert(e);
                    stdins.clear();
                }
                Some(Err(e)) => {
                    first_error.get_or_insert(format!("a worker task failed: {e}").into());
                    stdins.clear();
                }
            },
            reason = shutdown.requested(), if !stdins.is_empty() => {
                first_error.get_or_insert(stopped(reason));
                // Closing their stdin stops the workers; each releases its node ID.
                stdins.clear();
            }
        }
    }
    start.summary(runs, first_error, shutdown, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_counts_are_checked_against_the_node_space() {
        assert_eq!(node_capacity(), 1024);
        assert!(instances_problem(1).is_none());
        assert!(instances_problem(1024).is_none());
        assert_eq!(
            instances_problem(0).unwrap(),
            "0 instances would create no orders: run at least 1"
        );
        assert_eq!(
            instances_problem(100_000).unwrap(),
            "100000 instances need 100000 node IDs, but the layout has 1024 (10 node bits), \
             one per running instance: run at most 1024"
        );
        let zero_customers = Workload {
            instances: 1,
            orders: 1,
            customers: 0,
        };
        assert!(zero_customers.check().is_err());
    }

    #[test]
    fn orders_are_shared_evenly() {
        let shares: Vec<u32> = (0..4).map(|i| share(10, 4, i)).collect();
        assert_eq!(shares, [3, 3, 2, 2]);
    }
}
