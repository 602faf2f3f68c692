//! Leases a node ID and takes hi-lo blocks from a Redis server, then lets go.
//!
//! `cargo run -p idgen-redis --example redis_ids -- redis://127.0.0.1:6379/`

use idgen_redis::hilo::{HiLo, RedisCounter};
use idgen_redis::lease::WorkerLease;
use idgen_redis::{Layout, Snowflake};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".to_owned());
    let client = redis::Client::open(url.as_str())?;

    let lease = WorkerLease::options()
        .namespace("example")
        .acquire(&client, &Layout::TWITTER)
        .await?;
    let handle = lease.handle();
    println!("leased node ID {} as {}", lease.node(), lease.holder());
    let ids = Snowflake::builder()
        .layout(Layout::TWITTER)
        .lease(lease)
        .build()?;

    RedisCounter::new(&client, "example")?.create().await?;
    let lines = HiLo::builder(&client)
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
    handle.release().await?;
    println!("released; {:?}", handle.status());
    Ok(())
}
