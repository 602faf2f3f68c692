//! The checks the kit's own tests make on a database of every route (URL, containers, local
//! binaries), written once for PostgreSQL and MySQL/MariaDB.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::future::Future;

use idgen_testdb::{Error, TestDb};
use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, MySql, Pool, Postgres, Type};

/// What differs between the two servers in the checks.
pub(crate) trait Dialect: Database {
    /// Part of the error for a table of another database.
    const NO_SUCH_TABLE: &'static str;
    /// Counts the databases named by the one parameter.
    const COUNT_DATABASES: &'static str;
    /// The name of the connection's database.
    const CURRENT_DATABASE: &'static str;
}

impl Dialect for Postgres {
    const NO_SUCH_TABLE: &'static str = "does not exist";
    const COUNT_DATABASES: &'static str = "SELECT count(*) FROM pg_database WHERE datname = $1";
    const CURRENT_DATABASE: &'static str = "SELECT current_database()::text";
}

impl Dialect for MySql {
    const NO_SUCH_TABLE: &'static str = "doesn't exist";
    const COUNT_DATABASES: &'static str =
        "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?";
    const CURRENT_DATABASE: &'static str = "SELECT DATABASE()";
}

/// The queries of the checks, on any [`Dialect`] sqlx can run them on.
pub(crate) trait Queries: Dialect {
    async fn execute(pool: &Pool<Self>, sql: &'static str) -> Result<(), sqlx::Error>;
    async fn text(pool: &Pool<Self>, sql: &'static str) -> String;
    async fn count(pool: &Pool<Self>, sql: &'static str, name: &str) -> i64;
}

impl<DB> Queries for DB
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    (i64,): for<'r> FromRow<'r, DB::Row>,
    (String,): for<'r> FromRow<'r, DB::Row>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    DB::Arguments: IntoArguments<DB>,
{
    async fn execute(pool: &Pool<DB>, sql: &'static str) -> Result<(), sqlx::Error> {
        sqlx::query(sql).execute(pool).await.map(drop)
    }

    async fn text(pool: &Pool<DB>, sql: &'static str) -> String {
        sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
    }

    async fn count(pool: &Pool<DB>, sql: &'static str, name: &str) -> i64 {
        sqlx::query_scalar(sql)
            .bind(name.to_owned())
            .fetch_one(pool)
            .await
            .unwrap()
    }
}

/// Two new databases from `new` (`what`: the server, for the message if there is none).
pub(crate) async fn two<DB, F>(new: impl Fn() -> F, what: &str) -> (TestDb<DB>, TestDb<DB>)
where
    DB: Database,
    F: Future<Output = Result<TestDb<DB>, Error>>,
{
    let a = new().await.expect(what);
    let b = new().await.expect(what);
    (a, b)
}

/// `a` and `b` are two databases: a table made and written in `a` is not there in `b`.
pub(crate) async fn assert_isolated<DB: Queries>(a: &TestDb<DB>, b: &TestDb<DB>) {
    assert_ne!(a.name(), b.name());
    DB::execute(a.pool(), "CREATE TABLE t (x BIGINT)")
        .await
        .unwrap();
    DB::execute(a.pool(), "INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    let err = DB::execute(b.pool(), "SELECT x FROM t").await.unwrap_err();
    assert!(err.to_string().contains(DB::NO_SUCH_TABLE), "{err}");
}

/// The database `name` is gone from the server of `on` (after `when`: `cleanup`, `drop`).
pub(crate) async fn assert_gone<DB: Queries>(on: &TestDb<DB>, name: &str, when: &str) {
    let count = DB::count(on.pool(), DB::COUNT_DATABASES, name).await;
    assert_eq!(count, 0, "database {name} is still there after {when}");
}

/// `a.cleanup()` drops `a`'s database (seen from `b`, on the same server).
pub(crate) async fn assert_cleanup_drops<DB: Queries>(a: TestDb<DB>, b: &TestDb<DB>) {
    let name = a.name().to_owned();
    a.cleanup().await.expect("explicit cleanup");
    assert_gone(b, &name, "cleanup").await;
}

/// The pool of `db` is on `db`'s own database.
pub(crate) async fn assert_on_its_database<DB: Queries>(db: &TestDb<DB>) {
    assert_eq!(DB::text(db.pool(), DB::CURRENT_DATABASE).await, db.name());
}

/// The server's version string (`SELECT version()` on both).
pub(crate) async fn version<DB: Queries>(db: &TestDb<DB>) -> String {
    DB::text(db.pool(), "SELECT version()").await
}
