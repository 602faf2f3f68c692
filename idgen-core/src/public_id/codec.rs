//! [`IdCodec`]: a keyed, reversible mapping between an internal `i64` ID and a public token.

use std::any::TypeId;
use std::fmt;
use std::sync::RwLock;

use aes::Aes256;
use aes::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};

use super::key::CodecKey;
use super::prefix::{CheckedPrefix, PublicIdPrefix};
use super::text;
use crate::error::Error;
use crate::snowflake::SnowflakeId;

/// The most key slots an [`IdCodec`] holds at once (each one adds a decryption per decode).
const MAX_SLOTS: usize = 4;

/// A keyed, reversible mapping between an internal ID (a [`SnowflakeId`] or any `i64`) and a
/// public token with the text shape of a [`PublicId`](crate::public_id::PublicId):
/// `ord_3x1gh7…` (prefix, `_`, 26 lower-case Crockford base32 characters). No extra column:
/// the token *is* the key, enciphered.
///
/// **Construction** (encode-then-encipher, Bellare & Rogaway 2000): one 128-bit block
/// `tag(T) ‖ id`, both 64-bit big-endian, enciphered with AES-256 (RustCrypto's `aes`, using
/// AES-NI/ARMv8 instructions where available). `tag(T)` is a public per-type constant (64-bit
/// FNV-1a of a version label and `T`'s prefix), so the prefix names the type: one codec refuses
/// a second Rust type with a prefix another type already uses with it
/// ([`Error::CodecPrefixShared`]), since the two would decode each other's tokens. Decoding
/// deciphers and checks the tag, so:
///
/// * the token hides the ID, its magnitude (fixed length) and its creation time;
/// * an altered or forged token passes with probability 2⁻⁶⁴ per active key slot — any
///   single-character change fails;
/// * a token of another type fails (different tag, and different prefix; types cannot share a
///   prefix on one codec);
/// * every failure is the same [`Error::InvalidToken`], so an attacker learns nothing from which
///   check failed (map it to 404, like "not found" and "not yours");
/// * the mapping is deterministic: an ID always has the same token under one key.
///
/// It is not access control, and OWASP advises against encrypting IDs because it is easy to do
/// badly; this construction avoids the usual failures (home-made ciphers, malleable modes,
/// random nonces, length leaks, error oracles). If the key leaks, tokens reveal internal IDs and
/// can be minted; a [`PublicId`](crate::public_id::PublicId) column has no key to leak and can be revoked.
///
/// **Key slots** for rotation: new tokens use the primary slot's key; up to three older keys
/// still decode until [`retire`](Self::retire)d. The slot is not written in the token (which
/// keeps the TypeID shape, first character `0`–`7`): decoding tries every active key, all of
/// them every time.
///
/// ```
/// use idgen_core::{CodecKey, IdCodec, PublicIdPrefix, SnowflakeId};
///
/// struct Order;
/// impl PublicIdPrefix for Order {
///     const PREFIX: &'static str = "ord";
/// }
/// struct User;
/// impl PublicIdPrefix for User {
///     const PREFIX: &'static str = "usr";
/// }
///
/// let key = CodecKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")?;
/// let codec = IdCodec::new(1, key);
///
/// let id = SnowflakeId::new(112719806108546862).unwrap();
/// let token = codec.encode_snowflake::<Order>(id)?;
/// assert_eq!(token, "ord_339gzpa0ng6jmxy75ea4rd5ms7");
/// assert_eq!(codec.decode_snowflake::<Order>(&token)?, id);
///
/// // Another type's token, or an altered one: the same error.
/// let as_user = token.replacen("ord", "usr", 1);
/// assert!(codec.decode::<User>(&as_user).is_err());
/// assert!(codec.decode::<Order>(&token.replacen("ms7", "ms8", 1)).is_err());
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub struct IdCodec {
    /// Active slots; `slots[0]` is the primary.
    slots: Vec<Slot>,
    /// The Rust type that uses each tag with this codec.
    types: RwLock<Vec<TypeUse>>,
}

/// A Rust type that encoded or decoded with a codec, under its prefix's tag.
struct TypeUse {
    tag: u64,
    type_id: TypeId,
    type_name: &'static str,
}

struct Slot {
    id: u8,
    cipher: Aes256,
}

impl IdCodec {
    /// A codec with one key, in slot `slot`, used for encoding and decoding.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec};
    ///
    /// let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// assert_eq!(codec.primary_slot(), 0);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn new(slot: u8, key: CodecKey) -> Self {
        Self {
            slots: vec![Slot::new(slot, &key)],
            types: RwLock::new(Vec::new()),
        }
    }

    /// Adds an older key in slot `slot` that still decodes but does not encode.
    ///
    /// Refused when the slot is taken, when [`MAX_SLOTS`](Self::MAX_SLOTS) are active, or when
    /// the key is already active in another slot.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec};
    ///
    /// let codec = IdCodec::new(2, CodecKey::from_hex(&"0f1e".repeat(16))?)
    ///     .with_decode_key(1, CodecKey::from_hex(&"2d3c".repeat(16))?)?;
    /// assert_eq!(codec.slots().collect::<Vec<_>>(), [2, 1]);
    /// assert!(codec.with_decode_key(1, CodecKey::from_hex(&"4b5a".repeat(16))?).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn with_decode_key(mut self, slot: u8, key: CodecKey) -> Result<Self, Error> {
        self.add(slot, &key)?;
        Ok(self)
    }

    /// Rotation: adds `key` in slot `slot` and makes it the primary; the previous keys keep
    /// decoding until [`retire`](Self::retire)d.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec, PublicId};
    ///
    /// let mut codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// let old = codec.encode::<()>(42)?;
    /// codec.rotate(1, CodecKey::from_hex(&"2d3c".repeat(16))?)?;
    /// let new = codec.encode::<()>(42)?;
    /// assert_ne!(old, new);
    /// assert_eq!(codec.decode::<()>(&old)?, 42);
    /// codec.retire(0)?;
    /// assert!(codec.decode::<()>(&old).is_err());
    /// assert_eq!(codec.decode::<()>(&new)?, 42);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn rotate(&mut self, slot: u8, key: CodecKey) -> Result<(), Error> {
        self.add(slot, &key)?;
        // `add` pushed the new slot last; move it to the front.
        self.slots.rotate_right(1);
        Ok(())
    }

    /// Stops decoding with slot `slot`'s key (its tokens are rejected from now on). The
    /// primary slot cannot be retired; [`rotate`](Self::rotate) first.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec};
    ///
    /// let mut codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// assert!(codec.retire(0).is_err());
    /// assert!(codec.retire(3).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn retire(&mut self, slot: u8) -> Result<(), Error> {
        let refuse = |reason: &str| Error::InvalidCodecKey {
            origin: format!("key slot {slot}"),
            reason: reason.to_owned(),
        };
        match self.slots.iter().position(|s| s.id == slot) {
            Some(0) => Err(refuse(
                "it is the primary slot; rotate to a new key before retiring it",
            )),
            Some(i) => {
                self.slots.remove(i);
                Ok(())
            }
            None => Err(refuse("no key is active in this slot")),
        }
    }

    /// A codec from a key list such as `"2:<key>,1:<key>"`: `slot:key` pairs separated by commas,
    /// the first one primary, each key 64 hex digits or base64. Whitespace around items is ignored.
    ///
    /// ```
    /// use idgen_core::IdCodec;
    ///
    /// let list = format!("2:{},1:{}", "0f1e".repeat(16), "2d3c".repeat(16));
    /// let codec = IdCodec::from_key_list(&list)?;
    /// assert_eq!(codec.slots().collect::<Vec<_>>(), [2, 1]);
    /// assert!(IdCodec::from_key_list("").is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn from_key_list(list: &str) -> Result<Self, Error> {
        Self::from_key_list_in(list, "key list")
    }

    /// A codec from the environment variable `var` holding a key list as in
    /// [`from_key_list`](Self::from_key_list), e.g. `PUBLIC_ID_KEYS="2:<b64>,1:<b64>"`.
    ///
    /// ```
    /// use idgen_core::IdCodec;
    ///
    /// let err = IdCodec::from_env("IDGEN_DOC_SURELY_UNSET_KEYS").unwrap_err();
    /// assert_eq!(err.to_string(), "environment variable IDGEN_DOC_SURELY_UNSET_KEYS: it is not set");
    /// ```
    pub fn from_env(var: &str) -> Result<Self, Error> {
        let origin = format!("environment variable {var}");
        let value =
            zeroize::Zeroizing::new(std::env::var(var).map_err(|e| Error::InvalidCodecKey {
                origin: origin.clone(),
                reason: match e {
                    std::env::VarError::NotPresent => "it is not set".to_owned(),
                    std::env::VarError::NotUnicode(_) => "it is not valid UTF-8".to_owned(),
                },
            })?);
        Self::from_key_list_in(&value, &origin)
    }

    fn from_key_list_in(list: &str, origin: &str) -> Result<Self, Error> {
        let mut codec: Option<Self> = None;
        for (n, item) in list.split(',').map(str::trim).enumerate() {
            let item_origin = format!("{origin}, item {}", n + 1);
            let Some((slot, key)) = item.split_once(':') else {
                return Err(Error::InvalidCodecKey {
                    origin: item_origin,
                    reason: "an item is `slot:key` (slot 0-255, key as hex or base64)".to_owned(),
                });
            };
            let slot: u8 = slot.trim().parse().map_err(|_| Error::InvalidCodecKey {
                origin: item_origin.clone(),
                reason: format!("the slot {:?} is not a number from 0 to 255", slot.trim()),
            })?;
            let key = CodecKey::from_text_in(key.trim(), &item_origin)?;
            codec = Some(match codec {
                None => Self::new(slot, key),
                Some(c) => c.with_decode_key(slot, key)?,
            });
        }
        codec.ok_or_else(|| Error::InvalidCodecKey {
            origin: origin.to_owned(),
            reason: "no keys".to_owned(),
        })
    }

    /// The most key slots active at once.
    pub const MAX_SLOTS: usize = MAX_SLOTS;

    /// The slot whose key encodes.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec};
    /// let codec = IdCodec::new(5, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// assert_eq!(codec.primary_slot(), 5);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn primary_slot(&self) -> u8 {
        self.slots[0].id
    }

    /// The active slots, the primary first.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec};
    /// let codec = IdCodec::new(5, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// assert_eq!(codec.slots().collect::<Vec<_>>(), [5]);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn slots(&self) -> impl Iterator<Item = u8> + '_ {
        self.slots.iter().map(|s| s.id)
    }

    /// The token for `id` as a `T`, under the primary key. Any `i64`, negative ones included.
    ///
    /// # Errors
    ///
    /// [`Error::CodecPrefixShared`] when another Rust type with `T`'s prefix already
    /// used this codec (the only error; it depends on the types, never on `id`).
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::{CodecKey, Error, IdCodec, PublicIdPrefix};
    ///
    /// let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// let token = codec.encode::<()>(-1)?;
    /// assert_eq!(token.len(), 26);
    /// assert_eq!(codec.decode::<()>(&token)?, -1);
    ///
    /// struct Order;
    /// impl PublicIdPrefix for Order { const PREFIX: &'static str = "ord"; }
    /// struct OrderLine;
    /// impl PublicIdPrefix for OrderLine { const PREFIX: &'static str = "ord"; } // a mistake
    /// codec.encode::<Order>(7)?;
    /// let err = codec.encode::<OrderLine>(7).unwrap_err();
    /// assert!(matches!(err, Error::CodecPrefixShared { prefix: "ord", .. }));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn encode<T: PublicIdPrefix + ?Sized + 'static>(&self, id: i64) -> Result<String, Error> {
        let tag = self.type_tag::<T>()?;
        let mut block = Array::from(plaintext(tag, id));
        self.slots[0].cipher.encrypt_block(&mut block);
        let mut buf = [0u8; text::MAX_TEXT_LEN];
        Ok(text::format(
            CheckedPrefix::<T>::PREFIX,
            u128::from_be_bytes(block.into()),
            &mut buf,
        )
        .to_owned())
    }

    /// `T`'s tag, after checking that no other Rust type uses it (its prefix) with this codec.
    fn type_tag<T: PublicIdPrefix + ?Sized + 'static>(&self) -> Result<u64, Error> {
        let tag = tag::<T>();
        let type_id = TypeId::of::<T>();
        let known = |types: &[TypeUse]| {
            types.iter().find(|u| u.tag == tag).map(|u| {
                if u.type_id == type_id {
                    Ok(tag)
                } else {
                    Err(Error::CodecPrefixShared {
                        prefix: CheckedPrefix::<T>::PREFIX,
                        first: u.type_name,
                        second: std::any::type_name::<T>(),
                    })
                }
            })
        };
        // A panic while holding the lock cannot leave the list half-changed (one push).
        if let Some(outcome) = known(&self.types.read().unwrap_or_else(|p| p.into_inner())) {
            return outcome;
        }
        let mut types = self.types.write().unwrap_or_else(|p| p.into_inner());
        if let Some(outcome) = known(&types) {
            return outcome;
        }
        types.push(TypeUse {
            tag,
            type_id,
            type_name: std::any::type_name::<T>(),
        });
        Ok(tag)
    }

    /// The token for a [`SnowflakeId`] as a `T` (the same as [`encode`](Self::encode) of its value).
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec, SnowflakeId};
    ///
    /// let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// let id = SnowflakeId::new(7).unwrap();
    /// assert_eq!(codec.encode_snowflake::<()>(id)?, codec.encode::<()>(7)?);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn encode_snowflake<T: PublicIdPrefix + ?Sized + 'static>(
        &self,
        id: SnowflakeId,
    ) -> Result<String, Error> {
        self.encode::<T>(id.get())
    }

    /// The ID in a token of type `T`, or [`Error::InvalidToken`] — the one error for every
    /// failure: malformed text, wrong prefix, altered or forged, another type's, a retired key's.
    /// (Apart from that, [`Error::CodecPrefixShared`] as for [`encode`](Self::encode), which
    /// depends on the types only, never on the token.)
    ///
    /// For well-formed text every active key is tried, every time, and each tag comparison is a
    /// single 64-bit compare, so the time taken does not depend on which key matched or how much
    /// of a tag did. (Malformed text is rejected before any deciphering: the format is public,
    /// so that reveals nothing.)
    ///
    /// ```
    /// use idgen_core::{CodecKey, Error, IdCodec};
    ///
    /// let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// let err = codec.decode::<()>("not a token").unwrap_err();
    /// assert!(matches!(err, Error::InvalidToken { .. }));
    /// assert_eq!(err.to_string(), r#""not a token" is not a valid token for this type"#);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn decode<T: PublicIdPrefix + ?Sized + 'static>(&self, token: &str) -> Result<i64, Error> {
        let expected = self.type_tag::<T>()?;
        let reject = || Error::InvalidToken {
            input: text::excerpt(token),
        };
        let ciphertext = text::parse(CheckedPrefix::<T>::PREFIX, token, token)
            .map_err(|_| reject())?
            .to_be_bytes();
        let mut found = None;
        for slot in &self.slots {
            let mut block = Array::from(ciphertext);
            slot.cipher.decrypt_block(&mut block);
            let block: [u8; 16] = block.into();
            let (tag, id) = split(block);
            if tag == expected && found.is_none() {
                found = Some(id);
            }
        }
        found.ok_or_else(reject)
    }

    /// The [`SnowflakeId`] in a token of type `T`; [`Error::InvalidToken`] as for
    /// [`decode`](Self::decode), also when the token holds a negative `i64`.
    ///
    /// ```
    /// use idgen_core::{CodecKey, IdCodec, SnowflakeId};
    ///
    /// let codec = IdCodec::new(0, CodecKey::from_hex(&"0f1e".repeat(16))?);
    /// let id = SnowflakeId::new(7).unwrap();
    /// assert_eq!(codec.decode_snowflake::<()>(&codec.encode_snowflake::<()>(id)?)?, id);
    /// assert!(codec.decode_snowflake::<()>(&codec.encode::<()>(-7)?).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn decode_snowflake<T: PublicIdPrefix + ?Sized + 'static>(
        &self,
        token: &str,
    ) -> Result<SnowflakeId, Error> {
        let id = self.decode::<T>(token)?;
        SnowflakeId::new(id).ok_or_else(|| Error::InvalidToken {
            input: text::excerpt(token),
        })
    }

    fn add(&mut self, slot: u8, key: &CodecKey) -> Result<(), Error> {
        let refuse = |reason: String| Error::InvalidCodecKey {
            origin: format!("key slot {slot}"),
            reason,
        };
        if self.slots.iter().any(|s| s.id == slot) {
            return Err(refuse(
                "the slot already holds a key; retire it first".to_owned(),
            ));
        }
        if self.slots.len() >= MAX_SLOTS {
            return Err(refuse(format!(
                "{MAX_SLOTS} slots are active, the most allowed; retire one first"
            )));
        }
        let new = Slot::new(slot, key);
        // Equal keys encipher a fixed block equally; compare that, not the keys.
        let probe = |s: &Slot| {
            let mut block = Array::from([0u8; 16]);
            s.cipher.encrypt_block(&mut block);
            block
        };
        if let Some(same) = self.slots.iter().find(|s| probe(s) == probe(&new)) {
            return Err(refuse(format!(
                "the same key is already active in slot {}",
                same.id
            )));
        }
        self.slots.push(new);
        Ok(())
    }

    /// AES-256 of one block under the primary key: for known-answer tests of the cipher alone.
    #[cfg(test)]
    pub(crate) fn encipher_block(&self, block: [u8; 16]) -> [u8; 16] {
        let mut block = Array::from(block);
        self.slots[0].cipher.encrypt_block(&mut block);
        block.into()
    }
}

impl Slot {
    fn new(id: u8, key: &CodecKey) -> Self {
        Self {
            id,
            cipher: Aes256::new(&Array::from(*key.bytes())),
        }
    }
}

/// Shows the slots, never the keys.
impl fmt::Debug for IdCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdCodec")
            .field("primary_slot", &self.primary_slot())
            .field("slots", &self.slots().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The label hashed with a prefix into the type tag; a new construction gets a new label.
const TAG_LABEL: &[u8] = b"idgen/IdCodec/v1/";

/// `T`'s 64-bit tag: FNV-1a-64 of [`TAG_LABEL`] and the prefix. Public, not a secret.
pub(crate) const fn tag<T: PublicIdPrefix + ?Sized>() -> u64 {
    let label = fnv1a64(FNV_OFFSET, TAG_LABEL);
    fnv1a64(label, CheckedPrefix::<T>::PREFIX.as_bytes())
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

pub(crate) const fn fnv1a64(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// The plaintext block: tag and ID, both big-endian.
pub(crate) fn plaintext(tag: u64, id: i64) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&tag.to_be_bytes());
    block[8..].copy_from_slice(&id.to_be_bytes());
    block
}

fn split(block: [u8; 16]) -> (u64, i64) {
    let v = u128::from_be_bytes(block);
    ((v >> 64) as u64, v as u64 as i64)
}

#[cfg(test)]
mod tests;
