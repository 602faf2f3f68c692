//! idgen-testkit's conformance suites on idgen-diesel's diesel-async lease store and hi-lo
//! counter (feature `async`; PostgreSQL, MariaDB/MySQL, SQLite), and async diesel processes
//! sharing one lease table and one counter with a blocking (r2d2) idgen-diesel process.

#[path = "conformance/blocking.rs"]
mod blocking;

use blocking::Value;
use blocking::{BlockingMySql, BlockingPostgres, BlockingSqlite, diesel_url};
use diesel::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncMysqlConnection, AsyncPgConnection};
use idgen_diesel::AsyncDieselPool;
use idgen_diesel::hilo::AsyncDieselCounter;
use idgen_diesel::lease::{AsyncDieselLeaseStore, BoxError};
use idgen_testkit::conformance::{
    AppFuture, AppPool, AppPoolSpec, CounterUnderTest, DbKind, HiLoSubject,
};

/// idgen-diesel's async store and counter over `C`: on a pool of at most 8 connections, or
/// with `UNCHECKED` of one connection that is handed out again without a check
/// (`RecyclingMethod::Fast`).
struct AsyncDiesel<C, const UNCHECKED: bool = false>(std::marker::PhantomData<fn() -> C>);

/// A diesel-async pool as an [`AppPool`].
struct DeadpoolApp<C: idgen_diesel::AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>:
        deadpool::managed::Manager<Type = C, Error = diesel_async::pooled_connection::PoolError>,
{
    pool: AsyncDieselPool<C>,
    size: u32,
}

/// The subject `AsyncDiesel<$conn>` (for each concrete connection: diesel-async's pool bounds
/// are written out per type, not carried by a generic parameter).
macro_rules! async_subject {
    ($conn:ty, $db:expr, $counter:expr) => {
        impl AsyncDiesel<$conn> {
            /// An application's pool made as `spec` says (`on_connect` in its custom setup).
            fn app_pool(
                url: &str,
                spec: AppPoolSpec,
            ) -> Result<(AsyncDieselPool<$conn>, Box<dyn AppPool>), BoxError> {
                let mut config = ManagerConfig::<$conn>::default();
                let on_connect = spec.on_connect;
                config.custom_setup = Box::new(move |url| {
                    Box::pin(async move {
                        let mut conn =
                            <$conn as diesel_async::AsyncConnection>::establish(url).await?;
                        if let Some(sql) = on_connect {
                            diesel_async::SimpleAsyncConnection::batch_execute(&mut conn, sql)
                                .await
                                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                        }
                        Ok(conn)
                    })
                });
                let manager =
                    AsyncDieselConnectionManager::<$conn>::new_with_config(diesel_url(url), config);
                let pool = Pool::builder(manager)
                    .max_size(spec.size as usize)
                    .build()?;
                let app = DeadpoolApp {
                    pool: pool.clone(),
                    size: spec.size,
                };
                Ok((pool, Box::new(app)))
            }
        }

        impl DeadpoolApp<$conn> {
            /// Every connection the pool can lend now: a hi-lo counter of idgen-diesel holds one
            /// of the application's connections for its lifetime. The first may have to open a
            /// connection (seconds in a debug build on a loaded machine).
            async fn lendable(
                &self,
            ) -> Result<Vec<diesel_async::pooled_connection::deadpool::Object<$conn>>, BoxError>
            {
                let mut conns = Vec::new();
                for n in 0..self.size {
                    let wait =
                        std::time::Duration::from_millis(if n == 0 { 10_000 } else { 1_000 });
                    match tokio::time::timeout(wait, self.pool.get()).await {
                        Ok(conn) => conns.push(conn?),
                        Err(_) if !conns.is_empty() => break,
                        Err(_) => {
                            return Err(
                                "no connection of the application's pool within 10 s".into()
                            );
                        }
                    }
                }
                Ok(conns)
            }
        }

        impl AppPool for DeadpoolApp<$conn> {
            fn scalar_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, Vec<Option<i64>>> {
                Box::pin(async move {
                    let mut conns = self.lendable().await?;
                    let mut values = Vec::new();
                    for conn in &mut conns {
                        let rows: Vec<Value> =
                            diesel_async::RunQueryDsl::load(diesel::sql_query(sql), &mut **conn)
                                .await?;
                        values.push(rows.first().map(|row| row.value));
                    }
                    Ok(values)
                })
            }

            fn execute_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, ()> {
                Box::pin(async move {
                    let mut conns = self.lendable().await?;
                    for conn in &mut conns {
                        diesel_async::SimpleAsyncConnection::batch_execute(&mut **conn, sql)
                            .await?;
                    }
                    Ok(())
                })
            }
        }

        impl<const UNCHECKED: bool> AsyncDiesel<$conn, UNCHECKED> {
            /// A deadpool pool to `url` (connected on first use).
            fn pool(url: &str) -> Result<AsyncDieselPool<$conn>, BoxError> {
                let mut config = ManagerConfig::default();
                if UNCHECKED {
                    config.recycling_method = RecyclingMethod::Fast;
                }
                let manager =
                    AsyncDieselConnectionManager::<$conn>::new_with_config(diesel_url(url), config);
                let size = if UNCHECKED { 1 } else { 8 };
                Ok(Pool::builder(manager).max_size(size).build()?)
            }
        }

        idgen_testkit::sql_lease_subject!(impl[const UNCHECKED: bool] AsyncDiesel<$conn, UNCHECKED>,
            AsyncDieselLeaseStore<$conn>, $db,
            |url| Self::pool(url)?, |url, spec| AsyncDiesel::<$conn>::app_pool(url, spec)?);

        impl<const UNCHECKED: bool> HiLoSubject for AsyncDiesel<$conn, UNCHECKED> {
            type Source = AsyncDieselCounter<$conn>;
            const DATABASE: DbKind = $db;
            const COUNTER: CounterUnderTest = $counter;
            async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
                Ok(AsyncDieselCounter::new(&Self::pool(url)?, counter)?)
            }
            async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
                Ok(source.create(block).await?)
            }
            async fn app_source(
                url: &str,
                counter: &str,
                spec: AppPoolSpec,
            ) -> Result<(Self::Source, Box<dyn AppPool>), BoxError> {
                let (pool, app) = AsyncDiesel::<$conn>::app_pool(url, spec)?;
                Ok((AsyncDieselCounter::new(&pool, counter)?, app))
            }
        }
    };
}

type AsyncSqliteConnection = SyncConnectionWrapper<SqliteConnection>;

async_subject!(
    AsyncPgConnection,
    DbKind::Postgres,
    CounterUnderTest::Sequence
);
async_subject!(
    AsyncMysqlConnection,
    DbKind::MySql,
    CounterUnderTest::Detect
);
async_subject!(
    AsyncSqliteConnection,
    DbKind::Sqlite,
    CounterUnderTest::Table
);

type AsyncPostgres = AsyncDiesel<AsyncPgConnection>;
type AsyncMySql = AsyncDiesel<AsyncMysqlConnection>;
type AsyncSqlite = AsyncDiesel<AsyncSqliteConnection>;
type UncheckedPostgres = AsyncDiesel<AsyncPgConnection, true>;

idgen_testkit::sql_suites!(postgres: AsyncPostgres, mysql: AsyncMySql, sqlite: AsyncSqlite);

idgen_testkit::cross_adapter_suite!(postgres_with_blocking,
    lease: AsyncPostgres, BlockingPostgres; hilo: AsyncPostgres, BlockingPostgres);
idgen_testkit::cross_adapter_suite!(mysql_with_blocking,
    lease: AsyncMySql, BlockingMySql; hilo: AsyncMySql, BlockingMySql);
idgen_testkit::cross_adapter_suite!(sqlite_with_blocking,
    lease: AsyncSqlite, BlockingSqlite; hilo: AsyncSqlite, BlockingSqlite);

/// `WorkerLease::acquire(&pool, …)` and `HiLo::builder(&pool)` take a diesel-async pool as
/// they take the other adapters' pools (the `DieselAsyncMarker` marker), creating what is missing.
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
            .skip_takeover_wait_for_tests_and_development(true) // a fresh database
            .create_if_missing(true)
            .acquire(&pool, &Layout::TWITTER)
            .await?;
        let second = WorkerLease::options()
            .skip_takeover_wait_for_tests_and_development(true)
            .acquire(pool.clone(), &Layout::TWITTER)
            .await?;
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
/// (`RecyclingMethod::Fast`), whose one connection belonged to the stopped runtime: the
/// conformance case on a store over such a pool.
mod detached {
    use idgen_testkit::conformance::lease_lifecycle;

    use super::*;

    #[test]
    fn a_detached_copy_releases_from_an_unchecked_pool_of_a_stopped_runtime() {
        idgen_testkit::conformance::run(
            lease_lifecycle::a_detached_store_releases_after_the_runtime_stopped::<UncheckedPostgres>(
            ),
        );
    }
}

/// The fault cases cut what they claim on every route of the kit (issue 27, item 8): run again
/// in a child of this test binary on the local-binaries route, where the MariaDB server shares
/// this host and mysql_async would otherwise reconnect through its Unix socket, past the
/// kit's proxy ("never fenced", "IDs keep coming while down"). The containers route, which CI
/// forces, runs them in this process.
#[test]
fn the_mysql_fault_cases_cut_the_store_off_on_the_local_route() {
    let cases = [
        "mysql_lease::a_generator_stops_before_its_lease_expires_when_the_database_is_unreachable",
        "mysql_hilo::the_database_going_away_and_coming_back",
    ];
    let output = std::process::Command::new(std::env::current_exe().expect("this test binary"))
        .args(cases)
        .args(["--exact", "--test-threads", "2"])
        .env("IDGEN_TESTKIT_ROUTE", "local")
        .env_remove("IDGEN_MYSQL_URL")
        .output()
        .expect("run this test binary again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the fault cases on the local route failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 2 passed"),
        "both cases must run:\n{stdout}"
    );
    assert!(
        stderr.contains("for this test binary: (3) local binaries")
            || stdout.contains("for this test binary: (3) local binaries"),
        "the child did not take the local-binaries route:\n{stdout}\n{stderr}"
    );
}

// The operator's view (`rows`, `now_ms`, `free`: `idgen leases list|free`) of idgen-sql's
// `SqlLeaseStore` under diesel-async's pool.
idgen_testkit::operator_suite!(postgres_operator, AsyncPostgres);
idgen_testkit::operator_suite!(mysql_operator, AsyncMySql);
idgen_testkit::operator_suite!(sqlite_operator, AsyncSqlite);
