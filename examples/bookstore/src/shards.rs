//! The `orders` table split by `customer_id` across [`SHARDS`] databases: routing, writes and
//! the reads the API and the report need.

use idgen_sqlx::{PublicId, SnowflakeId};

use crate::db::{Cluster, Pool, SHARDS};
use crate::model::{Order, OrderLine};
use crate::{Result, on_pool, schema};

/// The shard that holds a customer's orders.
pub fn shard_of(customer_id: i64) -> usize {
    customer_id.rem_euclid(SHARDS as i64) as usize
}

#[derive(sqlx::FromRow)]
struct OrderRow {
    id: SnowflakeId,
    public_id: PublicId<Order>,
    customer_id: i64,
    total_cents: i64,
}

#[derive(sqlx::FromRow)]
struct LineRow {
    id: i64,
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
    pub order_ids: Vec<i64>,
    /// `orders.public_id`.
    pub public_ids: Vec<PublicId<Order>>,
    /// `order_lines.id`.
    pub line_ids: Vec<i64>,
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
        customer_id: i64,
    ) -> Result<Option<Order>> {
        let pool = &self.pools[shard_of(customer_id)];
        let sql = pool.sql(
            "SELECT id, public_id, customer_id, total_cents FROM orders WHERE public_id = ? AND customer_id = ?",
        );
        let row: Option<OrderRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(public_id)
            .bind(customer_id)
            .fetch_optional(p)
            .await?);
        match row {
            Some(row) => Ok(Some(with_lines(pool, row).await?)),
            None => Ok(None),
        }
    }

    /// A customer's newest orders (by ID: Snowflake IDs sort by creation time).
    pub async fn orders_of(&self, customer_id: i64, limit: u32) -> Result<Vec<Order>> {
        let pool = &self.pools[shard_of(customer_id)];
        let sql = pool.sql(&format!(
            "SELECT id, public_id, customer_id, total_cents FROM orders WHERE customer_id = ? ORDER BY id DESC LIMIT {limit}"
        ));
        let rows: Vec<OrderRow> = on_pool!(pool, p => sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(customer_id)
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
            let sql = format!(
                "SELECT id, public_id, customer_id, total_cents FROM orders ORDER BY id DESC LIMIT {n}"
            );
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

    /// Row counts per shard.
    pub async fn counts(&self) -> Result<Vec<ShardCount>> {
        let mut counts = Vec::with_capacity(self.pools.len());
        for pool in &self.pools {
            let (orders, lines): (i64, i64) = on_pool!(pool, p => sqlx::query_as(
                "SELECT (SELECT COUNT(*) FROM orders), (SELECT COUNT(*) FROM order_lines)"
            )
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
                let orders: Vec<(i64, PublicId<Order>)> =
                    sqlx::query_as("SELECT id, public_id FROM orders").fetch_all(p).await?;
                let lines: Vec<(i64,)> =
                    sqlx::query_as("SELECT id FROM order_lines").fetch_all(p).await?;
                let (ids, public): (Vec<i64>, Vec<PublicId<Order>>) = orders.into_iter().unzip();
                (ids, public, lines.into_iter().map(|(id,)| id).collect::<Vec<i64>>())
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
        let shards: Vec<usize> = (0..8).map(shard_of).collect();
        assert_eq!(shards, [0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(shard_of(-1), 3, "never a negative shard index");
    }
}
