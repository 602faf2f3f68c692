//! serde for [`SnowflakeId`]: a string in human-readable formats, an `i64` otherwise.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::serde_integer::{self, JsonInteger};

use crate::snowflake::SnowflakeId;
use crate::snowflake::parse_decimal;

impl Serialize for SnowflakeId {
    /// A JSON string (`"112719806108546862"`) in human-readable formats, because JavaScript's
    /// `Number` rounds integers above 2^53; an `i64` in binary formats.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            let mut buf = itoa_buf(self.get());
            serializer.serialize_str(buf.as_str())
        } else {
            serializer.serialize_i64(self.get())
        }
    }
}

impl<'de> Deserialize<'de> for SnowflakeId {
    /// Reads a decimal string or an integer; rejects negatives, floats, empty strings,
    /// whitespace, signs, leading zeros and values above `i64::MAX` with an error naming the
    /// input.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_integer::deserialize(deserializer)
    }
}

impl JsonInteger for SnowflakeId {
    const RANGE: &'static str = "an ID is an integer from 0 to 9223372036854775807";

    fn what() -> String {
        "a Snowflake ID".to_owned()
    }

    fn from_text(text: &str) -> Result<Self, crate::error::Error> {
        parse_decimal(text)
    }

    fn from_i128(value: i128) -> Result<Self, crate::error::Error> {
        SnowflakeId::try_from(value)
    }
}

/// A small stack buffer for an `i64`'s decimal digits.
fn itoa_buf(v: i64) -> DecimalBuf {
    let mut buf = DecimalBuf {
        bytes: [0; 20],
        start: 20,
    };
    let mut n = v.unsigned_abs();
    loop {
        buf.start -= 1;
        buf.bytes[buf.start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf
}

struct DecimalBuf {
    bytes: [u8; 20],
    start: usize,
}

impl DecimalBuf {
    fn as_str(&mut self) -> &str {
        // Only ASCII digits were written.
        std::str::from_utf8(&self.bytes[self.start..]).unwrap_or("")
    }
}

/// `#[serde(with = "idgen_core::serde_as_number")]`: write a [`SnowflakeId`] as a JSON
/// **number**, for internal services whose every reader handles 64-bit integers. Reading still
/// accepts a string or an integer.
///
/// Never use it for JSON that a browser or any JavaScript reads: IDs above 2^53 − 1 come out
/// changed there.
///
/// ```
/// use idgen_core::SnowflakeId;
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Row {
///     #[serde(with = "idgen_core::serde_as_number")]
///     id: SnowflakeId,
/// }
///
/// let row = Row { id: SnowflakeId::new(112719806108546862).unwrap() };
/// assert_eq!(serde_json::to_string(&row)?, r#"{"id":112719806108546862}"#);
/// let back: Row = serde_json::from_str(r#"{"id":"112719806108546862"}"#)?;
/// assert_eq!(back.id, row.id);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod as_number {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::snowflake::SnowflakeId;

    /// Serializes the ID as an `i64` number.
    pub fn serialize<S: Serializer>(id: &SnowflakeId, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(id.get())
    }

    /// Deserializes a string or an integer, as the default impl does.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<SnowflakeId, D::Error> {
        SnowflakeId::deserialize(deserializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json(text: &str) -> Result<SnowflakeId, String> {
        serde_json::from_str::<SnowflakeId>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn serializes_as_a_string() {
        let id = SnowflakeId::new(112719806108546862).unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"112719806108546862\""
        );
        assert_eq!(serde_json::to_string(&SnowflakeId::MIN).unwrap(), "\"0\"");
        assert_eq!(
            serde_json::to_string(&SnowflakeId::MAX).unwrap(),
            "\"9223372036854775807\""
        );
    }

    #[test]
    fn reads_strings_and_integers() {
        assert_eq!(
            from_json("\"112719806108546862\"").unwrap().get(),
            112719806108546862
        );
        assert_eq!(
            from_json("112719806108546862").unwrap().get(),
            112719806108546862
        );
        assert_eq!(from_json("0").unwrap().get(), 0);
        assert_eq!(from_json("9223372036854775807").unwrap(), SnowflakeId::MAX);
    }

    #[test]
    fn rejects_bad_input_naming_it() {
        crate::canonical_int::tests::assert_each_refused(
            from_json,
            &[
                ("-1", "-1 is not a Snowflake ID"),
                ("\"-1\"", "\"-1\" is not a Snowflake ID"),
                (
                    "1.5",
                    "1.5 is not a Snowflake ID: the number was read as floating point",
                ),
                ("1e3", "1000 is not a Snowflake ID"),
                ("\"\"", "\"\" is not a Snowflake ID: the text is empty"),
                ("\" 1\"", "whitespace"),
                ("\"+1\"", "sign"),
                (
                    "9223372036854775808",
                    "9223372036854775808 is not a Snowflake ID",
                ),
                ("\"9223372036854775808\"", "larger than 9223372036854775807"),
                (
                    "18446744073709551616",
                    "18446744073709552000 is not a Snowflake ID",
                ),
                ("null", "a Snowflake ID"),
                ("true", "a Snowflake ID"),
            ],
        );
    }

    #[test]
    fn as_number_writes_a_number() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Row {
            #[serde(with = "crate::serde_as_number")]
            id: SnowflakeId,
        }
        let row = Row {
            id: SnowflakeId::new(42).unwrap(),
        };
        assert_eq!(serde_json::to_string(&row).unwrap(), r#"{"id":42}"#);
        assert_eq!(serde_json::from_str::<Row>(r#"{"id":42}"#).unwrap(), row);
        assert_eq!(serde_json::from_str::<Row>(r#"{"id":"42"}"#).unwrap(), row);
    }

    proptest::proptest! {
        #[test]
        fn json_round_trip(v in 0i64..=i64::MAX) {
            let id = SnowflakeId::new(v).unwrap();
            let text = serde_json::to_string(&id).unwrap();
            proptest::prop_assert_eq!(text.clone(), format!("\"{v}\""));
            proptest::prop_assert_eq!(serde_json::from_str::<SnowflakeId>(&text).unwrap(), id);
        }
    }
}
