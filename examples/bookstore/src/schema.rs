//! The tables, per database: `orders` and `order_lines` on every shard.

use crate::Result;
use crate::db::{Backend, Pool};

/// Creates the shard tables when missing.
pub async fn create_shard_tables(pool: &Pool) -> Result<()> {
    for statement in shard_ddl(pool.backend()) {
        pool.execute(&statement).await?;
    }
    Ok(())
}

/// The column types and table options of one kind of database: all that differs between
/// their DDL.
struct Dialect {
    /// Integers: keys, counts, cents.
    int: &'static str,
    /// A public ID's 16 bytes.
    public_id: &'static str,
    /// A book's title.
    text: &'static str,
    /// After a table's closing parenthesis.
    options: &'static str,
}

impl Dialect {
    fn of(backend: Backend) -> Dialect {
        match backend {
            // A key declared `INTEGER` (exactly so) is SQLite's rowid.
            Backend::Sqlite => Dialect {
                int: "INTEGER",
                public_id: "BLOB",
                text: "TEXT",
                options: "",
            },
            Backend::Postgres => Dialect {
                int: "BIGINT",
                public_id: "UUID",
                text: "TEXT",
                options: "",
            },
            Backend::MySql => Dialect {
                int: "BIGINT",
                public_id: "BINARY(16)",
                text: "VARCHAR(200)",
                options: " ENGINE = InnoDB",
            },
        }
    }
}

/// `orders` (Snowflake key, public ID, owner) and `order_lines` (hi-lo key).
fn shard_ddl(backend: Backend) -> [String; 3] {
    let Dialect {
        int,
        public_id,
        text,
        options,
    } = Dialect::of(backend);
    [
        format!(
            "CREATE TABLE IF NOT EXISTS orders (
                id          {int} NOT NULL PRIMARY KEY,
                public_id   {public_id} NOT NULL UNIQUE,
                customer_id {int} NOT NULL,
                total_cents {int} NOT NULL
            ){options}"
        ),
        "CREATE INDEX IF NOT EXISTS orders_by_customer ON orders (customer_id, id)".to_owned(),
        format!(
            "CREATE TABLE IF NOT EXISTS order_lines (
                id          {int} NOT NULL PRIMARY KEY,
                order_id    {int} NOT NULL,
                title       {text} NOT NULL,
                quantity    {int} NOT NULL,
                price_cents {int} NOT NULL,
                FOREIGN KEY (order_id) REFERENCES orders (id)
            ){options}"
        ),
    ]
}
