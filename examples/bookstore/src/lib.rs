//! The bookstore: idgen's example application.
//!
//! A bookstore's `orders` table outgrew one database and is split by `customer_id` across four
//! shards, so each shard's IDENTITY column would count from 1 again. Instead, every app instance
//! leases a node ID and makes Snowflake IDs (unique across shards, sorted by time), gives each
//! order a random public ID for URLs, and takes order-line IDs in hi-lo blocks from one central
//! counter.

pub mod customer_id;
pub mod db;
pub mod http;
pub mod instance;
pub mod leases;
pub mod line_ids;
pub mod model;
pub mod node_lease;
pub mod progress;
pub mod report;
pub mod routing;
pub mod schema;
pub mod shards;
pub mod shutdown;
pub mod workload;

/// Errors of the example: anything, with a readable message.
pub type Error = idgen_sqlx::BoxError;
/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Creates what is missing (lease table, hi-lo counter, shard tables) and opens the shards.
pub async fn prepare(cluster: &db::Cluster) -> Result<shards::Shards> {
    node_lease::prepare(&cluster.control).await?;
    line_ids::prepare(&cluster.control).await?;
    shards::Shards::open(cluster).await
}
