//! serde for [`PublicId`]: the text form, in every format.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

use super::prefix::PublicIdPrefix;
use super::{PublicId, text};

/// Serializes as the text form, e.g. `"ord_01h455vb4pex5vsknk084sn02q"`.
impl<T: PublicIdPrefix + ?Sized> Serialize for PublicId<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; text::MAX_TEXT_LEN];
        serializer.serialize_str(text::format(Self::PREFIX, self.uuid().as_u128(), &mut buf))
    }
}

/// Deserializes from the canonical text form only (strict, as `FromStr`).
impl<'de, T: PublicIdPrefix + ?Sized> Deserialize<'de> for PublicId<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(TextVisitor(PhantomData))
    }
}

struct TextVisitor<T: ?Sized>(PhantomData<fn() -> T>);

impl<T: PublicIdPrefix + ?Sized> Visitor<'_> for TextVisitor<T> {
    type Value = PublicId<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if PublicId::<T>::PREFIX.is_empty() {
            f.write_str("a public ID: 26 lower-case base32 characters")
        } else {
            write!(
                f,
                "a public ID: \"{}_\" and 26 lower-case base32 characters",
                PublicId::<T>::PREFIX
            )
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        v.parse().map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use crate::public_id::{PublicId, PublicIdPrefix};

    struct Order;
    impl PublicIdPrefix for Order {
        const PREFIX: &'static str = "ord";
    }

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Row {
        public_id: PublicId<Order>,
    }

    #[test]
    fn json_is_the_text_form() {
        let row = Row {
            public_id: "ord_01h455vb4pex5vsknk084sn02q".parse().unwrap(),
        };
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(json, r#"{"public_id":"ord_01h455vb4pex5vsknk084sn02q"}"#);
        assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
    }

    #[test]
    fn json_rejects_other_types_and_non_strings() {
        for bad in [
            r#"{"public_id":"usr_01h455vb4pex5vsknk084sn02q"}"#,
            r#"{"public_id":"ORD_01H455VB4PEX5VSKNK084SN02Q"}"#,
            r#"{"public_id":"01h455vb4pex5vsknk084sn02q"}"#,
            r#"{"public_id":12}"#,
            r#"{"public_id":null}"#,
        ] {
            let err = serde_json::from_str::<Row>(bad).unwrap_err().to_string();
            assert!(err.contains("public ID"), "{bad}: {err}");
        }
    }
}
