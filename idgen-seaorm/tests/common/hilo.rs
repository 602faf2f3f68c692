//! Hi-lo over a `DatabaseConnection`: OS processes sharing one counter, the increment check.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
use sea_orm::{DatabaseConnection, DbBackend};

/// OS processes taking IDs at once.
pub const PROCESSES: usize = 4;
/// IDs each process takes.
pub const IDS_PER_PROCESS: usize = 25_000;
/// The block size (the sequence's increment).
pub const BLOCK: u64 = 1000;
/// The environment variable that makes the test binary a hi-lo child.
pub const CHILD_URL: &str = "IDGEN_SEAORM_HILO_CHILD_URL";
const IDS_PREFIX: &str = "IDGEN_CHILD_IDS";

/// Children (this test binary running each of `child_tests`) each take `IDS_PER_PROCESS` IDs
/// from the counter `hilo` of the database at `url`: all distinct.
pub fn processes_never_share_an_id(url: &str, child_tests: &[&str]) {
    assert_eq!(child_tests.len(), PROCESSES);
    let children: Vec<_> = child_tests
        .iter()
        .map(|child_test| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", child_test, "--include-ignored", "--nocapture"])
                .env(CHILD_URL, url)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("start a child process")
        })
        .collect();
    let mut all = HashSet::new();
    for mut child in children {
        let mut ids = None;
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix(IDS_PREFIX) {
                let parsed: Vec<i64> = rest
                    .split_whitespace()
                    .map(|n| n.parse().unwrap())
                    .collect();
                ids = Some(parsed);
            }
        }
        assert!(child.wait().unwrap().success(), "a child process failed");
        let ids = ids.expect("the child prints its IDs");
        assert_eq!(ids.len(), IDS_PER_PROCESS);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "IDs increase within a process"
        );
        assert!(ids.iter().all(|&id| id >= 1));
        for id in ids {
            assert!(all.insert(id), "ID {id} was issued twice");
        }
    }
    assert_eq!(all.len(), PROCESSES * IDS_PER_PROCESS);
}

/// The child side: takes `IDS_PER_PROCESS` IDs through sea-orm and prints them.
pub async fn take_ids_as_child() {
    let url = std::env::var(CHILD_URL).expect("run by processes_never_share_an_id");
    let db = sea_orm::Database::connect(&url).await.unwrap();
    take_and_print(HiLo::new(&db, BLOCK).await.unwrap()).await;
}

/// Takes `IDS_PER_PROCESS` IDs from `ids` and prints them.
pub async fn take_and_print(ids: HiLo) {
    let mut taken = Vec::with_capacity(IDS_PER_PROCESS);
    for _ in 0..IDS_PER_PROCESS {
        taken.push(ids.next_id().await.unwrap().to_string());
    }
    println!("{IDS_PREFIX} {}", taken.join(" "));
}

/// A sequence whose increment is not the block size is refused, naming both; a counter table
/// (SQLite, MySQL) takes any block. A missing counter is named.
pub async fn wrong_increment_is_refused(db: &DatabaseConnection) {
    let err = HiLo::new(db, BLOCK).await.unwrap_err().to_string();
    assert!(err.contains("hi-lo counter hilo does not exist"), "{err}");

    SeaOrmCounter::new(db, "hilo")
        .unwrap()
        .create(BLOCK)
        .await
        .unwrap();
    let result = HiLo::new(db, 500).await;
    match db.get_database_backend() {
        DbBackend::Sqlite => {
            let ids = result.expect("a counter table takes any block");
            assert_eq!(ids.next_id().await.unwrap(), 1);
        }
        _ => {
            let err = result.unwrap_err();
            assert!(
                matches!(
                    err,
                    idgen_seaorm::CoreError::HiLoIncrementMismatch {
                        configured: 500,
                        database: 1000,
                        ..
                    }
                ),
                "{err}"
            );
            assert!(err.to_string().contains("advances by 1000"), "{err}");
        }
    }
    let ids = HiLo::new(db, BLOCK).await.unwrap();
    assert!(ids.next_id().await.unwrap() >= 1);
}

/// The hi-lo tests on the database `$connect` opens.
#[macro_export]
macro_rules! hilo_scenarios {
    ($connect:ident, $pool:ty) => {
        #[tokio::test]
        async fn hilo_wrong_increment_is_refused() {
            let (_keep, db) = $connect().await;
            common::hilo::wrong_increment_is_refused(&db).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn hilo_ids_filled_on_insert() {
            let (_keep, db) = $connect().await;
            common::hilo::hilo_ids_filled_on_insert(&db).await;
        }

        /// Two sea-orm and two sqlx (idgen-sqlx) processes share one counter.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn hilo_seaorm_and_sqlx_processes_never_share_an_id() {
            let (keep, db) = $connect().await;
            idgen_seaorm::hilo::SeaOrmCounter::new(&db, "hilo")
                .unwrap()
                .create(common::hilo::BLOCK)
                .await
                .unwrap();
            let url = keep.url().to_owned();
            tokio::task::spawn_blocking(move || {
                common::hilo::processes_never_share_an_id(
                    &url,
                    &[
                        "hilo_child_process",
                        "hilo_child_process_sqlx",
                        "hilo_child_process",
                        "hilo_child_process_sqlx",
                    ],
                )
            })
            .await
            .unwrap();
        }

        #[cfg(feature = "migration")]
        #[tokio::test]
        async fn migrations_create_what_the_stores_use() {
            let (_keep, db) = $connect().await;
            common::hilo::migrations_create_what_the_stores_use(&db).await;
        }

        #[tokio::test]
        #[ignore = "a child process of hilo_seaorm_and_sqlx_processes_never_share_an_id"]
        async fn hilo_child_process() {
            common::hilo::take_ids_as_child().await;
        }

        #[tokio::test]
        #[ignore = "a child process of hilo_seaorm_and_sqlx_processes_never_share_an_id"]
        async fn hilo_child_process_sqlx() {
            let url = std::env::var(common::hilo::CHILD_URL).unwrap();
            let pool = <$pool>::connect(&url).await.unwrap();
            let ids = idgen_sqlx::hilo::HiLo::new(&pool, common::hilo::BLOCK)
                .await
                .unwrap();
            common::hilo::take_and_print(ids).await;
        }
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

    Migrator::up(db, None).await.unwrap();
    let lease = idgen_seaorm::lease::WorkerLease::acquire(db, &idgen_seaorm::Layout::TWITTER)
        .await
        .unwrap();
    assert_eq!(lease.node(), 0);
    let ids = HiLo::builder(db)
        .counter("orders")
        .block(BLOCK)
        .build()
        .await
        .unwrap();
    assert_eq!(ids.next_id().await.unwrap(), 1);
    drop((lease, ids));

    Migrator::down(db, None).await.unwrap();
    let err = HiLo::builder(db)
        .counter("orders")
        .block(BLOCK)
        .build()
        .await
        .unwrap_err();
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
    let ids: Vec<i64> = event::Entity::find()
        .order_by_asc(event::Column::Id)
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, (1..=52).collect::<Vec<i64>>());
}
