//! [`fill_ids_on_insert!`](crate::fill_ids_on_insert): the `ActiveModelBehavior` that fills IDs.

/// Implements `ActiveModelBehavior` for the `ActiveModel` in scope so that the named fields get
/// fresh IDs ([`GeneratedId`](crate::fill::GeneratedId)) on insert: [`preset`](crate::preset()) in `new()`
/// (so `Entity::insert` and `insert_many` of ActiveModels built with `new()`/`Default` carry
/// them) and [`fill_async`](crate::fill_async()) in `before_save` (for any field still `NotSet` on the
/// `am.insert(db)` / `am.save(db)` path, with the error if no ID can be made).
///
/// `before_save` waits for an ID on the runtime ([`next_id_async`](crate::next_id_async)), so a
/// runtime worker never sleeps there when the generator's tick is used up or its clock is
/// behind; `new()` is synchronous, so a wait there (at most the clock policy's bound) is a wait
/// of the thread that builds the ActiveModel.
///
/// Write it in the entity module instead of `impl ActiveModelBehavior for ActiveModel {}`. If the
/// entity needs its own hooks, write the impl by hand and call `preset`/`fill` the same way.
///
/// ```
/// mod order {
///     use idgen_seaorm::{PublicId, PublicIdPrefix, SnowflakeId};
///     use sea_orm::entity::prelude::*;
///
///     pub struct Order;
///     impl PublicIdPrefix for Order {
///         const PREFIX: &'static str = "ord";
///     }
///
///     #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
///     #[sea_orm(table_name = "orders")]
///     pub struct Model {
///         #[sea_orm(primary_key, auto_increment = false)]
///         pub id: SnowflakeId,
///         #[sea_orm(unique)]
///         pub public_id: PublicId<Order>,
///         pub customer: String,
///     }
///
///     #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
///     pub enum Relation {}
///
///     idgen_seaorm::fill_ids_on_insert!(id, public_id);
/// }
///
/// use idgen_seaorm::{Layout, Snowflake};
/// use sea_orm::{ActiveModelTrait, ActiveValue::Set};
///
/// idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 5)?)?;
/// let am = order::ActiveModel { customer: Set("Ada".into()), ..Default::default() };
/// assert!(am.id.is_set() && am.public_id.is_set());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! fill_ids_on_insert {
    ($($field:ident),+ $(,)?) => {
        #[$crate::__private::sea_orm::entity::prelude::async_trait::async_trait]
        impl $crate::__private::sea_orm::ActiveModelBehavior for ActiveModel {
            fn new() -> Self {
                Self {
                    $($field: $crate::preset(),)+
                    ..<Self as $crate::__private::sea_orm::ActiveModelTrait>::default()
                }
            }

            async fn before_save<C>(
                mut self,
                _db: &C,
                insert: bool,
            ) -> ::std::result::Result<Self, $crate::__private::sea_orm::DbErr>
            where
                C: $crate::__private::sea_orm::ConnectionTrait,
            {
                if insert {
                    $($crate::fill_async(&mut self.$field).await?;)+
                }
                Ok(self)
            }
        }
    };
}
