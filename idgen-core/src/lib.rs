//! # idgen-core
//!
//! The ID values and generators of idgen, with no database and no async runtime by default:
//!
//! * **Snowflake IDs** ([`SnowflakeId`], [`snowflake`]): a 63-bit, time-ordered ID made by a
//!   [`Snowflake`] generator under a [`Layout`] (Twitter, Sonyflake, Instagram, the 53-bit
//!   [`Layout::JS_SAFE`], one [`Layout::plan`] finds for your node count, rate and lifetime, or
//!   your own), with no round trip; it serializes as a JSON string so JavaScript never rounds
//!   it.
//! * **Public IDs** ([`public_id`]): [`PublicId<T>`] and [`AnyPublicId`], TypeID-style random
//!   IDs for the outside world (`ord_01h455vb4pex5vsknk084sn02q`), with the prefix known at
//!   compile time or only at run time; [`IdCodec`] (feature `id-codec`) enciphers an internal
//!   ID into the same shape instead.
//! * **UUIDv7** ([`uuid7`]): [`Uuid7Generator`], monotonic time-ordered UUIDs.
//!
//! Around them: [`Id<T>`], a 64-bit ID tagged with its entity type (`Id<Order>` is not
//! `Id<Customer>`), handed out by [`Snowflake::next_typed_id`]; [`serde_string`] (feature
//! `serde`) for plain `i64`/`u64` fields that travel as JSON strings; [`Clock`],
//! [`SystemClock`] and [`ManualClock`], the time source of a generator; [`Fence`] and
//! [`NodeLease`], the seam a node-ID lease plugs into; [`uuid`], the `uuid` crate, re-exported.
//!
//! What coordinates processes lives in other crates: node-ID leases (`WorkerLease`) and hi-lo
//! blocks (`HiLo`) in `idgen-engine`; the SQL they run in `idgen-sql`; the stores and sources
//! for each database in `idgen-sqlx`, `idgen-diesel`, `idgen-seaorm`, `idgen-etcd` and
//! `idgen-redis`, each of which re-exports this crate.
//!
//! | feature | default | adds |
//! |---|---|---|
//! | `std` | yes | nothing yet (a `no_std` build may come without a break) |
//! | `serde` | yes | serde for every ID type (IDs as strings); [`serde_string`], [`serde_as_number`] |
//! | `id-codec` | yes | [`IdCodec`], [`CodecKey`] (AES-256) |
//! | `tokio` | | async waits for the next tick without blocking a runtime thread |
//! | `metrics`, `tracing` | | operator metrics and events ([`observe`]) |
//! | `jiff`, `chrono`, `time` | | decoded instants as those crates' types |
//! | `schemars`, `utoipa` | | JSON Schema / OpenAPI schemas for the ID types |
//! | `sqlx`, `sqlx-postgres`, `sqlx-mysql`, `sqlx-sqlite` | | sqlx 0.9 column types |
//! | `diesel`, `diesel-postgres`, `diesel-mysql`, `diesel-sqlite` | | diesel 2.3 column types |
//! | `sea-orm`, `sea-orm-postgres-array` | | sea-orm 2.0 column types |
//!
//! [`Error`] is this crate's error: parsing, decoding, layouts, clocks, fences.
//!
//! The database column types for sqlx, diesel and sea-orm live here behind features (Rust's
//! orphan rule allows them nowhere else); applications depend on `idgen-sqlx`, `idgen-diesel` or
//! `idgen-seaorm`, which turn those features on and re-export this crate.
//!
//! ```
//! use idgen_core::{Layout, Snowflake, SnowflakeId};
//!
//! let ids = Snowflake::new(Layout::TWITTER, 7)?;
//! let a: SnowflakeId = ids.next_id()?;
//! let b = ids.next_id()?;
//! assert!(b > a);
//! assert_eq!(Layout::TWITTER.decompose(a)?.node, 7);
//! # Ok::<(), idgen_core::Error>(())
//! ```
//!
//! ## Schemas
//!
//! With the features `schemars` (JSON Schema, schemars 1) and `utoipa` (OpenAPI, utoipa 6),
//! [`SnowflakeId`], [`Id<T>`] and [`PublicId<T>`] describe themselves: `type: string`, a
//! `pattern` that matches exactly what their parsers accept, a `format` (`snowflake-id`,
//! `int64`, `typeid`), length bounds and an example. schemars' derive takes `Id<Order>` fields
//! as they are. utoipa's derive composes any generic field type from its type arguments
//! through a private trait; name the typed ID through a type alias and it uses the ID's own
//! schema, under the alias's name:
//!
//! ```
//! # #[cfg(feature = "utoipa")] {
//! use idgen_core::{Id, PublicId, PublicIdPrefix};
//! use utoipa::{PartialSchema, ToSchema};
//!
//! pub enum Customer {}
//! pub struct Order;
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//! pub type CustomerId = Id<Customer>;
//! pub type OrderPublicId = PublicId<Order>;
//!
//! #[derive(ToSchema)]
//! #[allow(dead_code)]
//! struct OrderView {
//!     public_id: OrderPublicId,
//!     customer_id: CustomerId,
//! }
//!
//! let schema = serde_json::to_value(OrderView::schema()).unwrap();
//! assert_eq!(schema["properties"]["public_id"]["$ref"], "#/components/schemas/OrderPublicId");
//! assert_eq!(CustomerId::name(), "CustomerId");
//! # }
//! ```
//!
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod macros;

mod canonical_int;
mod clock;
mod error;
mod fmt_time;
#[doc(hidden)]
pub mod fork;
mod integrations;
pub mod observe;
pub mod public_id;
#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub mod serde_string;
pub mod snowflake;
#[doc(hidden)]
pub mod sync;
mod ticker_clock;
pub mod typed_id;
pub mod uuid7;

/// The [`uuid`](https://docs.rs/uuid) crate this crate's UUIDs come from (`PublicId::uuid`,
/// `Uuid7Generator`), so users need not depend on it themselves.
///
/// ```
/// use idgen_core::uuid::Uuid;
/// let id = idgen_core::PublicId::<()>::from_uuid(Uuid::nil());
/// assert_eq!(id.uuid(), Uuid::nil());
/// ```
pub use uuid;

/// Tests of other idgen crates only (feature `__test-clock-step`): a wall-clock step seen by
/// this thread's reads of the wall clock.
#[cfg(feature = "__test-clock-step")]
#[doc(hidden)]
pub use clock::wall_clock_step;
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{Error, display_then_causes};
pub use public_id::{AnyPublicId, PublicId, PublicIdPrefix};
#[cfg(feature = "id-codec")]
pub use public_id::{CodecKey, IdCodec};
pub use snowflake::{
    ClockPolicy, Decomposed, Fence, FieldOrder, Layout, LayoutBuilder, NodeField, NodeId,
    NodeLease, Parts, Snowflake, SnowflakeBuilder, SnowflakeId, Stats,
};
pub use ticker_clock::TickerClock;
pub use typed_id::Id;
pub use uuid7::Uuid7Generator;

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use integrations::serde::as_number as serde_as_number;

/// Any error, boxed: what hi-lo sources and lease stores return, so database drivers' errors
/// (`sqlx::Error`, `diesel::result::Error`, `sea_orm::DbErr`) convert with `?`.
///
/// ```
/// let err: idgen_core::BoxError = "connection refused".into();
/// assert_eq!(err.to_string(), "connection refused");
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The README's example, compiled and run as a doctest so it cannot drift from the API.
#[cfg(all(doctest, feature = "serde"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
