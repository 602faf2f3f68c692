//! Public IDs: [`PublicId`] (random, stored in its own column) and, with the `id-codec`
//! feature, [`IdCodec`] (a keyed, reversible mapping of an internal `i64` ID to the same text).
//!
//! Both print as `prefix_` + 26 lower-case Crockford base32 characters, the TypeID text form.

mod base32;
#[cfg(feature = "id-codec")]
mod codec;
mod id;
#[cfg(feature = "id-codec")]
mod key;
mod prefix;
#[cfg(feature = "serde")]
mod serde_impl;
mod text;

#[cfg(feature = "id-codec")]
pub use codec::IdCodec;
pub use id::PublicId;
#[cfg(feature = "id-codec")]
pub use key::CodecKey;
pub use prefix::PublicIdPrefix;

#[cfg(test)]
mod tests;
