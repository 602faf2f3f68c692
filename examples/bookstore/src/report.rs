//! The report at the end of a run: this run's orders per shard (what it added to each), what
//! the shards hold in all, the duplicate check over every stored key,
//! the newest orders merged by ID, one ID decoded, one order as the API shows it.

use std::collections::HashSet;
use std::fmt::Write as _;

use idgen_sqlx::Id;
use serde::Serialize;

use crate::Result;
use crate::model::{Order, OrderView};
use crate::node_lease::LAYOUT;
use crate::shards::{ShardCount, Shards};
use crate::workload::RunSummary;

/// How many keys were stored and how many of them are distinct, over all shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Uniqueness {
    /// Rows.
    pub rows: u64,
    /// Distinct values.
    pub distinct: u64,
}

impl Uniqueness {
    fn of<T: Eq + std::hash::Hash>(values: impl Iterator<Item = T>) -> Uniqueness {
        let mut seen = HashSet::new();
        let mut rows = 0;
        for v in values {
            rows += 1;
            seen.insert(v);
        }
        Uniqueness {
            rows,
            distinct: seen.len() as u64,
        }
    }

    /// Rows whose value another row has too.
    pub fn duplicates(&self) -> u64 {
        self.rows - self.distinct
    }
}

/// One of the newest orders.
#[derive(Clone, Debug, Serialize)]
pub struct NewestOrder {
    /// Its shard.
    pub shard: usize,
    /// The order.
    pub order: Order,
    /// The node ID in its ID.
    pub node: u64,
    /// The creation time in its ID.
    pub created_utc: String,
}

/// Orders and lines, in all and per shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Orders.
    pub orders: u64,
    /// Order lines.
    pub lines: u64,
    /// Per shard, shard 0 first.
    pub per_shard: Vec<ShardCount>,
}

impl Counts {
    fn of(per_shard: Vec<ShardCount>) -> Counts {
        Counts {
            orders: per_shard.iter().map(|c| c.orders).sum(),
            lines: per_shard.iter().map(|c| c.lines).sum(),
            per_shard,
        }
    }
}

/// An ID taken apart.
#[derive(Clone, Debug, Serialize)]
pub struct DecodedId {
    /// The ID.
    pub id: Id<Order>,
    /// Milliseconds since the Unix epoch.
    pub unix_ms: i64,
    /// The same, as RFC 3339 UTC.
    pub time_utc: String,
    /// The node ID.
    pub node: u64,
    /// The node ID's sub-fields (Twitter: datacenter, worker).
    pub node_fields: Vec<(String, u64)>,
    /// The sequence within the millisecond.
    pub sequence: u64,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Where the data is.
    pub location: String,
    /// What this run did (absent for a report without a run).
    pub run: Option<RunSummary>,
    /// The rows this run stored: orders with a key at or above the run's first possible key,
    /// and their lines (absent without a run).
    pub this_run: Option<Counts>,
    /// Every row the shards hold, earlier runs included.
    pub stored: Counts,
    /// `orders.id` over all shards.
    pub order_ids: Uniqueness,
    /// `orders.public_id` over all shards.
    pub public_ids: Uniqueness,
    /// `order_lines.id` over all shards.
    pub line_ids: Uniqueness,
    /// Orders that would share their ID with an order of another shard, had each shard
    /// numbered its orders 1, 2, 3… with its own IDENTITY column.
    pub identity_collisions: u64,
    /// The newest orders of all shards, newest first.
    pub newest: Vec<NewestOrder>,
    /// The newest order's ID, decoded.
    pub decoded: Option<DecodedId>,
    /// The newest order, as the API shows it.
    pub example: Option<OrderView>,
}

/// Decodes `id` under the bookstore's layout.
pub fn decode(id: Id<Order>) -> Result<DecodedId> {
    let d = LAYOUT.decompose(id.to_snowflake())?;
    Ok(DecodedId {
        id,
        unix_ms: d.unix_ms,
        time_utc: d.rfc3339(),
        node: d.node,
        node_fields: d.node_fields().map(|(k, v)| (k.to_owned(), v)).collect(),
        sequence: d.sequence,
    })
}

/// Reads every shard and builds the report.
pub async fn build(shards: &Shards, location: &str, run: Option<RunSummary>) -> Result<Report> {
    let this_run = match &run {
        Some(run) => {
            // What the run added: keys cannot tell runs apart, as a node ID taken over issues
            // ahead of the clock, above keys an earlier run made on another node ID.
            let now = shards.counts(Id::MIN).await?;
            let added = now
                .iter()
                .zip(&run.stored_before)
                .map(|(now, before)| ShardCount {
                    orders: now.orders.saturating_sub(before.orders),
                    lines: now.lines.saturating_sub(before.lines),
                });
            Some(Counts::of(added.collect()))
        }
        None => None,
    };
    let counts = shards.counts(Id::MIN).await?;
    let keys = shards.keys().await?;
    let order_ids = Uniqueness::of(keys.iter().flat_map(|k| k.order_ids.iter()));
    let public_ids = Uniqueness::of(keys.iter().flat_map(|k| k.public_ids.iter()));
    let line_ids = Uniqueness::of(keys.iter().flat_map(|k| k.line_ids.iter()));
    let largest = counts.iter().map(|c| c.orders).max().unwrap_or(0);
    let identity_collisions = order_ids.rows - largest.min(order_ids.rows);
    let mut newest = Vec::new();
    for (shard, order) in shards.newest(10).await? {
        let d = LAYOUT.decompose(order.id.to_snowflake())?;
        newest.push(NewestOrder {
            shard,
            node: d.node,
            created_utc: d.rfc3339(),
            order,
        });
    }
    let first = newest.first().map(|n| &n.order);
    Ok(Report {
        location: location.to_owned(),
        run,
        this_run,
        stored: Counts::of(counts),
        order_ids,
        public_ids,
        line_ids,
        identity_collisions,
        decoded: first.map(|o| decode(o.id)).transpose()?,
        example: first.map(OrderView::from),
        newest,
    })
}

impl Report {
    /// Duplicate keys of any kind over all shards: 0 is the point of the example.
    pub fn duplicates(&self) -> u64 {
        self.order_ids.duplicates() + self.public_ids.duplicates() + self.line_ids.duplicates()
    }

    /// The report as a person reads it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) -> std::fmt::Result {
        let shards = self.stored.per_shard.len();
        match (&self.run, &self.this_run) {
            (Some(run), Some(this_run)) => {
                let made: u32 = run.instances.iter().map(|i| i.orders).sum();
                let kind = if run.processes { "processes" } else { "tasks" };
                writeln!(
                    out,
                    "{} app instances ({kind}) created {made} orders in {:.1} s; data: {}",
                    run.instances.len(),
                    run.elapsed.as_secs_f64(),
                    self.location
                )?;
                let nodes: Vec<String> = run.instances.iter().map(|i| i.node.to_string()).collect();
                writeln!(out, "  node IDs leased: {}", nodes.join(", "))?;
                writeln!(
                    out,
                    "\nThis run's orders per shard (shard = customer_id % {shards}; what the run \
                     added):"
                )?;
                render_shards(out, this_run)?;
                writeln!(
                    out,
                    "\nStored in all, earlier runs included: {} orders, {} lines",
                    self.stored.orders, self.stored.lines
                )?;
            }
            _ => {
                writeln!(out, "data: {}", self.location)?;
                writeln!(
                    out,
                    "\nOrders stored per shard (shard = customer_id % {shards}):"
                )?;
                render_shards(out, &self.stored)?;
            }
        }
        let line = |name: &str, u: &Uniqueness| {
            format!(
                "  {name:<16} {:>8} rows {:>8} distinct {:>4} duplicates",
                u.rows,
                u.distinct,
                u.duplicates()
            )
        };
        writeln!(
            out,
            "\nDuplicate IDs across all shards, over all {} stored orders: {}",
            self.stored.orders,
            self.duplicates()
        )?;
        writeln!(out, "{}", line("order IDs", &self.order_ids))?;
        writeln!(out, "{}", line("public order IDs", &self.public_ids))?;
        writeln!(out, "{}", line("order-line IDs", &self.line_ids))?;
        writeln!(
            out,
            "  (had each shard numbered its orders 1, 2, 3… with its own IDENTITY column: {} duplicates)",
            self.identity_collisions
        )?;
        writeln!(
            out,
            "\nNewest {} orders of all shards, merged by ID (no timestamp column):",
            self.newest.len()
        )?;
        writeln!(
            out,
            "  {:<19}  {:<30}  {:>5}  {:>8}  {:>4}  created (UTC, read from the ID)",
            "id", "public id", "shard", "customer", "node"
        )?;
        for n in &self.newest {
            writeln!(
                out,
                "  {:<19}  {:<30}  {:>5}  {:>8}  {:>4}  {}",
                n.order.id.to_string(),
                n.order.public_id.to_string(),
                n.shard,
                n.order.customer_id.to_string(),
                n.node,
                n.created_utc
            )?;
        }
        if let Some(d) = &self.decoded {
            let fields: Vec<String> = d
                .node_fields
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            writeln!(out, "\nOne ID decoded (Twitter layout): {}", d.id)?;
            writeln!(
                out,
                "  time      {}  ({} ms since 1970)",
                d.time_utc, d.unix_ms
            )?;
            writeln!(out, "  node      {}  ({})", d.node, fields.join(", "))?;
            writeln!(out, "  sequence  {}", d.sequence)?;
        }
        if let Some(order) = &self.example {
            writeln!(
                out,
                "\nThe newest order as the API shows it (public ID only; IDs are strings, so \
                 JavaScript keeps all 64 bits):"
            )?;
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(order).unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

fn render_shards(out: &mut String, counts: &Counts) -> std::fmt::Result {
    for (n, c) in counts.per_shard.iter().enumerate() {
        writeln!(
            out,
            "  shard {n}: {:>7} orders {:>8} lines",
            c.orders, c.lines
        )?;
    }
    Ok(())
}
