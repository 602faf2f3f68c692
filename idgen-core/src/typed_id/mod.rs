//! [`Id<T>`]: a 64-bit ID tagged with the entity it identifies, so an order's ID is not a
//! customer's.
//!
//! `Id<T>` is what [`SnowflakeId`](crate::snowflake::SnowflakeId) is (a non-negative `i64` in a `BIGINT`
//! column, a decimal string in JSON) plus a type: `Id<Order>` and `Id<Customer>` do not mix
//! without an explicit [`cast`](Id::cast). Generators hand them out directly:
//! `Snowflake::next_typed_id::<Order>()` and `HiLo::next_typed_id::<OrderLine>()` (feature
//! `hilo`).
//!
//! For a plain `i64` or `u64` field that should travel as a JSON string, use
//! [`serde_string`](crate::serde_string).

mod generate;
mod id;
#[cfg(feature = "serde")]
pub(crate) mod serde_impl;

pub use id::Id;
#[cfg(any(feature = "schemars", feature = "utoipa"))]
pub(crate) use id::short_type_name;
pub(crate) use id::type_label;
