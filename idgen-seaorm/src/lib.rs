//! # idgen-seaorm
//!
//! idgen for [sea-orm](https://docs.rs/sea-orm/2) 2.0 users: everything of `idgen-engine` and
//! `idgen-core` (re-exported, so this is the one idgen crate to depend on), with [`SnowflakeId`] and
//! [`PublicId`] as entity field types, IDs filled on insert, and node-ID leases over a
//! `DatabaseConnection` ([`lease`]).
//!
//! ```toml
//! idgen-seaorm = { version = "0.1", features = ["postgres"] }   # and/or "mysql", "sqlite"
//! ```
//!
//! | feature    | turns on                                                                 |
//! |------------|--------------------------------------------------------------------------|
//! | `postgres` | sea-orm's `sqlx-postgres` and `runtime-tokio`; `Vec<SnowflakeId>` as `INT8[]` |
//! | `mysql`    | sea-orm's `sqlx-mysql` and `runtime-tokio`                                |
//! | `sqlite`   | sea-orm's `sqlx-sqlite` and `runtime-tokio` (bundled SQLite)              |
//!
//! | `lease` (default) | [`lease`]: `WorkerLease::acquire(&db, &layout)`: idgen-sqlx's lease store on the connection's sqlx pool |
//! | `hilo` (default) | [`hilo`]: `HiLo::new(&db, block)`: idgen-sqlx's counters on the connection's sqlx pool; [`set_hilo`] |
//! | `migration` | [`migration`]: sea-orm-migration migrations for both (needs a database feature) |
//!
//! Without a database feature no driver or runtime is chosen; your own sea-orm features decide.
//!
//! ## `SnowflakeId` in an entity
//!
//! `SnowflakeId` is a `BIGINT` column (`ColumnType::BigInteger`): a field of
//! `DeriveEntityModel` models, a primary key (`auto_increment = false`: the application makes
//! the ID), a foreign key, and `Option<SnowflakeId>` for `NULL`. It filters and orders like the
//! integer it is (`Column::Id.gt(id)`, `order_by_asc(Column::Id)` is creation order per
//! generator). A value read from the database that is not an ID (negative) is an error naming
//! the value (`DbErr::TryIntoErr`), never a panic.
//!
//! ## `PublicId` in an entity
//!
//! `PublicId<T>` is sea-orm's UUID column (`ColumnType::Uuid`): PostgreSQL `uuid`,
//! MySQL/MariaDB `binary(16)`, SQLite a 16-byte `BLOB`. Give it `#[sea_orm(unique)]` and look
//! rows up by it (`Column::PublicId.eq(id)`). As a primary key it works when the ActiveModel
//! sets it (as `fill_ids_on_insert!` does); sea-orm's `TryFromU64` conversion from an
//! auto-increment value is an error saying so.
//!
//! ## IDs filled on insert
//!
//! Set a process-wide generator once with [`set_generator`] and write
//! [`fill_ids_on_insert!`]`(id, public_id)` in the entity module (any fields of [`GeneratedId`]
//! types: `SnowflakeId` from the generator, `PublicId` from the OS random source, and with
//! feature `hilo` an `i64` from the process-wide [`HiLo`] of [`set_hilo`]).
//! sea-orm has two insert paths, and a generated ID must reach both; the macro writes both
//! hooks:
//!
//! | how the row is inserted | filled by |
//! |---|---|
//! | `am.insert(db)`, `am.save(db)` (the ActiveModel path; runs `before_save`) | [`fill_async()`] in `before_save`, or [`preset()`] in `new()` |
//! | `Entity::insert(am).exec(db)`, `Entity::insert_many(ams)` (bypass `before_save`) | [`preset()`] in `new()`, only |
//!
//! `ActiveModel::new()`, `ActiveModel::default()` and `ActiveModel { .., ..Default::default() }`
//! all call `ActiveModelBehavior::new()`, so an ID set there is on every ActiveModel built that
//! way. What is **not** covered: an ActiveModel whose ID is `NotSet` (built with
//! `ActiveModelTrait::default()`, which bypasses `new()`, or reset by hand) passed to
//! `Entity::insert`/`insert_many`. PostgreSQL and MariaDB/MySQL then reject the row (no value
//! for the primary key); **SQLite accepts it**, because sea-orm creates a `BigInteger` primary
//! key as `integer PRIMARY KEY`, a rowid alias, and SQLite assigns the largest ID + 1 itself.
//! `Model::into_active_model()` keeps the model's own ID. A hi-lo `i64` is taken in `new()`
//! only if one is in memory (the engine refills ahead of need); for large `insert_many` batches
//! take a contiguous range with `HiLo::reserve(n)` and set the IDs yourself.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! mod order {
//!     use idgen_seaorm::{PublicId, PublicIdPrefix, SnowflakeId};
//!     use sea_orm::entity::prelude::*;
//!
//!     pub struct Order;
//!     impl PublicIdPrefix for Order {
//!         const PREFIX: &'static str = "ord";
//!     }
//!
//!     #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
//!     #[sea_orm(table_name = "orders")]
//!     pub struct Model {
//!         #[sea_orm(primary_key, auto_increment = false)]
//!         pub id: SnowflakeId,
//!         #[sea_orm(unique)]
//!         pub public_id: PublicId<Order>,
//!         pub customer: String,
//!         pub parent: Option<SnowflakeId>,
//!     }
//!
//!     #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
//!     pub enum Relation {}
//!
//!     idgen_seaorm::fill_ids_on_insert!(id, public_id);
//! }
//!
//! use idgen_seaorm::{Layout, Snowflake};
//! use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, Database, EntityTrait, QueryFilter, Schema};
//!
//! idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 7)?)?;
//! let db = Database::connect("sqlite::memory:").await?;
//! db.execute(&Schema::new(db.get_database_backend()).create_table_from_entity(order::Entity)).await?;
//!
//! let first = order::ActiveModel { customer: Set("Ada".into()), ..Default::default() }
//!     .insert(&db)
//!     .await?;
//! order::Entity::insert_many((0..3).map(|_| order::ActiveModel {
//!     customer: Set("Grace".into()),
//!     parent: Set(Some(first.id)),
//!     ..Default::default()
//! }))
//! .exec(&db)
//! .await?;
//!
//! let all = order::Entity::find().all(&db).await?;
//! assert_eq!(all.len(), 4);
//! assert_eq!(order::Entity::find_by_id(first.id).one(&db).await?.as_ref(), Some(&first));
//! let by_public_id = order::Entity::find()
//!     .filter(order::Column::PublicId.eq(first.public_id))
//!     .one(&db)
//!     .await?;
//! assert_eq!(by_public_id, Some(first));
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod behavior;
mod error;
mod fill;
#[cfg(feature = "hilo")]
mod fill_hilo;
#[cfg(feature = "hilo")]
#[cfg_attr(docsrs, doc(cfg(feature = "hilo")))]
pub mod hilo;
#[cfg(feature = "lease")]
#[cfg_attr(docsrs, doc(cfg(feature = "lease")))]
pub mod lease;
#[cfg(feature = "migration")]
#[cfg_attr(docsrs, doc(cfg(feature = "migration")))]
pub mod migration;
#[cfg(any(feature = "lease", feature = "hilo"))]
mod pool;

pub use error::Error;
#[cfg(any(feature = "lease", feature = "hilo"))]
pub use pool::SeaOrmPool;

#[cfg(any(feature = "lease", feature = "hilo"))]
/// Marks idgen's implementations for `DatabaseConnection` (`IntoLeaseStore`,
/// `IntoHiLoSource`), so that `WorkerLease::acquire(&db, &layout)` and `HiLo::new(&db, block)`
/// take one. Never named by callers.
///
/// ```
/// # #[cfg(all(feature = "sqlite", feature = "lease"))]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::lease::{create_lease_table, WorkerLease};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// create_lease_table(&db).await?;
/// let by_reference = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&db, &idgen_seaorm::Layout::TWITTER).await?;
/// let by_value = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(db.clone(), &idgen_seaorm::Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(all(feature = "sqlite", feature = "lease")))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub enum SeaOrmMarker {}

/// The former name of [`SeaOrmMarker`].
#[deprecated(note = "renamed `SeaOrmMarker`: each adapter's marker is named `…Marker`")]
pub type SeaOrmConnection = SeaOrmMarker;

pub use fill::{GeneratedId, fill, fill_async, next_id, next_id_async, preset, set_generator};
#[cfg(feature = "hilo")]
pub use fill_hilo::{fill_from_hilo, set_hilo};
/// `idgen_engine::Error` (the errors of leases, hi-lo and their stores, and of the generator
/// through `EngineErrorKind::Id`), named apart from this crate's own [`Error`].
pub use idgen_engine::Error as EngineError;
/// `idgen_engine::ErrorKind`, what an [`EngineError`] holds (its `kind()`), to match on.
pub use idgen_engine::ErrorKind as EngineErrorKind;
pub use idgen_engine::*;

#[doc(hidden)]
pub mod __private {
    pub use sea_orm;
}

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(all(doctest, feature = "sqlite", feature = "lease", feature = "hilo"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
