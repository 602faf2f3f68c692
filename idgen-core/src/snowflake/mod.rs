//! Snowflake IDs: the [`SnowflakeId`] type, [`Layout`]s, and the [`Snowflake`] generator.

mod id;

pub use id::SnowflakeId;
pub(crate) use id::parse_decimal;
