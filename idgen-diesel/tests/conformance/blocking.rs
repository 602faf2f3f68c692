//! idgen-diesel's blocking lease store and hi-lo counter (r2d2) as conformance subjects, one per
//! connection type: the subjects of `tests/conformance.rs`, and the other side of the
//! cross-adapter cases of `tests/conformance_async.rs` (both include this file).

use diesel::r2d2::{ConnectionManager, Pool};
use diesel::{MysqlConnection, PgConnection, SqliteConnection};
use idgen_diesel::hilo::DieselCounter;
use idgen_diesel::lease::{BoxError, DieselLeaseStore};
use idgen_diesel::{DieselConnection, DieselPool};
use idgen_testkit::conformance::{CounterKind, DbKind, HiLoSubject, LeaseSubject};

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

/// idgen-diesel's blocking store and counter over `C`.
pub(crate) struct Blocking<C>(std::marker::PhantomData<fn() -> C>);

/// Which database a connection type reaches, and how its counter is kept.
pub(crate) trait Backend: DieselConnection {
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

impl<C: Backend> LeaseSubject for Blocking<C> {
    type Store = DieselLeaseStore<C>;
    const DATABASE: DbKind = C::DATABASE;
    async fn store(url: &str, table: &str) -> Result<Self::Store, BoxError> {
        Ok(DieselLeaseStore::with_table(pool(url), table)?)
    }
    async fn create_table(store: &Self::Store) -> Result<(), BoxError> {
        let store = store.clone();
        Ok(tokio::task::spawn_blocking(move || store.create_table()).await??)
    }
}

impl<C: Backend> HiLoSubject for Blocking<C> {
    type Source = DieselCounter<C>;
    const DATABASE: DbKind = C::DATABASE;
    const COUNTER: CounterKind = C::COUNTER;
    async fn source(url: &str, counter: &str) -> Result<Self::Source, BoxError> {
        Ok(DieselCounter::new(&pool(url), counter)?)
    }
    async fn create(source: &Self::Source, block: u64) -> Result<(), BoxError> {
        let source = source.clone();
        Ok(tokio::task::spawn_blocking(move || source.create(block)).await??)
    }
}

/// The blocking subject on each database.
pub(crate) type BlockingPostgres = Blocking<PgConnection>;
pub(crate) type BlockingMySql = Blocking<MysqlConnection>;
pub(crate) type BlockingSqlite = Blocking<SqliteConnection>;
