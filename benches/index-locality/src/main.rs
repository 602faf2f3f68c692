//! The index-locality benchmark: how each kind of primary key fills a B-tree.
//!
//! For each key kind (`BIGINT` identity, `SnowflakeId`, hi-lo, UUIDv4, monotonic UUIDv7) it
//! creates a fresh table, inserts the same workload (concurrent writers, batched multi-row
//! `INSERT`s, a ~100-byte payload), runs `VACUUM (ANALYZE)` / `ANALYZE TABLE`, and measures the
//! primary key: size, leaf pages, and on PostgreSQL `pgstatindex`'s leaf density and
//! fragmentation. It prints Markdown tables with each figure as a ratio to `BIGINT` identity.
//!
//! ```text
//! cargo run --release -p index-locality                     # 200,000 rows, PostgreSQL and MariaDB
//! cargo run --release -p index-locality -- --rows 2000000   # the large run
//! ```
//!
//! Servers: `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL`, else the local defaults. The benchmark
//! creates its own database on each and drops it afterwards.

mod database;
mod error;
mod keys;
mod measure;
mod mysql;
mod postgres;
mod report;
mod writers;

use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, ValueEnum};

use database::{Bench, Dialect};
use error::BoxResult;
use keys::KeyKind;
use sqlx::{MySql, Postgres};
use writers::Workload;

/// A server kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Server {
    /// PostgreSQL.
    Postgres,
    /// MariaDB or MySQL (InnoDB).
    Mysql,
}

/// How each kind of primary key fills a B-tree, on PostgreSQL and MariaDB.
#[derive(Debug, Parser)]
#[command(name = "index-locality")]
struct Args {
    /// Rows per key kind (2000000 for the large run).
    #[arg(long, default_value_t = 200_000)]
    rows: u64,
    /// Concurrent writers, each an application instance with its own generator and connection.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    writers: u16,
    /// Rows per multi-row INSERT.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=1000))]
    batch: u16,
    /// Payload bytes per row.
    #[arg(long, default_value_t = 100)]
    payload_bytes: u16,
    /// One key generator shared by all writers (one application instance with N tasks) instead
    /// of one per writer (N instances: own Snowflake node, own hi-lo block, own UUIDv7 counter).
    #[arg(long)]
    shared_generator: bool,
    /// Servers to run on.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Server::Postgres, Server::Mysql])]
    servers: Vec<Server>,
    /// Key kinds to run (bigint-identity, snowflake, hilo, uuid-v4, uuid-v7); all by default.
    #[arg(long, value_delimiter = ',', value_parser = KeyKind::parse)]
    kinds: Vec<KeyKind>,
    /// PostgreSQL server URL.
    #[arg(
        long,
        env = "IDGEN_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    postgres_url: String,
    /// MariaDB / MySQL server URL.
    #[arg(
        long,
        env = "IDGEN_MYSQL_URL",
        default_value = "mysql://root@127.0.0.1:3306/mysql"
    )]
    mysql_url: String,
}

fn main() -> BoxResult<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> BoxResult<()> {
    let kinds = if args.kinds.is_empty() {
        KeyKind::ALL.to_vec()
    } else {
        args.kinds.clone()
    };
    let workload = Workload {
        rows: args.rows,
        writers: usize::from(args.writers),
        batch: usize::from(args.batch),
        payload_bytes: usize::from(args.payload_bytes),
        shared_generator: args.shared_generator,
    };
    println!(
        "index-locality: {} rows per kind, {} writers ({}), {} rows per INSERT, {}-byte payload\n",
        workload.rows,
        workload.writers,
        if workload.shared_generator {
            "one shared generator"
        } else {
            "one generator each"
        },
        workload.batch,
        workload.payload_bytes
    );
    let name = format!("idgen_index_locality_{}", std::process::id());
    for server in &args.servers {
        let section = match server {
            Server::Postgres => {
                run_server::<Postgres>(&args.postgres_url, &name, &kinds, workload).await?
            }
            Server::Mysql => run_server::<MySql>(&args.mysql_url, &name, &kinds, workload).await?,
        };
        println!("{section}");
    }
    Ok(())
}

/// Every kind on the server at `url`, in a database `name` created for the run and dropped
/// after it (also when a kind failed); returns the report's section.
async fn run_server<DB: Dialect>(
    url: &str,
    name: &str,
    kinds: &[KeyKind],
    workload: Workload,
) -> BoxResult<String> {
    // One connection per writer, and one for the measurements.
    let connections = u32::try_from(workload.writers)? + 1;
    let db = Arc::new(Bench::<DB>::create(url, name, connections).await?);
    let title = db.title().await?;
    let outcome = run_kinds(&db, kinds, workload).await;
    let db = Arc::into_inner(db).ok_or("a writer still holds the database")?;
    db.drop().await?;
    Ok(format!(
        "### {title}\n\n{}",
        report::table(&outcome?, DB::INNODB)
    ))
}

async fn run_kinds<DB: Dialect>(
    db: &Arc<Bench<DB>>,
    kinds: &[KeyKind],
    workload: Workload,
) -> BoxResult<Vec<(KeyKind, measure::KindResult)>> {
    let mut results = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let started = Instant::now();
        db.create_table(kind).await?;
        let rows_per_sec = writers::insert_all(db, kind, workload).await?;
        let index = db.measure(kind).await?;
        if index.rows != workload.rows {
            return Err(format!(
                "{}: {} rows in the table, {} inserted",
                kind.label(),
                index.rows,
                workload.rows
            )
            .into());
        }
        db.drop_table(kind).await?;
        eprintln!(
            "  {:<16} done in {:.1} s",
            kind.label(),
            started.elapsed().as_secs_f64()
        );
        results.push((
            kind,
            measure::KindResult {
                rows_per_sec,
                index,
            },
        ));
    }
    Ok(results)
}
