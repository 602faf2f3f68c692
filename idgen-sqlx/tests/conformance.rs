//! idgen-testkit's conformance suites on idgen-sqlx's lease stores and hi-lo sources:
//! PostgreSQL, MariaDB/MySQL (the detected counter, and a counter table by choice) and SQLite;
//! and what only idgen-sqlx's sources do (`hilo_pools`).

#[path = "conformance/hilo_pools.rs"]
mod hilo_pools;

use std::str::FromStr;
use std::time::Duration;

use idgen_sqlx::hilo::{MySqlCounter, PgSequence, SqliteCounter};
use idgen_sqlx::lease::{BoxError, SqlxLeaseStore};
use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{MySql, MySqlPool, PgPool, Postgres, Sqlite, SqlitePool};

/// A pool to the SQLite file of `url`: writers wait up to 30 s for each other.
fn sqlite_pool(url: &str) -> Result<SqlitePool, BoxError> {
    let options = SqliteConnectOptions::from_str(url)?.busy_timeout(Duration::from_secs(30));
    Ok(SqlitePoolOptions::new().connect_lazy_with(options))
}

/// idgen-sqlx on PostgreSQL: `PgLeaseStore`, `PgSequence`.
struct SqlxPostgres;

impl LeaseSubject for SqlxPostgres {
    type Store = SqlxLeaseStore<Postgres>;
    const DATABASE: DbKind = DbKind::Postgres;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(SqlxLeaseStore::with_table(
            PgPool::connect_lazy(url)?,
            table,
        )?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        Ok(store.create_table().await?)
    }
}

impl HiLoSubject for SqlxPostgres {
    type Source = PgSequence;
    const DATABASE: DbKind = DbKind::Postgres;
    const COUNTER: CounterKind = CounterKind::Sequence;
    async fn source(url: &str, counter: &str) -> Result<PgSequence, BoxError> {
        Ok(PgSequence::new(&PgPool::connect_lazy(url)?, counter)?)
    }
    async fn create(source: &PgSequence, block: u64) -> Result<(), BoxError> {
        Ok(source.create(block).await?)
    }
}

/// idgen-sqlx on MariaDB/MySQL: `MySqlLeaseStore`, `MySqlCounter` in detect mode (what
/// `HiLo::new(mysql_pool, …)` uses: a sequence on MariaDB ≥ 10.3).
struct SqlxMySql;

impl LeaseSubject for SqlxMySql {
    type Store = SqlxLeaseStore<MySql>;
    const DATABASE: DbKind = DbKind::MySql;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(SqlxLeaseStore::with_table(
            MySqlPool::connect_lazy(url)?,
            table,
        )?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        Ok(store.create_table().await?)
    }
}

impl HiLoSubject for SqlxMySql {
    type Source = MySqlCounter;
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterKind = CounterKind::Detect;
    async fn source(url: &str, counter: &str) -> Result<MySqlCounter, BoxError> {
        let pool = MySqlPool::connect_lazy(url)?;
        Ok(MySqlCounter::new(
            &pool,
            counter,
            idgen_sqlx::hilo::MySqlMode::Detect,
        )?)
    }
    async fn create(source: &MySqlCounter, block: u64) -> Result<(), BoxError> {
        Ok(source.create(block).await?)
    }
}

/// idgen-sqlx's `MySqlCounter` in table mode (MySQL, or MariaDB by choice).
struct SqlxMySqlTable;

impl HiLoSubject for SqlxMySqlTable {
    type Source = MySqlCounter;
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterKind = CounterKind::Table;
    async fn source(url: &str, counter: &str) -> Result<MySqlCounter, BoxError> {
        Ok(MySqlCounter::table(
            &MySqlPool::connect_lazy(url)?,
            counter,
        )?)
    }
    async fn create(source: &MySqlCounter, block: u64) -> Result<(), BoxError> {
        Ok(source.create(block).await?)
    }
}

/// idgen-sqlx on SQLite: `SqliteLeaseStore`, `SqliteCounter`.
struct SqlxSqlite;

impl LeaseSubject for SqlxSqlite {
    type Store = SqlxLeaseStore<Sqlite>;
    const DATABASE: DbKind = DbKind::Sqlite;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(SqlxLeaseStore::with_table(sqlite_pool(url)?, table)?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        Ok(store.create_table().await?)
    }
}

impl HiLoSubject for SqlxSqlite {
    type Source = SqliteCounter;
    const DATABASE: DbKind = DbKind::Sqlite;
    const COUNTER: CounterKind = CounterKind::Table;
    async fn source(url: &str, counter: &str) -> Result<SqliteCounter, BoxError> {
        Ok(SqliteCounter::new(&sqlite_pool(url)?, counter)?)
    }
    async fn create(source: &SqliteCounter, block: u64) -> Result<(), BoxError> {
        Ok(source.create(block).await?)
    }
}

idgen_testkit::lease_suite!(postgres_lease, SqlxPostgres);
idgen_testkit::lease_suite!(mysql_lease, SqlxMySql, mysql);
idgen_testkit::lease_suite!(sqlite_lease, SqlxSqlite);

idgen_testkit::hilo_suite!(postgres_hilo, SqlxPostgres);
idgen_testkit::hilo_suite!(mysql_hilo, SqlxMySql, mysql);
idgen_testkit::hilo_suite!(mysql_table_hilo, SqlxMySqlTable, mysql);
idgen_testkit::hilo_suite!(sqlite_hilo, SqlxSqlite);

idgen_testkit::startup_suite!(postgres_startup, SqlxPostgres, SqlxPostgres);
idgen_testkit::startup_suite!(mysql_startup, SqlxMySql, SqlxMySql);
idgen_testkit::startup_suite!(sqlite_startup, SqlxSqlite, SqlxSqlite);
