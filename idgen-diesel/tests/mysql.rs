//! `SnowflakeId` as a diesel column type on a real MySQL/MariaDB server (through idgen-testkit).

mod common;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use idgen_diesel::SnowflakeId;

const CREATE: &str = "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL, seq INT NOT NULL, public BINARY(16) NOT NULL UNIQUE)";

/// A negative ID and a negative parent, written behind the type's back.
const INSERT_NEGATIVE: &str = "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, RANDOM_BYTES(16)), (6, -7, 1, RANDOM_BYTES(16))";

/// The SQL type of `orders.public`.
type PublicSqlType = diesel::sql_types::Binary;

async fn connection() -> (idgen_testkit::TestDb<sqlx::MySql>, MysqlConnection) {
    let db = idgen_testkit::mysql()
        .await
        .expect("a MySQL/MariaDB database");
    let mut conn = MysqlConnection::establish(db.url()).expect("a diesel connection");
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

fn select(conn: &mut MysqlConnection, expr: &str) -> Result<SnowflakeId, String> {
    diesel::select(sql::<BigInt>(expr))
        .get_result::<SnowflakeId>(conn)
        .map_err(|e| common::error_chain(&e))
}

#[tokio::test]
async fn unsigned_decimal_and_floating_values_are_checked_not_truncated() {
    let (_db, mut conn) = connection().await;
    let conn = &mut conn;
    assert_eq!(select(conn, "CAST(42 AS UNSIGNED)").unwrap().get(), 42);
    assert_eq!(select(conn, "CAST(42 AS DECIMAL(20,0))").unwrap().get(), 42);
    assert_eq!(
        select(conn, "CAST(9223372036854775807 AS UNSIGNED)").unwrap(),
        SnowflakeId::MAX
    );
    for (expr, needle) in [
        (
            "CAST(18446744073709551615 AS UNSIGNED)",
            "18446744073709551615 is not a Snowflake ID",
        ),
        (
            "CAST(1.5 AS DOUBLE)",
            "1.5 is not a Snowflake ID: the database returned a floating-point value",
        ),
        (
            "CAST(1.5 AS DECIMAL(10,1))",
            "\"1.5\" is not a Snowflake ID",
        ),
        ("CAST(-3 AS SIGNED)", "-3 is not a Snowflake ID"),
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
