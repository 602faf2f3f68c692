//! # idgen-core
//!
//! Unique, sortable, database-friendly IDs:
//!
//! * [`SnowflakeId`]: a 63-bit, time-ordered ID made by a [`Snowflake`] generator under a
//!   [`Layout`] (Twitter, Sonyflake, Instagram or your own), that serializes as a JSON string so
//!   JavaScript never rounds it.
//! * [`Clock`], [`SystemClock`] and [`ManualClock`]: the time source of a generator.
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
#![cfg_attr(docsrs, feature(doc_cfg))]

mod clock;
mod error;
mod fmt_time;
#[cfg(feature = "hilo")]
#[cfg_attr(docsrs, doc(cfg(feature = "hilo")))]
pub mod hilo;
mod integrations;
#[cfg(feature = "lease")]
#[cfg_attr(docsrs, doc(cfg(feature = "lease")))]
pub mod lease;
pub mod public_id;
pub mod snowflake;
mod sync;
pub mod uuid7;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::Error;
#[cfg(feature = "hilo")]
pub use hilo::{HiLo, HiLoSource};
#[cfg(feature = "id-codec")]
pub use public_id::{CodecKey, IdCodec};
pub use public_id::{PublicId, PublicIdPrefix};
pub use snowflake::{
    ClockPolicy, Decomposed, Fence, FieldOrder, Layout, LayoutBuilder, NodeField, NodeId,
    NodeLease, Parts, Snowflake, SnowflakeBuilder, SnowflakeId, Stats,
};
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
