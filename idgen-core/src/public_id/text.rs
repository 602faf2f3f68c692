//! The text form shared by [`PublicId`](crate::PublicId) and `IdCodec` tokens:
//! `prefix_` (omitted for an empty prefix) + 26 base32 characters.

use super::base32;
use super::prefix::{MAX_PREFIX_LEN, prefix_problem};
use crate::Error;

/// The longest text: a 63-character prefix, `_`, 26 characters.
pub(crate) const MAX_TEXT_LEN: usize = MAX_PREFIX_LEN + 1 + base32::LEN;

/// The length of the text for `prefix`.
pub(crate) const fn text_len(prefix: &str) -> usize {
    if prefix.is_empty() {
        base32::LEN
    } else {
        prefix.len() + 1 + base32::LEN
    }
}

/// Writes the text of `value` under `prefix` into `buf` and returns it.
pub(crate) fn format<'b>(prefix: &str, value: u128, buf: &'b mut [u8; MAX_TEXT_LEN]) -> &'b str {
    let mut at = 0;
    if !prefix.is_empty() {
        buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
        buf[prefix.len()] = b'_';
        at = prefix.len() + 1;
    }
    buf[at..at + base32::LEN].copy_from_slice(&base32::encode(value));
    // Only ASCII was written: a prefix of a-z and '_', the base32 alphabet.
    std::str::from_utf8(&buf[..at + base32::LEN]).unwrap_or_default()
}

/// A regular expression (ECMA-262 and Rust `regex` alike) matching exactly the texts
/// [`parse`] accepts under `prefix`: the prefix and `_` (none for an empty prefix), then 26
/// characters of the lower-case alphabet, the first `0`–`7`. For JSON Schema and OpenAPI.
#[cfg_attr(not(any(feature = "schemars", feature = "utoipa")), allow(dead_code))]
pub(crate) fn pattern(prefix: &str) -> String {
    // The alphabet `0-9 a-z` without `i l o u`, as a character class.
    const CLASS: &str = "[0-9a-hjkmnp-tv-z]";
    let separator = if prefix.is_empty() { "" } else { "_" };
    format!("^{prefix}{separator}[0-7]{CLASS}{{{}}}$", base32::LEN - 1)
}

/// Cuts a rejected input for an error message.
pub(crate) fn excerpt(input: &str) -> String {
    input.chars().take(64).collect()
}

/// Parses `text` strictly under `prefix`. `shown` is the text named in errors (the caller's
/// original, when `text` is a case-folded copy).
pub(crate) fn parse(prefix: &'static str, text: &str, shown: &str) -> Result<u128, Error> {
    let body = match text.rfind('_') {
        Some(sep) if &text[..sep] == prefix && !prefix.is_empty() => &text[sep + 1..],
        None if prefix.is_empty() => text,
        found => {
            return Err(Error::PublicIdPrefix {
                input: excerpt(shown),
                expected: prefix,
                found: found.map(|sep| excerpt(&text[..=sep])).unwrap_or_default(),
            });
        }
    };
    base32::decode(body.as_bytes()).map_err(|e| body_error(e, body, shown))
}

/// Parses `text` strictly with whatever prefix it has (TypeID rules: the prefix is the text
/// before the last `_`, none when there is no `_`), returning the prefix and the value. `shown`
/// is the text named in errors.
pub(crate) fn parse_any<'t>(text: &'t str, shown: &str) -> Result<(&'t str, u128), Error> {
    let (prefix, body) = match text.rfind('_') {
        None => ("", text),
        Some(sep) => {
            let prefix = &text[..sep];
            let problem = if prefix.is_empty() {
                Some("the text before '_' is empty (an ID without a prefix has no '_')")
            } else {
                prefix_problem(prefix)
            };
            if let Some(reason) = problem {
                return Err(Error::PublicIdPrefixInvalid {
                    input: excerpt(shown),
                    prefix: excerpt(prefix),
                    reason,
                });
            }
            (prefix, &text[sep + 1..])
        }
    };
    base32::decode(body.as_bytes())
        .map(|value| (prefix, value))
        .map_err(|e| body_error(e, body, shown))
}

/// The error for a base32 part that did not decode, naming characters rather than bytes.
fn body_error(e: base32::DecodeError, body: &str, shown: &str) -> Error {
    let input = excerpt(shown);
    let first_bad = || {
        body.chars()
            .enumerate()
            .find(|(_, c)| !c.is_ascii() || !base32::ALPHABET.contains(&(*c as u8)))
    };
    match e {
        base32::DecodeError::Length(_) => {
            let found = body.chars().count();
            match first_bad() {
                // 26 characters but more bytes: the problem is a non-ASCII character.
                Some((position, c)) if found == base32::LEN => Error::PublicIdCharacter {
                    input,
                    position,
                    found: c,
                    reason: base32::character_reason(c),
                },
                _ => Error::PublicIdLength { input, found },
            }
        }
        base32::DecodeError::Character(_) => match first_bad() {
            Some((position, c)) => Error::PublicIdCharacter {
                input,
                position,
                found: c,
                reason: base32::character_reason(c),
            },
            None => Error::PublicIdLength {
                input,
                found: body.chars().count(),
            },
        },
        base32::DecodeError::Overflow => Error::PublicIdOverflow {
            input,
            found: body.chars().next().unwrap_or('?'),
        },
    }
}
