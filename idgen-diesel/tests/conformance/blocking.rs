//! idgen-diesel's blocking lease store and hi-lo counter (r2d2) as conformance subjects, one per
//! connection type: the subjects of `tests/conformance.rs`, and the other side of the
//! cross-adapter cases of `tests/conformance_async.rs` (both include this file).

use diesel::r2d2::{ConnectionManager, Pool};
use diesel::{MysqlConnection, PgConnection, SqliteConnection};
use idgen_diesel::hilo::DieselCounter;
use idgen_diesel::lease::{BoxError, DieselLeaseStore};
use idgen_diesel::{DieselConnection, DieselPool};
use idgen_testkit::conformance::{
    AppFuture, AppPool, AppPoolSpec, CounterUnderTest, DbKind, HiLoSubject,
};

/// What diesel's `establish` takes for a testkit URL: the file's path for SQLite.
pub(crate) fn diesel_url(url: &str) -> String {
    match url.strip_prefix("sqlite://") {
        Some(path) => path.split('?').next().unwrap_or(path).to_owned(),
        None => url.to_owned(),
    }
}

/// A lazily filled r2d2 pool of at most 8 connections to `url`.
fn pool<C: DieselConnection>(url: &str) -> DieselPool<C> {
    Pool::builder()
        .max_size(8)
        .min_idle(Some(0))
        .build_unchecked(ConnectionManager::new(diesel_url(url)))
}

/// `… AS value`, a number, as the application's checks read it.
#[derive(diesel::QueryableByName)]
pub(crate) struct Value {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub(crate) value: i64,
}

/// The application's `on_connect` statement, run on each connection r2d2 opens.
#[derive(Debug)]
struct OnConnect(Option<&'static str>);

impl<C: diesel::connection::SimpleConnection>
    diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for OnConnect
{
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        if let Some(sql) = self.0 {
            conn.batch_execute(sql)
                .map_err(diesel::r2d2::Error::QueryError)?;
        }
        Ok(())
    }
}

/// An application's r2d2 pool made as `spec` says.
fn app_pool<C: DieselConnection>(url: &str, spec: AppPoolSpec) -> DieselPool<C> {
    Pool::builder()
        .max_size(spec.size)
        .min_idle(Some(0))
        .connection_customizer(Box::new(OnConnect(spec.on_connect)))
        .build_unchecked(ConnectionManager::new(diesel_url(url)))
}

/// An r2d2 pool as an [`AppPool`].
pub(crate) struct R2d2App<C: diesel::r2d2::R2D2Connection + 'static> {
    pool: DieselPool<C>,
    size: u32,
}

/// `AppPool` for `R2d2App<$conn>`.
macro_rules! r2d2_app {
    ($conn:ty) => {
        impl AppPool for R2d2App<$conn> {
            fn scalar_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, Vec<Option<i64>>> {
                let (pool, size, sql) = (self.pool.clone(), self.size, sql.to_owned());
                Box::pin(async move {
                    tokio::task::spawn_blocking(move || -> Result<_, BoxError> {
                        let mut conns = lendable(&pool, size)?;
                        let mut values = Vec::new();
                        for conn in &mut conns {
                            let rows: Vec<Value> =
                                diesel::RunQueryDsl::load(diesel::sql_query(&sql), &mut **conn)?;
                            values.push(rows.first().map(|row| row.value));
                        }
                        Ok(values)
                    })
                    .await?
                })
            }

            fn execute_each<'a>(&'a self, sql: &'a str) -> AppFuture<'a, ()> {
                use diesel::connection::SimpleConnection;
                let (pool, size, sql) = (self.pool.clone(), self.size, sql.to_owned());
                Box::pin(async move {
                    tokio::task::spawn_blocking(move || -> Result<_, BoxError> {
                        let mut conns = lendable(&pool, size)?;
                        for conn in &mut conns {
                            conn.batch_execute(&sql)?;
                        }
                        Ok(())
                    })
                    .await?
                })
            }
        }
    };
}

/// Every connection `pool` can lend now, up to `size`: a hi-lo counter of idgen-diesel holds one
/// of the application's connections for its lifetime, so the others are the application's.
fn lendable<C: diesel::r2d2::R2D2Connection + 'static>(
    pool: &DieselPool<C>,
    size: u32,
) -> Result<Vec<diesel::r2d2::PooledConnection<ConnectionManager<C>>>, BoxError> {
    let mut conns = Vec::new();
    for n in 0..size {
        // The first may have to open a connection (seconds in a debug build on a loaded machine).
        let wait = std::time::Duration::from_millis(if n == 0 { 10_000 } else { 1_000 });
        match pool.get_timeout(wait) {
            Ok(conn) => conns.push(conn),
            Err(_) if !conns.is_empty() => break,
            Err(err) => return Err(err.into()),
        }
    }
    Ok(conns)
}

r2d2_app!(PgConnection);
r2d2_app!(MysqlConnection);
r2d2_app!(SqliteConnection);

/// idgen-diesel's blocking store and counter over `C`.
pub(crate) struct Blocking<C>(std::marker::PhantomData<fn() -> C>);

/// Which database a connection type reaches, and how its counter is kept.
pub(crate) trait Backend: DieselConnection
where
    R2d2App<Self>: AppPool,
{
    const DATABASE: DbKind;
    const COUNTER: CounterUnderTest;
}

impl Backend for PgConnection {
    const DATABASE: DbKind = DbKind::Postgres;
    const COUNTER: CounterUnderTest = CounterUnderTest::Sequence;
}

impl Backend for MysqlConnection {
    const DATABASE: DbKind = DbKind::MySql;
    const COUNTER: CounterUnderTest = CounterUnderTest::Detect;
}

impl Backend for SqliteConnection {
    const DATABASE: DbKind = DbKind::Sqlite;
    const COUNTER: CounterUnderTest = CounterUnderTest::Table;
}

idgen_testkit::sql_lease_subject!(impl[C: Backend] Blocking<C> where [R2d2App<C>: AppPool],
DieselLeaseStore<C>, C::DATABASE, |url| pool(url), |url, spec| {
    let pool = app_pool::<C>(url, spec);
    let app = R2d2App { pool: pool.clone(), size: spec.size };
    (pool, Box::new(app) as Box<dyn AppPool>)
});

impl<C: Backend> HiLoSubject for Blocking<C>
where
    R2d2App<C>: AppPool,
{
    type Source = DieselCounter<C>;
    const DATABASE: DbKind = C::DATABASE;
    const COUNTER: CounterUnderTest = C::COUNTER;
    async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
        Ok(DieselCounter::new(&pool(url), counter)?)
    }
    async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
        let source = source.clone();
        Ok(
            tokio::task::spawn_blocking(move || idgen_diesel::hilo::block_on(source.create(block)))
                .await??,
        )
    }
    async fn app_source(
        url: &str,
        counter: &str,
        spec: AppPoolSpec,
    ) -> Result<(Self::Source, Box<dyn AppPool>), BoxError> {
        let pool = app_pool::<C>(url, spec);
        let app = R2d2App {
            pool: pool.clone(),
            size: spec.size,
        };
        Ok((DieselCounter::new(&pool, counter)?, Box::new(app)))
    }
}

/// The blocking subject on each database.
pub(crate) type BlockingPostgres = Blocking<PgConnection>;
pub(crate) type BlockingMySql = Blocking<MysqlConnection>;
pub(crate) type BlockingSqlite = Blocking<SqliteConnection>;
