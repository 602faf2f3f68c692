//! What the three database tests share: the entities, the schema and the scenarios, each run
//! against a fresh database of every backend.

#![allow(dead_code, unreachable_pub)]

pub mod entities;
#[cfg(feature = "hilo")]
pub mod hilo;

use std::collections::HashSet;

use entities::{order, order_line, token};
use idgen_seaorm::{Layout, PublicId, Snowflake, SnowflakeId};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait,
    DatabaseConnection, DbBackend, EntityTrait, ModelTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Schema,
};

/// Tasks that insert at once, sharing the process-wide generator.
pub const TASKS: i32 = 4;
/// Rows each task inserts (4 × 2,500 = 10,000).
pub const ROWS_PER_TASK: i32 = 2_500;
/// Rows per `insert_many`.
pub const BATCH: i32 = 500;

/// A fresh test database from `db` (`idgen_testkit::postgres()`, `mysql()` or `sqlite()`) and a
/// sea-orm connection to it.
pub async fn connect_to<DB: sqlx::Database>(
    db: impl std::future::Future<Output = Result<idgen_testkit::TestDb<DB>, idgen_testkit::Error>>,
) -> (idgen_testkit::TestDb<DB>, DatabaseConnection) {
    let db = db.await.expect("a test database");
    let conn = sea_orm::Database::connect(db.url())
        .await
        .expect("sea-orm connects");
    (db, conn)
}

/// What `id` takes from each row `select` finds, in the order it finds them.
pub async fn ids_of<E: EntityTrait, T>(
    select: sea_orm::Select<E>,
    db: &DatabaseConnection,
    id: impl FnMut(E::Model) -> T,
) -> Vec<T> {
    select.all(db).await.unwrap().into_iter().map(id).collect()
}

/// Sets the process-wide generator (node 11) unless a test of this binary already did.
pub fn use_generator() {
    match idgen_seaorm::set_generator(Snowflake::new(Layout::TWITTER, 11).unwrap()) {
        Ok(()) | Err(idgen_seaorm::Error::GeneratorAlreadySet { node: 11 }) => {}
        Err(err) => panic!("{err}"),
    }
}

/// Creates `orders` and `order_lines` from the entities (so the column types are sea-orm's).
pub async fn create_tables(db: &DatabaseConnection) {
    let schema = Schema::new(db.get_database_backend());
    db.execute(&schema.create_table_from_entity(order::Entity))
        .await
        .expect("create orders");
    db.execute(&schema.create_table_from_entity(order_line::Entity))
        .await
        .expect("create order_lines");
    db.execute(&schema.create_table_from_entity(token::Entity))
        .await
        .expect("create tokens");
}

/// A new order built with `Default` (so `new()` has filled its ID).
pub fn new_order(task: i32, seq: i32, parent: Option<SnowflakeId>) -> order::ActiveModel {
    order::ActiveModel {
        customer: Set(format!("customer {task}")),
        task: Set(task),
        seq: Set(seq),
        parent: Set(parent),
        ..Default::default()
    }
}

/// An order of task 0 built with every ID column `NotSet` (without `Default`, so `new()` has
/// filled nothing).
fn order_without_ids(customer: &str, seq: i32, parent: Option<SnowflakeId>) -> order::ActiveModel {
    order::ActiveModel {
        id: NotSet,
        public_id: NotSet,
        customer: Set(customer.into()),
        task: Set(0),
        seq: Set(seq),
        parent: Set(parent),
    }
}

/// 10,000 orders through `insert_many` from concurrent tasks, IDs filled by `new()`; read back,
/// found by ID, filtered and ordered.
pub async fn insert_many_fills_ids(db: &DatabaseConnection) {
    use_generator();
    create_tables(db).await;
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            let mut inserted = Vec::new();
            let mut previous = None;
            for first in (0..ROWS_PER_TASK).step_by(BATCH as usize) {
                let batch: Vec<order::ActiveModel> = (first..first + BATCH)
                    .map(|seq| {
                        let parent = if seq % 3 == 0 { None } else { previous };
                        let am = new_order(task, seq, parent);
                        previous = Some(am.id.clone().unwrap());
                        am
                    })
                    .collect();
                inserted.extend(batch.iter().map(|am| order::Model {
                    id: am.id.clone().unwrap(),
                    public_id: am.public_id.clone().unwrap(),
                    customer: am.customer.clone().unwrap(),
                    task,
                    seq: am.seq.clone().unwrap(),
                    parent: am.parent.clone().unwrap(),
                }));
                order::Entity::insert_many(batch)
                    .exec(&db)
                    .await
                    .expect("insert a batch");
            }
            inserted
        }));
    }
    let mut inserted = Vec::new();
    for task in tasks {
        inserted.extend(task.await.expect("an insert task panicked"));
    }
    assert_eq!(inserted.len(), (TASKS * ROWS_PER_TASK) as usize);
    let distinct: HashSet<SnowflakeId> = inserted.iter().map(|m| m.id).collect();
    assert_eq!(distinct.len(), inserted.len(), "an ID was filled twice");
    let public: HashSet<PublicId<order::Order>> = inserted.iter().map(|m| m.public_id).collect();
    assert_eq!(public.len(), inserted.len(), "a public ID was filled twice");

    // Every row, unchanged, in ID order = each task's creation order.
    let read = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap();
    inserted.sort_by_key(|m| m.id);
    assert!(
        read == inserted,
        "rows read back differ from the rows inserted"
    );
    for task in 0..TASKS {
        let seqs: Vec<i32> = read
            .iter()
            .filter(|m| m.task == task)
            .map(|m| m.seq)
            .collect();
        assert_eq!(seqs, (0..ROWS_PER_TASK).collect::<Vec<_>>(), "task {task}");
    }
    let descending = order::Entity::find()
        .order_by_desc(order::Column::Id)
        .limit(3)
        .all(db)
        .await
        .unwrap();
    assert_eq!(
        descending,
        read.iter().rev().take(3).cloned().collect::<Vec<_>>()
    );

    // find_by_id.
    for model in read.iter().step_by(997) {
        let found = order::Entity::find_by_id(model.id).one(db).await.unwrap();
        assert_eq!(found.as_ref(), Some(model));
    }
    let absent = SnowflakeId::new(read.last().unwrap().id.get() + 1).unwrap();
    assert_eq!(
        order::Entity::find_by_id(absent).one(db).await.unwrap(),
        None
    );

    // Found by public ID.
    for model in read.iter().step_by(1999) {
        let found = order::Entity::find()
            .filter(order::Column::PublicId.eq(model.public_id))
            .one(db)
            .await
            .unwrap();
        assert_eq!(found.as_ref(), Some(model));
    }

    // Filters on the ID and on the nullable ID column.
    let middle = read[read.len() / 2].id;
    let above = order::Entity::find()
        .filter(order::Column::Id.gt(middle))
        .count(db)
        .await
        .unwrap();
    assert_eq!(above as usize, read.len() - read.len() / 2 - 1);
    let in_list: Vec<SnowflakeId> = read.iter().step_by(1000).map(|m| m.id).collect();
    let found = order::Entity::find()
        .filter(order::Column::Id.is_in(in_list.clone()))
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap();
    assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), in_list);
    let roots = order::Entity::find()
        .filter(order::Column::Parent.is_null())
        .count(db)
        .await
        .unwrap();
    let expected_roots = read.iter().filter(|m| m.parent.is_none()).count();
    assert_eq!(roots as usize, expected_roots);
    assert_eq!(
        expected_roots,
        (TASKS * (ROWS_PER_TASK as u32).div_ceil(3) as i32) as usize
    );
    let children_of_first = order::Entity::find()
        .filter(order::Column::Parent.eq(read[0].id))
        .all(db)
        .await
        .unwrap();
    assert!(
        children_of_first
            .iter()
            .all(|m| m.parent == Some(read[0].id))
    );
    assert_eq!(
        children_of_first.len(),
        read.iter().filter(|m| m.parent == Some(read[0].id)).count()
    );
}

/// Every insert path, and which ones fill the ID.
pub async fn insert_paths_fill_ids(db: &DatabaseConnection) {
    use_generator();
    create_tables(db).await;

    // ActiveModel path, built with Default: new() filled the ID, insert keeps it.
    let am = new_order(0, 0, None);
    let preset = am.id.clone().unwrap();
    let a = am.insert(db).await.unwrap();
    assert_eq!(a.id, preset);

    // ActiveModel path, built with every column NotSet: before_save fills the ID.
    let b = order_without_ids("b", 1, Some(a.id))
        .insert(db)
        .await
        .unwrap();
    assert!(b.id > a.id);
    assert_ne!(b.public_id, a.public_id);

    // save() of a new ActiveModel with no ID inserts, and before_save fills the ID.
    let c = order_without_ids("c", 2, None).save(db).await.unwrap();
    let c_id = c.id.clone().unwrap();
    assert!(c_id > b.id);

    assert_ne!(c.public_id.clone().unwrap(), b.public_id);

    // Entity::insert of an ActiveModel built with Default: new() filled the ID.
    let am = new_order(0, 3, None);
    let d_id = am.id.clone().unwrap();
    order::Entity::insert(am).exec(db).await.unwrap();
    assert!(d_id > c_id);

    // An ID given by hand is kept on both paths.
    let mine = SnowflakeId::new(42).unwrap();
    let mut am = new_order(0, 4, None);
    am.id = Set(mine);
    assert_eq!(am.insert(db).await.unwrap().id, mine);

    // Not covered: Entity::insert of an ActiveModel with the ID NotSet bypasses before_save.
    let no_id = order::ActiveModel {
        public_id: Set(PublicId::new()),
        ..order_without_ids("e", 5, None)
    };
    let result = order::Entity::insert(no_id).exec(db).await;
    let mut expected = vec![a.id, b.id, c_id, d_id, mine];
    if db.get_database_backend() == DbBackend::Sqlite {
        // sea-orm makes a BigInteger primary key `integer PRIMARY KEY` on SQLite, a rowid
        // alias: SQLite assigns the largest ID + 1 itself (documented in `idgen_seaorm::fill`).
        let assigned = result.expect("SQLite assigns a rowid").last_insert_id;
        assert_eq!(assigned.get(), d_id.get() + 1);
        expected.push(assigned);
    } else {
        // PostgreSQL and MariaDB refuse the row: no value for the primary key.
        assert!(result.is_err(), "{result:?}");
    }

    let ids = ids_of(
        order::Entity::find().order_by_asc(order::Column::Seq),
        db,
        |m| m.id,
    )
    .await;
    assert_eq!(ids, expected);
}

/// Orders and their lines, joined on `SnowflakeId` foreign keys.
pub async fn relations_follow_snowflake_foreign_keys(db: &DatabaseConnection) {
    use_generator();
    create_tables(db).await;
    let mut orders = Vec::new();
    for n in 0..3 {
        let order = new_order(0, n, None).insert(db).await.unwrap();
        let lines: Vec<order_line::ActiveModel> = (0..=n)
            .map(|q| order_line::ActiveModel {
                order_id: Set(order.id),
                product: Set(format!("product {q}")),
                quantity: Set(q + 1),
                ..Default::default()
            })
            .collect();
        order_line::Entity::insert_many(lines)
            .exec(db)
            .await
            .unwrap();
        orders.push(order);
    }

    for (n, order) in orders.iter().enumerate() {
        let lines = order
            .find_related(order_line::Entity)
            .order_by_asc(order_line::Column::Id)
            .all(db)
            .await
            .unwrap();
        assert_eq!(lines.len(), n + 1);
        assert!(lines.iter().all(|l| l.order_id == order.id));
        assert_eq!(
            lines.iter().map(|l| l.quantity).collect::<Vec<_>>(),
            (1..=n as i32 + 1).collect::<Vec<_>>()
        );
        let back = lines[0].find_related(order::Entity).one(db).await.unwrap();
        assert_eq!(back.as_ref(), Some(order));
    }

    let with_lines = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .find_with_related(order_line::Entity)
        .all(db)
        .await
        .unwrap();
    assert_eq!(
        with_lines
            .iter()
            .map(|(o, lines)| (o.id, lines.len()))
            .collect::<Vec<_>>(),
        orders
            .iter()
            .enumerate()
            .map(|(n, o)| (o.id, n + 1))
            .collect::<Vec<_>>()
    );

    let joined = order_line::Entity::find()
        .find_also_related(order::Entity)
        .filter(order::Column::Id.eq(orders[2].id))
        .all(db)
        .await
        .unwrap();
    assert_eq!(joined.len(), 3);
    assert!(joined.iter().all(|(_, o)| o.as_ref() == Some(&orders[2])));
}

/// `Option<SnowflakeId>` writes and reads `NULL`.
pub async fn nulls_round_trip_as_none(db: &DatabaseConnection) {
    use_generator();
    create_tables(db).await;
    let root = new_order(0, 0, None).insert(db).await.unwrap();
    let child = new_order(0, 1, Some(root.id)).insert(db).await.unwrap();
    assert_eq!(root.parent, None);
    let read_root = order::Entity::find_by_id(root.id).one(db).await.unwrap();
    assert_eq!(read_root.unwrap().parent, None);
    let read_child = order::Entity::find_by_id(child.id).one(db).await.unwrap();
    assert_eq!(read_child.unwrap().parent, Some(root.id));

    let parents: Vec<Option<SnowflakeId>> = order::Entity::find()
        .select_only()
        .column(order::Column::Parent)
        .order_by_asc(order::Column::Id)
        .into_tuple()
        .all(db)
        .await
        .unwrap();
    assert_eq!(parents, vec![None, Some(root.id)]);

    // Setting a parent back to NULL.
    let mut am: order::ActiveModel = child.into();
    am.parent = Set(None);
    let updated = am.update(db).await.unwrap();
    assert_eq!(updated.parent, None);
    let nulls = order::Entity::find()
        .filter(order::Column::Parent.is_null())
        .count(db)
        .await
        .unwrap();
    assert_eq!(nulls, 2);
}

/// A negative number in an ID column is a decode error naming it, in a model and alone.
pub async fn negative_value_is_an_error_naming_it(db: &DatabaseConnection) {
    create_tables(db).await;
    let public_id = match db.get_database_backend() {
        DbBackend::Postgres => "'00000000-0000-4000-8000-000000000001'",
        _ => "X'00000000000040008000000000000001'",
    };
    db.execute_unprepared(&format!(
        "INSERT INTO orders (id, public_id, customer, task, seq, parent) VALUES (-5, {public_id}, 'x', 0, 0, -6)"
    ))
    .await
    .unwrap();
    let err = order::Entity::find().one(db).await.unwrap_err();
    assert!(
        err.to_string().contains("-5 is not a Snowflake ID"),
        "{err}"
    );

    let err = order::Entity::find()
        .select_only()
        .column(order::Column::Parent)
        .into_tuple::<Option<SnowflakeId>>()
        .one(db)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("-6 is not a Snowflake ID"),
        "{err}"
    );
}

/// A `PublicId` primary key: filled on insert on both paths, found by ID; a public ID written
/// as raw bytes reads back as the same ID.
pub async fn public_id_primary_key(db: &DatabaseConnection) {
    use_generator();
    create_tables(db).await;
    let a = token::ActiveModel {
        label: Set("a".into()),
        order_id: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await
    .unwrap();
    let am = token::ActiveModel {
        label: Set("b".into()),
        order_id: Set(Some(idgen_seaorm::next_id().unwrap())),
        ..Default::default()
    };
    let b_id = am.id.clone().unwrap();
    let result = token::Entity::insert(am).exec(db).await.unwrap();
    assert_eq!(result.last_insert_id, b_id);
    assert_ne!(a.id, b_id);

    let found = token::Entity::find_by_id(a.id).one(db).await.unwrap();
    assert_eq!(found.as_ref(), Some(&a));
    let b = token::Entity::find_by_id(b_id)
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b.label, "b");
    assert!(b.order_id.is_some());
    assert_eq!(
        token::Entity::find_by_id(PublicId::new())
            .one(db)
            .await
            .unwrap(),
        None
    );

    // The stored form is the 16 bytes of the ID.
    let known = PublicId::from_bytes(*b"0123456789abcdef");
    let literal = match db.get_database_backend() {
        DbBackend::Postgres => format!("'{}'", known.uuid()),
        _ => format!("X'{}'", known.uuid().simple()),
    };
    db.execute_unprepared(&format!(
        "INSERT INTO tokens (id, order_id, label) VALUES ({literal}, NULL, 'raw')"
    ))
    .await
    .unwrap();
    let raw = token::Entity::find_by_id(known)
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((raw.id, raw.label.as_str()), (known, "raw"));
}

/// One `#[tokio::test]` per scenario, on the database `$connect` opens.
#[macro_export]
macro_rules! scenarios {
    ($connect:ident) => {
        $crate::scenarios!(@test $connect, #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            insert_many_of_ten_thousand_rows_fills_ids = common::insert_many_fills_ids);
        $crate::scenarios!(@test $connect, #[tokio::test]
            every_insert_path_fills_ids_except_entity_insert_of_not_set = common::insert_paths_fill_ids);
        $crate::scenarios!(@test $connect, #[tokio::test]
            relations_follow_snowflake_foreign_keys = common::relations_follow_snowflake_foreign_keys);
        $crate::scenarios!(@test $connect, #[tokio::test]
            nulls_round_trip_as_none = common::nulls_round_trip_as_none);
        $crate::scenarios!(@test $connect, #[tokio::test]
            public_id_primary_key = common::public_id_primary_key);
        $crate::scenarios!(@test $connect, #[tokio::test]
            negative_value_is_an_error_naming_it = common::negative_value_is_an_error_naming_it);
    };
    // One test `$name`: `$case` on a fresh database.
    (@test $connect:ident, $(#[$attr:meta])+ $name:ident = $case:path) => {
        $(#[$attr])+
        async fn $name() {
            let (_keep, db) = $connect().await;
            $case(&db).await;
        }
    };
}
