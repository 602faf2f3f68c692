//! idgen-seaorm on a real PostgreSQL server (through idgen-testkit).

mod common;

use common::entities::order;
use idgen_seaorm::SnowflakeId;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};

async fn connect() -> (idgen_testkit::TestDb<sqlx::Postgres>, DatabaseConnection) {
    common::connect_to(idgen_testkit::postgres()).await
}

scenarios!(connect);
#[cfg(feature = "hilo")]
hilo_scenarios!(connect);

#[tokio::test]
async fn eq_any_binds_an_int8_array() {
    let (_keep, db) = connect().await;
    common::use_generator();
    common::create_tables(&db).await;
    let mut ids = Vec::new();
    for seq in 0..5 {
        let am = common::new_order(0, seq, None);
        ids.push(am.id.clone().unwrap());
        order::Entity::insert(am).exec(&db).await.unwrap();
    }
    let wanted: Vec<SnowflakeId> = vec![ids[1], ids[3]];
    let found = common::ids_of(
        order::Entity::find()
            .filter(order::Column::Id.eq_any(wanted.clone()))
            .order_by_asc(order::Column::Id),
        &db,
        |m| m.id,
    )
    .await;
    assert_eq!(found, wanted);
}
