//! An order and its lines: as the shards store them ([`Order`], with internal keys) and as the
//! API shows them ([`OrderView`], public ID only).

use idgen_sqlx::{Id, PublicId, PublicIdPrefix};
use serde::{Deserialize, Serialize};

use crate::node_lease::LAYOUT;

/// The entity tag of customer IDs: `Id<Customer>` (the API's `X-Customer-Id`, the shard key).
#[derive(Debug)]
pub enum Customer {}

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
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewLine {
    /// The book (1 to 200 characters).
    pub title: String,
    /// How many copies (1 to 100).
    pub quantity: i64,
    /// The price of one copy (0 to 1,000,000 cents).
    pub price_cents: i64,
}

/// An order as the API shows it: no internal key, no line keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderView {
    /// The order's public ID: `ord_` and 26 base32 characters.
    pub public_id: PublicId<Order>,
    /// The owner. JSON: a string.
    pub customer_id: Id<Customer>,
    /// When the order was created (RFC 3339, UTC, milliseconds).
    pub created_at: String,
    /// The sum of the lines, in cents.
    pub total_cents: i64,
    /// The lines, in the order they were given.
    pub lines: Vec<LineView>,
}

/// A line as the API shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
            customer_id: order.customer_id,
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
