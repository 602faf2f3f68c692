//! Hi-lo over a `DatabaseConnection`: what only idgen-seaorm does (IDs filled on insert, the
//! migrations). What every source shares is in idgen-testkit's conformance suite
//! (`tests/conformance.rs`).

use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
use sea_orm::DatabaseConnection;

/// The block size (the sequence's increment).
pub const BLOCK: u64 = 1000;

/// The hi-lo tests on the database `$connect` opens.
#[macro_export]
macro_rules! hilo_scenarios {
    ($connect:ident) => {
        $crate::scenarios!(@test $connect, #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            hilo_ids_filled_on_insert = common::hilo::hilo_ids_filled_on_insert);
        $crate::scenarios!(@test $connect, #[cfg(feature = "migration")] #[tokio::test]
            migrations_create_what_the_stores_use = common::hilo::migrations_create_what_the_stores_use);
    };
}

/// The migrations create the lease table and a counter: leases and hi-lo work after `up`,
/// `down` removes them.
#[cfg(feature = "migration")]
pub async fn migrations_create_what_the_stores_use(db: &DatabaseConnection) {
    use idgen_seaorm::migration::{HiLoCounterMigration, LeaseTableMigration};
    use sea_orm_migration::{MigrationTrait, MigratorTrait};

    struct Migrator;
    impl MigratorTrait for Migrator {
        fn migrations() -> Vec<Box<dyn MigrationTrait>> {
            vec![
                Box::new(LeaseTableMigration::new()),
                Box::new(HiLoCounterMigration::new("orders", BLOCK).unwrap()),
            ]
        }
    }

    // The hi-lo of the migrated counter, after `up` and after `down`.
    // Migrations own the schema here: start-up must not create what `down` dropped.
    let orders_hilo = || {
        HiLo::builder(db)
            .counter("orders")
            .block(BLOCK)
            .create_if_missing(false)
            .build()
    };

    Migrator::up(db, None).await.unwrap();
    let lease = idgen_seaorm::lease::WorkerLease::options()
        .skip_takeover_wait_for_tests_and_development(true)
        .acquire(db, &idgen_seaorm::Layout::TWITTER)
        .await
        .unwrap();
    assert_eq!(lease.node(), 0);
    let ids = orders_hilo().await.unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    drop((lease, ids));

    Migrator::down(db, None).await.unwrap();
    let err = orders_hilo().await.unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

/// `i64` IDs from the process-wide hi-lo, filled on both insert paths.
pub async fn hilo_ids_filled_on_insert(db: &DatabaseConnection) {
    use super::entities::event;
    use sea_orm::{
        ActiveModelTrait, ActiveValue::NotSet, ActiveValue::Set, ConnectionTrait, EntityTrait,
        QueryOrder, Schema,
    };

    let schema = Schema::new(db.get_database_backend());
    db.execute(&schema.create_table_from_entity(event::Entity))
        .await
        .unwrap();
    SeaOrmCounter::new(db, "hilo")
        .unwrap()
        .create(BLOCK)
        .await
        .unwrap();
    idgen_seaorm::set_hilo(HiLo::new(db, BLOCK).await.unwrap()).unwrap();

    // new() took an ID from the buffered block.
    let am = event::ActiveModel {
        kind: Set("a".into()),
        ..Default::default()
    };
    assert_eq!(am.id, Set(1));
    let a = am.insert(db).await.unwrap();
    // before_save waits for one when the field is NotSet.
    let b = event::ActiveModel {
        id: NotSet,
        kind: Set("b".into()),
    }
    .insert(db)
    .await
    .unwrap();
    assert_eq!((a.id, b.id), (1, 2));
    // Entity::insert_many of ActiveModels built with Default.
    let many: Vec<event::ActiveModel> = (0..50)
        .map(|_| event::ActiveModel {
            kind: Set("many".into()),
            ..Default::default()
        })
        .collect();
    event::Entity::insert_many(many).exec(db).await.unwrap();
    let ids = super::ids_of(
        event::Entity::find().order_by_asc(event::Column::Id),
        db,
        |e| e.id,
    )
    .await;
    assert_eq!(ids, (1..=52).collect::<Vec<i64>>());
}
