//! Leases a node ID and takes hi-lo blocks from etcd, then lets go.
//!
//! `cargo run -p idgen-etcd --example etcd_ids -- http://127.0.0.1:2379`

use std::process::ExitCode;

use idgen_etcd::hilo::{EtcdCounter, HiLo};
use idgen_etcd::lease::WorkerLease;
use idgen_etcd::{Etcd, Layout};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // A failure is printed as one paragraph and the exit code is 1.
    example_support::exit(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let endpoints: Vec<String> = std::env::args().skip(1).collect();
    let etcd = if endpoints.is_empty() {
        Etcd::new(["http://127.0.0.1:2379"])
    } else {
        Etcd::new(endpoints)
    };

    let lease = WorkerLease::options()
        .namespace("example")
        .acquire(&etcd, &Layout::TWITTER)
        .await?;
    // The Snowflake generator on the leased node ID, and a handle to release it at shutdown.
    let (ids, handle) = example_support::snowflake_on(lease)?;

    EtcdCounter::new(&etcd, "example")?.create(100).await?;
    let lines = HiLo::builder(&etcd)
        .counter("example")
        .block(100)
        .build()
        .await?;

    for _ in 0..3 {
        println!(
            "snowflake {}  hi-lo {}",
            ids.next_id()?,
            lines.next_id().await?
        );
    }
    example_support::release(&handle).await?;
    Ok(())
}
