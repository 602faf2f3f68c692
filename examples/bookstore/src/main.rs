//! `cargo run -p bookstore`: four shards, several app instances, and a report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use bookstore::db::{Cluster, Target, redact_password};
use bookstore::instance::Instance;
use bookstore::shutdown::Shutdown;
use bookstore::workload::{self, Workload};
use bookstore::{Result, http, progress, report};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// A bookstore whose orders are split across 4 shards: Snowflake order IDs from leased node IDs,
/// hi-lo order-line IDs from one central counter, public `ord_…` IDs for URLs.
///
/// Ctrl-C or SIGTERM stops it at any point; every node ID it leased is given back first.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Where the embedded SQLite databases go (4 shards and a control database).
    #[arg(long, default_value = "bookstore-data", global = true)]
    data_dir: PathBuf,
    /// Use PostgreSQL (postgres://…) or MariaDB (mysql://…) instead of SQLite: databases
    /// <name>_control and <name>_shard_0…3 are created when missing (<name>: the URL's database,
    /// default "bookstore"). Also read from DATABASE_URL (said so on stderr); an explicit
    /// --data-dir wins over DATABASE_URL.
    #[arg(long, env = "DATABASE_URL", global = true)]
    database_url: Option<String>,
    /// App instances creating orders at once, each with its own leased node ID (1 to 1024, the
    /// node IDs of the Twitter layout).
    #[arg(long, default_value_t = 4, value_parser = parse_instances)]
    instances: u32,
    /// Run the instances as OS processes (this program again) instead of tokio tasks.
    #[arg(long)]
    processes: bool,
    /// Orders to create in all.
    #[arg(long, default_value_t = 2000)]
    orders: u32,
    /// Customers are numbered 1 to this (at least 1).
    #[arg(long, default_value_t = 500, value_parser = parse_customers)]
    customers: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// After the report, keep a JSON API up until Ctrl-C or SIGTERM: POST /orders,
    /// GET /orders/{public_id}, GET /customers/{id}/orders.
    #[arg(long)]
    serve: bool,
    /// The API's port (0: any free port).
    #[arg(long, default_value_t = 3000, requires = "serve")]
    port: u16,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One app instance as its own process (used by --processes); stops when stdin ends.
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        orders: u32,
        #[arg(long, value_parser = parse_customers)]
        customers: u64,
    },
}

fn parse_instances(text: &str) -> Result<u32, String> {
    let n: u64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of instances"))?;
    match workload::instances_problem(n) {
        Some(problem) => Err(problem),
        None => Ok(n as u32),
    }
}

fn parse_customers(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 customers: orders need at least 1 customer".into()),
        Ok(n) if n <= i64::MAX as u64 => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of customers from 1 to {}",
            i64::MAX
        )),
    }
}

impl Args {
    fn target(&self) -> Target {
        match &self.database_url {
            Some(url) if !url.is_empty() => Target::Url(url.clone()),
            _ => Target::Dir(self.data_dir.clone()),
        }
    }

    /// The database arguments, for worker processes.
    fn database_args(&self) -> Vec<String> {
        match self.target() {
            Target::Url(url) => vec!["--database-url".into(), url],
            Target::Dir(dir) => vec!["--data-dir".into(), dir.display().to_string()],
        }
    }
}

/// The arguments, after saying on stderr where a `DATABASE_URL` from the environment went.
fn parse_args() -> Args {
    let matches = Args::command().get_matches();
    let mut args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let from_env = matches.value_source("database_url") == Some(ValueSource::EnvVariable);
    let dir_given = matches.value_source("data_dir") == Some(ValueSource::CommandLine);
    let worker = args.command.is_some();
    match (&args.database_url, from_env, dir_given) {
        (Some(url), true, true) => {
            if !worker {
                eprintln!(
                    "bookstore: ignoring DATABASE_URL from the environment ({}): --data-dir was given",
                    redact_password(url)
                );
            }
            args.database_url = None;
        }
        (Some(url), true, false) if !worker => eprintln!(
            "bookstore: using DATABASE_URL from the environment: {} (give --data-dir or \
             --database-url to choose otherwise)",
            redact_password(url)
        ),
        _ => {}
    }
    args
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = parse_args();
    let shutdown = match Shutdown::on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bookstore: cannot watch for Ctrl-C and SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cluster = match Cluster::open(&args.target()).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bookstore: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = run(args, &cluster, &shutdown).await;
    // Every way out passes here: give back each node ID still held.
    let failures = cluster.release_leases().await;
    for failure in &failures {
        eprintln!("bookstore: could not release the lease of {failure}");
    }
    cluster.close().await;
    match result {
        Ok(()) if failures.is_empty() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("bookstore: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, cluster: &Cluster, shutdown: &Shutdown) -> Result<()> {
    let shards = bookstore::prepare(cluster).await?;
    if let Some(Command::Worker { orders, customers }) = args.command {
        return workload::run_worker(cluster, &shards, orders, customers, shutdown).await;
    }
    let work = Workload {
        instances: args.instances,
        orders: args.orders,
        customers: args.customers,
    };
    work.check()?;
    let bar = progress::bar(work.orders, work.instances)?; // hidden when stderr is no terminal
    let summary = if args.processes {
        workload::run_processes(&shards, &work, &args.database_args(), &bar, shutdown).await
    } else {
        workload::run_tasks(cluster, &shards, &work, &bar, shutdown).await
    };
    bar.finish_and_clear();
    let report = report::build(&shards, &cluster.location, Some(summary?)).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    if report.duplicates() != 0 {
        return Err(format!("{} duplicate IDs across shards", report.duplicates()).into());
    }
    if args.serve {
        serve(cluster, shards, args.port, &report, shutdown).await?;
    }
    Ok(())
}

async fn serve(
    cluster: &Cluster,
    shards: bookstore::shards::Shards,
    port: u16,
    report: &report::Report,
    shutdown: &Shutdown,
) -> Result<()> {
    let instance = Arc::new(Instance::start(cluster, shards).await?);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    println!(
        "\nServing the API on http://{addr} (node ID {}); Ctrl-C or SIGTERM stops it. Try:",
        instance.node()
    );
    if let Some(newest) = report.newest.first() {
        let (order, customer) = (&newest.order.public_id, newest.order.customer_id);
        println!("  curl -H 'X-Customer-Id: {customer}' http://{addr}/orders/{order}");
        println!(
            "  curl -H 'X-Customer-Id: {customer}' 'http://{addr}/customers/{customer}/orders?limit=2'"
        );
    }
    println!(
        "  curl -H 'X-Customer-Id: 7' -H 'content-type: application/json' \
         -d '{{\"customer_id\":\"7\",\"lines\":[{{\"title\":\"Dune\",\"quantity\":1,\"price_cents\":1250}}]}}' \
         http://{addr}/orders"
    );
    let served = axum::serve(listener, http::router(Arc::clone(&instance)))
        .with_graceful_shutdown({
            let shutdown = shutdown.clone();
            async move {
                let reason = shutdown.requested().await;
                eprintln!("bookstore: {reason}: stopping the API and releasing node IDs");
            }
        })
        .await;
    let released = instance.stop().await;
    served?;
    released
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_and_customer_counts_are_checked() {
        assert_eq!(parse_instances("4"), Ok(4));
        assert!(parse_instances("0").unwrap_err().contains("at least 1"));
        assert!(
            parse_instances("100000")
                .unwrap_err()
                .contains("the layout has 1024")
        );
        assert!(parse_instances("-1").unwrap_err().contains("\"-1\""));
        assert!(parse_customers("0").unwrap_err().contains("at least 1"));
        assert_eq!(parse_customers("500"), Ok(500));
    }
}
