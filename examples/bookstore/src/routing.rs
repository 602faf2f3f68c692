//! Routing by ID alone: order IDs whose node field names the shard (Instagram's scheme), so an
//! order is found from its ID without knowing its customer and without a directory table.
//!
//! The instances' orders ([`Instance`](crate::instance::Instance)) are keyed by Twitter-layout
//! IDs whose node field is the instance's leased node ID; finding one of those by ID alone
//! would mean asking every shard. [`RoutedIds`] instead makes IDs under [`routed_layout`], whose
//! node field is split into the shard (3 bits) and a leased worker (7 bits): the ID of an
//! order for customer `c` carries `shards::shard_of(c)`, and [`find_by_id`] reads it back with
//! [`Layout::shard_of`] and asks that one shard.

use std::sync::OnceLock;

use idgen_sqlx::lease::WorkerLease;
use idgen_sqlx::{Id, Layout, NodeLease, Snowflake, SnowflakeId};

use crate::db::{Pool, SHARDS};
use crate::model::{Customer, Order};
use crate::shards::{Shards, shard_of};
use crate::{Result, on_pool};

/// The lease namespace of the routed IDs' workers (their node space is not the instances').
pub const NAMESPACE: &str = "routed-orders";

/// Twitter's epoch and widths, with the 10 node bits split into `shard` (3 bits: room for 8
/// shards) and `worker` (7 bits: 128 workers).
///
/// ```
/// let layout = bookstore::routing::routed_layout();
/// assert_eq!(layout.node_fields().iter().map(|f| (f.name, f.bits)).collect::<Vec<_>>(),
///            [("shard", 3), ("worker", 7)]);
/// ```
pub fn routed_layout() -> Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    *LAYOUT.get_or_init(|| {
        Layout::builder()
            .epoch_ms(Layout::TWITTER.epoch_ms())
            .timestamp_bits(41)
            .node_field("shard", 3)
            .node_field("worker", 7)
            .sequence_bits(12)
            .build()
            .expect("a valid layout")
    })
}

/// Order IDs that name their shard: one generator per shard, all on one leased worker ID.
pub struct RoutedIds {
    per_shard: Vec<Snowflake>,
    lease: WorkerLease,
}

impl RoutedIds {
    /// Leases a worker ID (namespace [`NAMESPACE`], 128 of them) from the control database and
    /// builds a generator per shard, each fenced by that lease.
    pub async fn acquire(control: &Pool) -> Result<RoutedIds> {
        let layout = routed_layout();
        let workers = 1 << layout.node_fields()[1].bits;
        let options = WorkerLease::options()
            .namespace(NAMESPACE)
            .capacity(workers);
        let lease = on_pool!(control, p => options.acquire(p, &layout).await?);
        let mut per_shard = Vec::with_capacity(SHARDS);
        for shard in 0..SHARDS as u64 {
            let mut builder = Snowflake::builder()
                .layout(layout)
                .node(layout.node_from_fields(&[shard, lease.node()])?)
                .fence(lease.fence())
                // A takeover issues at once above its bound: ticks may lead the clock by up
                // to the lease's lead (TTL + 2 × allowance), under the fence's ceiling.
                .lead(lease.lead());
            if let Some(ms) = lease.not_before_ms() {
                builder = builder.not_before_ms(ms);
            }
            per_shard.push(builder.build()?);
        }
        Ok(RoutedIds { per_shard, lease })
    }

    /// The leased worker ID.
    pub fn worker(&self) -> u64 {
        self.lease.node()
    }

    /// A new order ID for `customer_id`, naming the customer's shard.
    pub fn next_for(&self, customer_id: Id<Customer>) -> Result<Id<Order>> {
        let id = self.per_shard[shard_of(customer_id)].next_id()?;
        Ok(Id::from(id))
    }
}

/// The order with this ID, from its ID alone: the shard comes out of the ID
/// ([`Layout::shard_of`]), and only that shard is asked. An ID naming a shard that does not
/// exist is an error (`ShardOutOfRange`), not a search.
pub async fn find_by_id(shards: &Shards, id: Id<Order>) -> Result<Option<Order>> {
    let shard = routed_layout().shard_of(SnowflakeId::from(id), SHARDS as u64)?;
    shards.find_in_shard(shard as usize, id).await
}
