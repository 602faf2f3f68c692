//! sea-orm 2.0 column types (feature `sea-orm`): [`SnowflakeId`](crate::SnowflakeId) as
//! `BIGINT`, [`Id<T>`](crate::Id) as `BIGINT`, [`PublicId`](crate::PublicId) as `uuid` /
//! `BINARY(16)` / 16-byte `BLOB`.
//! No sea-orm driver or runtime is chosen by this crate.

mod public_id;
mod snowflake;
mod typed_id;
