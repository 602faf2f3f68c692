//! The `orders` table split by `customer_id` across [`SHARDS`] databases: routing, writes and
//! the reads the API and the report need.

use idgen_sqlx::{Id, PublicId};

use crate::db::{Cluster, Pool, SHARDS};
use crate::model::{Customer, Order, OrderLine};
use crate::{Result, on_pool, schema};

/// The shard that holds a customer's orders.
pub fn shard_of(customer_id: Id<Customer>) -> usize {
    (customer_id.as_u64() % SHARDS as u64) as usize
}

/// The `SELECT` of [`OrderRow`]s; a `WHERE` clause and an order follow.
const SELECT_ORDERS: &str = "SELECT id, public_id, customer_id, total_cents FROM orders";

#[derive(sqlx::FromRow)]
struct OrderRow {
    id: Id<Order>,
    public_id: PublicId<Order>,
    customer_id: Id<Customer>,
    total_cents: i64,
}

#[derive(sqlx::FromRow)]
struct LineRow {
    id: Id<OrderLine>,
    title: String,
    quantity: i64,
    price_cents: i64,
}

/// Row counts of one shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShardCount {
    /// Rows in `orders`.
    pub orders: u64,
    /// Rows in `order_lines`.
    pub lines: u64,
}

/// Every key stored in one shard, for the duplicate check.
#[derive(Clone, Debug, Default)]
pub struct ShardKeys {
    /// `orders.id`.
    pub order_ids: Vec<Id<Order>>,
    /// `orders.public_id`.
    pub public_ids: Vec<PublicId<Order>>,
    /// `order_lines.id`.
    pub line_ids: Vec<Id<OrderLine>>,
}

/// The shards.
#[derive(Clone, Debug)]
pub struct Shards {
    pools: Vec<Pool>,
}

impl Shards {
    /// The cluster's shards, with their tables created when missing.
    pub async fn open(cluster: &Cluster) -> Result<Shards> {
        for pool in &cluster.shards {
            schema::create_shard_tables(pool).await?;
        }
        Ok(Shards {
            pools: cluster.shards.clone(),
        })
    }

    /// Stores an order and its lines in the customer's shard, in one transaction.
    pub async fn insert(&self, order: &Order) -> Result<()> {
        let pool = &self.pools[shard_of(order.customer_id)];
        let insert_order = pool.sql(
            "INSERT INTO orders (id, public_id, customer_id, total_cents) VALUES (?, ?, ?, ?)",
        );
        let insert_line = pool.sql(
            "INSERT INTO order_lines (id, order_id, title, quantity, price_cents) VALUES (?, ?, ?, ?, ?)",
        );
        on_pool!(pool, p => {
            let mut tx = p.begin().await?;
            sqlx::query(sqlx::AssertSqlSafe(insert_order))
                .bind(order.id)
                .bind(order.public_id)
                .bind(order.customer_id)
                .bind(order.total_cents)
                .execute(&mut *tx)
                .await?;
            for line in &order.lines {
                sqlx::query(sqlx::AssertSqlSafe(insert_line.clone()))
                    .bind(line.id)
                    .bind(order.id)
                    .bind(&line.title)
                    .bind(line.quantity)
                    .bind(line.price_cents)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The order with this public ID **if it belongs to `customer_id`**: only that customer's
    /// shard is asked, and only for that customer's rows.
    pub async fn find_for_customer(
        &self,
        public_id: PublicId<Order>,
        customer_id: Id<Customer>,
    ) -> Result<Option<Order>> {
        let pool = &self.pools[shard_of(customer_id)];
        let sql = pool.sql(&format!(
            "{SELECT_ORDERS} WHERE public_id = ? AND customer_id = ?"
        ));
        let row: Option<OrderRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(public_id)
            .bind(customer_id)
            .fetch_optional(p)
            .await?);
        with_lines_if_any(pool, row).await
    }

    /// The order with primary key `id` in shard `shard` (for routing by ID alone, see
    /// [`routing`](crate::routing)): one shard is asked.
    pub async fn find_in_shard(&self, shard: usize, id: Id<Order>) -> Result<Option<Order>> {
        let Some(pool) = self.pools.get(shard) else {
            return Err(format!("there is no shard {shard}: there are {SHARDS}").into());
        };
        let sql = pool.sql(&format!("{SELECT_ORDERS} WHERE id = ?"));
        let row: Option<OrderRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(p)
            .await?);
        with_lines_if_any(pool, row).await
    }

    /// The internal key of the order with this public ID, **if it belongs to `customer_id`**
    /// (a paging cursor names an order by its public ID).
    pub async fn key_of(
        &self,
        public_id: PublicId<Order>,
        customer_id: Id<Customer>,
    ) -> Result<Option<Id<Order>>> {
        let pool = &self.pools[shard_of(customer_id)];
        let sql = pool.sql("SELECT id FROM orders WHERE public_id = ? AND customer_id = ?");
        Ok(
            on_pool!(pool, p => sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(public_id)
            .bind(customer_id)
            .fetch_optional(p)
            .await?),
        )
    }

    /// Up to `limit` of a customer's orders, newest first, older than `before` when given:
    /// keyset paging on the Snowflake key (it sorts by creation time), one index range scan
    /// per page however deep, and stable while new orders arrive.
    pub async fn orders_of(
        &self,
        customer_id: Id<Customer>,
        before: Option<Id<Order>>,
        limit: u32,
    ) -> Result<Vec<Order>> {
        let pool = &self.pools[shard_of(customer_id)];
        let sql = pool.sql(&format!(
            "{SELECT_ORDERS} WHERE customer_id = ? AND id < ? ORDER BY id DESC LIMIT {limit}"
        ));
        let before = before.unwrap_or(Id::MAX);
        let rows: Vec<OrderRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(customer_id)
            .bind(before)
            .fetch_all(p)
            .await?);
        let mut orders = Vec::with_capacity(rows.len());
        for row in rows {
            orders.push(with_lines(pool, row).await?);
        }
        Ok(orders)
    }

    /// The newest `n` orders of all shards, merged by ID, with the shard each came from.
    pub async fn newest(&self, n: u32) -> Result<Vec<(usize, Order)>> {
        let mut all = Vec::new();
        for (shard, pool) in self.pools.iter().enumerate() {
            let sql = format!("{SELECT_ORDERS} ORDER BY id DESC LIMIT {n}");
            let rows: Vec<OrderRow> =
                on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(p).await?);
            all.extend(rows.into_iter().map(|row| (shard, row)));
        }
        all.sort_by_key(|(_, row)| std::cmp::Reverse(row.id));
        all.truncate(n as usize);
        let mut orders = Vec::with_capacity(all.len());
        for (shard, row) in all {
            orders.push((shard, with_lines(&self.pools[shard], row).await?));
        }
        Ok(orders)
    }

    /// Row counts per shard of the orders with a key at or above `since` (and their lines):
    /// Snowflake keys sort by creation time, so this selects the orders created since the
    /// instant `since` was composed for, with no timestamp column. `Id::MIN` counts everything.
    pub async fn counts(&self, since: Id<Order>) -> Result<Vec<ShardCount>> {
        let mut counts = Vec::with_capacity(self.pools.len());
        for pool in &self.pools {
            let sql = pool.sql(
                "SELECT (SELECT COUNT(*) FROM orders WHERE id >= ?), \
                 (SELECT COUNT(*) FROM order_lines WHERE order_id >= ?)",
            );
            let (orders, lines): (i64, i64) = on_pool!(pool, p => sqlx::query_as(
                sqlx::AssertSqlSafe(sql)
            )
            .bind(since)
            .bind(since)
            .fetch_one(p)
            .await?);
            counts.push(ShardCount {
                orders: orders as u64,
                lines: lines as u64,
            });
        }
        Ok(counts)
    }

    /// Every key of every shard.
    pub async fn keys(&self) -> Result<Vec<ShardKeys>> {
        let mut keys = Vec::with_capacity(self.pools.len());
        for pool in &self.pools {
            let (order_ids, public_ids, line_ids) = on_pool!(pool, p => {
                let orders: Vec<(Id<Order>, PublicId<Order>)> =
                    sqlx::query_as("SELECT id, public_id FROM orders").fetch_all(p).await?;
                let lines: Vec<Id<OrderLine>> =
                    sqlx::query_scalar("SELECT id FROM order_lines").fetch_all(p).await?;
                let (ids, public): (Vec<Id<Order>>, Vec<PublicId<Order>>) =
                    orders.into_iter().unzip();
                (ids, public, lines)
            });
            keys.push(ShardKeys {
                order_ids,
                public_ids,
                line_ids,
            });
        }
        Ok(keys)
    }
}

/// `row`'s order with its lines, when there is a row.
async fn with_lines_if_any(pool: &Pool, row: Option<OrderRow>) -> Result<Option<Order>> {
    match row {
        Some(row) => Ok(Some(with_lines(pool, row).await?)),
        None => Ok(None),
    }
}

async fn with_lines(pool: &Pool, row: OrderRow) -> Result<Order> {
    let sql = pool.sql(
        "SELECT id, title, quantity, price_cents FROM order_lines WHERE order_id = ? ORDER BY id",
    );
    let lines: Vec<LineRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(row.id)
        .fetch_all(p)
        .await?);
    Ok(Order {
        id: row.id,
        public_id: row.public_id,
        customer_id: row.customer_id,
        total_cents: row.total_cents,
        lines: lines
            .into_iter()
            .map(|l| OrderLine {
                id: l.id,
                title: l.title,
                quantity: l.quantity,
                price_cents: l.price_cents,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn customers_are_routed_by_remainder() {
        let shards: Vec<usize> = (0..8).map(|c| shard_of(Id::new(c).unwrap())).collect();
        assert_eq!(shards, [0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(shard_of(Id::MAX), 3);
    }
}
