//! The text form shared by [`PublicId`](crate::public_id::PublicId) and `IdCodec` tokens:
//! `prefix_` (omitted for an empty prefix) + 26 base32 characters.

use super::base32;
use super::prefix::{MAX_PREFIX_LEN, prefix_problem};
use crate::error::Error;

/// The longest text form of a public ID: a 63-character prefix, `_` and 26 characters. A
/// buffer of this size holds the text of any [`PublicId`](crate::public_id::PublicId)
/// ([`encode_to`](crate::public_id::PublicId::encode_to)).
///
/// ```
/// assert_eq!(idgen_core::public_id::MAX_TEXT_LEN, 90);
/// ```
pub const MAX_TEXT_LEN: usize = MAX_PREFIX_LEN + 1 + base32::LEN;

/// The length of the text for `prefix`.
pub(crate) const fn text_len(prefix: &str) -> usize {
    if prefix.is_empty() {
        base32::LEN
    } else {
        prefix.len() + 1 + base32::LEN
    }
}

/// Writes the text of `value` under `prefix` into `buf` and returns it. Always inlined, so
/// the prefix (a constant of the type) is copied with its length known. `buf` holds at least
/// [`text_len`]`(prefix)` bytes (`MAX_TEXT_LEN` always do).
#[inline(always)]
pub(crate) fn format<'b>(prefix: &str, value: u128, buf: &'b mut [u8]) -> &'b str {
    let mut at = 0;
    if !prefix.is_empty() {
        buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
        buf[prefix.len()] = b'_';
        at = prefix.len() + 1;
    }
    buf[at..at + base32::LEN].copy_from_slice(&base32::encode(value));
    utf8_unchecked(&buf[..at + base32::LEN])
}

/// What `format` wrote, as a `str`, without validating it again: `str::from_utf8` would cost
/// as much as the whole encoding (about 110 instructions for 30 bytes).
#[allow(unsafe_code)]
#[inline]
fn utf8_unchecked(written: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(written).is_ok());
    // SAFETY: `format` wrote exactly these bytes: a copy of `prefix` (a `&str`, so UTF-8), then
    // `_` and characters of `base32::ALPHABET` (ASCII); UTF-8 followed by ASCII is UTF-8.
    // Tested by `every_text_is_ascii_and_round_trips` below; debug builds assert it above.
    unsafe { std::str::from_utf8_unchecked(written) }
}

/// Parses `text` under `prefix`, upper-case letters accepted: a case-folded copy on the stack,
/// a heap copy only to name a text longer than any public ID in an error.
pub(crate) fn parse_ignore_case(prefix: &'static str, text: &str) -> Result<u128, Error> {
    let mut buf = [0u8; MAX_TEXT_LEN];
    if let Some(copy) = buf.get_mut(..text.len()) {
        copy.copy_from_slice(text.as_bytes());
        copy.make_ascii_lowercase();
        if let Some(value) = parse_canonical(prefix, copy) {
            return Ok(value);
        }
    }
    parse_slow(prefix, &text.to_ascii_lowercase(), text)
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
#[inline]
pub(crate) fn parse(prefix: &'static str, text: &str, shown: &str) -> Result<u128, Error> {
    match parse_canonical(prefix, text.as_bytes()) {
        Some(value) => Ok(value),
        None => parse_slow(prefix, text, shown),
    }
}

/// The fast path: `text` is exactly `prefix`, `_` (when the prefix is not empty) and a
/// canonical base32 body. Accepts exactly what [`parse_slow`] accepts, with the same value:
/// the body has no `_`, so the slow path's last `_` is the one after the prefix.
#[inline]
fn parse_canonical(prefix: &str, text: &[u8]) -> Option<u128> {
    let body = if prefix.is_empty() {
        text
    } else {
        let (head, rest) = text.split_at_checked(prefix.len())?;
        let (&separator, body) = rest.split_first()?;
        if head != prefix.as_bytes() || separator != b'_' {
            return None;
        }
        body
    };
    base32::decode_canonical(body)
}

/// Parses `text` and, for a text that is not canonical, finds what is wrong with it.
#[cold]
fn parse_slow(prefix: &'static str, text: &str, shown: &str) -> Result<u128, Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The fast path accepts what the full parser accepts, with the same value, and leaves
        /// every rejection (and so every error) to it.
        #[test]
        fn the_fast_path_agrees_with_the_full_parser(
            prefix in "(|ord|pre_fix|[a-z]{1,3})",
            body in "[0-9a-z_A-Z]{0,30}",
            glue in "(|_|__|-)",
        ) {
            let prefix: &'static str = Box::leak(prefix.into_boxed_str());
            let text = format!("{prefix}{glue}{body}");
            let fast = parse_canonical(prefix, text.as_bytes());
            let full = parse_slow(prefix, &text, &text);
            proptest::prop_assert_eq!(fast, full.as_ref().ok().copied());
            // `Error` has no `PartialEq`; its `Debug` shows every field.
            proptest::prop_assert_eq!(
                format!("{:?}", parse(prefix, &text, &text)),
                format!("{full:?}")
            );
        }

        #[test]
        fn every_text_is_ascii_and_round_trips(value: u128, prefix in "(|ord|pre_fix|[a-z][a-z_]{0,61}[a-z])") {
            let prefix: &'static str = Box::leak(prefix.into_boxed_str());
            let mut buf = [0u8; MAX_TEXT_LEN];
            let text = format(prefix, value, &mut buf);
            proptest::prop_assert!(text.is_ascii());
            proptest::prop_assert_eq!(std::str::from_utf8(text.as_bytes()), Ok(text));
            proptest::prop_assert_eq!(text.len(), text_len(prefix));
            proptest::prop_assert_eq!(parse(prefix, text, text).ok(), Some(value));
        }

        #[test]
        fn canonical_texts_take_the_fast_path(value: u128, prefix in "(|ord|pre_fix)") {
            let mut buf = [0u8; MAX_TEXT_LEN];
            let text = format(&prefix, value, &mut buf).to_owned();
            proptest::prop_assert_eq!(parse_canonical(&prefix, text.as_bytes()), Some(value));
        }

        #[test]
        fn ignoring_case_agrees_with_lower_casing_first(
            prefix in "(|ord)",
            text in "[0-9a-zA-Z_]{0,40}",
        ) {
            let prefix: &'static str = Box::leak(prefix.into_boxed_str());
            let lower = text.to_ascii_lowercase();
            proptest::prop_assert_eq!(
                format!("{:?}", parse_ignore_case(prefix, &text)),
                format!("{:?}", parse_slow(prefix, &lower, &text))
            );
        }
    }
}
