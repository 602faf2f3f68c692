//! idgen-testkit's conformance suites on idgen-diesel's lease stores and hi-lo counters
//! (PostgreSQL, MariaDB/MySQL, SQLite), and diesel processes sharing one lease table and one
//! counter with an idgen-sqlx process.

use diesel::r2d2::{ConnectionManager, Pool};
use diesel::{MysqlConnection, PgConnection, SqliteConnection};
use idgen_diesel::hilo::DieselCounter;
use idgen_diesel::lease::{BoxError, DieselLeaseStore};
use idgen_diesel::{DieselConnection, DieselPool};
use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};

/// A lazily filled r2d2 pool of at most 8 connections to `url`.
fn pool<C: diesel::r2d2::R2D2Connection + 'static>(url: &str) -> DieselPool<C> {
    Pool::builder()
        .max_size(8)
        .min_idle(Some(0))
        .build_unchecked(ConnectionManager::new(url))
}

/// What diesel's `establish` takes for a testkit URL: the file's path for SQLite.
fn diesel_url(url: &str) -> String {
    match url.strip_prefix("sqlite://") {
        Some(path) => path.split('?').next().unwrap_or(path).to_owned(),
        None => url.to_owned(),
    }
}

/// idgen-diesel over `C` on the database `DATABASE`.
struct Diesel<C>(std::marker::PhantomData<fn() -> C>);

/// Which database a connection type reaches, and how its counter is kept.
trait Backend: DieselConnection {
    const DATABASE: DbKind;
    const COUNTER: CounterKind;
}

impl Backend for PgConnection {
    const DATABASE: DbKind = DbKind::Postgres;
    const COUNTER: CounterKind = CounterKind::Sequence;
}

impl Backend for MysqlConnection {
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterKind = CounterKind::Detect;
}

impl Backend for SqliteConnection {
    const DATABASE: DbKind = DbKind::Sqlite;
    const COUNTER: CounterKind = CounterKind::Table;
}

impl<C: Backend> LeaseSubject for Diesel<C> {
    type Store = DieselLeaseStore<C>;
    const DATABASE: DbKind = C::DATABASE;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(DieselLeaseStore::with_table(pool(&diesel_url(url)), table)?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        let store = store.clone();
        Ok(tokio::task::spawn_blocking(move || store.create_table()).await??)
    }
}

impl<C: Backend> HiLoSubject for Diesel<C> {
    type Source = DieselCounter<C>;
    const DATABASE: DbKind = C::DATABASE;
    const COUNTER: CounterKind = C::COUNTER;
    async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
        Ok(DieselCounter::new(&pool(&diesel_url(url)), counter)?)
    }
    async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
        let source = source.clone();
        Ok(tokio::task::spawn_blocking(move || source.create(block)).await??)
    }
}

type DieselPostgres = Diesel<PgConnection>;
type DieselMySql = Diesel<MysqlConnection>;
type DieselSqlite = Diesel<SqliteConnection>;

idgen_testkit::lease_suite!(postgres_lease, DieselPostgres);
idgen_testkit::lease_suite!(mysql_lease, DieselMySql, mysql);
idgen_testkit::lease_suite!(sqlite_lease, DieselSqlite);

idgen_testkit::hilo_suite!(postgres_hilo, DieselPostgres);
idgen_testkit::hilo_suite!(mysql_hilo, DieselMySql, mysql);
idgen_testkit::hilo_suite!(sqlite_hilo, DieselSqlite);

idgen_testkit::startup_suite!(postgres_startup, DieselPostgres, DieselPostgres);
idgen_testkit::startup_suite!(mysql_startup, DieselMySql, DieselMySql);
idgen_testkit::startup_suite!(sqlite_startup, DieselSqlite, DieselSqlite);

/// idgen-sqlx's store and source on the same databases: the other adapter of the
/// cross-adapter cases (diesel children, an sqlx process).
mod sqlx_side {
    use std::str::FromStr;
    use std::time::Duration;

    use idgen_sqlx::hilo::{MySqlCounter, MySqlMode, PgSequence, SqliteCounter};
    use idgen_sqlx::lease::{BoxError, SqlxLeaseStore};
    use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
    use sqlx::{MySql, MySqlPool, PgPool, Postgres, Sqlite};

    pub(crate) struct SqlxPostgres;
    pub(crate) struct SqlxMySql;
    pub(crate) struct SqlxSqlite;

    fn sqlite(url: &str) -> Result<sqlx::SqlitePool, BoxError> {
        let options = SqliteConnectOptions::from_str(url)?.busy_timeout(Duration::from_secs(30));
        Ok(SqlitePoolOptions::new().connect_lazy_with(options))
    }

    macro_rules! sqlx_subject {
        ($subject:ty, $db:ty, $kind:expr, $counter:expr, $pool:expr, $source:expr) => {
            impl LeaseSubject for $subject {
                type Store = SqlxLeaseStore<$db>;
                const DATABASE: DbKind = $kind;
                async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
                    Ok(SqlxLeaseStore::with_table($pool(url)?, table)?)
                }
                async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
                    Ok(store.create_table().await?)
                }
            }

            impl HiLoSubject for $subject {
                type Source = <Self as SourceOf>::Source;
                const DATABASE: DbKind = $kind;
                const COUNTER: CounterKind = $counter;
                async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
                    Ok($source(&$pool(url)?, counter)?)
                }
                async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
                    Ok(source.create(block).await?)
                }
            }
        };
    }

    /// The source type of each subject.
    pub(crate) trait SourceOf {
        type Source: idgen_sqlx::hilo::HiLoSource + Clone;
    }
    impl SourceOf for SqlxPostgres {
        type Source = PgSequence;
    }
    impl SourceOf for SqlxMySql {
        type Source = MySqlCounter;
    }
    impl SourceOf for SqlxSqlite {
        type Source = SqliteCounter;
    }

    sqlx_subject!(
        SqlxPostgres,
        Postgres,
        DbKind::Postgres,
        CounterKind::Sequence,
        PgPool::connect_lazy,
        PgSequence::new
    );
    sqlx_subject!(
        SqlxMySql,
        MySql,
        DbKind::MySql,
        CounterKind::Detect,
        MySqlPool::connect_lazy,
        |pool: &MySqlPool, counter: &str| MySqlCounter::new(pool, counter, MySqlMode::Detect)
    );
    sqlx_subject!(
        SqlxSqlite,
        Sqlite,
        DbKind::Sqlite,
        CounterKind::Table,
        sqlite,
        SqliteCounter::new
    );
}

use sqlx_side::{SqlxMySql, SqlxPostgres, SqlxSqlite};

idgen_testkit::cross_adapter_suite!(postgres_with_sqlx,
    lease: DieselPostgres, SqlxPostgres; hilo: DieselPostgres, SqlxPostgres);
idgen_testkit::cross_adapter_suite!(mysql_with_sqlx,
    lease: DieselMySql, SqlxMySql; hilo: DieselMySql, SqlxMySql);
idgen_testkit::cross_adapter_suite!(sqlite_with_sqlx,
    lease: DieselSqlite, SqlxSqlite; hilo: DieselSqlite, SqlxSqlite);
