//! An order and its lines, as the shards store them and as the API shows them.

use idgen_sqlx::{PublicId, PublicIdPrefix, SnowflakeId};
use serde::{Deserialize, Serialize};

/// An order: a Snowflake key (internal, time-ordered), a public ID (`ord_…`, the only ID that
/// appears in a URL) and its owner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Order {
    /// The primary key, unique across all shards. JSON: a string.
    pub id: SnowflakeId,
    /// The ID shown to the world. JSON: `"ord_…"`.
    pub public_id: PublicId<Order>,
    /// The owner; the shard key. JSON: a string.
    #[serde(with = "id_string")]
    pub customer_id: i64,
    /// The sum of the lines.
    pub total_cents: i64,
    /// The lines, oldest first.
    pub lines: Vec<OrderLine>,
}

impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

/// One line of an order, keyed by a hi-lo ID from the central counter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OrderLine {
    /// The primary key, unique across all shards. JSON: a string.
    #[serde(with = "id_string")]
    pub id: i64,
    /// The book.
    pub title: String,
    /// How many copies.
    pub quantity: i64,
    /// The price of one copy.
    pub price_cents: i64,
}

/// A line as a caller asks for it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct NewLine {
    /// The book.
    pub title: String,
    /// How many copies (1 to 100).
    pub quantity: i64,
    /// The price of one copy (0 to 1,000,000 cents).
    pub price_cents: i64,
}

/// Integer IDs as JSON strings (JavaScript's numbers hold integers up to 2^53 only); accepts a
/// string or an integer on input.
pub mod id_string {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `value` as a string.
    pub fn serialize<S: Serializer>(value: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    /// Reads a string or an integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Int(i64),
            Text(String),
        }
        match Either::deserialize(d)? {
            Either::Int(n) => Ok(n),
            Either::Text(t) => t
                .parse()
                .map_err(|_| serde::de::Error::custom(format!("{t:?} is not an integer ID"))),
        }
    }
}
