//! Snowflake IDs in a few lines: generate, decode, serialize.
//!
//! Run with `cargo run -p idgen-core --example quickstart`.

use idgen_core::{Layout, NodeId, Snowflake, SnowflakeId};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A node ID from $NODE_ID if set, else 1. (In production, lease it from your database:
    // `WorkerLease` in idgen-sqlx.)
    let node = NodeId::Env("NODE_ID".into())
        .resolve(&Layout::TWITTER)
        .unwrap_or(1);
    let ids = Snowflake::new(Layout::TWITTER, node)?;

    let batch: Vec<SnowflakeId> = (0..5).map(|_| ids.next_id()).collect::<Result<_, _>>()?;
    println!("five IDs from node {node}, strictly increasing:");
    for id in &batch {
        println!("  {id}");
    }

    let newest = *batch.last().expect("five IDs");
    let d = Layout::TWITTER.decompose(newest)?;
    let fields: Vec<String> = d
        .node_fields()
        .map(|(name, v)| format!("{name} {v}"))
        .collect();
    println!(
        "\n{newest} decodes to: {} ms since the Unix epoch, {}, sequence {}",
        d.unix_ms,
        fields.join(", "),
        d.sequence
    );

    #[derive(serde::Serialize)]
    struct Order {
        id: SnowflakeId,
        customer: &'static str,
    }
    let json = serde_json::to_string(&Order {
        id: newest,
        customer: "ada",
    })?;
    println!("\nas JSON (the ID is a string, so JavaScript cannot round it): {json}");

    let stats = ids.stats();
    println!(
        "\nstats: {} issued, {} sequence waits",
        stats.ids_issued, stats.exhaustion_waits
    );
    Ok(())
}
