//! The demo workload: several app instances creating orders for random customers at once, as
//! tokio tasks in this process or as separate OS processes.

use std::process::Stdio;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use rand::Rng;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::Result;
use crate::db::Cluster;
use crate::instance::Instance;
use crate::model::NewLine;
use crate::shards::Shards;

/// What to run.
#[derive(Clone, Debug)]
pub struct Workload {
    /// App instances, each with its own leased node ID.
    pub instances: u32,
    /// Orders in all (split evenly over the instances).
    pub orders: u32,
    /// Customers are `1..=customers`.
    pub customers: i64,
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
    /// Wall time.
    pub elapsed: Duration,
    /// Whether the instances were OS processes.
    pub processes: bool,
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

/// A random customer and 1 to 4 lines.
pub fn random_order(customers: i64) -> (i64, Vec<NewLine>) {
    let mut rng = rand::rng();
    let customer = rng.random_range(1..=customers.max(1));
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
    (customer, lines)
}

/// The orders instance `i` of `n` creates.
fn share(orders: u32, n: u32, i: u32) -> u32 {
    orders / n + u32::from(i < orders % n)
}

/// Runs the instances as tokio tasks of this process.
pub async fn run_tasks(
    cluster: &Cluster,
    shards: &Shards,
    work: &Workload,
    bar: &ProgressBar,
) -> Result<RunSummary> {
    let started = Instant::now();
    let n = work.instances.max(1);
    let mut instances = Vec::with_capacity(n as usize);
    for _ in 0..n {
        instances.push(Instance::start(cluster, shards.clone()).await?);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, instance) in instances.into_iter().enumerate() {
        let count = share(work.orders, n, i as u32);
        let (customers, bar) = (work.customers, bar.clone());
        tasks.spawn(async move {
            let result = create_orders(&instance, count, customers, |_| bar.inc(1)).await;
            instance.stop().await?;
            result.map(|()| InstanceRun {
                node: instance.node(),
                orders: count,
            })
        });
    }
    let mut runs = Vec::with_capacity(n as usize);
    while let Some(joined) = tasks.join_next().await {
        runs.push(joined.map_err(|e| format!("an instance task failed: {e}"))??);
    }
    runs.sort_by_key(|r| r.node);
    Ok(RunSummary {
        instances: runs,
        elapsed: started.elapsed(),
        processes: false,
    })
}

async fn create_orders(
    instance: &Instance,
    count: u32,
    customers: i64,
    mut done: impl FnMut(u32),
) -> Result<()> {
    for i in 0..count {
        let (customer, lines) = random_order(customers);
        instance.create_order(customer, &lines).await?;
        done(i + 1);
    }
    Ok(())
}

/// The body of one worker process (`bookstore worker`): one instance, progress on stdout
/// (`progress N`, then `done NODE`).
pub async fn run_worker(
    cluster: &Cluster,
    shards: &Shards,
    orders: u32,
    customers: i64,
) -> Result<()> {
    let instance = Instance::start(cluster, shards.clone()).await?;
    let result = create_orders(&instance, orders, customers, |_| println!("progress 1")).await;
    instance.stop().await?;
    result?;
    println!("done {}", instance.node());
    Ok(())
}

/// Runs the instances as OS processes, each this program again with `worker`. `args` are the
/// database arguments to pass on.
pub async fn run_processes(
    work: &Workload,
    args: &[String],
    bar: &ProgressBar,
) -> Result<RunSummary> {
    let started = Instant::now();
    let exe = std::env::current_exe()?;
    let n = work.instances.max(1);
    let mut children = tokio::task::JoinSet::new();
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
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from a worker process")?;
        let bar = bar.clone();
        children.spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            let mut node = None;
            while let Some(line) = lines.next_line().await? {
                if line == "progress 1" {
                    bar.inc(1);
                } else if let Some(n) = line.strip_prefix("done ") {
                    node = n.parse::<u64>().ok();
                }
            }
            let status = child.wait().await?;
            match (status.success(), node) {
                (true, Some(node)) => Ok(InstanceRun {
                    node,
                    orders: count,
                }),
                _ => Err(crate::Error::from(format!(
                    "worker process {i} failed: {status}"
                ))),
            }
        });
    }
    let mut runs = Vec::with_capacity(n as usize);
    while let Some(joined) = children.join_next().await {
        runs.push(joined.map_err(|e| format!("a worker task failed: {e}"))??);
    }
    runs.sort_by_key(|r| r.node);
    Ok(RunSummary {
        instances: runs,
        elapsed: started.elapsed(),
        processes: true,
    })
}
