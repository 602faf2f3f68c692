//! `PublicId` in a SQLite `BLOB` column (a temporary file from idgen-testkit).

mod common;

use common::orders::{OrderRow, SELECT_ORDERS};

public_id_cases!(sqlx::Sqlite, idgen_testkit::sqlite, columns: ("INTEGER", "BLOB"),
    ["?", "?", "?", "?"], names_index: false, stored: ("SELECT hex(public_id) FROM orders", common::orders::KNOWN_HEX));

#[tokio::test]
async fn stored_as_sixteen_byte_blobs() {
    let (db, _orders) = db_with_new_orders().await;

    // 16 bytes each, as a BLOB: the prefix is not stored.
    let stored: Vec<(String, i64)> =
        sqlx::query_as("SELECT typeof(public_id), length(public_id) FROM orders GROUP BY 1, 2")
            .fetch_all(db.pool())
            .await
            .unwrap();
    assert_eq!(stored, vec![("blob".to_owned(), 16)]);
}

#[tokio::test]
async fn wrong_length_blob_is_a_decode_error_naming_the_length() {
    // 15 bytes in public_id, 17 in gift_card, written by other code.
    let db = common::with_sql(
        db_with_orders_table().await,
        "INSERT INTO orders VALUES (1, X'000102030405060708090a0b0c0d0e', 7, X'000102030405060708090a0b0c0d0e0f10')",
    )
    .await;

    let err = sqlx::query_as::<_, OrderRow>(SELECT_ORDERS)
        .fetch_one(db.pool())
        .await
        .unwrap_err();
    common::orders::check_wrong_length(&err, 15);

    common::orders::gift_card_is_refused!(db.pool(), "SELECT gift_card FROM orders");
}

#[tokio::test]
async fn text_is_a_type_mismatch_not_sixteen_bytes() {
    // 16 characters of TEXT are 16 bytes, but not an ID: refused by type, not read.
    let err = common::orders::public_id_written_as(db_with_orders_table(), "'abcdefghijklmnop'")
        .await
        .unwrap_err();
    common::check_decode_error(&err, &["mismatched types", "TEXT"]);
}
