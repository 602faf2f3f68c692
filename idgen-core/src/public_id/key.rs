//! [`CodecKey`]: a validated, zeroised AES-256 key for [`IdCodec`](crate::public_id::IdCodec).

use std::fmt;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use zeroize::{Zeroize, Zeroizing};

use crate::error::Error;

/// A 32-byte AES-256 key for an [`IdCodec`](crate::public_id::IdCodec) slot.
///
/// It is checked when made (exactly 32 bytes, not all bytes equal, so an all-zero placeholder is
/// refused), wiped from memory when dropped, and never shown by `Debug`. Use 32 bytes from a
/// CSPRNG (`openssl rand -hex 32`), a key used for nothing else (not the session or JWT secret),
/// and different keys per environment.
///
/// ```
/// use idgen_core::CodecKey;
///
/// let key = CodecKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")?;
/// assert_eq!(format!("{key:?}"), "CodecKey(..)");
/// assert!(CodecKey::from_bytes(&[0u8; 32]).is_err());
/// assert!(CodecKey::from_bytes(&[1u8; 16]).is_err());
/// # Ok::<(), idgen_core::Error>(())
/// ```
pub struct CodecKey {
    bytes: Zeroizing<[u8; CodecKey::LEN]>,
}

impl CodecKey {
    /// The key length in bytes (AES-256).
    pub const LEN: usize = 32;

    /// A key from raw bytes; exactly [`LEN`](Self::LEN) of them, not all equal.
    ///
    /// ```
    /// use idgen_core::CodecKey;
    ///
    /// let key = CodecKey::from_bytes(&core::array::from_fn::<u8, 32, _>(|i| i as u8))?;
    /// let err = CodecKey::from_bytes(&[7; 31]).unwrap_err();
    /// assert_eq!(err.to_string(), "key bytes: an IdCodec key has exactly 32 bytes, this one has 31");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::checked(bytes, "key bytes")
    }

    /// A key from 64 hexadecimal digits (either case).
    ///
    /// ```
    /// use idgen_core::CodecKey;
    ///
    /// assert!(CodecKey::from_hex(&"ab".repeat(16)).is_err()); // 16 bytes
    /// assert!(CodecKey::from_hex(&"0f".repeat(32)).is_err()); // all bytes equal
    /// assert!(CodecKey::from_hex(&"0F1e".repeat(16)).is_ok());
    /// ```
    pub fn from_hex(text: &str) -> Result<Self, Error> {
        Self::from_hex_in(text, "hex key")
    }

    /// A key from base64 (standard or URL-safe alphabet, padding optional) of 32 bytes.
    ///
    /// ```
    /// use idgen_core::CodecKey;
    ///
    /// assert!(CodecKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").is_ok());
    /// assert!(CodecKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8").is_ok());
    /// assert!(CodecKey::from_base64("AAECAwQFBgcICQoLDA0ODw==").is_err()); // 16 bytes
    /// ```
    pub fn from_base64(text: &str) -> Result<Self, Error> {
        Self::from_base64_in(text, "base64 key")
    }

    /// A key from text that is either 64 hex digits or base64, as found in a secret store.
    ///
    /// ```
    /// use idgen_core::CodecKey;
    ///
    /// assert!(CodecKey::from_text(&"0f1e".repeat(16)).is_ok());
    /// assert!(CodecKey::from_text("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").is_ok());
    /// ```
    pub fn from_text(text: &str) -> Result<Self, Error> {
        Self::from_text_in(text, "key text")
    }

    /// A key from the environment variable `var` (hex or base64, surrounding whitespace ignored).
    ///
    /// ```
    /// use idgen_core::CodecKey;
    ///
    /// let err = CodecKey::from_env("IDGEN_DOC_SURELY_UNSET_KEY").unwrap_err();
    /// assert_eq!(err.to_string(), "environment variable IDGEN_DOC_SURELY_UNSET_KEY: it is not set");
    /// ```
    pub fn from_env(var: &str) -> Result<Self, Error> {
        let origin = format!("environment variable {var}");
        let value = Zeroizing::new(std::env::var(var).map_err(|e| Error::InvalidCodecKey {
            origin: origin.clone(),
            reason: match e {
                std::env::VarError::NotPresent => "it is not set".to_owned(),
                std::env::VarError::NotUnicode(_) => "it is not valid UTF-8".to_owned(),
            },
        })?);
        Self::from_text_in(value.trim(), &origin)
    }

    pub(crate) fn from_text_in(text: &str, origin: &str) -> Result<Self, Error> {
        if text.len() == 2 * Self::LEN && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            Self::from_hex_in(text, origin)
        } else {
            Self::from_base64_in(text, origin)
        }
    }

    fn from_hex_in(text: &str, origin: &str) -> Result<Self, Error> {
        let refuse = |reason: String| Error::InvalidCodecKey {
            origin: origin.to_owned(),
            reason,
        };
        if text.len() != 2 * Self::LEN {
            return Err(refuse(format!(
                "a hex key has exactly 64 hex digits (32 bytes), this one has {} characters",
                text.chars().count()
            )));
        }
        let mut bytes = Zeroizing::new([0u8; Self::LEN]);
        for (i, pair) in text.as_bytes().chunks_exact(2).enumerate() {
            match (hex_value(pair[0]), hex_value(pair[1])) {
                (Some(hi), Some(lo)) => bytes[i] = hi << 4 | lo,
                _ => {
                    return Err(refuse(format!(
                        "character {} or {} is not a hex digit 0-9 a-f A-F",
                        2 * i,
                        2 * i + 1
                    )));
                }
            }
        }
        Self::checked(&bytes[..], origin)
    }

    fn from_base64_in(text: &str, origin: &str) -> Result<Self, Error> {
        const INDIFFERENT: GeneralPurposeConfig =
            GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
        let engine = if text.contains(['-', '_']) {
            GeneralPurpose::new(&base64::alphabet::URL_SAFE, INDIFFERENT)
        } else {
            GeneralPurpose::new(&base64::alphabet::STANDARD, INDIFFERENT)
        };
        let decoded = Zeroizing::new(engine.decode(text).map_err(|e| {
            // Name positions only: the error must not repeat any of the key's characters.
            use base64::DecodeError as E;
            let what = match e {
                E::InvalidByte(at, _) => format!("character {at} is not in the base64 alphabet"),
                E::InvalidLength(n) => {
                    format!("{n} base64 symbols cannot be a whole number of bytes")
                }
                E::InvalidLastSymbol(at, _) => format!("character {at} has non-zero trailing bits"),
                E::InvalidPadding => "the '=' padding is misplaced".to_owned(),
            };
            Error::InvalidCodecKey {
                origin: origin.to_owned(),
                reason: format!("not 64 hex digits, and not base64: {what}"),
            }
        })?);
        Self::checked(&decoded, origin)
    }

    fn checked(bytes: &[u8], origin: &str) -> Result<Self, Error> {
        let refuse = |reason: String| Error::InvalidCodecKey {
            origin: origin.to_owned(),
            reason,
        };
        let Ok(array) = <[u8; Self::LEN]>::try_from(bytes) else {
            return Err(refuse(format!(
                "an IdCodec key has exactly 32 bytes, this one has {}",
                bytes.len()
            )));
        };
        let mut array = Zeroizing::new(array);
        if array.iter().all(|&b| b == array[0]) {
            let first = array[0];
            array.zeroize();
            return Err(refuse(format!(
                "all 32 bytes are 0x{first:02x}: a placeholder, not a random key"
            )));
        }
        Ok(Self { bytes: array })
    }

    pub(crate) fn bytes(&self) -> &[u8; Self::LEN] {
        &self.bytes
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Never shows the key.
impl fmt::Debug for CodecKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CodecKey(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::CodecKey;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn hex_and_base64_give_the_same_bytes() {
        let expected: [u8; 32] = core::array::from_fn(|i| i as u8);
        for key in [
            CodecKey::from_hex(HEX).unwrap(),
            CodecKey::from_hex(&HEX.to_uppercase()).unwrap(),
            CodecKey::from_text(HEX).unwrap(),
            CodecKey::from_base64("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").unwrap(),
            CodecKey::from_text("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8").unwrap(),
            CodecKey::from_bytes(&expected).unwrap(),
        ] {
            assert_eq!(key.bytes(), &expected);
        }
        // URL-safe alphabet: 0xfb 0xff … encodes with '-' and '_'.
        let bytes: [u8; 32] = core::array::from_fn(|i| if i % 2 == 0 { 0xfb } else { 0xff });
        let url = "-__7__v_-__7__v_-__7__v_-__7__v_-__7__v_-_8";
        assert_eq!(CodecKey::from_base64(url).unwrap().bytes(), &bytes);
    }

    #[test]
    fn refuses_bad_keys_naming_the_problem() {
        for (result, part) in [
            (CodecKey::from_bytes(&[]), "has 0"),
            (CodecKey::from_bytes(&[1; 33]), "has 33"),
            (CodecKey::from_bytes(&[0; 32]), "0x00"),
            (CodecKey::from_bytes(&[0xff; 32]), "0xff"),
            (CodecKey::from_hex(&HEX[..62]), "62 characters"),
            (
                CodecKey::from_hex(&HEX.replace('f', "g")),
                "not a hex digit",
            ),
            (CodecKey::from_base64("not base64!"), "not base64"),
            (CodecKey::from_base64("AAAA"), "has 3"),
            (CodecKey::from_text(""), "has 0"),
        ] {
            let text = result.unwrap_err().to_string();
            assert!(text.contains(part), "{text}");
        }
    }

    #[test]
    fn errors_and_debug_never_show_key_material() {
        let key = CodecKey::from_hex(HEX).unwrap();
        assert_eq!(format!("{key:?}"), "CodecKey(..)");
        let err = CodecKey::from_hex(&HEX[..62]).unwrap_err().to_string();
        assert!(!err.contains("0102"), "{err}");
    }

    #[test]
    fn reads_the_environment() {
        // `set_var` is `unsafe` in edition 2024 (and this crate denies unsafe code), so only
        // the unset case is tested here; a set variable goes through `from_text_in`, tested above.
        let err = CodecKey::from_env("IDGEN_TEST_UNSET_CODEC_KEY_4F1A").unwrap_err();
        assert_eq!(
            err.to_string(),
            "environment variable IDGEN_TEST_UNSET_CODEC_KEY_4F1A: it is not set"
        );
        // A variable that is set but holds no key: refused without echoing its value.
        let path = std::env::var("PATH").unwrap();
        let err = CodecKey::from_env("PATH").unwrap_err().to_string();
        assert!(err.starts_with("environment variable PATH: "), "{err}");
        assert!(!err.contains(&path), "{err}");
    }
}
