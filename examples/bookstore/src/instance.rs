//! One app instance: a leased node ID, a Snowflake generator, a hi-lo generator, the shards.

use idgen_sqlx::hilo::HiLo;
use idgen_sqlx::lease::LeaseHandle;
use idgen_sqlx::{Id, PublicId, Snowflake};

use crate::db::Cluster;
use crate::model::{Customer, NewLine, Order, OrderLine};
use crate::node_lease::LAYOUT;
use crate::shards::Shards;
use crate::{Result, line_ids, node_lease};

/// An app instance.
#[derive(Debug)]
pub struct Instance {
    ids: Snowflake,
    lease: LeaseHandle,
    line_ids: HiLo,
    shards: Shards,
}

impl Instance {
    /// Leases a node ID and connects the generators. [`prepare`](crate::prepare) must have run.
    /// The lease is recorded in `cluster.leases` at once, so it is released on every way out,
    /// even when this start fails after leasing.
    pub async fn start(cluster: &Cluster, shards: Shards) -> Result<Instance> {
        let lease = node_lease::lease(&cluster.control).await?;
        let handle = lease.handle();
        cluster.leases.add(handle.clone());
        let ids = Snowflake::builder().layout(LAYOUT).lease(lease).build()?;
        let line_ids = line_ids::line_ids(&cluster.control).await?;
        Ok(Instance {
            ids,
            lease: handle,
            line_ids,
            shards,
        })
    }

    /// The leased node ID.
    pub fn node(&self) -> u64 {
        self.lease.node()
    }

    /// The shards this instance writes to.
    pub fn shards(&self) -> &Shards {
        &self.shards
    }

    /// Creates an order: a Snowflake ID, a public ID, hi-lo IDs for the lines, stored in the
    /// customer's shard.
    pub async fn create_order(
        &self,
        customer_id: Id<Customer>,
        lines: &[NewLine],
    ) -> Result<Order> {
        let mut order = Order {
            id: self.ids.next_typed_id_async().await?,
            public_id: PublicId::try_new()?,
            customer_id,
            total_cents: 0,
            lines: Vec::with_capacity(lines.len()),
        };
        for line in lines {
            order.total_cents += line.quantity * line.price_cents;
            order.lines.push(OrderLine {
                id: self.line_ids.next_typed_id().await?,
                title: line.title.clone(),
                quantity: line.quantity,
                price_cents: line.price_cents,
            });
        }
        self.shards.insert(&order).await?;
        Ok(order)
    }

    /// Sets idgen's metrics from the generators' and the lease's `stats()` snapshots (read by
    /// `GET /metrics`; never on the per-ID path).
    pub fn export_metrics(&self) {
        idgen_core::observe::export_snowflake("orders", &self.ids);
        idgen_engine::observe::export_hilo(&self.line_ids);
        idgen_engine::observe::export_lease(&self.lease);
    }

    /// Stops issuing IDs and gives the node ID back (idempotent).
    pub async fn stop(&self) -> Result<()> {
        self.lease.release().await?;
        Ok(())
    }
}
