//! idgen-sqlx's lease stores and hi-lo sources as conformance subjects (idgen-testkit's
//! `LeaseSubject` and `HiLoSubject`), one per database, and the MySQL counter in table mode.
//!
//! Written once for the two test binaries that run them: idgen-sqlx's own conformance suites,
//! and idgen-diesel's cross-adapter cases, where an sqlx process shares one lease table and one
//! counter with diesel processes (that file includes this one with `#[path]`).

use std::str::FromStr;
use std::time::Duration;

use idgen_sqlx::hilo::{MySqlCounter, PgSequence, SqliteCounter};
use idgen_sqlx::lease::{BoxError, SqlxLeaseStore};
use idgen_testkit::conformance::connections::{mysql_app_pool, postgres_app_pool, sqlite_app_pool};
use idgen_testkit::conformance::{AppPool, AppPoolSpec, CounterUnderTest, DbKind, HiLoSubject};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{MySql, MySqlPool, PgPool, Postgres, Sqlite, SqlitePool};

/// idgen-sqlx on PostgreSQL: `SqlxLeaseStore<Postgres>`, `PgSequence`.
pub(crate) struct SqlxPostgres;

/// idgen-sqlx on MariaDB/MySQL: `SqlxLeaseStore<MySql>`, `MySqlCounter` in detect mode (what
/// `HiLo::new(mysql_pool, …)` uses: a sequence on MariaDB ≥ 10.3).
pub(crate) struct SqlxMySql;

/// idgen-sqlx on MariaDB/MySQL with `MySqlCounter` in table mode (MySQL, or MariaDB by choice).
pub(crate) struct SqlxMySqlTable;

/// idgen-sqlx on SQLite: `SqlxLeaseStore<Sqlite>`, `SqliteCounter`.
pub(crate) struct SqlxSqlite;

/// A pool to the SQLite file of `url`: writers wait up to 30 s for each other.
fn sqlite_pool(url: &str) -> Result<SqlitePool, BoxError> {
    let options = SqliteConnectOptions::from_str(url)?.busy_timeout(Duration::from_secs(30));
    Ok(SqlitePoolOptions::new().connect_lazy_with(options))
}

/// Both subject traits for `$subject`: its store on the database `$db` (`$kind`) and its
/// source `$source` (counter kind `$counter`), each over a new pool `$pool(url)` (or an
/// application's pool `$app(url, spec)`); `$new(&pool, counter)` makes the source.
macro_rules! sqlx_subject {
    ($subject:ty, $db:ty, $kind:expr, $pool:expr, $app:expr; $source:ty, $counter:expr, $new:expr) => {
        idgen_testkit::sql_lease_subject!(impl[] $subject, SqlxLeaseStore<$db>, $kind,
            |url| $pool(url)?, |url, spec| $app(url, spec)?);

        impl HiLoSubject for $subject {
            type Source = $source;
            const DATABASE: DbKind = $kind;
            const COUNTER: CounterUnderTest = $counter;
            async fn source(url: &str, counter: &str) -> Result<$source, BoxError> {
                Ok($new(&$pool(url)?, counter)?)
            }
            async fn create(source: &$source, block: u64) -> Result<(), BoxError> {
                Ok(source.create(block).await?)
            }
            async fn app_source(
                url: &str,
                counter: &str,
                spec: AppPoolSpec,
            ) -> Result<($source, Box<dyn AppPool>), BoxError> {
                let (pool, app) = $app(url, spec)?;
                Ok(($new(&pool, counter)?, app))
            }
        }
    };
}

sqlx_subject!(
    SqlxPostgres, Postgres, DbKind::Postgres, PgPool::connect_lazy, postgres_app_pool;
    PgSequence, CounterUnderTest::Sequence, PgSequence::new
);
sqlx_subject!(
    SqlxMySql, MySql, DbKind::MySql, MySqlPool::connect_lazy, mysql_app_pool;
    MySqlCounter, CounterUnderTest::Detect,
    |pool: &MySqlPool, counter: &str| MySqlCounter::new(pool, counter)
);
sqlx_subject!(
    SqlxMySqlTable, MySql, DbKind::MySql, MySqlPool::connect_lazy, mysql_app_pool;
    MySqlCounter, CounterUnderTest::Table, MySqlCounter::table
);
sqlx_subject!(
    SqlxSqlite, Sqlite, DbKind::Sqlite, sqlite_pool, sqlite_app_pool;
    SqliteCounter, CounterUnderTest::Table, SqliteCounter::new
);
