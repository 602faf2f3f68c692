//! Tests of `IdCodec`: known answers, tamper and cross-type rejection, key slots.

use proptest::prelude::*;

use super::*;
use crate::public_id::PublicId;
use crate::public_id::tests::{Order, User};

/// The FIPS-197 Appendix C.3 AES-256 key.
const FIPS_KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

fn key(hex: &str) -> CodecKey {
    CodecKey::from_hex(hex).unwrap()
}

fn fips_codec() -> IdCodec {
    IdCodec::new(0, key(FIPS_KEY))
}

fn other_key(n: u8) -> CodecKey {
    CodecKey::from_bytes(&core::array::from_fn::<u8, 32, _>(|i| {
        (i as u8).wrapping_mul(7) ^ n
    }))
    .unwrap()
}

#[test]
fn the_cipher_is_aes_256_fips_197_c3() {
    // FIPS-197 Appendix C.3: so the known answers below do not merely repeat our own code.
    let ct = fips_codec().encipher_block(0x00112233_44556677_8899aabb_ccddeeffu128.to_be_bytes());
    assert_eq!(
        u128::from_be_bytes(ct),
        0x8ea2b7ca_516745bf_eafc4990_4b496089
    );
}

#[test]
fn the_tag_is_fnv_1a_64() {
    // Published FNV-1a 64-bit vectors.
    assert_eq!(fnv1a64(FNV_OFFSET, b""), 0xcbf29ce484222325);
    assert_eq!(fnv1a64(FNV_OFFSET, b"a"), 0xaf63dc4c8601ec8c);
    assert_eq!(fnv1a64(FNV_OFFSET, b"foobar"), 0x85944171f73967e8);
    assert_eq!(tag::<Order>(), fnv1a64(FNV_OFFSET, b"idgen/IdCodec/v1/ord"));
    assert_eq!(tag::<Order>(), 0x1730cf03b1e1713c);
    assert_eq!(tag::<()>(), 0xe254e786e1903df9);
    assert_eq!(
        plaintext(0x1122334455667788, -2),
        [
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xfe
        ]
    );
}

/// Tokens under the FIPS-197 key. Computed once, and cross-checked independently with Python's
/// `cryptography` (OpenSSL AES-256-ECB of `FNV-1a-64("idgen/IdCodec/v1/" + prefix) ‖ id`,
/// both big-endian, then TypeID base32).
const KNOWN_ANSWERS: &[(i64, &str, &str)] = &[
    (
        0,
        "ord_2s774b48gw3cww5vncacwwza1q",
        "6zpz7jxd44gx8hadwhpsrekvxa",
    ),
    (
        1,
        "ord_5sfatksbbp4ckqdc30eg7crdy5",
        "51qwrbf3wb7jtcax4wmjqj10vv",
    ),
    (
        1 << 53,
        "ord_2mxphq0e9nxgtyswdbbqmg7csw",
        "6t71r357w952w7wjhrtmtw232t",
    ),
    (
        i64::MAX,
        "ord_2gpcq8bznztmph6as9mg6dfkqv",
        "7baqk973eqa8v66mvw5whwzr14",
    ),
    (
        -1,
        "ord_6p7mvfsdsbws4bc0m5jmejjprt",
        "79bm1esnaeqwx6a0p1mfs4dch9",
    ),
    (
        112719806108546862,
        "ord_339gzpa0ng6jmxy75ea4rd5ms7",
        "24yfmxvjgg33k9bjx3fca9jhg2",
    ),
];

#[test]
fn known_answers() {
    let codec = fips_codec();
    for &(id, ord, untyped) in KNOWN_ANSWERS {
        assert_eq!(codec.encode::<Order>(id).unwrap(), ord, "{id}");
        assert_eq!(codec.encode::<()>(id).unwrap(), untyped, "{id}");
        assert_eq!(codec.decode::<Order>(ord).unwrap(), id);
        assert_eq!(codec.decode::<()>(untyped).unwrap(), id);
        // The token body is exactly the AES block, in the PublicId text form.
        let block = codec.encipher_block(plaintext(tag::<Order>(), id));
        assert_eq!(PublicId::<Order>::from_bytes(block).to_string(), ord);
    }
}

fn assert_rejected(codec: &IdCodec, token: &str) {
    match codec.decode::<Order>(token) {
        Err(Error::InvalidToken { input }) => {
            assert_eq!(input, token.chars().take(64).collect::<String>())
        }
        other => panic!("{token:?} was not rejected as InvalidToken: {other:?}"),
    }
}

/// Characters to substitute: every printable ASCII character, the Crockford look-alikes, and
/// some non-ASCII ones.
fn substitutes() -> Vec<char> {
    let mut v: Vec<char> = (0x20u8..0x7f).map(char::from).collect();
    v.extend(['\0', '\n', 'é', 'Ø', '０', '\u{200b}']);
    v
}

#[test]
fn every_single_character_change_is_rejected() {
    let codec = fips_codec();
    let subs = substitutes();
    for &(id, token, _) in KNOWN_ANSWERS {
        let chars: Vec<char> = token.chars().collect();
        let mut tried = 0;
        for pos in 0..chars.len() {
            // Substitution.
            for &c in &subs {
                if c != chars[pos] {
                    let mut m = chars.clone();
                    m[pos] = c;
                    assert_rejected(&codec, &m.iter().collect::<String>());
                    tried += 1;
                }
            }
            // Deletion, and insertion before this position.
            let mut m = chars.clone();
            m.remove(pos);
            assert_rejected(&codec, &m.iter().collect::<String>());
            for &c in &subs {
                let mut m = chars.clone();
                m.insert(pos, c);
                assert_rejected(&codec, &m.iter().collect::<String>());
            }
        }
        assert!(tried > 30 * 90, "{id}");
        assert_rejected(&codec, &format!("{token}0"));
        assert_rejected(&codec, &token.to_uppercase());
    }
}

proptest! {
    #[test]
    fn round_trips_every_i64(id: i64) {
        let codec = fips_codec();
        let token = codec.encode::<Order>(id).unwrap();
        prop_assert_eq!(token.len(), 30);
        prop_assert_eq!(codec.decode::<Order>(&token).unwrap(), id);
        // The token is a well-formed PublicId<Order> text.
        prop_assert!(token.parse::<PublicId<Order>>().is_ok());
    }

    #[test]
    fn a_random_change_in_the_body_is_rejected(id: i64, pos in 4usize..30, c in "[0-9a-hjkmnp-tv-z]") {
        let codec = fips_codec();
        let token = codec.encode::<Order>(id).unwrap();
        let c = c.chars().next().unwrap();
        prop_assume!(token.as_bytes()[pos] != c as u8);
        let mut changed = token.into_bytes();
        changed[pos] = c as u8;
        let changed = String::from_utf8(changed).unwrap();
        let rejected = matches!(codec.decode::<Order>(&changed), Err(Error::InvalidToken { .. }));
        prop_assert!(rejected, "{} was accepted", changed);
    }

    #[test]
    fn random_well_formed_tokens_are_rejected(v: u128) {
        // A forger who only knows the format: 2^-64 chance per try.
        let forged = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v)).to_string();
        prop_assert!(fips_codec().decode::<Order>(&forged).is_err());
    }

    #[test]
    fn decoding_arbitrary_text_never_panics(s in "\\PC{0,100}") {
        let _ = fips_codec().decode::<Order>(&s);
    }
}

#[test]
fn another_type_s_token_is_rejected() {
    let codec = fips_codec();
    for &(id, ord, untyped) in KNOWN_ANSWERS {
        // As is: the prefix does not match.
        assert!(matches!(
            codec.decode::<User>(ord),
            Err(Error::InvalidToken { .. })
        ));
        assert!(codec.decode::<()>(ord).is_err());
        assert!(codec.decode::<Order>(untyped).is_err());
        // With the prefix swapped: the tag inside the block does not match.
        let as_user = ord.replacen("ord_", "usr_", 1);
        assert!(codec.decode::<User>(&as_user).is_err(), "{id}");
        assert!(codec.decode::<()>(&ord[4..]).is_err(), "{id}");
        assert!(
            codec.decode::<Order>(&format!("ord_{untyped}")).is_err(),
            "{id}"
        );
    }
}

/// Issue 12, item 12: the tag is the prefix's, so two types with one prefix (or two types with
/// none) would accept each other's tokens. One codec refuses the second such type, in encode and
/// decode alike, naming both types; types with distinct prefixes are unaffected.
#[test]
fn types_sharing_a_prefix_are_refused_not_confused() {
    struct Invoice;
    impl PublicIdPrefix for Invoice {
        const PREFIX: &'static str = "ord"; // the same prefix as Order, by mistake
    }
    struct Untyped;
    impl PublicIdPrefix for Untyped {
        const PREFIX: &'static str = "";
    }
    let codec = fips_codec();
    let order_token = codec.encode::<Order>(42).unwrap();
    let err = codec.decode::<Invoice>(&order_token).unwrap_err();
    match &err {
        Error::CodecPrefixShared {
            prefix,
            first,
            second,
        } => {
            assert_eq!(*prefix, "ord");
            assert!(first.ends_with("Order"), "{first}");
            assert!(second.ends_with("Invoice"), "{second}");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("give each type its own prefix"));
    assert!(matches!(
        codec.encode::<Invoice>(42),
        Err(Error::CodecPrefixShared { .. })
    ));
    // Order still works, and so do types with other prefixes.
    assert_eq!(codec.decode::<Order>(&order_token).unwrap(), 42);
    assert!(codec.encode::<User>(42).is_ok());
    // Prefix-less types: the first one wins, the second is refused.
    let untyped = codec.encode::<()>(42).unwrap();
    assert!(matches!(
        codec.decode::<Untyped>(&untyped),
        Err(Error::CodecPrefixShared { prefix: "", .. })
    ));
    // Another codec is independent: there Invoice may come first.
    let other = fips_codec();
    assert!(other.encode::<Invoice>(1).is_ok());
    assert!(other.decode::<Order>(&order_token).is_err());
}

#[test]
fn another_key_s_token_is_rejected() {
    let token = IdCodec::new(0, other_key(1)).encode::<Order>(42).unwrap();
    assert_rejected(&fips_codec(), &token);
}

#[test]
fn rotation_keeps_old_tokens_until_the_slot_is_retired() {
    let mut codec = IdCodec::new(0, other_key(0));
    let old = codec.encode::<Order>(42).unwrap();
    codec.rotate(1, other_key(1)).unwrap();
    assert_eq!(codec.primary_slot(), 1);
    assert_eq!(codec.slots().collect::<Vec<_>>(), [1, 0]);
    let new = codec.encode::<Order>(42).unwrap();
    assert_ne!(old, new);
    assert_eq!(codec.decode::<Order>(&old).unwrap(), 42);
    assert_eq!(codec.decode::<Order>(&new).unwrap(), 42);
    // The new key alone produces the new token.
    assert_eq!(
        IdCodec::new(9, other_key(1)).encode::<Order>(42).unwrap(),
        new
    );

    codec.retire(0).unwrap();
    assert_rejected(&codec, &old);
    assert_eq!(codec.decode::<Order>(&new).unwrap(), 42);

    // A decode-only key decodes but never encodes.
    let with_old = IdCodec::new(1, other_key(1))
        .with_decode_key(0, other_key(0))
        .unwrap();
    assert_eq!(with_old.decode::<Order>(&old).unwrap(), 42);
    assert_eq!(with_old.encode::<Order>(42).unwrap(), new);
}

#[test]
fn slot_management_refuses_mistakes() {
    let codec = IdCodec::new(0, other_key(0));
    let err = codec.with_decode_key(0, other_key(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key slot 0: the slot already holds a key; retire it first"
    );

    let codec = IdCodec::new(0, other_key(0));
    let err = codec.with_decode_key(1, other_key(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key slot 1: the same key is already active in slot 0"
    );

    let mut codec = IdCodec::new(0, other_key(0));
    for s in 1..4 {
        codec.rotate(s, other_key(s)).unwrap();
    }
    let err = codec.rotate(4, other_key(4)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key slot 4: 4 slots are active, the most allowed; retire one first"
    );
    assert_eq!(codec.slots().collect::<Vec<_>>(), [3, 2, 1, 0]);

    let err = codec.retire(3).unwrap_err();
    assert!(err.to_string().contains("primary"), "{err}");
    assert!(
        codec
            .retire(7)
            .unwrap_err()
            .to_string()
            .contains("no key is active")
    );
}

#[test]
fn key_lists() {
    let list = format!(" 2 : {} , 1:{}", "0f1e".repeat(16), "2d3c".repeat(16));
    let codec = IdCodec::from_key_list(&list).unwrap();
    assert_eq!(codec.slots().collect::<Vec<_>>(), [2, 1]);
    for (bad, part) in [
        ("", "key list, item 1: an item is `slot:key`"),
        ("1", "an item is `slot:key`"),
        ("x:00", r#"the slot "x" is not a number"#),
        ("300:00", r#"the slot "300" is not a number"#),
        (
            "1:abc!",
            "key list, item 1: not 64 hex digits, and not base64",
        ),
        (
            "1:abcd",
            "key list, item 1: an IdCodec key has exactly 32 bytes, this one has 3",
        ),
    ] {
        let err = IdCodec::from_key_list(bad).unwrap_err().to_string();
        assert!(err.contains(part), "{bad:?}: {err}");
    }
    let dup = format!("1:{0},2:{0}", "0f1e".repeat(16));
    assert!(
        IdCodec::from_key_list(&dup)
            .unwrap_err()
            .to_string()
            .contains("same key")
    );
}

#[test]
fn debug_shows_slots_not_keys() {
    let codec = fips_codec().with_decode_key(3, other_key(3)).unwrap();
    let debug = format!("{codec:?}");
    assert_eq!(debug, "IdCodec { primary_slot: 0, slots: [0, 3], .. }");
}

#[test]
fn decode_snowflake_rejects_negative_ids_with_the_same_error() {
    let codec = fips_codec();
    let token = codec.encode::<Order>(-5).unwrap();
    assert_eq!(codec.decode::<Order>(&token).unwrap(), -5);
    let err = codec.decode_snowflake::<Order>(&token).unwrap_err();
    assert!(matches!(err, Error::InvalidToken { .. }));
}

#[test]
fn a_codec_is_shared_across_threads() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<IdCodec>();
    let codec = std::sync::Arc::new(fips_codec());
    let handles: Vec<_> = (0..4i64)
        .map(|t| {
            let codec = std::sync::Arc::clone(&codec);
            std::thread::spawn(move || {
                for id in (t * 1000)..(t * 1000 + 1000) {
                    assert_eq!(
                        codec
                            .decode::<Order>(&codec.encode::<Order>(id).unwrap())
                            .unwrap(),
                        id
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
