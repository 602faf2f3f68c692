//! The TypeID text encoding of 128 bits: 26 lower-case Crockford base32 characters.
//!
//! Two zero bits are put in front of the 128 bits, giving 130 bits = 26 × 5; so the first
//! character is always `0`–`7`. Decoding is strict: only the 32 lower-case characters of
//! [`ALPHABET`] are accepted (no `i l o u`, no aliases, no hyphens), so every value has exactly
//! one spelling. Upper-case folding is the caller's choice (see `PublicId::parse_ignore_case`).

/// The 32 characters, in value order. Their ASCII order is their value order, so text order is
/// numeric order.
pub(crate) const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Characters in the encoded form.
pub(crate) const LEN: usize = 26;

/// Byte → value, `INVALID` for bytes outside the lower-case alphabet.
const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 32 {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};
const INVALID: u8 = 0xff;

/// Two characters for each 10-bit value: half as many table reads and stores as characters.
const PAIRS: [[u8; 2]; 1024] = {
    let mut table = [[0u8; 2]; 1024];
    let mut i = 0;
    while i < 1024 {
        table[i] = [ALPHABET[i >> 5], ALPHABET[i & 0x1f]];
        i += 1;
    }
    table
};

/// Encodes 128 bits as 26 characters.
///
/// Two characters (10 bits) per table read, from two 64-bit halves rather than a `u128`
/// shifted per character: pairs 0–5 (characters 0–11) are the high half's bits 63–4 (the
/// first character holds the two zero padding bits), pair 6 straddles the halves, pairs 7–12
/// are the low half's bits 59–0.
#[inline]
pub(crate) fn encode(value: u128) -> [u8; LEN] {
    let hi = (value >> 64) as u64;
    let lo = value as u64;
    let mut out = [0u8; LEN];
    let mut put = |pair: usize, bits: u64| {
        let [a, b] = PAIRS[(bits & 0x3ff) as usize];
        out[2 * pair] = a;
        out[2 * pair + 1] = b;
    };
    for k in 0..6 {
        put(k, hi >> (56 - 10 * k));
    }
    put(6, hi << 4 | lo >> 60);
    for k in 7..13 {
        put(k, lo >> (10 * (12 - k)));
    }
    out
}

/// Why 26 bytes are not a canonical encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The text does not have 26 bytes.
    Length(usize),
    /// The byte at this position is not in the lower-case alphabet.
    Character(usize),
    /// The first character is above `7`.
    Overflow,
}

/// Decodes 26 characters strictly.
#[inline]
pub(crate) fn decode(text: &[u8]) -> Result<u128, DecodeError> {
    decode_canonical(text).ok_or_else(|| decode_error(text))
}

/// The value of 26 characters of the alphabet whose first is `0`–`7`, else `None`: the fast
/// path of parsing, without saying what is wrong.
///
/// Characters 0–12 (at most 3 + 12 × 5 = 63 bits when the first is at most `7`) go into one
/// `u64`, character 13 stands alone, characters 14–25 (60 bits) go into another: no 128-bit
/// shifts per character. A byte outside the alphabet decodes to `INVALID`, whose high bits
/// survive the OR over all 26, so one comparison at the end rejects it.
#[inline]
pub(crate) fn decode_canonical(text: &[u8]) -> Option<u128> {
    let text: &[u8; LEN] = text.try_into().ok()?;
    let mut seen = 0u8;
    let mut digit = |i: usize| {
        let v = DECODE[text[i] as usize];
        seen |= v;
        u64::from(v)
    };
    let first = digit(0);
    let mut hi = first;
    for i in 1..13 {
        hi = hi << 5 | digit(i);
    }
    let middle = digit(13);
    let mut lo = 0u64;
    for i in 14..LEN {
        lo = lo << 5 | digit(i);
    }
    if seen >= 32 || first > 7 {
        return None;
    }
    Some(u128::from(hi) << 65 | u128::from(middle) << 60 | u128::from(lo))
}

/// What is wrong with a text [`decode_canonical`] refused.
#[cold]
fn decode_error(text: &[u8]) -> DecodeError {
    if text.len() != LEN {
        return DecodeError::Length(text.len());
    }
    match text.iter().position(|&b| DECODE[b as usize] == INVALID) {
        Some(i) => DecodeError::Character(i),
        // The first character carries the two padding bits: they must be zero.
        None => DecodeError::Overflow,
    }
}

/// Why a byte is not in the alphabet, for error messages.
pub(crate) fn character_reason(c: char) -> &'static str {
    match c {
        'A'..='Z' => "is upper-case; public IDs are lower-case (see `PublicId::parse_ignore_case`)",
        'i' | 'l' | 'o' | 'u' => {
            "is not in the Crockford alphabet (0-9 a-z without i, l, o, u; no aliases)"
        }
        _ => "is not in the Crockford alphabet 0-9 a-z without i, l, o, u",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(&encode(0), b"00000000000000000000000000");
        assert_eq!(&encode(1), b"00000000000000000000000001");
        assert_eq!(&encode(u128::MAX), b"7zzzzzzzzzzzzzzzzzzzzzzzzz");
        // Vectors of the TypeID spec v0.3.0 (jetify-com/typeid spec/valid.yml).
        for (text, v) in [
            (
                b"01h455vb4pex5vsknk084sn02q",
                0x01890a5d_ac96_774b_bcce_b302099a8057u128,
            ),
            (
                b"0123456789abcdefghjkmnpqrs",
                0x0110c853_1d09_52d8_d73e_1194e95b5f19,
            ),
            (b"0000000000000000000000000g", 0x10),
            (b"00000000000000000000000010", 0x20),
        ] {
            assert_eq!(&encode(v), text);
            assert_eq!(decode(text), Ok(v));
        }
    }

    #[test]
    fn rejects_each_malformation() {
        let cases: [(&[u8], DecodeError); 7] = [
            (b"", DecodeError::Length(0)),
            (b"0000000000000000000000000", DecodeError::Length(25)),
            (b"000000000000000000000000000", DecodeError::Length(27)),
            (b"8zzzzzzzzzzzzzzzzzzzzzzzzz", DecodeError::Overflow),
            (b"0000000000000000000000000u", DecodeError::Character(25)),
            (b"0000000000000000000000000A", DecodeError::Character(25)),
            (b"i0000000000000000000000000", DecodeError::Character(0)),
        ];
        for (text, error) in cases {
            assert_eq!(decode(text), Err(error), "{}", text.escape_ascii());
        }
    }

    #[test]
    fn every_byte_outside_the_alphabet_is_rejected_in_every_position() {
        for b in 0..=255u8 {
            let valid = ALPHABET.contains(&b);
            for pos in 0..LEN {
                let mut text = *b"00000000000000000000000000";
                text[pos] = b;
                let expect_ok = valid && (pos > 0 || DECODE[b as usize] <= 7);
                assert_eq!(decode(&text).is_ok(), expect_ok, "byte {b} at {pos}");
            }
        }
    }

    /// The decoder before the fast path: one 128-bit shift per character.
    fn decode_reference(text: &[u8]) -> Result<u128, DecodeError> {
        if text.len() != LEN {
            return Err(DecodeError::Length(text.len()));
        }
        let mut value: u128 = 0;
        for (i, &b) in text.iter().enumerate() {
            let v = DECODE[b as usize];
            if v == INVALID {
                return Err(DecodeError::Character(i));
            }
            value = (value << 5) | u128::from(v);
        }
        if DECODE[text[0] as usize] > 7 {
            return Err(DecodeError::Overflow);
        }
        Ok(value)
    }

    /// The encoder before the fast path.
    fn encode_reference(value: u128) -> [u8; LEN] {
        std::array::from_fn(|i| ALPHABET[((value >> (5 * (LEN - 1 - i))) & 0x1f) as usize])
    }

    proptest::proptest! {
        #[test]
        fn encoding_matches_the_reference(v: u128) {
            proptest::prop_assert_eq!(encode(v), encode_reference(v));
        }

        #[test]
        fn decoding_matches_the_reference_on_any_bytes(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..30)
        ) {
            proptest::prop_assert_eq!(decode(&bytes), decode_reference(&bytes));
        }

        #[test]
        fn decoding_matches_the_reference_on_near_canonical_text(
            v: u128, pos in 0..LEN, b: u8
        ) {
            let mut text = encode(v);
            text[pos] = b;
            proptest::prop_assert_eq!(decode(&text), decode_reference(&text));
        }

        #[test]
        fn round_trips(v: u128) {
            let text = encode(v);
            proptest::prop_assert_eq!(decode(&text), Ok(v));
        }

        #[test]
        fn text_order_is_numeric_order(a: u128, b: u128) {
            proptest::prop_assert_eq!(encode(a).cmp(&encode(b)), a.cmp(&b));
        }
    }
}
