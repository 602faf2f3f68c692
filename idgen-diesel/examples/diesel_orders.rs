//! idgen-diesel from start-up to shutdown: an orders table keyed by Snowflake IDs with a
//! public ID per order, order lines keyed by hi-lo IDs, on an empty database or on the one an
//! earlier run left.
//!
//! ```sh
//! cargo run -p idgen-diesel --example diesel_orders   # a SQLite file in the temp dir
//! cargo run -p idgen-diesel --example diesel_orders -- postgres://postgres@127.0.0.1/shop
//! DATABASE_URL=mysql://root@127.0.0.1/shop cargo run -p idgen-diesel --example diesel_orders
//! ```
//!
//! The database is the first argument, else `DATABASE_URL`, else
//! `<temp dir>/idgen-diesel-orders.sqlite`; the first line printed says which. Every run adds
//! three orders, so run it twice and the second run starts on the tables the first one made.

use std::error::Error;
use std::process::ExitCode;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use example_support::CONNECT_TIMEOUT;
use idgen_diesel::hilo::HiLo;
use idgen_diesel::lease::WorkerLease;
use idgen_diesel::{DieselConnection, DieselPool, Id, Layout, PublicId, PublicIdPrefix};

// The tables are named apart from the sqlx and sea-orm examples' `orders` and `order_lines`,
// whose public IDs are `UUID` on PostgreSQL: one `table!` serves all three databases here, so
// the public ID is `Binary` (`BYTEA`), and both examples can run on one database.
diesel::table! {
    /// Orders.
    diesel_orders (id) {
        /// The order's Snowflake ID.
        id -> BigInt,
        /// Its public ID: 16 bytes. (A PostgreSQL-only application would declare `Uuid`, for a
        /// `UUID` column.)
        public_id -> Binary,
        /// Who ordered.
        customer -> Text,
    }
}

diesel::table! {
    /// Lines of orders.
    diesel_order_lines (id) {
        /// The line's hi-lo ID.
        id -> BigInt,
        /// The order's Snowflake ID.
        order_id -> BigInt,
        /// What was ordered.
        item -> Text,
    }
}

/// An order: its key is a Snowflake ID (time-ordered, made in this process without a round
/// trip); the world sees only its public ID.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, serde::Serialize)]
#[diesel(table_name = diesel_orders)]
pub struct Order {
    /// `BIGINT` primary key; in JSON a string: `"112719806108546862"`.
    pub id: Id<Order>,
    /// 16 bytes (`BYTEA` / `BINARY(16)` / `BLOB`), unique; in JSON
    /// `"ord_01h455vb4pex5vsknk084sn02q"`.
    pub public_id: PublicId<Order>,
    /// Who ordered.
    pub customer: String,
}

impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

/// A line of an order, keyed by a hi-lo ID: blocks of 100 from one counter in the database.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, serde::Serialize)]
#[diesel(table_name = diesel_order_lines)]
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
    example_support::main("idgen-diesel-orders.sqlite", run).await
}

/// Runs the example on the database of `url`, with diesel's connection type for it.
pub async fn run(url: &str) -> Result<Run, Box<dyn Error>> {
    match url.split_once("://") {
        // diesel takes a file name for SQLite (sqlx's `?mode=rwc` is dropped: diesel creates it).
        Some(("sqlite", path)) => {
            run_on::<SqliteConnection>(url, path.split('?').next().unwrap_or(path)).await
        }
        Some(("postgres" | "postgresql", _)) => run_on::<PgConnection>(url, url).await,
        Some(("mysql" | "mariadb", _)) => run_on::<MysqlConnection>(url, url).await,
        _ => Err("the URL is not sqlite://, postgres:// or mysql://".into()),
    }
}

/// Start-up, three orders, a lookup by public ID, shutdown.
async fn run_on<C: AppConnection>(url: &str, diesel_url: &str) -> Result<Run, Box<dyn Error>> {
    // Start-up: connect, create the application's tables, lease a node ID, build the
    // generators. `create_if_missing(true)` creates the lease table and the hi-lo counter
    // where they do not exist yet: idempotent, and safe when several instances start at once.
    //
    // One connection first, within 10 s: a refused port or a missing database is reported at
    // once, naming the database tried and what to do (r2d2 would retry until its timeout).
    example_support::connect(url, establish::<C>(diesel_url)).await?;
    let pool: DieselPool<C> = Pool::builder()
        .connection_timeout(CONNECT_TIMEOUT)
        .connection_customizer(Box::new(OnConnect))
        .build(ConnectionManager::new(diesel_url))?;
    C::create_tables(&mut *pool.get()?)?;
    let lease = WorkerLease::options()
        .create_if_missing(true)
        .acquire(&pool, &Layout::TWITTER)
        .await?;
    // The Snowflake generator on the leased node ID, and a handle to release it at shutdown.
    let (order_ids, handle) = example_support::snowflake_on(lease)?;
    // The order lines' IDs: blocks from one counter in the database.
    let line_ids = HiLo::builder(&pool)
        .counter(example_support::LINE_COUNTER)
        .block(example_support::LINE_BLOCK)
        .create_if_missing(true)
        .build()
        .await?;

    // The requests, in a block of their own so that the node ID is released below even when
    // one of them fails.
    let requests = async {
        // Three orders with two lines each. (diesel's calls block; a service would run
        // them with `tokio::task::spawn_blocking`, or use diesel-async.)
        let (mut orders, mut lines) = (Vec::new(), Vec::new());
        for (customer, items) in example_support::ORDERS {
            let order = Order {
                id: order_ids.next_typed_id()?,
                public_id: PublicId::new(),
                customer: customer.to_owned(),
            };
            let mut order_lines = Vec::new();
            for item in items {
                order_lines.push(OrderLine {
                    id: line_ids.next_typed_id().await?,
                    order_id: order.id,
                    item: item.to_owned(),
                });
            }
            C::insert_order(&mut *pool.get()?, &order, &order_lines)?;
            let ids = [order_lines[0].id, order_lines[1].id];
            example_support::print_order(order.public_id, order.id, customer, ids);
            orders.push(order);
            lines.extend(order_lines);
        }

        // A request names an order by its public ID, as text from a URL; the parse is strict (a
        // `usr_…` ID, a changed letter or another spelling is refused).
        let from_url: PublicId<Order> = orders[1].public_id.to_string().parse()?;
        let found = C::find_order(&mut *pool.get()?, from_url)?
            .ok_or_else(|| format!("order {from_url} not found"))?;
        let orders_in_table = C::count_orders(&mut *pool.get()?)?;
        example_support::print_found(from_url, &serde_json::to_string(&found)?, orders_in_table);
        Ok::<_, Box<dyn Error>>((orders, lines, found, orders_in_table))
    }
    .await;

    // Shutdown: give the node ID back at once (otherwise it stays taken until the lease's TTL
    // runs out).
    example_support::release(&handle).await?;
    let requests = requests?;
    Ok(Run::new(handle.node(), requests))
}

/// What the example does with a connection. diesel type-checks each query for one backend, so
/// the queries are written once (in `app_connection!`) and implemented for each connection type;
/// an application with one database writes them as plain functions.
trait AppConnection: DieselConnection {
    /// Readies a new connection: on SQLite, wait up to 5 s for the one writer (the lease
    /// renewals and hi-lo refills write in the background) instead of failing at once with
    /// "database is locked".
    fn on_connect(conn: &mut Self) -> QueryResult<()>;
    /// The tables `diesel_orders` and `diesel_order_lines`, where missing.
    fn create_tables(conn: &mut Self) -> QueryResult<()>;
    /// One order and its lines, in one transaction.
    fn insert_order(conn: &mut Self, order: &Order, lines: &[OrderLine]) -> QueryResult<()>;
    /// The order with this public ID.
    fn find_order(conn: &mut Self, public_id: PublicId<Order>) -> QueryResult<Option<Order>>;
    /// How many orders there are.
    fn count_orders(conn: &mut Self) -> QueryResult<i64>;
}

macro_rules! app_connection {
    (
        $connection:ty,
        on_connect: $on_connect:literal,
        public_id: $public_id:literal,
        text: $text:literal
    ) => {
        impl AppConnection for $connection {
            fn on_connect(conn: &mut Self) -> QueryResult<()> {
                if !$on_connect.is_empty() {
                    diesel::sql_query($on_connect).execute(conn)?;
                }
                Ok(())
            }

            fn create_tables(conn: &mut Self) -> QueryResult<()> {
                diesel::sql_query(concat!(
                    "CREATE TABLE IF NOT EXISTS diesel_orders (id BIGINT PRIMARY KEY, public_id ",
                    $public_id,
                    " NOT NULL UNIQUE, customer ",
                    $text,
                    " NOT NULL)"
                ))
                .execute(conn)?;
                diesel::sql_query(concat!(
                    "CREATE TABLE IF NOT EXISTS diesel_order_lines (id BIGINT PRIMARY KEY, ",
                    "order_id BIGINT NOT NULL REFERENCES diesel_orders (id), item ",
                    $text,
                    " NOT NULL)"
                ))
                .execute(conn)?;
                Ok(())
            }

            fn insert_order(
                conn: &mut Self,
                order: &Order,
                lines: &[OrderLine],
            ) -> QueryResult<()> {
                conn.transaction(|conn| {
                    diesel::insert_into(diesel_orders::table)
                        .values(order)
                        .execute(conn)?;
                    diesel::insert_into(diesel_order_lines::table)
                        .values(lines)
                        .execute(conn)?;
                    Ok(())
                })
            }

            fn find_order(
                conn: &mut Self,
                public_id: PublicId<Order>,
            ) -> QueryResult<Option<Order>> {
                diesel_orders::table
                    .filter(diesel_orders::public_id.eq(public_id))
                    .select(Order::as_select())
                    .first(conn)
                    .optional()
            }

            fn count_orders(conn: &mut Self) -> QueryResult<i64> {
                diesel_orders::table.count().get_result(conn)
            }
        }
    };
}

app_connection!(
    SqliteConnection,
    on_connect: "PRAGMA busy_timeout = 5000",
    public_id: "BLOB",
    text: "TEXT"
);
app_connection!(PgConnection, on_connect: "", public_id: "BYTEA", text: "TEXT");
app_connection!(MysqlConnection, on_connect: "", public_id: "BINARY(16)", text: "VARCHAR(255)");

/// Runs [`AppConnection::on_connect`] on each connection the pool opens.
#[derive(Debug)]
struct OnConnect;

impl<C: AppConnection> CustomizeConnection<C, diesel::r2d2::Error> for OnConnect {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        C::on_connect(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// `C::establish(url)` on a thread of its own, as it blocks. (Not tokio's `spawn_blocking`: a
/// connection attempt given up at the deadline would hold the runtime's shutdown until it ends.)
async fn establish<C: Connection + Send + 'static>(url: &str) -> Result<C, ConnectionError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let url = url.to_owned();
    std::thread::spawn(move || sender.send(C::establish(&url)));
    receiver.await.unwrap_or_else(|_| {
        Err(ConnectionError::BadConnection(
            "the connecting thread ended".into(),
        ))
    })
}
