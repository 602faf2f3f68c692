//! `SnowflakeId` as a diesel column type on a real PostgreSQL server (through idgen-testkit).

mod common;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use idgen_diesel::SnowflakeId;

const CREATE: &str =
    "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL, seq INT NOT NULL)";

async fn connection() -> (idgen_testkit::TestDb<sqlx::Postgres>, PgConnection) {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    let mut conn = PgConnection::establish(db.url()).expect("a diesel connection");
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

#[tokio::test]
async fn a_value_of_the_wrong_width_is_an_error() {
    let (_db, mut conn) = connection().await;
    let err = diesel::select(sql::<BigInt>("1::int4"))
        .get_result::<SnowflakeId>(&mut conn)
        .unwrap_err();
    let err = common::error_chain(&err);
    assert!(err.contains("less than 8 bytes"), "{err}");
    let id: SnowflakeId = diesel::select(sql::<BigInt>("9223372036854775807::int8"))
        .get_result(&mut conn)
        .unwrap();
    assert_eq!(id, SnowflakeId::MAX);
}
