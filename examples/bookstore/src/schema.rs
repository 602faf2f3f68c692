//! The tables, per database: `orders` and `order_lines` on every shard.

use crate::Result;
use crate::db::{Backend, Pool};

/// Creates the shard tables when missing.
pub async fn create_shard_tables(pool: &Pool) -> Result<()> {
    for statement in shard_ddl(pool.backend()) {
        pool.execute(statement).await?;
    }
    Ok(())
}

/// `orders` (Snowflake key, public ID, owner) and `order_lines` (hi-lo key).
fn shard_ddl(backend: Backend) -> [&'static str; 3] {
    match backend {
        Backend::Sqlite => [
            "CREATE TABLE IF NOT EXISTS orders (
                id          INTEGER PRIMARY KEY,
                public_id   BLOB    NOT NULL UNIQUE,
                customer_id INTEGER NOT NULL,
                total_cents INTEGER NOT NULL
            )",
            "CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id, id)",
            "CREATE TABLE IF NOT EXISTS order_lines (
                id          INTEGER PRIMARY KEY,
                order_id    INTEGER NOT NULL REFERENCES orders (id),
                title       TEXT    NOT NULL,
                quantity    INTEGER NOT NULL,
                price_cents INTEGER NOT NULL
            )",
        ],
        Backend::Postgres => [
            "CREATE TABLE IF NOT EXISTS orders (
                id          BIGINT PRIMARY KEY,
                public_id   UUID   NOT NULL UNIQUE,
                customer_id BIGINT NOT NULL,
                total_cents BIGINT NOT NULL
            )",
            "CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id, id)",
            "CREATE TABLE IF NOT EXISTS order_lines (
                id          BIGINT PRIMARY KEY,
                order_id    BIGINT NOT NULL REFERENCES orders (id),
                title       TEXT   NOT NULL,
                quantity    BIGINT NOT NULL,
                price_cents BIGINT NOT NULL
            )",
        ],
        Backend::MySql => [
            "CREATE TABLE IF NOT EXISTS orders (
                id          BIGINT     NOT NULL PRIMARY KEY,
                public_id   BINARY(16) NOT NULL UNIQUE,
                customer_id BIGINT     NOT NULL,
                total_cents BIGINT     NOT NULL
            ) ENGINE = InnoDB",
            "CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id, id)",
            "CREATE TABLE IF NOT EXISTS order_lines (
                id          BIGINT       NOT NULL PRIMARY KEY,
                order_id    BIGINT       NOT NULL,
                title       VARCHAR(200) NOT NULL,
                quantity    BIGINT       NOT NULL,
                price_cents BIGINT       NOT NULL,
                FOREIGN KEY (order_id) REFERENCES orders (id)
            ) ENGINE = InnoDB",
        ],
    }
}
