//! Tests of `PublicId`'s text form: TypeID spec vectors, errors, properties.

use std::collections::HashSet;

use proptest::prelude::*;

use crate::error::Error;
use crate::public_id::{PublicId, PublicIdPrefix};

/// Declares prefix types: `Name = "prefix"`.
macro_rules! prefix_types {
    ($($name:ident = $prefix:literal),+ $(,)?) => {$(
        pub(crate) struct $name;
        impl PublicIdPrefix for $name {
            const PREFIX: &'static str = $prefix;
        }
    )+};
}

// The prefix types of the public-ID tests here, in `codec` and in `integrations::schema`: the
// TypeID spec's two prefixes, and two entities.
prefix_types! {
    Prefix = "prefix",
    PreFix = "pre_fix",
    Order = "ord",
    User = "usr",
}

/// TypeID spec v0.3.0, spec/valid.yml (jetify-com/typeid): text, prefix, UUID.
pub(crate) const VALID: &[(&str, &str, &str)] = &[
    (
        "00000000000000000000000000",
        "",
        "00000000-0000-0000-0000-000000000000",
    ),
    (
        "00000000000000000000000001",
        "",
        "00000000-0000-0000-0000-000000000001",
    ),
    (
        "0000000000000000000000000a",
        "",
        "00000000-0000-0000-0000-00000000000a",
    ),
    (
        "0000000000000000000000000g",
        "",
        "00000000-0000-0000-0000-000000000010",
    ),
    (
        "00000000000000000000000010",
        "",
        "00000000-0000-0000-0000-000000000020",
    ),
    (
        "7zzzzzzzzzzzzzzzzzzzzzzzzz",
        "",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ),
    (
        "prefix_0123456789abcdefghjkmnpqrs",
        "prefix",
        "0110c853-1d09-52d8-d73e-1194e95b5f19",
    ),
    (
        "prefix_01h455vb4pex5vsknk084sn02q",
        "prefix",
        "01890a5d-ac96-774b-bcce-b302099a8057",
    ),
    (
        "pre_fix_00000000000000000000000000",
        "pre_fix",
        "00000000-0000-0000-0000-000000000000",
    ),
];

/// TypeID spec v0.3.0, spec/invalid.yml.
pub(crate) const INVALID: &[&str] = &[
    "PREFIX_00000000000000000000000000",
    "12345_00000000000000000000000000",
    "pre.fix_00000000000000000000000000",
    "préfix_00000000000000000000000000",
    "  prefix_00000000000000000000000000",
    "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000",
    "_00000000000000000000000000",
    "_",
    "prefix_1234567890123456789012345",
    "prefix_123456789012345678901234567",
    "prefix_1234567890123456789012345 ",
    "prefix_0123456789ABCDEFGHJKMNPQRS",
    "prefix_123456789-123456789-123456",
    "prefix_ooooooiiiiiiuuuuuuulllllll",
    "prefix_i23456789ol23456789oi23456",
    "prefix_123456789-0123456789-0123456",
    "prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz",
    "_prefix_00000000000000000000000000",
    "prefix__00000000000000000000000000",
];

/// The spec's valid texts, then its invalid ones: for parsers that must agree with this one.
pub(crate) fn spec_texts() -> impl Iterator<Item = &'static str> {
    VALID.iter().map(|v| v.0).chain(INVALID.iter().copied())
}

fn check_valid<T: PublicIdPrefix>(text: &str, uuid: &str) {
    let id: PublicId<T> = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(id.uuid().to_string(), uuid);
    assert_eq!(id.to_string(), text);
    assert_eq!(
        PublicId::<T>::from_uuid(uuid.parse().unwrap()).to_string(),
        text
    );
}

#[test]
fn typeid_spec_valid_vectors() {
    for &(text, prefix, uuid) in VALID {
        match prefix {
            "" => check_valid::<()>(text, uuid),
            "prefix" => check_valid::<Prefix>(text, uuid),
            "pre_fix" => check_valid::<PreFix>(text, uuid),
            _ => unreachable!(),
        }
    }
}

#[test]
fn typeid_spec_invalid_vectors() {
    for &text in INVALID {
        assert!(text.parse::<PublicId<Prefix>>().is_err(), "{text}");
        assert!(text.parse::<PublicId<()>>().is_err(), "{text}");
        assert!(text.parse::<PublicId<PreFix>>().is_err(), "{text}");
        // Case folding accepts exactly the two upper-case vectors, by design.
        let folded = PublicId::<Prefix>::parse_ignore_case(text);
        let upper_case_vector = text.starts_with("PREFIX_") || text.ends_with("ABCDEFGHJKMNPQRS");
        assert_eq!(folded.is_ok(), upper_case_vector, "{text}");
    }
    assert_eq!(
        PublicId::<Prefix>::parse_ignore_case("prefix_0123456789ABCDEFGHJKMNPQRS")
            .unwrap()
            .to_string(),
        "prefix_0123456789abcdefghjkmnpqrs"
    );
}

#[test]
fn each_error_names_what_is_wrong() {
    let cases: &[(&str, &str)] = &[
        (
            "usr_01h455vb4pex5vsknk084sn02q",
            r#""usr_01h455vb4pex5vsknk084sn02q" is not a public ID of this type: expected the prefix "ord_", found "usr_""#,
        ),
        (
            "01h455vb4pex5vsknk084sn02q",
            r#""01h455vb4pex5vsknk084sn02q" is not a public ID of this type: expected the prefix "ord_", found no prefix"#,
        ),
        (
            "ord_01h455vb4pex5vsknk084sn02",
            r#""ord_01h455vb4pex5vsknk084sn02" is not a public ID: its base32 part has 25 characters, a public ID has exactly 26"#,
        ),
        (
            "ord_01h455vb4pex5vsknk084sn0uq",
            r#""ord_01h455vb4pex5vsknk084sn0uq" is not a public ID: character 'u' at position 24 of the base32 part is not in the Crockford alphabet (0-9 a-z without i, l, o, u; no aliases)"#,
        ),
        (
            "ord_01H455vb4pex5vsknk084sn02q",
            r#""ord_01H455vb4pex5vsknk084sn02q" is not a public ID: character 'H' at position 2 of the base32 part is upper-case; public IDs are lower-case (see `PublicId::parse_ignore_case`)"#,
        ),
        (
            "ord_01h455vb4pex5vsknk084sn0éq",
            r#""ord_01h455vb4pex5vsknk084sn0éq" is not a public ID: character 'é' at position 24 of the base32 part is not in the Crockford alphabet 0-9 a-z without i, l, o, u"#,
        ),
        (
            "ord_81h455vb4pex5vsknk084sn02q",
            r#""ord_81h455vb4pex5vsknk084sn02q" is not a public ID: its first base32 character is '8', the largest allowed is '7' (26 characters hold 130 bits, an ID has 128)"#,
        ),
    ];
    for (input, message) in cases {
        let err = input.parse::<PublicId<Order>>().unwrap_err();
        assert_eq!(&err.to_string(), message);
    }
    assert!(matches!(
        "ord_81h455vb4pex5vsknk084sn02q".parse::<PublicId<Order>>(),
        Err(Error::PublicIdOverflow { found: '8', .. })
    ));
    let err = "x_01h455vb4pex5vsknk084sn02q"
        .parse::<PublicId>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#""x_01h455vb4pex5vsknk084sn02q" is not a public ID of this type: expected no prefix, found "x_""#
    );
    // A long input is cut in the message.
    let long = "a".repeat(10_000);
    assert!(
        long.parse::<PublicId<Order>>()
            .unwrap_err()
            .to_string()
            .len()
            < 200
    );
}

#[test]
fn conversions_round_trip() {
    let id = PublicId::<Order>::new();
    assert_eq!(PublicId::<Order>::from(uuid::Uuid::from(id)), id);
    assert_eq!(PublicId::<Order>::from(<[u8; 16]>::from(id)), id);
    assert_eq!(id.as_ref(), id.as_bytes());
    assert_eq!(id.cast::<()>().cast::<Order>(), id);
    assert_eq!(format!("{id:?}"), id.to_string());
    assert_eq!(format!("{id:>32}"), format!("  {id}"));
    assert_eq!(PublicId::<Order>::TEXT_LEN, 30);
    assert_eq!(PublicId::<()>::TEXT_LEN, 26);
}

#[test]
fn traits_do_not_require_them_of_the_type() {
    // `Order` is neither Clone, Eq, Ord nor Hash; PublicId<Order> is all of them.
    fn all<X: Copy + Eq + Ord + std::hash::Hash + Send + Sync + Unpin>() {}
    all::<PublicId<Order>>();
    all::<PublicId<dyn std::any::Any>>();
}

#[test]
fn a_million_new_ids_are_distinct_and_random() {
    let mut seen = HashSet::with_capacity(1_000_000);
    for _ in 0..1_000_000 {
        let id = PublicId::<Order>::new();
        assert_eq!(id.uuid().get_version_num(), 4);
        assert!(seen.insert(id.uuid().as_u128()), "duplicate public ID {id}");
    }
}

#[test]
fn text_order_is_byte_order() {
    let mut ids: Vec<PublicId<Order>> = (0..1000).map(|_| PublicId::new()).collect();
    ids.sort();
    let texts: Vec<String> = ids.iter().map(ToString::to_string).collect();
    assert!(texts.windows(2).all(|w| w[0] < w[1]));
}

proptest! {
    #[test]
    fn text_round_trips_with_fixed_length(v: u128) {
        let id = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v));
        let text = id.to_string();
        prop_assert_eq!(text.len(), PublicId::<Order>::TEXT_LEN);
        prop_assert!(text.bytes().all(|b| !b.is_ascii_uppercase()));
        prop_assert_eq!(text.parse::<PublicId<Order>>().unwrap(), id);
        let untyped = id.cast::<()>().to_string();
        prop_assert_eq!(untyped.len(), 26);
        prop_assert_eq!(&text[4..], untyped.as_str());
    }

    /// Any text that parses is the canonical spelling of its value: one spelling per value.
    #[test]
    fn only_the_canonical_spelling_parses(s in "ord_[0-7]([0-9a-hjkmnp-tv-z]{25}|[0-9a-hjkmnp-tv-zA-Z]{25})") {
        match s.parse::<PublicId<Order>>() {
            Ok(id) => prop_assert_eq!(id.to_string(), s),
            Err(_) => prop_assert!(s.bytes().any(|b| b.is_ascii_uppercase()), "{} rejected", s),
        }
    }

    /// Other spellings of the same value — upper-case letters, Crockford's aliases (`o` for 0,
    /// `i`/`l` for 1), the two padding bits set — are all rejected by the strict parser.
    #[test]
    fn other_spellings_of_a_value_are_rejected(v: u128, positions: u32, kind in 0u8..3) {
        let id = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v));
        let canonical = id.to_string();
        let mut body: Vec<u8> = canonical.as_bytes()[4..].to_vec();
        match kind {
            0 => {
                for (i, b) in body.iter_mut().enumerate() {
                    if positions & (1 << i) != 0 {
                        *b = b.to_ascii_uppercase();
                    }
                }
            }
            1 => {
                for (i, b) in body.iter_mut().enumerate() {
                    if positions & (1 << i) != 0 {
                        *b = match *b {
                            b'0' => b'o',
                            b'1' if i % 2 == 0 => b'i',
                            b'1' => b'l',
                            other => other.to_ascii_uppercase(),
                        };
                    }
                }
            }
            _ => {
                // The same 128 bits with bit 128 or 129 set: first character + 8, 16 or 24.
                let value = super::base32::ALPHABET.iter().position(|&c| c == body[0]).unwrap();
                let plus = 8 * (1 + (positions % 3) as usize);
                body[0] = super::base32::ALPHABET[value + plus];
            }
        }
        let variant = format!("ord_{}", String::from_utf8(body).unwrap());
        if variant != canonical {
            prop_assert!(variant.parse::<PublicId<Order>>().is_err(), "{} was accepted", variant);
        }
        if kind == 0 {
            // Case folding is the one opt-in exception, and it gives back the same value.
            prop_assert_eq!(PublicId::<Order>::parse_ignore_case(&variant).unwrap(), id);
        }
    }

    /// Changing one character of a valid text either fails or gives another value.
    #[test]
    fn a_changed_character_never_gives_the_same_value(v: u128, pos in 0usize..30, c in any::<char>()) {
        let id = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v));
        let mut chars: Vec<char> = id.to_string().chars().collect();
        prop_assume!(chars[pos] != c);
        chars[pos] = c;
        let changed: String = chars.into_iter().collect();
        if let Ok(other) = changed.parse::<PublicId<Order>>() {
            prop_assert_ne!(other, id);
        }
    }

    #[test]
    fn ignore_case_agrees_with_strict_on_lower_case(v: u128) {
        let text = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v)).to_string();
        let upper = text.to_ascii_uppercase();
        prop_assert_eq!(
            PublicId::<Order>::parse_ignore_case(&upper).unwrap(),
            text.parse::<PublicId<Order>>().unwrap()
        );
        prop_assert!(upper.parse::<PublicId<Order>>().is_err());
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(s in "\\PC{0,100}") {
        let _ = s.parse::<PublicId<Order>>();
        let _ = s.parse::<PublicId<()>>();
        let _ = PublicId::<PreFix>::parse_ignore_case(&s);
    }
}

#[test]
fn display_honours_width_fill_and_precision() {
    let id: PublicId<Order> = "ord_01h455vb4pex5vsknk084sn02q".parse().unwrap();
    assert_eq!(format!("{id}"), "ord_01h455vb4pex5vsknk084sn02q");
    assert_eq!(format!("{id:>32}"), "  ord_01h455vb4pex5vsknk084sn02q");
    assert_eq!(format!("{id:*<31}"), "ord_01h455vb4pex5vsknk084sn02q*");
    assert_eq!(format!("{id:.3}"), "ord");
    assert_eq!(format!("{id:?}"), "ord_01h455vb4pex5vsknk084sn02q");
}

#[test]
fn display_of_the_longest_prefix_fills_the_largest_buffer() {
    struct Longest;
    impl PublicIdPrefix for Longest {
        const PREFIX: &'static str =
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk";
    }
    let id = PublicId::<Longest>::from_bytes([0xff; 16]);
    let text = id.to_string();
    assert_eq!(text.len(), crate::public_id::MAX_TEXT_LEN);
    assert_eq!(text.len(), PublicId::<Longest>::TEXT_LEN);
    assert!(text.ends_with("_7zzzzzzzzzzzzzzzzzzzzzzzzz"), "{text}");
    assert_eq!(text.parse::<PublicId<Longest>>().unwrap(), id);
    let mut buf = [0u8; crate::public_id::MAX_TEXT_LEN];
    assert_eq!(id.encode_to(&mut buf), text);
}
