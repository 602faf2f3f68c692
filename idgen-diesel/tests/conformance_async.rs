//! idgen-testkit's conformance suites on idgen-diesel's diesel-async lease store and hi-lo
//! counter (feature `async`; PostgreSQL, MariaDB/MySQL, SQLite), and async diesel processes
//! sharing one lease table and one counter with a blocking (r2d2) idgen-diesel process.

use diesel::r2d2::{ConnectionManager, Pool as R2d2Pool};
use diesel::{MysqlConnection, PgConnection, SqliteConnection};
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncMysqlConnection, AsyncPgConnection};
use idgen_diesel::hilo::{AsyncDieselCounter, DieselCounter};
use idgen_diesel::lease::{AsyncDieselLeaseStore, BoxError, DieselLeaseStore};
use idgen_diesel::{AsyncDieselPool, DieselConnection, DieselPool};
use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};

/// What diesel's `establish` takes for a testkit URL: the file's path for SQLite.
fn diesel_url(url: &str) -> String {
    match url.strip_prefix("sqlite://") {
        Some(path) => path.split('?').next().unwrap_or(path).to_owned(),
        None => url.to_owned(),
    }
}

/// idgen-diesel's async store and counter over `C`.
struct AsyncDiesel<C>(std::marker::PhantomData<fn() -> C>);

/// The subject `AsyncDiesel<$conn>` (for each concrete connection: diesel-async's pool bounds
/// are written out per type, not carried by a generic parameter).
macro_rules! async_subject {
    ($conn:ty, $db:expr, $counter:expr) => {
        impl AsyncDiesel<$conn> {
            /// A deadpool pool of at most 8 connections to `url` (connected on first use).
            fn pool(url: &str) -> Result<AsyncDieselPool<$conn>, BoxError> {
                let manager = AsyncDieselConnectionManager::<$conn>::new(diesel_url(url));
                Ok(Pool::builder(manager).max_size(8).build()?)
            }
        }

        impl LeaseSubject for AsyncDiesel<$conn> {
            type Store = AsyncDieselLeaseStore<$conn>;
            const DATABASE: DbKind = $db;
            async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
                Ok(AsyncDieselLeaseStore::with_table(Self::pool(url)?, table)?)
            }
            async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
                Ok(store.create_table().await?)
            }
        }

        impl HiLoSubject for AsyncDiesel<$conn> {
            type Source = AsyncDieselCounter<$conn>;
            const DATABASE: DbKind = $db;
            const COUNTER: CounterKind = $counter;
            async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
                Ok(AsyncDieselCounter::new(&Self::pool(url)?, counter)?)
            }
            async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
                Ok(source.create(block).await?)
            }
        }
    };
}

type AsyncSqliteConnection = SyncConnectionWrapper<SqliteConnection>;

async_subject!(AsyncPgConnection, DbKind::Postgres, CounterKind::Sequence);
async_subject!(AsyncMysqlConnection, DbKind::MySql, CounterKind::Detect);
async_subject!(AsyncSqliteConnection, DbKind::Sqlite, CounterKind::Table);

type AsyncPostgres = AsyncDiesel<AsyncPgConnection>;
type AsyncMySql = AsyncDiesel<AsyncMysqlConnection>;
type AsyncSqlite = AsyncDiesel<AsyncSqliteConnection>;

idgen_testkit::lease_suite!(postgres_lease, AsyncPostgres);
idgen_testkit::lease_suite!(mysql_lease, AsyncMySql, mysql);
idgen_testkit::lease_suite!(sqlite_lease, AsyncSqlite);

idgen_testkit::hilo_suite!(postgres_hilo, AsyncPostgres);
idgen_testkit::hilo_suite!(mysql_hilo, AsyncMySql, mysql);
idgen_testkit::hilo_suite!(sqlite_hilo, AsyncSqlite);

idgen_testkit::startup_suite!(postgres_startup, AsyncPostgres, AsyncPostgres);
idgen_testkit::startup_suite!(mysql_startup, AsyncMySql, AsyncMySql);
idgen_testkit::startup_suite!(sqlite_startup, AsyncSqlite, AsyncSqlite);

/// idgen-diesel's blocking store and counter (r2d2) over `C`: the other side of the
/// cross-adapter cases.
struct Blocking<C>(std::marker::PhantomData<fn() -> C>);

/// The database of each blocking connection type.
trait BlockingBackend: DieselConnection {
    const DATABASE: DbKind;
    const COUNTER: CounterKind;
}

impl BlockingBackend for PgConnection {
    const DATABASE: DbKind = DbKind::Postgres;
    const COUNTER: CounterKind = CounterKind::Sequence;
}

impl BlockingBackend for MysqlConnection {
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterKind = CounterKind::Detect;
}

impl BlockingBackend for SqliteConnection {
    const DATABASE: DbKind = DbKind::Sqlite;
    const COUNTER: CounterKind = CounterKind::Table;
}

fn r2d2_pool<C: DieselConnection>(url: &str) -> DieselPool<C> {
    R2d2Pool::builder()
        .max_size(8)
        .min_idle(Some(0))
        .build_unchecked(ConnectionManager::new(diesel_url(url)))
}

impl<C: BlockingBackend> LeaseSubject for Blocking<C> {
    type Store = DieselLeaseStore<C>;
    const DATABASE: DbKind = C::DATABASE;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(DieselLeaseStore::with_table(r2d2_pool(url), table)?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        let store = store.clone();
        Ok(tokio::task::spawn_blocking(move || store.create_table()).await??)
    }
}

impl<C: BlockingBackend> HiLoSubject for Blocking<C> {
    type Source = DieselCounter<C>;
    const DATABASE: DbKind = C::DATABASE;
    const COUNTER: CounterKind = C::COUNTER;
    async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
        Ok(DieselCounter::new(&r2d2_pool(url), counter)?)
    }
    async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
        let source = source.clone();
        Ok(tokio::task::spawn_blocking(move || source.create(block)).await??)
    }
}

type BlockingPostgres = Blocking<PgConnection>;
type BlockingMySql = Blocking<MysqlConnection>;
type BlockingSqlite = Blocking<SqliteConnection>;

idgen_testkit::cross_adapter_suite!(postgres_with_blocking,
    lease: AsyncPostgres, BlockingPostgres; hilo: AsyncPostgres, BlockingPostgres);
idgen_testkit::cross_adapter_suite!(mysql_with_blocking,
    lease: AsyncMySql, BlockingMySql; hilo: AsyncMySql, BlockingMySql);
idgen_testkit::cross_adapter_suite!(sqlite_with_blocking,
    lease: AsyncSqlite, BlockingSqlite; hilo: AsyncSqlite, BlockingSqlite);

/// `WorkerLease::acquire(&pool, …)` and `HiLo::builder(&pool)` take a diesel-async pool as
/// they take the other adapters' pools (the `DeadpoolPool` marker), creating what is missing.
mod marker {
    use super::*;
    use idgen_diesel::Layout;
    use idgen_diesel::hilo::HiLo;
    use idgen_diesel::lease::WorkerLease;

    #[tokio::test]
    async fn a_pool_is_a_lease_store_and_a_hilo_source() -> Result<(), BoxError> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("app.db").display().to_string();
        let pool = AsyncSqlite::pool(&path)?;
        let lease = WorkerLease::options()
            .create_if_missing(true)
            .acquire(&pool, &Layout::TWITTER)
            .await?;
        let second = WorkerLease::acquire(pool.clone(), &Layout::TWITTER).await?;
        assert_ne!(lease.node(), second.node());
        let rows = AsyncDieselLeaseStore::new(pool.clone())
            .rows("default")
            .await?;
        assert_eq!(rows.iter().filter(|r| r.holder.is_some()).count(), 2);

        let ids = HiLo::builder(&pool)
            .counter("orders")
            .block(10)
            .create_if_missing(true)
            .build()
            .await?;
        assert_eq!(ids.next_id().await?, 1);
        let again = HiLo::builder(pool)
            .counter("orders")
            .block(10)
            .build()
            .await?;
        // The first one's blocks (the one it serves and the one it fetched ahead) are not
        // handed out again.
        assert!(again.next_id().await? > 10);
        Ok(())
    }
}

/// A detached copy (what a dropped lease releases with after its runtime stopped) reaches the
/// database on a new runtime even from a pool that hands out idle connections unchecked
/// (`RecyclingMethod::Fast`), whose one connection belonged to the stopped runtime.
mod detached {
    use std::time::Duration;

    use diesel_async::pooled_connection::{ManagerConfig, RecyclingMethod};
    use idgen_diesel::lease::{ClaimRequest, LeaseStore, RenewRequest};

    use super::*;

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn a_detached_copy_releases_from_an_unchecked_pool_of_a_stopped_runtime() {
        let first = current_thread();
        let (db, store, node) = first.block_on(async {
            let db = idgen_testkit::postgres()
                .await
                .expect("a PostgreSQL database");
            let mut config = ManagerConfig::default();
            config.recycling_method = RecyclingMethod::Fast;
            let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                db.url(),
                config,
            );
            let pool = Pool::builder(manager).max_size(1).build().expect("a pool");
            let store = AsyncDieselLeaseStore::new(pool);
            store.create_table().await.expect("the table");
            let claim = store
                .claim(ClaimRequest {
                    namespace: "default",
                    capacity: 4,
                    holder: "gone",
                    ttl: Duration::from_secs(600),
                })
                .await
                .expect("a claim")
                .expect("a free node ID");
            (db, store, claim.node)
        });
        drop(first); // the pool's one connection is now dead

        current_thread().block_on(async move {
            let detached = store.detached().expect("a detached copy");
            detached
                .release(RenewRequest {
                    namespace: "default",
                    node,
                    holder: "gone",
                    ttl: Duration::ZERO,
                    last_timestamp_ms: Some(5),
                })
                .await
                .expect("the detached copy releases");
            let rows = detached.rows("default").await.expect("the rows");
            let row = rows.iter().find(|r| r.node == node).expect("the row");
            assert_eq!((row.holder.clone(), row.last_timestamp_ms), (None, Some(5)));
            drop((detached, store));
        });
        drop(db);
    }
}
