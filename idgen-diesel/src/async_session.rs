//! [`AsyncDieselConnection`]: the diesel-async connections idgen keeps its tables in, and the
//! [`Session`](idgen_sql::Session) on one of them that idgen-sql's shared lease and
//! hi-lo procedures run on (on the caller's runtime, no thread of its own). The statements are
//! bound and their rows decoded by the same code as the blocking session's
//! ([`crate::session`]); only the way a statement is run differs.

// Without a database feature no connection type implements `AsyncDieselConnection`.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(dead_code, unused_imports)
)]

use std::future::Future;
use std::time::Duration;

use diesel::result::QueryResult;
use diesel_async::SimpleAsyncConnection;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError};
use idgen_sql::{Dialect, LeaseRow, Statement};

mod sealed {
    /// Implemented by `async_diesel_connection!` for each connection, with its
    /// `AsyncDieselConnection`.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// Marks idgen's implementations for diesel-async's deadpool pools (`IntoLeaseStore`,
/// `IntoHiLoSource`), so that `WorkerLease::acquire(&pool, &layout)` and
/// `HiLo::builder(&pool)` take a `diesel_async::pooled_connection::deadpool::Pool`. Never named
/// by callers (the r2d2 pools' is [`R2d2Marker`](crate::R2d2Marker)).
///
/// ```no_run
/// # #[cfg(all(feature = "async", feature = "postgres"))]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel_async::AsyncPgConnection;
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use idgen_diesel::lease::WorkerLease;
/// use idgen_diesel::Layout;
///
/// let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new("postgres://localhost/app");
/// let pool = Pool::builder(manager).build()?;
/// let by_reference = WorkerLease::options().create_if_missing(true)
///     .acquire(&pool, &Layout::TWITTER).await?;
/// let by_value = WorkerLease::acquire(pool.clone(), &Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(all(feature = "async", feature = "postgres")))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub enum DieselAsyncMarker {}

/// The former name of [`DieselAsyncMarker`].
#[deprecated(note = "renamed `DieselAsyncMarker`: each adapter's marker is named `…Marker`")]
pub type DeadpoolPool = DieselAsyncMarker;

/// A diesel-async deadpool pool of connections of type `C`: what
/// [`AsyncDieselLeaseStore`](crate::lease::AsyncDieselLeaseStore) and
/// [`AsyncDieselCounter`](crate::hilo::AsyncDieselCounter) take. The same type as
/// `diesel_async::pooled_connection::deadpool::Pool<C>`.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::SqliteConnection;
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
///
/// type Sqlite = SyncConnectionWrapper<SqliteConnection>;
/// let pool: idgen_diesel::AsyncDieselPool<Sqlite> =
///     Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(":memory:")).build()?;
/// assert_eq!(pool.status().size, 0); // connects on first use
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub type AsyncDieselPool<C> = deadpool::managed::Pool<AsyncDieselConnectionManager<C>>;

/// A diesel-async connection idgen keeps lease tables and hi-lo counters in:
/// `AsyncPgConnection`, `AsyncMysqlConnection` (MariaDB too) and
/// `SyncConnectionWrapper<SqliteConnection>`, with the crate features `async` and
/// `postgres`, `mysql`, `sqlite`. Sealed.
///
/// ```
/// fn takes_an_idgen_connection<C: idgen_diesel::AsyncDieselConnection>(_conn: &mut C) {}
/// # #[cfg(feature = "postgres")]
/// # let _ = takes_an_idgen_connection::<diesel_async::AsyncPgConnection>;
/// ```
pub trait AsyncDieselConnection:
    SimpleAsyncConnection + Send + Sized + sealed::Sealed + 'static
{
    /// The SQL dialect.
    const DIALECT: Dialect;
    /// Readies a connection taken from the pool: a 5 s busy timeout on SQLite when it has none,
    /// nothing elsewhere (as the blocking connections).
    #[doc(hidden)]
    fn prepare(&mut self) -> impl Future<Output = QueryResult<()>> + Send;
    /// Runs `st` with its values bound; the rows it affected.
    #[doc(hidden)]
    fn run(&mut self, st: Statement<'_>) -> impl Future<Output = QueryResult<usize>> + Send;
    /// The `value` column of each row of `st`, a number.
    #[doc(hidden)]
    fn load_numbers(
        &mut self,
        st: Statement<'_>,
    ) -> impl Future<Output = QueryResult<Vec<i64>>> + Send;
    /// The `value` column of each row of `st`, a text.
    #[doc(hidden)]
    fn load_texts(
        &mut self,
        st: Statement<'_>,
    ) -> impl Future<Output = QueryResult<Vec<String>>> + Send;
    /// `node, last_timestamp` of each row of `st`.
    #[doc(hidden)]
    fn load_claims(
        &mut self,
        st: Statement<'_>,
    ) -> impl Future<Output = QueryResult<Vec<(i64, Option<i64>)>>> + Send;
    /// `node, holder, expires_at_ms, last_timestamp` of each row of `st`.
    #[doc(hidden)]
    fn load_lease_rows(
        &mut self,
        st: Statement<'_>,
    ) -> impl Future<Output = QueryResult<Vec<LeaseRow>>> + Send;
}

/// One connection as an idgen-sql [`Session`](idgen_sql::Session); async. What it leaves
/// unfinished is kept in `state`, owned with the connection ([`Lent`]).
pub(crate) struct AsyncDieselSession<'c, C> {
    pub(crate) conn: &'c mut C,
    pub(crate) state: &'c mut crate::session::Unsettled,
}

crate::session::diesel_session!(
    AsyncDieselSession,
    AsyncDieselConnection,
    tokio::time::sleep,
    await
);

/// The longest a call waits for a connection of the pool (or a new one, for a detached lease
/// store): idgen-engine's default store time-out, so a call does not outlive the engine's.
pub(crate) const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// A readied connection of `pool`, waiting at most [`CONNECTION_WAIT`]; the pool's or the
/// connection's error kept as it is.
pub(crate) async fn pooled<C: AsyncDieselConnection>(
    pool: &AsyncDieselPool<C>,
) -> Result<deadpool::managed::Object<AsyncDieselConnectionManager<C>>, idgen_engine::lease::BoxError>
where
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager<Type = C, Error = PoolError>,
{
    let mut conn = match tokio::time::timeout(CONNECTION_WAIT, pool.get()).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Err(format!("none free within {CONNECTION_WAIT:?}").into()),
    };
    conn.prepare().await?;
    Ok(conn)
}

/// A readied connection of its own made by `pool`'s manager (its URL and setup), outside the
/// pool, waiting at most [`CONNECTION_WAIT`]; the connection's error kept as it is.
pub(crate) async fn unpooled<C: AsyncDieselConnection>(
    pool: &AsyncDieselPool<C>,
) -> Result<C, idgen_engine::lease::BoxError>
where
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager<Type = C, Error = PoolError>,
{
    use deadpool::managed::Manager;
    let mut conn = match tokio::time::timeout(CONNECTION_WAIT, pool.manager().create()).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Err(format!("not connected within {CONNECTION_WAIT:?}").into()),
    };
    conn.prepare().await?;
    Ok(conn)
}

/// A connection of a diesel-async pool lent to one idgen call, with what the call's session
/// left unfinished on it. Dropped unsettled (a statement not answered, or idgen's own
/// transaction open: the call's task was dropped, e.g. by a runtime shutting down), it takes
/// the connection out of the pool and closes it, so that no application's user gets it inside
/// idgen's transaction (deadpool would give it back as it is).
pub(crate) struct Lent<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager<Type = C, Error = PoolError>,
{
    conn: Option<deadpool::managed::Object<AsyncDieselConnectionManager<C>>>,
    state: crate::session::Unsettled,
}

impl<C: AsyncDieselConnection> Lent<C>
where
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager<Type = C, Error = PoolError>,
{
    /// `conn`, settled.
    pub(crate) fn new(conn: deadpool::managed::Object<AsyncDieselConnectionManager<C>>) -> Self {
        Lent {
            conn: Some(conn),
            state: crate::session::Unsettled::default(),
        }
    }

    /// A session on the connection.
    pub(crate) fn session(&mut self) -> AsyncDieselSession<'_, C> {
        let conn = self
            .conn
            .as_deref_mut()
            .expect("a lent connection is there until it is dropped");
        AsyncDieselSession {
            conn,
            state: &mut self.state,
        }
    }

    /// The connection back, if no session left it unsettled (else it is closed here).
    pub(crate) fn settled(
        mut self,
    ) -> Option<deadpool::managed::Object<AsyncDieselConnectionManager<C>>> {
        if self.state.any() {
            return None;
        }
        self.conn.take()
    }
}

impl<C: AsyncDieselConnection> Drop for Lent<C>
where
    AsyncDieselConnectionManager<C>: deadpool::managed::Manager<Type = C, Error = PoolError>,
{
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && self.state.any()
        {
            drop(deadpool::managed::Object::take(conn));
        }
    }
}

/// The future of a connection's preparation.
type Preparing<'c> = std::pin::Pin<Box<dyn Future<Output = QueryResult<()>> + Send + 'c>>;

macro_rules! async_diesel_connection {
    ($feature:literal, $conn:ty, $backend:ty, $dialect:expr, $prepare:expr) => {
        #[cfg(feature = $feature)]
        impl sealed::Sealed for $conn {}

        #[cfg(feature = $feature)]
        impl AsyncDieselConnection for $conn {
            const DIALECT: Dialect = $dialect;

            async fn prepare(&mut self) -> QueryResult<()> {
                let prepare: fn(&mut $conn) -> Preparing<'_> = $prepare;
                prepare(self).await
            }

            crate::session::bind_and_decode!($backend, diesel_async::RunQueryDsl, async await);
        }
    };
}

async_diesel_connection!(
    "postgres",
    diesel_async::AsyncPgConnection,
    diesel::pg::Pg,
    Dialect::Postgres,
    |_| Box::pin(async { Ok(()) })
);
async_diesel_connection!(
    "mysql",
    diesel_async::AsyncMysqlConnection,
    diesel::mysql::Mysql,
    Dialect::MySql,
    |_| Box::pin(async { Ok(()) })
);
async_diesel_connection!(
    "sqlite",
    diesel_async::sync_connection_wrapper::SyncConnectionWrapper<diesel::SqliteConnection>,
    diesel::sqlite::Sqlite,
    Dialect::Sqlite,
    // The blocking connection's own preparation, on the wrapper's blocking thread.
    |conn| conn
        .spawn_blocking(<diesel::SqliteConnection as crate::session::DieselConnection>::prepare)
);
