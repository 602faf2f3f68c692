//! `Id<T>` as an sqlx column type on real PostgreSQL, MariaDB and SQLite servers (through
//! idgen-testkit): the same column as `SnowflakeId`, with decode errors naming `T`.

mod common;

use idgen_sqlx::{Id, Layout, Snowflake};
use sqlx::{Database, Decode, Encode, Executor, IntoArguments, Pool, Type};

/// The entity the IDs belong to.
struct Order;

#[derive(Debug, PartialEq, sqlx::FromRow)]
struct OrderRow {
    id: Id<Order>,
    parent: Option<Id<Order>>,
}

/// Every row of `orders`, in ID order.
const SELECT: &str = "SELECT id, parent FROM orders ORDER BY id";

/// Creates `orders` with `create`, inserts 1000 typed IDs (half with a parent) with `insert`,
/// reads them back in order, and checks a NULL parent reads as `None`.
async fn round_trip<DB>(pool: &Pool<DB>, create: &'static str, insert: &'static str)
where
    DB: Database,
    for<'q> Id<Order>: Encode<'q, DB> + Type<DB>,
    for<'r> Id<Order>: Decode<'r, DB>,
    for<'q> Option<Id<Order>>: Encode<'q, DB>,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> <DB as Database>::Arguments: IntoArguments<DB>,
    for<'r> OrderRow: sqlx::FromRow<'r, DB::Row>,
{
    sqlx::raw_sql(create).execute(pool).await.unwrap();
    let ids = Snowflake::new(Layout::TWITTER, 3).unwrap();
    let mut written = Vec::new();
    for n in 0..1000 {
        let id: Id<Order> = ids.next_typed_id().unwrap();
        let parent = (n % 2 == 0)
            .then(|| written.last().map(|r: &OrderRow| r.id))
            .flatten();
        sqlx::query(insert)
            .bind(id)
            .bind(parent)
            .execute(pool)
            .await
            .unwrap();
        written.push(OrderRow { id, parent });
    }
    let read: Vec<OrderRow> = sqlx::query_as(SELECT).fetch_all(pool).await.unwrap();
    assert_eq!(read, written);
    assert!(read.iter().any(|r| r.parent.is_none()));
}

/// A negative value written behind the type's back (in place of every row of `orders`) is a
/// decode error naming it and the type.
async fn negative_is_refused<DB>(pool: &Pool<DB>)
where
    DB: Database,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> <DB as Database>::Arguments: IntoArguments<DB>,
    for<'r> OrderRow: sqlx::FromRow<'r, DB::Row>,
{
    sqlx::raw_sql("DELETE FROM orders; INSERT INTO orders VALUES (-5, NULL)")
        .execute(pool)
        .await
        .unwrap();
    let err = sqlx::query_as::<_, OrderRow>(SELECT)
        .fetch_one(pool)
        .await
        .unwrap_err();
    common::check_decode_error(
        &err,
        &["-5 is not an ID of type Order: an ID is between 0 and 9223372036854775807"],
    );
}

#[tokio::test]
async fn postgres_round_trip_arrays_and_negative_values() {
    let db = idgen_testkit::postgres()
        .await
        .expect("a PostgreSQL database");
    let pool = db.pool();
    round_trip(
        pool,
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL)",
        "INSERT INTO orders VALUES ($1, $2)",
    )
    .await;

    // INT8[] for `= ANY($1)`.
    let all: Vec<Id<Order>> = sqlx::query_scalar("SELECT id FROM orders ORDER BY id")
        .fetch_all(pool)
        .await
        .unwrap();
    let wanted: Vec<Id<Order>> = all.iter().step_by(97).copied().collect();
    let found: Vec<Id<Order>> =
        sqlx::query_scalar("SELECT id FROM orders WHERE id = ANY($1) ORDER BY id")
            .bind(&wanted)
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(found, wanted);

    negative_is_refused(pool).await;
    db.cleanup().await.unwrap();
}

#[tokio::test]
async fn mariadb_round_trip_unsigned_columns_and_negative_values() {
    let db = idgen_testkit::mysql().await.expect("a MariaDB database");
    let pool = db.pool();
    round_trip(
        pool,
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL)",
        "INSERT INTO orders VALUES (?, ?)",
    )
    .await;

    // BIGINT UNSIGNED reads too, and a value above i64::MAX is an error naming it.
    sqlx::query("CREATE TABLE unsigned_ids (id BIGINT UNSIGNED PRIMARY KEY)")
        .execute(pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO unsigned_ids VALUES (?)")
        .bind(Id::<Order>::MAX)
        .execute(pool)
        .await
        .unwrap();
    let max: Id<Order> = sqlx::query_scalar("SELECT id FROM unsigned_ids")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(max, Id::MAX);
    sqlx::raw_sql("UPDATE unsigned_ids SET id = 9223372036854775808")
        .execute(pool)
        .await
        .unwrap();
    let err = sqlx::query_scalar::<_, Id<Order>>("SELECT id FROM unsigned_ids")
        .fetch_one(pool)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("9223372036854775808 is not an ID of type Order"),
        "{err}"
    );

    negative_is_refused(pool).await;
    db.cleanup().await.unwrap();
}

#[tokio::test]
async fn sqlite_round_trip_and_negative_values() {
    let db = idgen_testkit::sqlite().await.expect("a SQLite database");
    let pool = db.pool();
    round_trip(
        pool,
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER NULL)",
        "INSERT INTO orders VALUES (?, ?)",
    )
    .await;
    negative_is_refused(pool).await;
}

/// Hi-lo hands out typed IDs from a real counter.
#[tokio::test]
async fn hilo_hands_out_typed_ids_from_a_sqlite_counter() {
    use idgen_sqlx::hilo::HiLo;
    struct OrderLine;
    let db = idgen_testkit::sqlite().await.expect("a SQLite database");
    let ids = HiLo::builder(db.pool().clone())
        .counter("order_lines")
        .block(100)
        .create_if_missing(true)
        .build()
        .await
        .unwrap();
    let first: Id<OrderLine> = ids.next_typed_id().await.unwrap();
    let second = ids.next_typed_id::<OrderLine>().await.unwrap();
    assert_eq!((first.get(), second.get()), (1, 2));
}

/// `uuid` comes re-exported, so a user of idgen-sqlx needs no `uuid` dependency of their own.
#[test]
fn uuid_is_re_exported() {
    let nil: idgen_sqlx::uuid::Uuid = idgen_sqlx::uuid::Uuid::nil();
    assert_eq!(idgen_sqlx::PublicId::<()>::from_uuid(nil).uuid(), nil);
}
