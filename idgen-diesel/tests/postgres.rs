//! `SnowflakeId` as a diesel column type on a real PostgreSQL server (through idgen-testkit).

mod common;

use diesel::dsl::sql;
use diesel::prelude::*;
use idgen_diesel::SnowflakeId;

column_cases!(postgres);

#[tokio::test]
async fn a_value_of_the_wrong_width_is_an_error() {
    let (_db, mut conn) = connection().await;
    check_reads(
        &mut conn,
        &[("9223372036854775807::int8", SnowflakeId::MAX.get())],
        &[("1::int4", "less than 8 bytes")],
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
