//! `SnowflakeId` as a diesel column type on a real PostgreSQL server (through idgen-testkit).

mod common;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use idgen_diesel::SnowflakeId;

const CREATE: &str = "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL, seq INT NOT NULL, public UUID NOT NULL UNIQUE)";

/// A negative ID and a negative parent, written behind the type's back.
const INSERT_NEGATIVE: &str = "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, gen_random_uuid()), (6, -7, 1, gen_random_uuid())";

/// The SQL type of `orders.public`.
type PublicSqlType = diesel::sql_types::Uuid;

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

#[tokio::test]
async fn a_public_id_of_the_wrong_length_is_an_error_naming_it() {
    let (_db, mut conn) = connection().await;
    let err = diesel::select(sql::<diesel::sql_types::Binary>("'\\x0102'::bytea"))
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

#[tokio::test]
async fn a_public_id_reads_a_postgres_uuid_as_its_16_bytes() {
    let (_db, mut conn) = connection().await;
    let text = "'0190a6c2-8f34-7b6e-9d2a-1f3c5e7a9b0d'::uuid";
    let id: idgen_diesel::PublicId<common::OrderTag> =
        diesel::select(sql::<diesel::sql_types::Uuid>(text))
            .get_result(&mut conn)
            .unwrap();
    assert_eq!(
        id.uuid().to_string(),
        "0190a6c2-8f34-7b6e-9d2a-1f3c5e7a9b0d"
    );
    let back: String = diesel::select(
        sql::<diesel::sql_types::Text>("")
            .bind::<diesel::sql_types::Uuid, _>(id)
            .sql("::text"),
    )
    .get_result(&mut conn)
    .unwrap();
    assert_eq!(back, "0190a6c2-8f34-7b6e-9d2a-1f3c5e7a9b0d");
}
