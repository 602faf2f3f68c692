//! `PublicId` in a MySQL/MariaDB `BINARY(16)` column (a real server, through idgen-testkit).

mod common;

use common::orders::{GiftCard, Order, OrderRow, SELECT_ORDERS};
use idgen_sqlx::PublicId;
use sqlx::Row;

public_id_cases!(sqlx::MySql, idgen_testkit::mysql, columns: ("BIGINT", "BINARY(16)"),
    ["?", "?", "?", "?"], names_index: true, stored: ("SELECT HEX(public_id) FROM orders", common::orders::KNOWN_HEX));

#[tokio::test]
async fn the_text_protocol_reads_the_same_rows() {
    let (db, orders) = db_with_new_orders().await;

    // The text protocol (unprepared statements) reads the same rows.
    let text_rows = sqlx::raw_sql(SELECT_ORDERS)
        .fetch_all(db.pool())
        .await
        .unwrap();
    let read_as_text: Vec<OrderRow> = text_rows
        .iter()
        .map(|row| sqlx::FromRow::from_row(row).unwrap())
        .collect();
    assert!(read_as_text == orders);
}

#[tokio::test]
async fn wrong_length_binary_is_a_decode_error_naming_the_length() {
    // Columns written by other code: VARBINARY and BLOB keep the length.
    let db = common::with_sql(
        db_with_orders_table().await,
        "CREATE TABLE imported (public_id VARBINARY(32) NOT NULL, gift_card BLOB NULL);
         INSERT INTO imported VALUES (X'000102030405060708090a0b0c0d0e', X'000102030405060708090a0b0c0d0e0f10');",
    )
    .await;

    // Binary protocol (prepared statement).
    let err = sqlx::query_scalar::<_, PublicId<Order>>("SELECT public_id FROM imported")
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    common::orders::check_wrong_length(&err, 15);
    common::orders::gift_card_is_refused!(db.pool(), "SELECT gift_card FROM imported");

    // Text protocol (unprepared statement).
    let row = sqlx::raw_sql("SELECT public_id, gift_card FROM imported")
        .fetch_one(db.pool())
        .await
        .unwrap();
    let err = row.try_get::<PublicId<Order>, _>(0).unwrap_err();
    common::orders::check_wrong_length(&err, 15);
    let err = row.try_get::<Option<PublicId<GiftCard>>, _>(1).unwrap_err();
    common::orders::check_wrong_length(&err, 17);
}

/// What the docs warn about: `BINARY(16)` itself pads a shorter value written by other code with
/// zero bytes, so it reads back as 16 bytes (the length check cannot see it).
#[tokio::test]
async fn binary_16_pads_a_short_value_with_zero_bytes() {
    let fifteen_bytes = "X'0102030405060708090a0b0c0d0e0f'";
    let read = common::orders::public_id_written_as(db_with_orders_table(), fifteen_bytes)
        .await
        .unwrap();
    assert_eq!(
        read.to_bytes(),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0]
    );
}
