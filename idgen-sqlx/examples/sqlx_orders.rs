//! idgen-sqlx from start-up to shutdown: an `orders` table keyed by Snowflake IDs with a public
//! ID per order, order lines keyed by hi-lo IDs, on an empty database or on the one an earlier
//! run left.
//!
//! ```sh
//! cargo run -p idgen-sqlx --example sqlx_orders   # a SQLite file in the temp dir
//! cargo run -p idgen-sqlx --example sqlx_orders -- postgres://postgres@127.0.0.1/shop
//! DATABASE_URL=mysql://root@127.0.0.1/shop cargo run -p idgen-sqlx --example sqlx_orders
//! ```
//!
//! The database is the first argument, else `DATABASE_URL`, else
//! `<temp dir>/idgen-sqlx-orders.sqlite`; the first line printed says which. Every run adds three
//! orders, so run it twice and the second run starts on the tables the first one made.

use std::error::Error;
use std::process::ExitCode;

use example_support::connect;
use idgen_sqlx::hilo::HiLo;
use idgen_sqlx::lease::WorkerLease;
use idgen_sqlx::{Id, Layout, PublicId, PublicIdPrefix};
use sqlx::{AssertSqlSafe, MySqlPool, PgPool, SqlitePool};

/// An order: its key is a Snowflake ID (time-ordered, made in this process without a round
/// trip); the world sees only its public ID.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize)]
pub struct Order {
    /// `BIGINT` primary key; in JSON a string: `"112719806108546862"`.
    pub id: Id<Order>,
    /// `UUID` / `BINARY(16)` / `BLOB`, unique; in JSON `"ord_01h455vb4pex5vsknk084sn02q"`.
    pub public_id: PublicId<Order>,
    /// Who ordered.
    pub customer: String,
}

impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

/// A line of an order, keyed by a hi-lo ID: blocks of 100 from one counter in the database.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize)]
pub struct OrderLine {
    /// `BIGINT` primary key, from the hi-lo counter.
    pub id: Id<OrderLine>,
    /// The order's key.
    pub order_id: Id<Order>,
    /// What was ordered.
    pub item: String,
}

/// What one run did, for the test that runs this example.
pub type Run = example_support::Run<Order, OrderLine>;

#[tokio::main]
async fn main() -> ExitCode {
    // On the URL of the first argument or DATABASE_URL, else a SQLite file; a failure is printed
    // as one paragraph (what was tried, why it failed, what to do) and the exit code is 1.
    example_support::main("idgen-sqlx-orders.sqlite", run).await
}

/// A pool of the kind the URL names. An application with one database uses its pool directly;
/// this example runs on all three.
pub enum Db {
    /// SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
    /// MySQL or MariaDB.
    MySql(MySqlPool),
}

/// Runs `$body` with `$pool` bound to the concrete pool (`&SqlitePool`, `&PgPool`, `&MySqlPool`).
macro_rules! on_db {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::Postgres($pool) => $body,
            Db::MySql($pool) => $body,
        }
    };
}

/// Start-up, three orders, a lookup by public ID, shutdown.
pub async fn run(url: &str) -> Result<Run, Box<dyn Error>> {
    // Start-up: connect, create the application's tables, lease a node ID, build the
    // generators. `create_if_missing(true)` creates the lease table and the hi-lo counter
    // where they do not exist yet: idempotent, and safe when several instances start at once.
    let db = Db::connect(url).await?;
    db.create_tables().await?;
    let lease = on_db!(&db, pool => {
        WorkerLease::options()
            .create_if_missing(true)
            .acquire(pool, &Layout::TWITTER)
            .await?
    });
    // The Snowflake generator on the leased node ID, and a handle to release it at shutdown.
    let (order_ids, handle) = example_support::snowflake_on(lease)?;
    // The order lines' IDs: blocks from one counter in the database.
    let line_ids = on_db!(&db, pool => {
        HiLo::builder(pool).counter(example_support::LINE_COUNTER).block(example_support::LINE_BLOCK).create_if_missing(true).build().await?
    });

    // The requests, in a block of their own so that the node ID is released below even when
    // one of them fails.
    let requests = async {
        // Three orders with two lines each.
        let (mut orders, mut lines) = (Vec::new(), Vec::new());
        for (customer, items) in example_support::ORDERS {
            let order = Order {
                id: order_ids.next_typed_id()?,
                public_id: PublicId::new(),
                customer: customer.to_owned(),
            };
            db.insert_order(&order).await?;
            for item in items {
                let line = OrderLine {
                    id: line_ids.next_typed_id().await?,
                    order_id: order.id,
                    item: item.to_owned(),
                };
                db.insert_line(&line).await?;
                lines.push(line);
            }
            let order_lines = lines[lines.len() - 2..].iter().map(|line| line.id);
            example_support::print_order(order.public_id, order.id, customer, order_lines);
            orders.push(order);
        }

        // A request names an order by its public ID, as text from a URL; the parse is strict (a
        // `usr_…` ID, a changed letter or another spelling is refused).
        let from_url: PublicId<Order> = orders[1].public_id.to_string().parse()?;
        let found = db
            .find_order(from_url)
            .await?
            .ok_or_else(|| format!("order {from_url} not found"))?;
        let orders_in_table = db.count_orders().await?;
        example_support::print_found(from_url, &serde_json::to_string(&found)?, orders_in_table);
        Ok::<_, Box<dyn Error>>((orders, lines, found, orders_in_table))
    }
    .await;

    // Shutdown: give the node ID back at once (otherwise it stays taken until the lease's TTL
    // runs out), then close the pool.
    example_support::release(&handle).await?;
    let requests = requests?;
    db.close().await;
    Ok(Run::new(handle.node(), requests))
}

impl Db {
    /// A pool, within 10 s, or an error that names the database tried and what to do.
    async fn connect(url: &str) -> Result<Db, Box<dyn Error>> {
        Ok(match url.split(':').next() {
            Some("sqlite") => Db::Sqlite(connect(url, SqlitePool::connect(url)).await?),
            Some("postgres" | "postgresql") => {
                Db::Postgres(connect(url, PgPool::connect(url)).await?)
            }
            Some("mysql" | "mariadb") => Db::MySql(connect(url, MySqlPool::connect(url)).await?),
            scheme => {
                let scheme = scheme.unwrap_or_default();
                return Err(format!("{scheme}: is not sqlite:, postgres: or mysql:").into());
            }
        })
    }

    /// The application's tables, where missing.
    async fn create_tables(&self) -> Result<(), Box<dyn Error>> {
        let (public_id, text) = match self {
            Db::Sqlite(_) => ("BLOB", "TEXT"),
            Db::Postgres(_) => ("UUID", "TEXT"),
            Db::MySql(_) => ("BINARY(16)", "VARCHAR(255)"),
        };
        self.execute(format!(
            "CREATE TABLE IF NOT EXISTS orders (
                 id        BIGINT PRIMARY KEY,
                 public_id {public_id} NOT NULL UNIQUE,
                 customer  {text} NOT NULL
             )"
        ))
        .await?;
        self.execute(format!(
            "CREATE TABLE IF NOT EXISTS order_lines (
                 id       BIGINT PRIMARY KEY,
                 order_id BIGINT NOT NULL REFERENCES orders (id),
                 item     {text} NOT NULL
             )"
        ))
        .await
    }

    async fn insert_order(&self, order: &Order) -> Result<(), sqlx::Error> {
        let sql = self.sql("INSERT INTO orders (id, public_id, customer) VALUES (?, ?, ?)");
        on_db!(self, pool => {
            sqlx::query(AssertSqlSafe(sql))
                .bind(order.id)
                .bind(order.public_id)
                .bind(&order.customer)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    async fn insert_line(&self, line: &OrderLine) -> Result<(), sqlx::Error> {
        let sql = self.sql("INSERT INTO order_lines (id, order_id, item) VALUES (?, ?, ?)");
        on_db!(self, pool => {
            sqlx::query(AssertSqlSafe(sql))
                .bind(line.id)
                .bind(line.order_id)
                .bind(&line.item)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    async fn find_order(&self, public_id: PublicId<Order>) -> Result<Option<Order>, sqlx::Error> {
        let sql = self.sql("SELECT id, public_id, customer FROM orders WHERE public_id = ?");
        on_db!(self, pool => {
            sqlx::query_as(AssertSqlSafe(sql)).bind(public_id).fetch_optional(pool).await
        })
    }

    async fn count_orders(&self) -> Result<i64, sqlx::Error> {
        on_db!(self, pool => {
            sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(pool).await
        })
    }

    async fn execute(&self, sql: String) -> Result<(), Box<dyn Error>> {
        on_db!(self, pool => { sqlx::query(AssertSqlSafe(sql)).execute(pool).await?; });
        Ok(())
    }

    /// `sql` with `?` placeholders as this database wants them (`$1, $2, …` on PostgreSQL).
    fn sql(&self, sql: &str) -> String {
        if !matches!(self, Db::Postgres(_)) {
            return sql.to_owned();
        }
        let mut numbered = String::new();
        for (n, part) in sql.split('?').enumerate() {
            if n > 0 {
                numbered.push_str(&format!("${n}"));
            }
            numbered.push_str(part);
        }
        numbered
    }

    async fn close(&self) {
        on_db!(self, pool => pool.close().await)
    }
}
