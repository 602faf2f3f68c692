//! Public IDs: what to show the world instead of an internal Snowflake or sequential key, which
//! reveals creation time, node and volume and invites walking `/orders/1042` → `/orders/1043`.
//!
//! * [`PublicId`]: 128 random bits stored in their own column with a unique index. No key to
//!   manage or leak, revocable per row. OWASP's preferred route; use it for share links,
//!   invites, and whenever a key compromise would be unacceptable.
//! * `IdCodec` (feature `id-codec`, on by default): the internal ID enciphered under a key
//!   (AES-256, one block, with a per-type tag checked on decode). No extra column or index; the
//!   application owns a key and its rotation.
//!
//! Both print as `prefix_` + 26 lower-case Crockford base32 characters, the TypeID text form,
//! so an entity can move from one to the other without clients noticing. Neither replaces an
//! authorization check on every object a request touches: they are defence in depth.
//!
//! ```
//! # #[cfg(not(feature = "id-codec"))] fn main() {}
//! # #[cfg(feature = "id-codec")] fn main() -> Result<(), idgen_core::Error> {
//! use idgen_core::{CodecKey, IdCodec, PublicId, PublicIdPrefix};
//!
//! struct Order;
//! impl PublicIdPrefix for Order {
//!     const PREFIX: &'static str = "ord";
//! }
//!
//! let stored: PublicId<Order> = PublicId::new();
//! let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
//! let derived: String = codec.encode::<Order>(1042)?;
//! // The same shape either way.
//! assert_eq!(stored.to_string().len(), derived.len());
//! assert!(derived.parse::<PublicId<Order>>().is_ok());
//! # Ok(()) }
//! ```

mod any;
mod base32;
#[cfg(feature = "id-codec")]
mod codec;
mod id;
#[cfg(feature = "id-codec")]
mod key;
mod prefix;
pub(crate) mod random;
#[cfg(feature = "serde")]
mod serde_impl;
pub(crate) mod text;

pub use any::AnyPublicId;
#[cfg(feature = "id-codec")]
pub use codec::IdCodec;
pub use id::PublicId;
#[cfg(feature = "id-codec")]
pub use key::CodecKey;
pub use prefix::{PublicIdPrefix, prefix_problem};
pub use text::MAX_TEXT_LEN;

#[cfg(test)]
pub(crate) mod tests;
