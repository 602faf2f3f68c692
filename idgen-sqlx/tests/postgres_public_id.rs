//! `PublicId` in a PostgreSQL `UUID` column (a real server, through idgen-testkit).

mod common;

use common::orders::Order;
use idgen_sqlx::PublicId;

public_id_cases!(sqlx::Postgres, idgen_testkit::postgres, columns: ("BIGINT", "UUID"),
    ["$1", "$2", "$3", "$4"], names_index: true, stored: ("SELECT public_id::TEXT FROM orders", "01890a5d-ac96-774b-bcce-b302099a8057"));

#[tokio::test]
async fn the_lookup_uses_the_unique_index() {
    let (db, _orders) = db_with_new_orders().await;

    // The lookup uses the unique index.
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN SELECT id FROM orders WHERE public_id = '01890a5d-ac96-774b-bcce-b302099a8057'",
    )
    .fetch_all(db.pool())
    .await
    .unwrap();
    assert!(plan.concat().contains("orders_public_id"), "{plan:?}");
}

#[tokio::test]
async fn arrays_bind_to_any_and_decode() {
    let (db, orders) = db_with_new_orders().await;
    let wanted: Vec<PublicId<Order>> = orders.iter().step_by(97).map(|o| o.public_id).collect();

    common::check_pg_arrays(
        db.pool(),
        "SELECT public_id FROM orders WHERE public_id = ANY($1)",
        "SELECT $1::UUID[]",
        &wanted,
    )
    .await;
    let with_null: Vec<Option<PublicId<Order>>> =
        sqlx::query_scalar("SELECT ARRAY['01890a5d-ac96-774b-bcce-b302099a8057', NULL]::UUID[]")
            .fetch_one(db.pool())
            .await
            .unwrap();
    assert_eq!(
        with_null,
        vec![Some(common::orders::known_public_id()), None]
    );
}

/// A `uuid` column always holds 16 bytes; what could hold another length (`BYTEA`) or a text
/// (`TEXT`) is refused by type before any byte is read.
#[tokio::test]
async fn bytea_and_text_are_type_mismatches() {
    let db = db_with_orders_table().await;
    for (sql, sql_type) in [
        (r"SELECT '\x000102030405060708090a0b0c0d0e'::BYTEA", "BYTEA"),
        (
            r"SELECT '\x000102030405060708090a0b0c0d0e0f'::BYTEA",
            "BYTEA",
        ),
        ("SELECT 'ord_01h455vb4pex5vsknk084sn02q'::TEXT", "TEXT"),
    ] {
        let err = sqlx::query_scalar::<_, PublicId<Order>>(sql)
            .fetch_one(db.pool())
            .await
            .unwrap_err();
        common::check_decode_error(&err, &["mismatched types", sql_type]);
    }
}

/// The text protocol (unprepared statements) reads the same public ID as the binary one.
#[tokio::test]
async fn the_text_protocol_reads_the_same_public_id() {
    let db = db_with_orders_table().await;
    let order = common::orders::order_with(1, common::orders::known_public_id());
    insert_orders!(sqlx::Postgres, db.pool(), [order]);
    let text: PublicId<Order> = sqlx::Row::try_get(
        &sqlx::raw_sql("SELECT public_id FROM orders")
            .fetch_one(db.pool())
            .await
            .unwrap(),
        0,
    )
    .unwrap();
    assert_eq!(text, common::orders::known_public_id());
}
