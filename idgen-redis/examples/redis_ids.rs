//! Leases a node ID and takes hi-lo blocks from a Redis server, then lets go.
//!
//! `cargo run -p idgen-redis --example redis_ids -- redis://127.0.0.1:6379/`

use std::process::ExitCode;

use idgen_redis::Layout;
use idgen_redis::hilo::HiLo;
use idgen_redis::lease::WorkerLease;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // A failure is printed as one paragraph and the exit code is 1.
    example_support::exit(run().await)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".to_owned());
    let client = redis::Client::open(url.as_str())?;

    let lease = WorkerLease::options()
        .namespace("example")
        .acquire(&client, &Layout::TWITTER)
        .await?;
    // The Snowflake generator on the leased node ID, and a handle to release it at shutdown.
    let (ids, handle) = example_support::snowflake_on(lease)?;

    // The counter is created by the first process that needs it (an explicit
    // `RedisCounter::new(&client, "example")?.create()` does the same ahead of time).
    let lines = HiLo::builder(&client)
        .counter("example")
        .block(100)
        .create_if_missing(true)
        .build()
        .await?;

    // Three IDs of each kind: one Snowflake ID at a time, three hi-lo IDs in one contiguous range.
    let snowflakes = [ids.next_id()?, ids.next_id()?, ids.next_id()?];
    let range = lines.reserve(3).await?;
    println!("snowflake {snowflakes:?}  hi-lo {range:?}");

    // Shutdown: the node ID is free for the next process at once.
    example_support::release(&handle).await?;
    Ok(())
}
