//! `Id<T>` as a diesel column type on real PostgreSQL, MariaDB and SQLite databases (through
//! idgen-testkit): the same `BigInt` column as `SnowflakeId`, with errors naming `T`.

#![allow(missing_docs)] // diesel's `table!` items

mod common;

use common::{OrderTag, error_chain};
use diesel::prelude::*;
use idgen_diesel::{Id, Layout, Snowflake};

diesel::table! {
    orders (id) {
        id -> BigInt,
        parent -> Nullable<BigInt>,
    }
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = orders)]
struct Order {
    id: Id<OrderTag>,
    parent: Option<Id<OrderTag>>,
}

fn new_orders() -> Vec<Order> {
    let ids = Snowflake::new(Layout::TWITTER, 5).unwrap();
    let mut previous = None;
    (0..500)
        .map(|n| {
            let id: Id<OrderTag> = ids.next_typed_id().unwrap();
            let parent = if n % 3 == 0 { None } else { previous };
            previous = Some(id);
            Order { id, parent }
        })
        .collect()
}

/// Insert, read back, filter with `eq`, `eq_any` and `find`, NULL parents, then a negative
/// value written behind the type's back.
macro_rules! check_typed_ids {
    ($conn:expr) => {{
        let conn = $conn;
        let written = new_orders();
        diesel::insert_into(orders::table)
            .values(&written)
            .execute(conn)
            .unwrap();
        let read: Vec<Order> = orders::table
            .select(Order::as_select())
            .order(orders::id)
            .load(conn)
            .unwrap();
        assert_eq!(read, written);

        let one = written[250].id;
        let found: Order = orders::table
            .find(one)
            .select(Order::as_select())
            .first(conn)
            .unwrap();
        assert_eq!(found, written[250]);
        let wanted: Vec<Id<OrderTag>> = written.iter().step_by(50).map(|o| o.id).collect();
        let mut some: Vec<Id<OrderTag>> = orders::table
            .select(orders::id)
            .filter(orders::id.eq_any(&wanted))
            .load(conn)
            .unwrap();
        some.sort();
        assert_eq!(some, wanted);
        let orphans: i64 = orders::table
            .filter(orders::parent.is_null())
            .count()
            .get_result(conn)
            .unwrap();
        assert_eq!(orphans, 167);

        diesel::sql_query("DELETE FROM orders")
            .execute(conn)
            .unwrap();
        diesel::sql_query("INSERT INTO orders (id, parent) VALUES (-5, NULL)")
            .execute(conn)
            .unwrap();
        let err = orders::table
            .select(Order::as_select())
            .load(conn)
            .unwrap_err();
        let text = error_chain(&err);
        assert!(
            text.contains(
                "-5 is not an ID of type OrderTag: an ID is between 0 and 9223372036854775807"
            ),
            "{text}"
        );
    }};
}

const CREATE: &str = "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL)";

#[tokio::test]
async fn postgres() {
    let (_db, mut conn) = common::open::<_, PgConnection>(idgen_testkit::postgres(), CREATE).await;
    check_typed_ids!(&mut conn);
}

#[tokio::test]
async fn mariadb() {
    let (_db, mut conn) = common::open::<_, MysqlConnection>(idgen_testkit::mysql(), CREATE).await;
    check_typed_ids!(&mut conn);
}

#[tokio::test]
async fn sqlite() {
    let (_db, mut conn) = common::open::<_, SqliteConnection>(
        idgen_testkit::sqlite(),
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER NULL)",
    )
    .await;
    check_typed_ids!(&mut conn);

    // A REAL is refused, naming it and the type.
    let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>("1.5"))
        .get_result::<Id<OrderTag>>(&mut conn)
        .unwrap_err();
    let text = error_chain(&err);
    assert!(
        text.contains("1.5 is not an ID of type OrderTag: the database returned a floating-point"),
        "{text}"
    );
}

/// `uuid` comes re-exported, so a user of idgen-diesel needs no `uuid` dependency of their own.
#[test]
fn uuid_is_re_exported() {
    let nil: idgen_diesel::uuid::Uuid = idgen_diesel::uuid::Uuid::nil();
    assert_eq!(idgen_diesel::PublicId::<()>::from_uuid(nil).uuid(), nil);
}
