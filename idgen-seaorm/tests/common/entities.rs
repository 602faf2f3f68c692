//! The test entities: orders (with a nullable parent order) and their lines.

pub mod order {
    use idgen_seaorm::{PublicId, PublicIdPrefix, SnowflakeId};
    use sea_orm::entity::prelude::*;

    /// The public ID type of orders.
    pub struct Order;
    impl PublicIdPrefix for Order {
        const PREFIX: &'static str = "ord";
    }

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "orders")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: SnowflakeId,
        #[sea_orm(unique)]
        pub public_id: PublicId<Order>,
        pub customer: String,
        /// Which task inserted the row.
        pub task: i32,
        /// The position of the row in its task's creation order.
        pub seq: i32,
        /// The task's previous order, or NULL.
        pub parent: Option<SnowflakeId>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {
        #[sea_orm(has_many = "super::order_line::Entity")]
        Lines,
    }

    impl Related<super::order_line::Entity> for Entity {
        fn to() -> RelationDef {
            Relation::Lines.def()
        }
    }

    idgen_seaorm::fill_ids_on_insert!(id, public_id);
}

pub mod order_line {
    use idgen_seaorm::SnowflakeId;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "order_lines")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: SnowflakeId,
        pub order_id: SnowflakeId,
        pub product: String,
        pub quantity: i32,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {
        #[sea_orm(
            belongs_to = "super::order::Entity",
            from = "Column::OrderId",
            to = "super::order::Column::Id"
        )]
        Order,
    }

    impl Related<super::order::Entity> for Entity {
        fn to() -> RelationDef {
            Relation::Order.def()
        }
    }

    idgen_seaorm::fill_ids_on_insert!(id);
}

/// A table whose primary key is a public ID.
pub mod token {
    use idgen_seaorm::{PublicId, SnowflakeId};
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "tokens")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: PublicId,
        pub order_id: Option<SnowflakeId>,
        pub label: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    idgen_seaorm::fill_ids_on_insert!(id);
}

/// A table whose `i64` primary key comes from the process-wide hi-lo.
pub mod event {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "events")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i64,
        pub kind: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    idgen_seaorm::fill_ids_on_insert!(id);
}
