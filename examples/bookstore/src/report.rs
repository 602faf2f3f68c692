//! The report at the end of a run: counts per shard, the duplicate check over all shards, the
//! newest orders merged by ID, one ID decoded, one order as JSON.

use std::collections::HashSet;
use std::fmt::Write as _;

use idgen_sqlx::SnowflakeId;
use serde::Serialize;

use crate::Result;
use crate::model::Order;
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

/// An ID taken apart.
#[derive(Clone, Debug, Serialize)]
pub struct DecodedId {
    /// The ID.
    pub id: SnowflakeId,
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
    /// Rows per shard (everything stored, earlier runs included).
    pub shards: Vec<ShardCount>,
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
    /// The newest order, shown as the API's JSON.
    pub example: Option<Order>,
}

fn utc(unix_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(unix_ms)
        .map(|t| format!("{t:.3}"))
        .unwrap_or_else(|_| format!("{unix_ms} ms"))
}

/// Decodes `id` under the bookstore's layout.
pub fn decode(id: SnowflakeId) -> Result<DecodedId> {
    let d = LAYOUT.decompose(id)?;
    Ok(DecodedId {
        id,
        unix_ms: d.unix_ms,
        time_utc: utc(d.unix_ms),
        node: d.node,
        node_fields: d.node_fields().map(|(k, v)| (k.to_owned(), v)).collect(),
        sequence: d.sequence,
    })
}

/// Reads every shard and builds the report.
pub async fn build(shards: &Shards, location: &str, run: Option<RunSummary>) -> Result<Report> {
    let counts = shards.counts().await?;
    let keys = shards.keys().await?;
    let order_ids = Uniqueness::of(keys.iter().flat_map(|k| k.order_ids.iter()));
    let public_ids = Uniqueness::of(keys.iter().flat_map(|k| k.public_ids.iter()));
    let line_ids = Uniqueness::of(keys.iter().flat_map(|k| k.line_ids.iter()));
    let largest = counts.iter().map(|c| c.orders).max().unwrap_or(0);
    let identity_collisions = order_ids.rows - largest.min(order_ids.rows);
    let mut newest = Vec::new();
    for (shard, order) in shards.newest(10).await? {
        let d = LAYOUT.decompose(order.id)?;
        newest.push(NewestOrder {
            shard,
            node: d.node,
            created_utc: utc(d.unix_ms),
            order,
        });
    }
    let first = newest.first().map(|n| &n.order);
    Ok(Report {
        location: location.to_owned(),
        run,
        shards: counts,
        order_ids,
        public_ids,
        line_ids,
        identity_collisions,
        decoded: first.map(|o| decode(o.id)).transpose()?,
        example: first.cloned(),
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
        if let Some(run) = &self.run {
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
        } else {
            writeln!(out, "data: {}", self.location)?;
        }
        writeln!(
            out,
            "\nOrders per shard (shard = customer_id % {}):",
            self.shards.len()
        )?;
        for (n, c) in self.shards.iter().enumerate() {
            writeln!(
                out,
                "  shard {n}: {:>7} orders {:>8} lines",
                c.orders, c.lines
            )?;
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
            "\nDuplicate IDs across all shards: {}",
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
                n.order.customer_id,
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
                "\nOne order as JSON (IDs are strings, so JavaScript keeps all 64 bits):"
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
