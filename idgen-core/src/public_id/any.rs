//! [`AnyPublicId`]: a TypeID whose prefix is known only at run time.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

use super::PublicId;
use super::prefix::{PublicIdPrefix, prefix_problem};
use super::text::{self, excerpt};
use crate::error::Error;

/// A public ID in TypeID text (`<prefix>_<26 base32 characters>`) with **any** prefix, read
/// at run time: no marker type per prefix.
///
/// For tools, gateways and logs that meet IDs of many entity types (`ord_…`, `usr_…`, `inv_…`)
/// and route on the prefix. Parsing is the same strict code as [`PublicId`]'s: the prefix
/// (the text before the last `_`, none when there is no `_`) follows the TypeID rules (a-z and
/// `_`, at most 63 characters, not starting or ending with `_`), then exactly 26 lower-case
/// Crockford base32 characters, the first `0`–`7`. Every other text is an error naming it.
/// [`Display`](fmt::Display) writes the same text back.
///
/// The UUID inside may be any version: a [`PublicId`] holds a random v4, other TypeID producers
/// use v7, whose time [`uuid7::timestamp_ms`](crate::uuid7::timestamp_ms) reads.
///
/// ```
/// use idgen_core::{AnyPublicId, PublicId, PublicIdPrefix};
///
/// let id: AnyPublicId = "ord_01h455vb4pex5vsknk084sn02q".parse()?;
/// assert_eq!(id.prefix(), "ord");
/// assert_eq!(id.uuid().to_string(), "01890a5d-ac96-774b-bcce-b302099a8057");
/// assert_eq!(id.to_string(), "ord_01h455vb4pex5vsknk084sn02q");
/// assert_eq!(idgen_core::uuid7::timestamp_ms(id.uuid())?, 1_688_096_058_518);
///
/// // Once the prefix is known, the typed form:
/// struct Order;
/// impl PublicIdPrefix for Order {
///     const PREFIX: &'static str = "ord";
/// }
/// let typed: PublicId<Order> = id.typed()?;
/// assert_eq!(AnyPublicId::from(typed), id);
///
/// let err = "Ord_01h455vb4pex5vsknk084sn02q".parse::<AnyPublicId>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#""Ord_01h455vb4pex5vsknk084sn02q" is not a public ID: its prefix "Ord" is invalid: a public ID prefix holds only the characters a-z and '_'"#
/// );
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AnyPublicId {
    prefix: Box<str>,
    uuid: Uuid,
}

impl AnyPublicId {
    /// The public ID with `prefix` (`""` for none) holding `uuid`; fails when the prefix breaks
    /// the TypeID rules.
    ///
    /// ```
    /// use idgen_core::AnyPublicId;
    /// use idgen_core::uuid::Uuid;
    ///
    /// let id = AnyPublicId::new("invoice", Uuid::nil())?;
    /// assert_eq!(id.to_string(), "invoice_00000000000000000000000000");
    /// assert!(AnyPublicId::new("Invoice", Uuid::nil()).is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn new(prefix: &str, uuid: Uuid) -> Result<Self, Error> {
        if let Some(reason) = prefix_problem(prefix) {
            return Err(Error::PublicIdPrefixInvalid {
                input: excerpt(prefix),
                prefix: excerpt(prefix),
                reason,
            });
        }
        Ok(Self {
            prefix: prefix.into(),
            uuid,
        })
    }

    /// The prefix, without the `_` (`""` for none).
    ///
    /// ```
    /// let id: idgen_core::AnyPublicId = "pre_fix_00000000000000000000000000".parse()?;
    /// assert_eq!(id.prefix(), "pre_fix");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The UUID it holds (what a `uuid` column stores).
    ///
    /// ```
    /// let id: idgen_core::AnyPublicId = "7zzzzzzzzzzzzzzzzzzzzzzzzz".parse()?;
    /// assert_eq!(id.uuid(), idgen_core::uuid::Uuid::max());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn uuid(&self) -> Uuid {
        self.uuid
    }

    /// The typed [`PublicId<T>`], if the prefix is `T`'s; else the same error `PublicId<T>`'s
    /// parser gives for another type's text.
    ///
    /// ```
    /// use idgen_core::{AnyPublicId, PublicId, PublicIdPrefix};
    ///
    /// struct User;
    /// impl PublicIdPrefix for User {
    ///     const PREFIX: &'static str = "usr";
    /// }
    /// let id: AnyPublicId = "ord_01h455vb4pex5vsknk084sn02q".parse()?;
    /// let err = id.typed::<User>().unwrap_err();
    /// assert_eq!(err.to_string(), r#""ord_01h455vb4pex5vsknk084sn02q" is not a public ID of this type: expected the prefix "usr_", found "ord_""#);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn typed<T: PublicIdPrefix + ?Sized>(&self) -> Result<PublicId<T>, Error> {
        if *self.prefix == *PublicId::<T>::PREFIX {
            return Ok(PublicId::from_uuid(self.uuid));
        }
        Err(Error::PublicIdPrefix {
            input: excerpt(&self.to_string()),
            expected: PublicId::<T>::PREFIX,
            found: if self.prefix.is_empty() {
                String::new()
            } else {
                excerpt(&format!("{}_", self.prefix))
            },
        })
    }
}

impl fmt::Display for AnyPublicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; text::MAX_TEXT_LEN];
        f.pad(text::format(&self.prefix, self.uuid.as_u128(), &mut buf))
    }
}

impl fmt::Debug for AnyPublicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for AnyPublicId {
    type Err = Error;

    /// Parses the canonical TypeID text strictly (see the type's documentation).
    fn from_str(text: &str) -> Result<Self, Error> {
        let (prefix, value) = text::parse_any(text, text)?;
        Ok(Self {
            prefix: prefix.into(),
            uuid: Uuid::from_u128(value),
        })
    }
}

impl<T: PublicIdPrefix + ?Sized> From<PublicId<T>> for AnyPublicId {
    fn from(id: PublicId<T>) -> Self {
        Self {
            prefix: PublicId::<T>::PREFIX.into(),
            uuid: id.uuid(),
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for AnyPublicId {
    /// The text form, e.g. `"ord_01h455vb4pex5vsknk084sn02q"`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for AnyPublicId {
    /// Reads the canonical text form only (strict, as `FromStr`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl serde::de::Visitor<'_> for TextVisitor {
            type Value = AnyPublicId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a public ID: a TypeID prefix, '_' and 26 lower-case base32 characters")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<AnyPublicId, E> {
                v.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::AnyPublicId;
    use crate::error::Error;
    use crate::public_id::PublicId;
    use crate::public_id::tests::{INVALID, Order, VALID, spec_texts};

    #[test]
    fn typeid_spec_valid_vectors_parse_with_their_prefix() {
        for &(text, prefix, uuid) in VALID {
            let id: AnyPublicId = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (id.prefix(), id.uuid().to_string().as_str()),
                (prefix, uuid)
            );
            assert_eq!(id.to_string(), text);
            assert_eq!(AnyPublicId::new(prefix, id.uuid()).unwrap(), id);
        }
    }

    #[test]
    fn typeid_spec_invalid_vectors_are_rejected() {
        for &text in INVALID {
            assert!(text.parse::<AnyPublicId>().is_err(), "{text}");
        }
    }

    #[test]
    fn errors_name_the_input_and_the_fault() {
        for (text, message) in [
            (
                "_00000000000000000000000000",
                r#""_00000000000000000000000000" is not a public ID: its prefix "" is invalid: the text before '_' is empty (an ID without a prefix has no '_')"#,
            ),
            (
                "prefix__00000000000000000000000000",
                r#""prefix__00000000000000000000000000" is not a public ID: its prefix "prefix_" is invalid: a public ID prefix must not start or end with '_'"#,
            ),
            (
                "ord_01h455vb4pex5vsknk084sn02",
                r#""ord_01h455vb4pex5vsknk084sn02" is not a public ID: its base32 part has 25 characters, a public ID has exactly 26"#,
            ),
            (
                "ord_81h455vb4pex5vsknk084sn02q",
                r#""ord_81h455vb4pex5vsknk084sn02q" is not a public ID: its first base32 character is '8', the largest allowed is '7' (26 characters hold 130 bits, an ID has 128)"#,
            ),
        ] {
            assert_eq!(
                text.parse::<AnyPublicId>().unwrap_err().to_string(),
                message
            );
        }
    }

    #[test]
    fn agrees_with_the_typed_parser() {
        let texts = spec_texts().chain([
            "ord_01h455vb4pex5vsknk084sn02q",
            "usr_01h455vb4pex5vsknk084sn02q",
        ]);
        for text in texts {
            let typed = text.parse::<PublicId<Order>>();
            let any = text.parse::<AnyPublicId>();
            match (&typed, &any) {
                (Ok(t), Ok(a)) => assert_eq!(a.typed::<Order>().unwrap(), *t, "{text}"),
                (Ok(_), Err(e)) => panic!("{text}: typed accepts, any refuses: {e}"),
                (Err(_), Ok(a)) => assert_ne!(a.prefix(), "ord", "{text}"),
                (Err(_), Err(_)) => {}
            }
        }
        let err = "x_01h455vb4pex5vsknk084sn02q"
            .parse::<AnyPublicId>()
            .unwrap()
            .typed::<Order>()
            .unwrap_err();
        assert!(matches!(
            err,
            Error::PublicIdPrefix {
                expected: "ord",
                ..
            }
        ));
        let untyped = "01h455vb4pex5vsknk084sn02q".parse::<AnyPublicId>().unwrap();
        assert!(untyped.typed::<Order>().is_err());
        assert_eq!(
            untyped.typed::<()>().unwrap().to_string(),
            untyped.to_string()
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_is_the_text_form() {
        let id: AnyPublicId = "ord_01h455vb4pex5vsknk084sn02q".parse().unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""ord_01h455vb4pex5vsknk084sn02q""#);
        assert_eq!(serde_json::from_str::<AnyPublicId>(&json).unwrap(), id);
        assert!(
            serde_json::from_str::<AnyPublicId>(r#""ORD_01h455vb4pex5vsknk084sn02q""#).is_err()
        );
        assert!(serde_json::from_str::<AnyPublicId>("12").is_err());
    }

    proptest::proptest! {
        #[test]
        fn text_round_trips(prefix in "([a-z]([a-z_]{0,20}[a-z])?)?", v: u128) {
            let id = AnyPublicId::new(&prefix, crate::uuid::Uuid::from_u128(v)).unwrap();
            proptest::prop_assert_eq!(id.to_string().parse::<AnyPublicId>().unwrap(), id);
        }

        #[test]
        fn parsing_arbitrary_text_never_panics(s in "\\PC{0,100}") {
            if let Ok(id) = s.parse::<AnyPublicId>() {
                proptest::prop_assert_eq!(id.to_string(), s);
            }
        }
    }
}
