//! idgen-testkit's conformance suites on idgen-seaorm's lease store and hi-lo counter
//! (PostgreSQL, MariaDB/MySQL, SQLite). Tables and counters are created both ways a sea-orm
//! application can: the `create` helpers and the sea-orm-migration `Migration`s.

use idgen_seaorm::hilo::{HiLoSource, Increment, MissingCounter, SeaOrmCounter};
use idgen_seaorm::lease::{
    BoxError, Claim, ClaimRequest, LeaseStore, RenewRequest, SeaOrmLeaseStore,
};
use idgen_seaorm::migration::{HiLoCounterMigration, LeaseTableMigration};
use idgen_testkit::conformance::connections::{mysql_app_pool, postgres_app_pool, sqlite_app_pool};
use idgen_testkit::conformance::{
    AppPool, AppPoolSpec, CounterUnderTest, DbKind, HiLoSubject, LeaseSubject,
};
use sea_orm::{Database, DatabaseConnection};
use sea_orm_migration::{MigrationTrait, SchemaManager};

/// idgen-seaorm's lease store, with the connection and table it was made for (to run the
/// migration too).
#[derive(Clone)]
struct Lease {
    db: DatabaseConnection,
    table: String,
    store: SeaOrmLeaseStore,
}

impl LeaseStore for Lease {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.store.claim(req).await
    }
    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.store.renew(req).await
    }
    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.store.release(req).await
    }
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        self.store.create_if_missing().await
    }
    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        self.store.record_layout(namespace, layout).await
    }
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        self.store.clock_ms().await
    }
    fn detached(&self) -> Option<Self> {
        Some(Lease {
            db: self.db.clone(),
            table: self.table.clone(),
            store: self.store.detached()?,
        })
    }
}

/// idgen-seaorm's hi-lo counter, with its connection and name (to run the migration too).
#[derive(Clone)]
struct Counter {
    db: DatabaseConnection,
    name: String,
    counter: SeaOrmCounter,
}

impl HiLoSource for Counter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.counter.allocate(size).await
    }
    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        self.counter.allocate_blocks(size, count).await
    }
    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.counter.raise_above(floor).await
    }
    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        self.counter.increment().await
    }
    fn name(&self) -> &str {
        &self.name
    }
    async fn create_if_missing(&self, block: u64) -> Result<(), BoxError> {
        self.counter.create_if_missing(block).await
    }
    fn create_if_missing_by_default(&self) -> bool {
        self.counter.create_if_missing_by_default()
    }
    fn migration_sql(&self, block: u64) -> Option<String> {
        HiLoSource::migration_sql(&self.counter, block)
    }
}

/// idgen-seaorm on the database `D`.
struct SeaOrm<const D: u8>;

const POSTGRES: u8 = 0;
const MYSQL: u8 = 1;
const SQLITE: u8 = 2;

const fn database(d: u8) -> DbKind {
    match d {
        POSTGRES => DbKind::Postgres,
        MYSQL => DbKind::MySql,
        _ => DbKind::Sqlite,
    }
}

/// A `DatabaseConnection` on an application's sqlx pool made as `spec` says (`after_connect`
/// included), and that pool.
fn app_connection(
    d: u8,
    url: &str,
    spec: AppPoolSpec,
) -> Result<(DatabaseConnection, Box<dyn AppPool>), BoxError> {
    use sea_orm::{SqlxMySqlConnector, SqlxPostgresConnector, SqlxSqliteConnector};
    Ok(match d {
        POSTGRES => {
            let (pool, app) = postgres_app_pool(url, spec)?;
            (SqlxPostgresConnector::from_sqlx_postgres_pool(pool), app)
        }
        MYSQL => {
            let (pool, app) = mysql_app_pool(url, spec)?;
            (SqlxMySqlConnector::from_sqlx_mysql_pool(pool), app)
        }
        _ => {
            let (pool, app) = sqlite_app_pool(url, spec)?;
            (SqlxSqliteConnector::from_sqlx_sqlite_pool(pool), app)
        }
    })
}

impl<const D: u8> LeaseSubject for SeaOrm<D> {
    type Store = Lease;
    const DATABASE: DbKind = database(D);
    async fn store(url: &str, table: &str) -> Result<Lease, BoxError> {
        let db = Database::connect(url).await?;
        let store = SeaOrmLeaseStore::with_table(idgen_seaorm::SeaOrmPool::of(&db), table)?;
        Ok(Lease {
            db,
            table: table.to_owned(),
            store,
        })
    }
    /// The migration's `up`, then `create_table`: both must succeed whoever ran first.
    async fn create_table(lease: &Lease) -> Result<(), BoxError> {
        let migration = LeaseTableMigration::with_table(&lease.table)?;
        migration.up(&SchemaManager::new(&lease.db)).await?;
        Ok(lease.store.create_table().await?)
    }
    async fn app_store(
        url: &str,
        table: &str,
        spec: AppPoolSpec,
    ) -> Result<(Lease, Box<dyn AppPool>), BoxError> {
        let (db, app) = app_connection(D, url, spec)?;
        let store = SeaOrmLeaseStore::with_table(idgen_seaorm::SeaOrmPool::of(&db), table)?;
        let lease = Lease {
            db,
            table: table.to_owned(),
            store,
        };
        Ok((lease, app))
    }
}

impl<const D: u8> HiLoSubject for SeaOrm<D> {
    type Source = Counter;
    const DATABASE: DbKind = database(D);
    const COUNTER: CounterUnderTest = match database(D) {
        DbKind::Postgres => CounterUnderTest::Sequence,
        DbKind::MySql => CounterUnderTest::Detect,
        DbKind::Sqlite | DbKind::Etcd | DbKind::Redis => CounterUnderTest::Table,
    };
    async fn source(url: &str, name: &str) -> Result<Counter, BoxError> {
        let db = Database::connect(url).await?;
        let counter = SeaOrmCounter::new(&db, name)?;
        Ok(Counter {
            db,
            name: name.to_owned(),
            counter,
        })
    }
    /// The migration's `up`, then `create`: both must succeed whoever ran first.
    async fn create(counter: &Counter, block: u64) -> Result<(), BoxError> {
        let migration = HiLoCounterMigration::new(&counter.name, block)?;
        migration.up(&SchemaManager::new(&counter.db)).await?;
        Ok(counter.counter.create(block).await?)
    }
    async fn app_source(
        url: &str,
        name: &str,
        spec: AppPoolSpec,
    ) -> Result<(Counter, Box<dyn AppPool>), BoxError> {
        let (db, app) = app_connection(D, url, spec)?;
        let counter = SeaOrmCounter::new(&db, name)?;
        let counter = Counter {
            db,
            name: name.to_owned(),
            counter,
        };
        Ok((counter, app))
    }
}

type SeaOrmPostgres = SeaOrm<POSTGRES>;
type SeaOrmMySql = SeaOrm<MYSQL>;
type SeaOrmSqlite = SeaOrm<SQLITE>;

idgen_testkit::sql_suites!(postgres: SeaOrmPostgres, mysql: SeaOrmMySql, sqlite: SeaOrmSqlite);
