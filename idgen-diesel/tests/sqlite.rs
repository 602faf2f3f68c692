//! `SnowflakeId` as a diesel column type on SQLite (a file, through idgen-testkit).

mod common;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use idgen_diesel::SnowflakeId;

const CREATE: &str = "CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER NULL, seq INTEGER NOT NULL, public BLOB NOT NULL UNIQUE)";

/// A negative ID and a negative parent, written behind the type's back.
const INSERT_NEGATIVE: &str = "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, randomblob(16)), (6, -7, 1, randomblob(16))";

/// The SQL type of `orders.public`.
type PublicSqlType = diesel::sql_types::Binary;

async fn connection() -> (idgen_testkit::TestDb<sqlx::Sqlite>, SqliteConnection) {
    let db = idgen_testkit::sqlite().await.expect("a SQLite database");
    let mut conn = SqliteConnection::establish(db.name()).expect("a diesel connection");
    diesel::sql_query(CREATE).execute(&mut conn).unwrap();
    (db, conn)
}

#[tokio::test]
async fn model_round_trips_ten_thousand_rows_with_filters_order_and_nulls() {
    let (_db, mut conn) = connection().await;
    check_model_round_trip!(&mut conn);
}

#[tokio::test]
async fn negative_values_are_refused_by_name() {
    let (_db, mut conn) = connection().await;
    check_negative_is_refused!(&mut conn);
}

fn select(conn: &mut SqliteConnection, expr: &str) -> Result<SnowflakeId, String> {
    diesel::select(sql::<BigInt>(expr))
        .get_result::<SnowflakeId>(conn)
        .map_err(|e| common::error_chain(&e))
}

#[tokio::test]
async fn text_real_and_blob_values_are_checked_not_coerced() {
    let (_db, mut conn) = connection().await;
    let conn = &mut conn;
    assert_eq!(select(conn, "'42'").unwrap().get(), 42);
    assert_eq!(
        select(conn, "9223372036854775807").unwrap(),
        SnowflakeId::MAX
    );
    for (expr, needle) in [
        ("'abc'", "\"abc\" is not a Snowflake ID"),
        ("' 42'", "\" 42\" is not a Snowflake ID"),
        (
            "1.5",
            "1.5 is not a Snowflake ID: the database returned a floating-point (REAL) value",
        ),
        ("x'0102'", "a 2-byte BLOB is not a Snowflake ID"),
        ("-1", "-1 is not a Snowflake ID"),
    ] {
        let err = select(conn, expr).unwrap_err();
        assert!(err.contains(needle), "{expr}: {err}");
    }
}

#[tokio::test]
async fn a_public_id_of_the_wrong_length_is_an_error_naming_it() {
    let (_db, mut conn) = connection().await;
    let err = diesel::select(sql::<diesel::sql_types::Binary>("x'0102'"))
        .get_result::<idgen_diesel::PublicId<common::OrderTag>>(&mut conn)
        .unwrap_err();
    let err = common::error_chain(&err);
    assert!(
        err.contains(
            "a 2-byte value is not a public ID: a public ID is stored as exactly 16 bytes"
        ),
        "{err}"
    );
}
