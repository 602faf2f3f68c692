//! idgen-seaorm from start-up to shutdown: an `orders` entity keyed by Snowflake IDs with a
//! public ID per order, order lines keyed by hi-lo IDs, on an empty database or on the one an
//! earlier run left.
//!
//! ```sh
//! cargo run -p idgen-seaorm --example seaorm_orders   # a SQLite file in the temp dir
//! cargo run -p idgen-seaorm --example seaorm_orders -- postgres://postgres@127.0.0.1/shop
//! DATABASE_URL=mysql://root@127.0.0.1/shop cargo run -p idgen-seaorm --example seaorm_orders
//! ```
//!
//! The database is the first argument, else `DATABASE_URL`, else
//! `<temp dir>/idgen-seaorm-orders.sqlite`; the first line printed says which. Every run adds
//! three orders, so run it twice and the second run starts on the tables the first one made.

use std::error::Error;
use std::process::ExitCode;

use idgen_seaorm::hilo::HiLo;
use idgen_seaorm::lease::WorkerLease;
use idgen_seaorm::{Layout, PublicId};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, Database, DatabaseConnection,
    EntityTrait, PaginatorTrait, QueryFilter, Schema,
};

/// An order: its key is a Snowflake ID (time-ordered, made in this process without a round
/// trip); the world sees only its public ID.
pub mod order {
    use idgen_seaorm::{Id, PublicId, PublicIdPrefix};
    use sea_orm::entity::prelude::*;

    /// A row of `orders`.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize)]
    #[sea_orm(table_name = "orders")]
    pub struct Model {
        /// `BIGINT` primary key, set by the application; in JSON a string.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: Id<Entity>,
        /// `uuid` / `binary(16)` / `BLOB`, unique; in JSON `"ord_01h455vb4pex5vsknk084sn02q"`.
        #[sea_orm(unique)]
        pub public_id: PublicId<Entity>,
        /// Who ordered.
        pub customer: String,
    }

    impl PublicIdPrefix for Entity {
        const PREFIX: &'static str = "ord";
    }

    /// No relations are declared; `order_lines.order_id` refers to `orders.id`.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    // Every new ActiveModel gets a fresh public ID (from the OS's random source), on every
    // insert path. With one process-wide generator (`idgen_seaorm::set_generator`),
    // `fill_ids_on_insert!(id, public_id)` would fill the key too; this example sets it itself.
    idgen_seaorm::fill_ids_on_insert!(public_id);
}

/// A line of an order, keyed by a hi-lo ID: blocks of 100 from one counter in the database.
pub mod order_line {
    use idgen_seaorm::Id;
    use sea_orm::entity::prelude::*;

    /// A row of `order_lines`.
    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize)]
    #[sea_orm(table_name = "order_lines")]
    pub struct Model {
        /// `BIGINT` primary key, from the hi-lo counter.
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: Id<Entity>,
        /// The order's key: an `Id<order::Entity>` is not an `Id<order_line::Entity>`.
        pub order_id: Id<super::order::Entity>,
        /// What was ordered.
        pub item: String,
    }

    /// No relations are declared.
    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// What one run did, for the test that runs this example.
pub type Run = example_support::Run<order::Model, order_line::Model>;

#[tokio::main]
async fn main() -> ExitCode {
    // On the URL of the first argument or DATABASE_URL, else a SQLite file; a failure is printed
    // as one paragraph (what was tried, why it failed, what to do) and the exit code is 1.
    example_support::main("idgen-seaorm-orders.sqlite", run).await
}

/// Start-up, three orders, a lookup by public ID, shutdown.
pub async fn run(url: &str) -> Result<Run, Box<dyn Error>> {
    // Start-up: connect, create the application's tables, lease a node ID, build the
    // generators. `create_if_missing(true)` creates the lease table and the hi-lo counter
    // where they do not exist yet: idempotent, and safe when several instances start at once.
    // Within 10 s, or an error that names the database tried and what to do.
    let db = example_support::connect(url, Database::connect(url)).await?;
    create_table(&db, order::Entity).await?;
    create_table(&db, order_line::Entity).await?;
    let lease = WorkerLease::options()
        .create_if_missing(true)
        .acquire(&db, &Layout::TWITTER)
        .await?;
    // The Snowflake generator on the leased node ID, and a handle to release it at shutdown.
    let (order_ids, handle) = example_support::snowflake_on(lease)?;
    // The order lines' IDs: blocks from one counter in the database.
    let line_ids = HiLo::builder(&db)
        .counter(example_support::LINE_COUNTER)
        .block(example_support::LINE_BLOCK)
        .create_if_missing(true)
        .build()
        .await?;

    // The requests, in a block of their own so that the node ID is released below even when
    // one of them fails.
    let requests = async {
        // Three orders with two lines each.
        let (mut orders, mut lines) = (Vec::new(), Vec::new());
        for (customer, items) in example_support::ORDERS {
            let order = order::ActiveModel {
                id: Set(order_ids.next_typed_id()?),
                customer: Set(customer.to_owned()),
                ..Default::default() // public_id: filled by `fill_ids_on_insert!`
            }
            .insert(&db)
            .await?;
            for item in items {
                let line = order_line::ActiveModel {
                    id: Set(line_ids.next_typed_id().await?),
                    order_id: Set(order.id),
                    item: Set(item.to_owned()),
                }
                .insert(&db)
                .await?;
                lines.push(line);
            }
            let order_lines = lines[lines.len() - 2..].iter().map(|line| line.id);
            example_support::print_order(order.public_id, order.id, customer, order_lines);
            orders.push(order);
        }

        // A request names an order by its public ID, as text from a URL; the parse is strict (a
        // `usr_…` ID, a changed letter or another spelling is refused).
        let from_url: PublicId<order::Entity> = orders[1].public_id.to_string().parse()?;
        let found = order::Entity::find()
            .filter(order::Column::PublicId.eq(from_url))
            .one(&db)
            .await?
            .ok_or_else(|| format!("order {from_url} not found"))?;
        let orders_in_table = order::Entity::find().count(&db).await?.try_into()?;
        example_support::print_found(from_url, &serde_json::to_string(&found)?, orders_in_table);
        Ok::<_, Box<dyn Error>>((orders, lines, found, orders_in_table))
    }
    .await;

    // Shutdown: give the node ID back at once (otherwise it stays taken until the lease's TTL
    // runs out), then close the connection.
    example_support::release(&handle).await?;
    let requests = requests?;
    db.close().await?;
    Ok(Run::new(handle.node(), requests))
}

/// `CREATE TABLE IF NOT EXISTS` for an entity, in the connection's SQL dialect.
async fn create_table<E: EntityTrait>(
    db: &DatabaseConnection,
    entity: E,
) -> Result<(), Box<dyn Error>> {
    let schema = Schema::new(db.get_database_backend());
    db.execute(schema.create_table_from_entity(entity).if_not_exists())
        .await?;
    Ok(())
}
