//! What the three public-ID tests share: an `orders` table with a `SnowflakeId` primary key and
//! a `PublicId<Order>` unique column, 1,000 fresh orders and the checks.

use idgen_sqlx::{PublicId, PublicIdPrefix, SnowflakeId};

/// The entity whose public IDs read `ord_…`.
pub struct Order;

impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

/// Another entity, `gft_…`, for the nullable column.
pub struct GiftCard;

impl PublicIdPrefix for GiftCard {
    const PREFIX: &'static str = "gft";
}

/// Orders the round-trip test inserts.
pub const ORDERS: usize = 1_000;
/// Orders per multi-row `INSERT`.
pub const ORDER_BATCH: usize = 250;

/// Every column of the `orders` table, in id order.
pub const SELECT_ORDERS: &str =
    "SELECT id, public_id, customer_id, gift_card FROM orders ORDER BY id";

/// The known public ID's 16 bytes in upper-case hex, as the databases' `HEX()` shows them.
pub const KNOWN_HEX: &str = "01890A5DAC96774BBCCEB302099A8057";
/// The known public ID as text without a prefix.
pub const KNOWN_TEXT: &str = "01h455vb4pex5vsknk084sn02q";

/// A known public ID (the UUID `01890a5d-ac96-774b-bcce-b302099a8057`), for the prefix checks.
pub fn known_public_id() -> PublicId<Order> {
    PublicId::from_bytes(0x01890a5d_ac96_774b_bcce_b302099a8057_u128.to_be_bytes())
}

/// One row of `orders`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct OrderRow {
    /// Internal key, for joins.
    pub id: SnowflakeId,
    /// What the world sees; unique.
    pub public_id: PublicId<Order>,
    pub customer_id: i64,
    /// The gift card paid with, or NULL (every third order).
    pub gift_card: Option<PublicId<GiftCard>>,
}

/// `ORDERS` new orders in id order: IDs from a `Snowflake`, fresh random public IDs.
pub fn new_orders() -> Vec<OrderRow> {
    let ids = super::generator(1);
    (0..ORDERS)
        .map(|i| OrderRow {
            id: ids.next_id().expect("the generator issues an ID"),
            public_id: PublicId::new(),
            customer_id: 1_000 + (i % 37) as i64,
            gift_card: (i % 3 != 0).then(PublicId::new),
        })
        .collect()
}

/// One order with the given public ID and no gift card.
pub fn order_with(id: i64, public_id: PublicId<Order>) -> OrderRow {
    OrderRow {
        id: SnowflakeId::new(id).expect("a valid ID"),
        public_id,
        customer_id: 7,
        gift_card: None,
    }
}

/// Checks the rows read back `ORDER BY id` against those inserted (already in id order).
pub fn check_read_back(inserted: &[OrderRow], read_in_id_order: &[OrderRow]) {
    assert_eq!(inserted.len(), ORDERS);
    assert_eq!(read_in_id_order.len(), ORDERS, "rows lost or added");
    assert!(
        inserted.is_sorted_by_key(|o| o.id),
        "one generator's IDs increase"
    );
    // Every column of every row is what was written, NULLs included.
    assert!(
        inserted == read_in_id_order,
        "rows read back differ from the rows inserted"
    );
    assert!(read_in_id_order.iter().any(|o| o.gift_card.is_none()));
    assert!(read_in_id_order.iter().any(|o| o.gift_card.is_some()));
}

/// Checks that the known public ID read back as `PublicId<Order>` prints with `ord_`, and that
/// the same bytes read as another type print that type's prefix: the prefix is not stored.
pub fn check_prefix_from_type(
    read: &OrderRow,
    untyped: PublicId,
    as_gift_card: PublicId<GiftCard>,
) {
    let expected = format!("ord_{KNOWN_TEXT}");
    assert_eq!(read.public_id.to_string(), expected);
    assert_eq!(format!("{:?}", read.public_id), expected);
    let json = serde_json::to_value(read).expect("an order serializes");
    assert_eq!(json["public_id"], expected.as_str());
    assert_eq!(json["gift_card"], serde_json::Value::Null);
    assert_eq!(untyped.to_string(), KNOWN_TEXT);
    assert_eq!(as_gift_card.to_string(), format!("gft_{KNOWN_TEXT}"));
}

/// Inserts `$orders` (a slice of `OrderRow`) into `orders`, `ORDER_BATCH` rows per statement.
#[macro_export]
macro_rules! insert_orders {
    ($db:ty, $pool:expr, $orders:expr) => {{
        for batch in $orders.chunks(common::orders::ORDER_BATCH) {
            let mut insert = sqlx::QueryBuilder::<$db>::new(
                "INSERT INTO orders (id, public_id, customer_id, gift_card) ",
            );
            insert.push_values(batch, |mut row, o| {
                row.push_bind(o.id)
                    .push_bind(o.public_id)
                    .push_bind(o.customer_id)
                    .push_bind(o.gift_card);
            });
            insert
                .build()
                .execute($pool)
                .await
                .expect("insert a batch of orders");
        }
    }};
}

/// `PublicId<Order>` read back from the one order in the empty `orders` table of the database
/// `db` makes, whose `public_id` other code wrote as `value` (SQL), behind the type's back.
pub async fn public_id_written_as<DB>(
    db: impl std::future::Future<Output = idgen_testkit::TestDb<DB>>,
    value: &str,
) -> Result<PublicId<Order>, sqlx::Error>
where
    DB: sqlx::Database,
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    for<'r> (PublicId<Order>,): sqlx::FromRow<'r, DB::Row>,
{
    let db = db.await;
    let insert = format!("INSERT INTO orders VALUES (1, {value}, 7, NULL)");
    sqlx::raw_sql(sqlx::AssertSqlSafe(insert))
        .execute(db.pool())
        .await
        .expect("the order as other code wrote it");
    sqlx::query_scalar("SELECT public_id FROM orders")
        .fetch_one(db.pool())
        .await
}

/// The 17-byte `gift_card` column that `$sql` reads is refused as a public ID.
#[allow(unused_macros)]
macro_rules! gift_card_is_refused {
    ($pool:expr, $sql:expr) => {{
        let err = sqlx::query_scalar::<
            _,
            Option<idgen_sqlx::PublicId<$crate::common::orders::GiftCard>>,
        >($sql)
        .fetch_one($pool)
        .await
        .unwrap_err();
        $crate::common::orders::check_wrong_length(&err, 17);
    }};
}
#[allow(unused_imports)]
pub(crate) use gift_card_is_refused;

/// `err` is a decode error naming a public ID of `len` bytes (a column written by other code).
pub fn check_wrong_length(err: &sqlx::Error, len: usize) {
    let expected =
        format!("a {len}-byte value is not a public ID: a public ID is stored as exactly 16 bytes");
    super::check_decode_error(err, &[&expected]);
}
