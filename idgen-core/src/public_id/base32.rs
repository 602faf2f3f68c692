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

/// Encodes 128 bits as 26 characters.
#[inline]
pub(crate) fn encode(value: u128) -> [u8; LEN] {
    let mut out = [0u8; LEN];
    let mut i = 0;
    while i < LEN {
        let shift = 5 * (LEN - 1 - i);
        out[i] = ALPHABET[((value >> shift) & 0x1f) as usize];
        i += 1;
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
    // The first character carries the two padding bits: they must be zero.
    if DECODE[text[0] as usize] > 7 {
        return Err(DecodeError::Overflow);
    }
    Ok(value)
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
        assert_eq!(decode(b""), Err(DecodeError::Length(0)));
        assert_eq!(
            decode(b"0000000000000000000000000"),
            Err(DecodeError::Length(25))
        );
        assert_eq!(
            decode(b"000000000000000000000000000"),
            Err(DecodeError::Length(27))
        );
        assert_eq!(
            decode(b"8zzzzzzzzzzzzzzzzzzzzzzzzz"),
            Err(DecodeError::Overflow)
        );
        assert_eq!(
            decode(b"0000000000000000000000000u"),
            Err(DecodeError::Character(25))
        );
        assert_eq!(
            decode(b"0000000000000000000000000A"),
            Err(DecodeError::Character(25))
        );
        assert_eq!(
            decode(b"i0000000000000000000000000"),
            Err(DecodeError::Character(0))
        );
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

    proptest::proptest! {
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
