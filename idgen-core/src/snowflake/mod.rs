//! Snowflake IDs: the [`SnowflakeId`] type, [`Layout`]s (and [`plan`], which finds one for a
//! node count, a rate and a lifetime), and the [`Snowflake`] generator.

mod fence;
mod generator;
mod id;
mod layout;
#[cfg(all(test, loom))]
mod loom_model;
mod node;
pub mod plan;
mod policy;
mod shard;

pub use fence::{CLOCKS_AGREE_WITHIN_MS, Fence, NodeLease};
pub use generator::{Snowflake, SnowflakeBuilder, Stats};
pub use id::SnowflakeId;
#[cfg(feature = "serde")]
pub(crate) use id::parse_decimal;
pub use layout::{
    Decomposed, FieldOrder, Layout, LayoutBuilder, MAX_NODE_FIELDS, NodeField, Parts,
};
pub use node::NodeId;
pub use policy::ClockPolicy;
