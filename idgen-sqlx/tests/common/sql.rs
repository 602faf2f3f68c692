//! Plain SQL on a test database: a pool of a given size, a statement run, one value read.

use idgen_testkit::TestDb;
use sqlx::{ColumnIndex, Database, Decode, Executor, IntoArguments, Pool, Type};

/// A fresh database from `testdb` (`idgen_testkit::postgres()`, `mysql()` or `sqlite()`) and a
/// pool of its own of up to `connections` connections to it.
pub async fn database<DB: Database>(
    testdb: impl Future<Output = Result<TestDb<DB>, idgen_testkit::Error>>,
    connections: u32,
) -> (TestDb<DB>, Pool<DB>) {
    let db = testdb.await.expect("a database");
    let pool = db.pool_of(connections).await.expect("a pool");
    (db, pool)
}

/// Runs `sql` (one statement or several), panicking with the statement when it fails.
pub async fn run(pool: &impl TestPool, sql: &str) {
    pool.run(sql).await
}

/// The one value `sql` selects, as a number.
pub async fn number(pool: &impl TestPool, sql: &str) -> i64 {
    pool.number(sql).await
}

/// The one value `sql` selects, as text ("" for NULL).
pub async fn text(pool: &impl TestPool, sql: &str) -> String {
    pool.text(sql).await
}

/// A pool of any of the three databases, as the functions above use it (sqlx's bounds, once).
pub trait TestPool {
    /// See [`run`].
    fn run(&self, sql: &str) -> impl Future<Output = ()>;
    /// See [`number`].
    fn number(&self, sql: &str) -> impl Future<Output = i64>;
    /// See [`text`].
    fn text(&self, sql: &str) -> impl Future<Output = String>;
}

impl<DB: Database> TestPool for Pool<DB>
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    DB::Arguments: IntoArguments<DB>,
    i64: Type<DB> + for<'r> Decode<'r, DB>,
    String: Type<DB> + for<'r> Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    async fn run(&self, sql: &str) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    async fn number(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_one(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    async fn text(&self, sql: &str) -> String {
        sqlx::query_scalar::<_, Option<String>>(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_one(self)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_default()
    }
}
