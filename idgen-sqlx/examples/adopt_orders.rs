//! Adopting idgen on tables that already have rows:
//! `cargo run -p idgen-sqlx --example adopt_orders -- postgres://…` (or `mysql://…`, MariaDB).
//!
//! It creates the bookstore's `orders` and `order_lines` the way an application without idgen
//! would (plain identity / `AUTO_INCREMENT` keys, no public ID; named `legacy_orders` and
//! `legacy_order_lines` here so they meet no other example's tables), fills them, and adopts
//! `legacy_orders`: Snowflake keys above every old key from now on, and a public ID for every
//! row, old and new, added online (`idgen adopt apply --public-id public_id` does the same
//! from the command line). Then it places an order the idgen way and looks an old one up by the
//! public ID an API would show. Run again, it finds the tables adopted and changes nothing
//! but the new order.

use std::error::Error;
use std::process::ExitCode;

use idgen_sqlx::adopt::{self, AdoptOptions, AdoptionPlan, Progress};
use idgen_sqlx::lease::WorkerLease;
use idgen_sqlx::{Layout, PublicId, PublicIdPrefix, SnowflakeId};
use sqlx::{MySqlPool, PgPool};

/// An order as an API shows it: the key stays internal; the public ID goes in URLs.
#[derive(Debug, serde::Serialize, sqlx::FromRow)]
pub struct Order {
    /// The internal key (old rows: the identity's; new ones: a Snowflake ID).
    pub id: i64,
    /// What URLs and clients see (`ord_…`).
    pub public_id: PublicId<Order>,
    /// Who placed it.
    pub customer_id: i64,
    /// Its total.
    pub total_cents: i64,
}

impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

/// Orders the legacy application placed before the adoption (three lines each).
pub const LEGACY_ORDERS: i64 = 5000;

/// What a run did.
#[derive(Debug)]
pub struct Adopted {
    /// The plan as it stood after apply (every step done).
    pub plan: AdoptionPlan,
    /// Rows the backfill gave a public ID in this run (0 when run again).
    pub backfilled: u64,
    /// The order placed with idgen.
    pub placed: Order,
    /// An old order, found by its public ID.
    pub found: Order,
}

#[tokio::main]
async fn main() -> ExitCode {
    let url = match (std::env::args().nth(1), std::env::var("DATABASE_URL")) {
        (Some(url), _) | (None, Ok(url)) => url,
        (None, Err(_)) => String::new(),
    };
    example_support::exit(run(&url).await.map(|_| ()))
}

/// The SQL that differs between the two databases.
struct Sql {
    legacy_schema: [&'static str; 2],
    fill: [&'static str; 2],
    insert: &'static str,
    by_public_id: &'static str,
}

const POSTGRES: Sql = Sql {
    legacy_schema: [
        "CREATE TABLE IF NOT EXISTS legacy_orders (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
         customer_id BIGINT NOT NULL, total_cents BIGINT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS legacy_order_lines (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
         order_id BIGINT NOT NULL REFERENCES legacy_orders (id), title TEXT NOT NULL, quantity BIGINT NOT NULL, price_cents BIGINT NOT NULL)",
    ],
    fill: [
        "INSERT INTO legacy_orders (customer_id, total_cents) SELECT 1 + g % 500, 1200 * 3 FROM generate_series(1, 5000) AS g",
        "INSERT INTO legacy_order_lines (order_id, title, quantity, price_cents) \
         SELECT o.id, 'Book ' || n, 1, 1200 FROM legacy_orders AS o, generate_series(1, 3) AS n",
    ],
    insert: "INSERT INTO legacy_orders (id, public_id, customer_id, total_cents) VALUES ($1, $2, $3, $4)",
    by_public_id: "SELECT id, public_id, customer_id, total_cents FROM legacy_orders WHERE public_id = $1",
};

const MARIADB: Sql = Sql {
    legacy_schema: [
        "CREATE TABLE IF NOT EXISTS legacy_orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         customer_id BIGINT NOT NULL, total_cents BIGINT NOT NULL) ENGINE = InnoDB",
        "CREATE TABLE IF NOT EXISTS legacy_order_lines (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         order_id BIGINT NOT NULL, title VARCHAR(200) NOT NULL, quantity BIGINT NOT NULL, price_cents BIGINT NOT NULL, \
         FOREIGN KEY (order_id) REFERENCES legacy_orders (id)) ENGINE = InnoDB",
    ],
    fill: [
        "INSERT INTO legacy_orders (customer_id, total_cents) SELECT 1 + seq % 500, 1200 * 3 FROM seq_1_to_5000",
        "INSERT INTO legacy_order_lines (order_id, title, quantity, price_cents) \
         SELECT o.id, CONCAT('Book ', n.seq), 1, 1200 FROM legacy_orders AS o, seq_1_to_3 AS n",
    ],
    insert: "INSERT INTO legacy_orders (id, public_id, customer_id, total_cents) VALUES (?, ?, ?, ?)",
    by_public_id: "SELECT id, public_id, customer_id, total_cents FROM legacy_orders WHERE public_id = ?",
};

/// The run on one pool (a macro: the same code on `PgPool` and `MySqlPool`).
macro_rules! adopt_on {
    ($pool:expr, $sql:expr) => {{
        let (pool, sql) = ($pool, $sql);
    // The application as it was: identity keys, no public ID.
    for ddl in sql.legacy_schema {
        sqlx::raw_sql(ddl).execute(pool).await?;
    }
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM legacy_orders")
        .fetch_one(pool)
        .await?;
    if rows == 0 {
        for fill in sql.fill {
            sqlx::raw_sql(fill).execute(pool).await?;
        }
        println!("legacy tables filled: {LEGACY_ORDERS} orders, 3 lines each");
    }

    // The adoption: plan (changes nothing), then apply (resumable; run again, it changes nothing).
    let options = AdoptOptions::snowflake("legacy_orders", Layout::TWITTER)?.public_id("public_id")?;
    let planned = adopt::plan(pool, &options).await?;
    let to_do: Vec<&str> = planned.steps.iter().filter(|s| !s.done).map(|s| s.name).collect();
    println!("adopting legacy_orders (largest key {}): {to_do:?} to do", planned.max_key);
    let mut backfilled = 0;
    let plan = adopt::apply_with_progress(pool, &options, |p: &Progress| backfilled = p.rows).await?;
    println!("adopted: every step done; {backfilled} rows got a public ID in this run");

    // From now on the application writes keys from its Snowflake generator (on a leased node
    // ID) and a public ID of its own; every key is above the legacy ones.
    let lease = WorkerLease::options()
        .create_if_missing(true)
        .acquire(pool, &Layout::TWITTER)
        .await?;
    let (ids, handle) = example_support::snowflake_on(lease)?;
    let id: SnowflakeId = ids.next_id()?;
    let placed = Order {
        id: i64::try_from(id.get())?,
        public_id: PublicId::new(),
        customer_id: 7,
        total_cents: 2400,
    };
    sqlx::query(sql.insert)
        .bind(placed.id)
        .bind(placed.public_id)
        .bind(placed.customer_id)
        .bind(placed.total_cents)
        .execute(pool)
        .await?;
    println!("placed order {} as {}: {}", placed.id, placed.public_id, serde_json::to_string(&placed)?);
    example_support::release(&handle).await?;

    // An old order, as a client finds it: by the public ID in its URL.
    let first: PublicId<Order> = sqlx::query_scalar("SELECT public_id FROM legacy_orders WHERE id = 1")
        .fetch_one(pool)
        .await?;
    let url = format!("/orders/{first}");
    let url_id: PublicId<Order> = url.trim_start_matches("/orders/").parse()?;
    let found: Order = sqlx::query_as(sql.by_public_id).bind(url_id).fetch_one(pool).await?;
    println!("GET {url} -> {}", serde_json::to_string(&found)?);
    Ok::<_, Box<dyn Error>>(Adopted {
        plan,
        backfilled,
        placed,
        found,
    })
    }};
}

/// Creates and fills the legacy tables (when missing), adopts `legacy_orders`, places an
/// order with a Snowflake key and finds an old one by its public ID.
pub async fn run(url: &str) -> Result<Adopted, Box<dyn Error>> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let pool = example_support::connect(url, PgPool::connect(url)).await?;
        adopt_on!(&pool, POSTGRES)
    } else if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        let pool = example_support::connect(url, MySqlPool::connect(url)).await?;
        adopt_on!(&pool, MARIADB)
    } else {
        Err("adopting a table runs on PostgreSQL or MariaDB (online schema changes and sequences): pass a postgres://… or mysql://… URL \
             as the first argument or in DATABASE_URL"
            .into())
    }
}
