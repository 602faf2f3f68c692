//! What the JSON Schema (schemars) and OpenAPI (utoipa) descriptions of the ID types say: a
//! string, a pattern matching exactly what the type's parser accepts, a format name, an example.
//! Both integrations build their schemas from this one description.

use crate::canonical_int::{self, Limit};
use crate::public_id::text;
use crate::public_id::{PublicId, PublicIdPrefix};
use crate::snowflake::SnowflakeId;
use crate::typed_id::Id;
use crate::typed_id::short_type_name;

/// A string schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StringSchema {
    /// The component / definition name, e.g. `SnowflakeId`, `OrderId`, `OrderPublicId`.
    pub(crate) name: String,
    /// A unique ID for the schema (schemars tells schemas apart by it).
    pub(crate) id: String,
    /// For people.
    pub(crate) description: String,
    /// Matches exactly the texts the parser accepts.
    pub(crate) pattern: String,
    /// The `format` keyword's value.
    pub(crate) format: &'static str,
    /// The shortest and longest text.
    pub(crate) min_length: usize,
    pub(crate) max_length: usize,
    /// One valid value.
    pub(crate) example: String,
}

/// A type with a string schema.
pub(crate) trait Described {
    fn string_schema() -> StringSchema;
}

/// Calls the macro `$impl_for` once for each ID type with a [`Described`] schema, the type's
/// generics in brackets before it: the types each schema integration implements its traits for.
macro_rules! for_each_described_type {
    ($impl_for:ident) => {
        $impl_for!([] $crate::snowflake::SnowflakeId);
        $impl_for!([T: ?Sized] $crate::typed_id::Id<T>);
        $impl_for!([T: $crate::public_id::PublicIdPrefix + ?Sized] $crate::public_id::PublicId<T>);
    };
}

/// The example of the 64-bit ID types.
const DECIMAL_EXAMPLE: &str = "112719806108546862";
/// The example of the public ID types: the TypeID spec's body.
const PUBLIC_ID_EXAMPLE: &str = "01h455vb4pex5vsknk084sn02q";

impl Described for SnowflakeId {
    fn string_schema() -> StringSchema {
        StringSchema {
            name: "SnowflakeId".into(),
            id: "idgen_core::SnowflakeId".into(),
            description: "A Snowflake ID: a time-ordered integer from 0 to 9223372036854775807, \
                          written as decimal digits without sign or leading zeros (a string, so \
                          JavaScript keeps every digit)."
                .into(),
            pattern: canonical_int::pattern(Limit::I64Max),
            format: "snowflake-id",
            min_length: 1,
            max_length: 19,
            example: DECIMAL_EXAMPLE.into(),
        }
    }
}

impl<T: ?Sized> Described for Id<T> {
    fn string_schema() -> StringSchema {
        let type_name = short_type_name::<T>();
        let name = match identifier(type_name) {
            Some(name) => format!("{name}Id"),
            None => "Id".into(),
        };
        StringSchema {
            name,
            id: format!("idgen_core::Id<{}>", std::any::type_name::<T>()),
            description: format!(
                "The ID of a {type_name}: an integer from 0 to 9223372036854775807, written as \
                 decimal digits without sign or leading zeros (a string, so JavaScript keeps \
                 every digit)."
            ),
            pattern: canonical_int::pattern(Limit::I64Max),
            format: "int64",
            min_length: 1,
            max_length: 19,
            example: DECIMAL_EXAMPLE.into(),
        }
    }
}

impl<T: PublicIdPrefix + ?Sized> Described for PublicId<T> {
    fn string_schema() -> StringSchema {
        let prefix = PublicId::<T>::PREFIX;
        let type_name = short_type_name::<T>();
        let name = match identifier(type_name) {
            Some(name) if !prefix.is_empty() => format!("{name}PublicId"),
            _ if prefix.is_empty() => "PublicId".into(),
            _ => format!("PublicId_{prefix}"),
        };
        let (description, example) = if prefix.is_empty() {
            (
                "A public ID: 26 lower-case Crockford base32 characters (TypeID without a \
                 prefix), the first 0 to 7."
                    .to_owned(),
                PUBLIC_ID_EXAMPLE.to_owned(),
            )
        } else {
            (
                format!(
                    "The public ID of a {type_name}: \"{prefix}_\" and 26 lower-case Crockford \
                     base32 characters (TypeID), the first 0 to 7."
                ),
                format!("{prefix}_{PUBLIC_ID_EXAMPLE}"),
            )
        };
        StringSchema {
            name,
            id: format!("idgen_core::PublicId<{}>", std::any::type_name::<T>()),
            description,
            pattern: text::pattern(prefix),
            format: "typeid",
            min_length: PublicId::<T>::TEXT_LEN,
            max_length: PublicId::<T>::TEXT_LEN,
            example,
        }
    }
}

/// `name` if it is a plain identifier (a component name OpenAPI accepts), else `None`.
fn identifier(name: &str) -> Option<&str> {
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

#[cfg(test)]
pub(crate) mod tests {
    use regex::Regex;

    use super::*;
    use crate::public_id::tests::{Order, PreFix, Prefix, spec_texts};

    /// A schema as an integration (`I`, a marker type) writes it: its JSON and its name.
    pub(crate) trait WrittenBy<I>: Described {
        fn json() -> serde_json::Value;
        fn name() -> String;
    }

    /// `X`'s schema, as `I` writes it, says what `X`'s description says.
    fn assert_is_the_description<I, X: WrittenBy<I>>() {
        let described = X::string_schema();
        let v = X::json();
        assert_eq!(v["type"], "string");
        assert_eq!(v["pattern"], described.pattern.as_str());
        assert_eq!(v["format"], described.format);
        assert_eq!(v["minLength"], described.min_length);
        assert_eq!(v["maxLength"], described.max_length);
        assert_eq!(v["examples"][0], described.example.as_str());
        assert_eq!(v["description"], described.description.as_str());
        assert_eq!(X::name(), described.name);
    }

    /// Every ID type's schema, as the integration `I` writes it, is its description.
    pub(crate) fn assert_each_schema_is_the_description<I>()
    where
        SnowflakeId: WrittenBy<I>,
        Id<Order>: WrittenBy<I>,
        PublicId<Order>: WrittenBy<I>,
        PublicId<()>: WrittenBy<I>,
    {
        assert_is_the_description::<I, SnowflakeId>();
        assert_is_the_description::<I, Id<Order>>();
        assert_is_the_description::<I, PublicId<Order>>();
        assert_is_the_description::<I, PublicId<()>>();
    }

    fn regex<X: Described>() -> Regex {
        Regex::new(&X::string_schema().pattern).unwrap()
    }

    /// The decimal IDs' pattern on the parser's own accepted and rejected texts.
    #[test]
    fn decimal_patterns_match_exactly_what_the_parsers_accept() {
        let texts = crate::canonical_int::tests::ACCEPTED
            .iter()
            .map(|a| a.0)
            .chain(crate::canonical_int::tests::REJECTED.iter().map(|r| r.0));
        let (snowflake, typed) = (regex::<SnowflakeId>(), regex::<Id<Order>>());
        for text in texts {
            let parsed = text.parse::<SnowflakeId>().is_ok();
            assert_eq!(snowflake.is_match(text), parsed, "{text:?}");
            assert_eq!(
                typed.is_match(text),
                text.parse::<Id<Order>>().is_ok(),
                "{text:?}"
            );
        }
    }

    /// The public IDs' patterns on the TypeID spec's valid and invalid texts, which the
    /// parser's own tests use, for every prefix there.
    #[test]
    fn public_id_patterns_match_exactly_what_the_parser_accepts() {
        fn check<T: PublicIdPrefix>(text: &str) {
            let re = regex::<PublicId<T>>();
            let parsed = text.parse::<PublicId<T>>().is_ok();
            assert_eq!(
                re.is_match(text),
                parsed,
                "{text:?} as {}",
                PublicId::<T>::PREFIX
            );
        }
        let texts = spec_texts().chain([
            "ord_01h455vb4pex5vsknk084sn02q",
            "ord_81h455vb4pex5vsknk084sn02q",
        ]);
        for text in texts {
            check::<()>(text);
            check::<Prefix>(text);
            check::<PreFix>(text);
            check::<Order>(text);
        }
    }

    #[test]
    fn every_example_parses_and_has_the_stated_length() {
        fn check<X: Described + std::str::FromStr>() {
            let s = X::string_schema();
            assert!(s.example.parse::<X>().is_ok(), "{}", s.example);
            assert!((s.min_length..=s.max_length).contains(&s.example.len()));
            assert!(Regex::new(&s.pattern).unwrap().is_match(&s.example));
        }
        check::<SnowflakeId>();
        check::<Id<Order>>();
        check::<PublicId<Order>>();
        check::<PublicId<()>>();
    }

    #[test]
    fn names_say_the_type() {
        assert_eq!(SnowflakeId::string_schema().name, "SnowflakeId");
        assert_eq!(Id::<Order>::string_schema().name, "OrderId");
        assert_eq!(Id::<()>::string_schema().name, "Id");
        assert_eq!(PublicId::<Order>::string_schema().name, "OrderPublicId");
        assert_eq!(PublicId::<()>::string_schema().name, "PublicId");
        assert_eq!(
            PublicId::<Order>::string_schema().pattern,
            "^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$"
        );
        assert_ne!(
            Id::<Order>::string_schema().id,
            Id::<Prefix>::string_schema().id
        );
    }

    proptest::proptest! {
        /// Near misses of the public-ID shape: the pattern and the parser agree.
        #[test]
        fn public_id_pattern_agrees_with_the_parser(
            s in "(ord_|ord|or_|_ord_|ORD_)?[0-9a-zA-Z_]{24,27}",
        ) {
            let re = regex::<PublicId<Order>>();
            proptest::prop_assert_eq!(re.is_match(&s), s.parse::<PublicId<Order>>().is_ok(), "{}", s);
            let re = regex::<PublicId<()>>();
            proptest::prop_assert_eq!(re.is_match(&s), s.parse::<PublicId<()>>().is_ok(), "{}", s);
        }

        /// Every single-byte change of a valid text: the pattern and the parser agree.
        #[test]
        fn one_changed_byte(v: u128, pos in 0usize..30, b in 0u8..128) {
            let mut text = PublicId::<Order>::from_uuid(uuid::Uuid::from_u128(v)).to_string().into_bytes();
            text[pos] = b;
            let text = String::from_utf8(text).unwrap();
            let re = regex::<PublicId<Order>>();
            proptest::prop_assert_eq!(re.is_match(&text), text.parse::<PublicId<Order>>().is_ok(), "{}", text);
        }
    }
}
