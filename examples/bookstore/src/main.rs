//! `cargo run -p bookstore`: four shards, several app instances, and a report.

use std::path::PathBuf;
use std::sync::Arc;

use bookstore::db::{Cluster, Target};
use bookstore::instance::Instance;
use bookstore::workload::{self, Workload};
use bookstore::{Result, http, report};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

/// A bookstore whose orders are split across 4 shards: Snowflake order IDs from leased node IDs,
/// hi-lo order-line IDs from one central counter, public `ord_…` IDs for URLs.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Where the embedded SQLite databases go (4 shards and a control database).
    #[arg(long, default_value = "bookstore-data", global = true)]
    data_dir: PathBuf,
    /// Use PostgreSQL (postgres://…) or MariaDB (mysql://…) instead of SQLite: databases
    /// <name>_control and <name>_shard_0…3 are created when missing (<name>: the URL's database,
    /// default "bookstore").
    #[arg(long, env = "DATABASE_URL", global = true)]
    database_url: Option<String>,
    /// App instances creating orders at once, each with its own leased node ID.
    #[arg(long, default_value_t = 4)]
    instances: u32,
    /// Run the instances as OS processes (this program again) instead of tokio tasks.
    #[arg(long)]
    processes: bool,
    /// Orders to create in all.
    #[arg(long, default_value_t = 2000)]
    orders: u32,
    /// Customers are numbered 1 to this.
    #[arg(long, default_value_t = 500)]
    customers: i64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// After the report, keep a JSON API up: POST /orders, GET /orders/{public_id},
    /// GET /customers/{id}/orders.
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
    /// One app instance as its own process (used by --processes).
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        orders: u32,
        #[arg(long)]
        customers: i64,
    },
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

#[tokio::main]
async fn main() {
    if let Err(e) = run(Args::parse()).await {
        eprintln!("bookstore: {e}");
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<()> {
    let cluster = Cluster::open(&args.target()).await?;
    let shards = bookstore::prepare(&cluster).await?;
    if let Some(Command::Worker { orders, customers }) = args.command {
        return workload::run_worker(&cluster, &shards, orders, customers).await;
    }
    let work = Workload {
        instances: args.instances,
        orders: args.orders,
        customers: args.customers,
    };
    let bar = ProgressBar::new(u64::from(args.orders)); // hidden when stderr is not a terminal
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {pos}/{len} orders ({per_sec})")
            .map_err(|e| e.to_string())?
            .progress_chars("=> "),
    );
    bar.set_message(format!("{} instances", work.instances));
    let summary = if args.processes {
        workload::run_processes(&work, &args.database_args(), &bar).await?
    } else {
        workload::run_tasks(&cluster, &shards, &work, &bar).await?
    };
    bar.finish_and_clear();
    let report = report::build(&shards, &cluster.location, Some(summary)).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render());
    }
    if report.duplicates() != 0 {
        return Err(format!("{} duplicate IDs across shards", report.duplicates()).into());
    }
    if args.serve {
        serve(&cluster, shards, args.port, &report).await?;
    }
    cluster.close().await;
    Ok(())
}

async fn serve(
    cluster: &Cluster,
    shards: bookstore::shards::Shards,
    port: u16,
    report: &report::Report,
) -> Result<()> {
    let instance = Arc::new(Instance::start(cluster, shards).await?);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    println!(
        "\nServing the API on http://{addr} (node ID {}); Ctrl-C stops it. Try:",
        instance.node()
    );
    if let Some(newest) = report.newest.first() {
        let (order, customer) = (&newest.order.public_id, newest.order.customer_id);
        println!("  curl -H 'X-Customer-Id: {customer}' http://{addr}/orders/{order}");
        println!("  curl -H 'X-Customer-Id: {customer}' http://{addr}/customers/{customer}/orders");
    }
    println!(
        "  curl -H 'X-Customer-Id: 7' -H 'content-type: application/json' \
         -d '{{\"customer_id\":\"7\",\"lines\":[{{\"title\":\"Dune\",\"quantity\":1,\"price_cents\":1250}}]}}' \
         http://{addr}/orders"
    );
    axum::serve(listener, http::router(Arc::clone(&instance)))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    instance.stop().await?;
    Ok(())
}
