//! An order and its lines: as the shards store them ([`Order`], with internal keys) and as the
//! API shows them ([`OrderView`], public ID only).

use idgen_sqlx::{Id, PublicId, PublicIdPrefix};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::node_lease::LAYOUT;

/// The entity tag of customer IDs: `Id<Customer>` (the API's `X-Customer-Id`, the shard key).
#[derive(Debug)]
pub enum Customer {}

pub use crate::customer_id::CustomerId;

/// An order's public ID (`ord_…`). (A type alias, because utoipa's `ToSchema` derive composes a
/// generic field type such as `PublicId<Order>` from schemas of its type arguments, which
/// `Order` has none of; under an alias it takes `PublicId<Order>`'s own schema, named
/// `OrderPublicId`.)
pub type OrderPublicId = PublicId<Order>;

/// An order as stored: a Snowflake key (internal, time-ordered, unique across shards), a public
/// ID (`ord_…`, the only ID that appears in a URL or the API) and its owner.
///
/// Serialized only for the operator's report; the API shows an [`OrderView`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Order {
    /// The primary key. JSON: a string.
    pub id: Id<Order>,
    /// The ID shown to the world. JSON: `"ord_…"`.
    pub public_id: PublicId<Order>,
    /// The owner; the shard key. JSON: a string.
    pub customer_id: Id<Customer>,
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
    pub id: Id<OrderLine>,
    /// The book.
    pub title: String,
    /// How many copies.
    pub quantity: i64,
    /// The price of one copy.
    pub price_cents: i64,
}

/// A line as a caller asks for it. Unknown fields are refused.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLine {
    /// The book: 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub title: String,
    /// How many copies.
    #[schema(minimum = 1, maximum = 100)]
    #[serde(deserialize_with = "whole_number")]
    pub quantity: i64,
    /// The price of one copy, in cents.
    #[schema(minimum = 0, maximum = 1_000_000)]
    #[serde(deserialize_with = "whole_number")]
    pub price_cents: i64,
}

/// An `i64` from a JSON integer, or from a number with a zero fraction (`2.0`), which JSON
/// Schema's `integer` includes; `2.5`, a string, or a number beyond `i64` is refused, naming it.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    struct Whole;
    impl serde::de::Visitor<'_> for Whole {
        type Value = i64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom(format_args!("{v} is too large")))
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<i64, E> {
            // -2^63 (i64::MIN) is a double; 2^63 is the first double above i64::MAX.
            const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
            if v.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(&v) {
                Ok(v as i64)
            } else {
                Err(E::custom(format_args!(
                    "{v} is not a whole number within 64 bits"
                )))
            }
        }
    }
    d.deserialize_any(Whole)
}

/// An order as the API shows it: no internal key, no line keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OrderView {
    /// The order's public ID: `ord_` and 26 base32 characters.
    pub public_id: OrderPublicId,
    /// The owner. JSON: a string.
    pub customer_id: CustomerId,
    /// When the order was created (RFC 3339, UTC, milliseconds).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// The sum of the lines, in cents.
    pub total_cents: i64,
    /// The lines, in the order they were given.
    pub lines: Vec<LineView>,
}

/// A line as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LineView {
    /// The book.
    pub title: String,
    /// How many copies.
    pub quantity: i64,
    /// The price of one copy, in cents.
    pub price_cents: i64,
}

impl From<&Order> for OrderView {
    fn from(order: &Order) -> OrderView {
        // The creation time is read from the Snowflake ID: no timestamp column.
        let created_at = LAYOUT
            .decompose(order.id.to_snowflake())
            .map(|d| d.rfc3339())
            .unwrap_or_default();
        OrderView {
            public_id: order.public_id,
            customer_id: CustomerId::of_stored_order(order.customer_id),
            created_at,
            total_cents: order.total_cents,
            lines: order
                .lines
                .iter()
                .map(|l| LineView {
                    title: l.title.clone(),
                    quantity: l.quantity,
                    price_cents: l.price_cents,
                })
                .collect(),
        }
    }
}
