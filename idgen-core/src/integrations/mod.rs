//! Impls of other crates' traits for idgen's types, each behind its own feature.

#[cfg(feature = "diesel")]
mod diesel;
#[cfg(any(feature = "schemars", feature = "utoipa"))]
#[macro_use]
mod schema;
#[cfg(feature = "schemars")]
mod schemars;
#[cfg(feature = "sea-orm")]
mod sea_orm;
#[cfg(feature = "serde")]
pub(crate) mod serde;
#[cfg(feature = "serde")]
pub(crate) mod serde_integer;
#[cfg(feature = "sqlx")]
mod sqlx;
#[cfg(any(feature = "jiff", feature = "chrono", feature = "time"))]
mod time_crates;
#[cfg(feature = "utoipa")]
mod utoipa;
