//! `Id<T>` as a sea-orm column type on real PostgreSQL, MariaDB and SQLite databases (through
//! idgen-testkit): primary key, nullable column, filters, and a negative value refused by name.

#[allow(unreachable_pub)] // sea-orm's derives need `pub`
mod order {
    use idgen_seaorm::Id;
    use sea_orm::entity::prelude::*;

    /// The entity the IDs belong to.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct OrderTag;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: Id<OrderTag>,
        pub parent: Option<Id<OrderTag>>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

use idgen_seaorm::{Id, Layout, Snowflake};
use order::OrderTag;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, Database, DatabaseConnection, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, Schema,
};

async fn check(conn: &DatabaseConnection) {
    let schema = Schema::new(conn.get_database_backend());
    conn.execute(&schema.create_table_from_entity(order::Entity))
        .await
        .unwrap();
    let ids = Snowflake::new(Layout::TWITTER, 9).unwrap();
    let mut written = Vec::new();
    for n in 0..200 {
        let id: Id<OrderTag> = ids.next_typed_id().unwrap();
        let parent = if n % 4 == 0 {
            None
        } else {
            written.last().map(|o: &order::Model| o.id)
        };
        let model = order::Model { id, parent };
        model
            .clone()
            .into_active_model()
            .insert(conn)
            .await
            .unwrap();
        written.push(model);
    }
    let read = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(conn)
        .await
        .unwrap();
    assert_eq!(read, written);
    let one = order::Entity::find_by_id(written[77].id)
        .one(conn)
        .await
        .unwrap();
    assert_eq!(one.as_ref(), Some(&written[77]));
    let children = order::Entity::find()
        .filter(order::Column::Parent.eq(written[77].id))
        .all(conn)
        .await
        .unwrap();
    assert_eq!(children, [written[78].clone()]);
    let orphans = order::Entity::find()
        .filter(order::Column::Parent.is_null())
        .all(conn)
        .await
        .unwrap();
    assert_eq!(orphans.len(), 50);

    conn.execute_unprepared("DELETE FROM orders").await.unwrap();
    conn.execute_unprepared("INSERT INTO orders (id, parent) VALUES (-5, NULL)")
        .await
        .unwrap();
    let err = order::Entity::find().all(conn).await.unwrap_err();
    assert!(
        err.to_string().contains(
            "-5 is not an ID of type OrderTag: an ID is between 0 and 9223372036854775807"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn postgres() {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    check(&Database::connect(db.url()).await.unwrap()).await;
}

#[tokio::test]
async fn mariadb() {
    let db = idgen_testkit::mysql().await.expect("a MariaDB database");
    check(&Database::connect(db.url()).await.unwrap()).await;
}

#[tokio::test]
async fn sqlite() {
    let db = idgen_testkit::sqlite().await.expect("a SQLite database");
    check(&Database::connect(db.url()).await.unwrap()).await;
}

/// `uuid` comes re-exported, so a user of idgen-seaorm needs no `uuid` dependency of their own.
#[test]
fn uuid_is_re_exported() {
    let nil: idgen_seaorm::uuid::Uuid = idgen_seaorm::uuid::Uuid::nil();
    assert_eq!(idgen_seaorm::PublicId::<()>::from_uuid(nil).uuid(), nil);
}
