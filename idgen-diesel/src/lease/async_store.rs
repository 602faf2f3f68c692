//! [`AsyncDieselLeaseStore`]: node-ID leases in a table of the application's database, over a
//! diesel-async deadpool pool.

use std::future::Future;
use std::sync::Arc;

use idgen_sql::{Call, CallTarget};
use idgen_sql::{Dialect, SqlLeaseStore, SqlPool};

use crate::async_session::{AsyncDieselSession, Lent, pooled, unpooled};
use crate::lease::BoxError;
use crate::session::Unsettled;
use deadpool::managed::Manager;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError};
use idgen_engine::CallError;

use crate::async_session::AsyncDieselConnection;
use crate::async_session::AsyncDieselPool;
use crate::async_session::DieselAsyncMarker;

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over a
/// diesel-async deadpool pool (feature `async`): the [`LeaseStore`](crate::lease::LeaseStore) behind
/// `WorkerLease::acquire(&pool, &layout)`.
///
/// The table, the SQL and the guarantees are those of [`DieselLeaseStore`](super::DieselLeaseStore)
/// and idgen-sqlx's store, so processes of any of them lease from one table without ever
/// sharing a node ID. Each call takes a connection of its own from the pool (waiting at most
/// 5 s), changes none of its settings (on MySQL/MariaDB each step runs in an explicit
/// transaction of its own; a task dropped halfway closes its connection),
/// never inside a transaction of the caller, as a task of its own on the caller's runtime (a
/// caller that stops waiting leaves the statement to complete). A store (with its clones) runs
/// one call at a time.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use idgen_diesel::lease::{AsyncDieselLeaseStore, WorkerLease};
/// use idgen_diesel::Layout;
///
/// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
/// let store = AsyncDieselLeaseStore::with_table(pool, "my_leases")?;
/// store.create_table().await?;
/// let lease = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(store.clone(), &Layout::TWITTER).await?;
/// assert_eq!(store.rows("default").await?[0].node, lease.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
///
/// The methods ([`new`](SqlLeaseStore::new), [`with_table`](SqlLeaseStore::with_table),
/// [`create_table`](SqlLeaseStore::create_table), [`rows`](SqlLeaseStore::rows), …) are those of
/// idgen-sql's one [`SqlLeaseStore`], shared by every SQL adapter.
pub type AsyncDieselLeaseStore<C> = SqlLeaseStore<DieselAsyncMarker, AsyncDieselPool<C>>;

/// What an [`AsyncDieselLeaseStore`] keeps beside its pool.
#[derive(Clone, Default)]
pub struct AsyncTurn {
    /// A [`detached`](crate::lease::LeaseStore::detached) copy: each call opens a connection of
    /// its own through the pool's manager (never one of the pool's, which may belong to a
    /// runtime that has stopped).
    detached: bool,
    /// Taken by each lease statement's task for its whole statement, so the statements of one
    /// store (its clones and detached copies included) run one at a time, as the blocking
    /// store's: a burst of claims then queues here on one connection instead of taking the
    /// pool's, each holding a connection through the claim's retries while the others wait
    /// for one.
    lock: Arc<tokio::sync::Mutex<()>>,
}

/// How the one SQL lease store reaches a diesel-async pool's connections: each call as a task
/// of its own on the caller's runtime (a caller that stops waiting leaves the statement to
/// complete), one call of a store at a time.
impl<C: AsyncDieselConnection> SqlPool<DieselAsyncMarker> for AsyncDieselPool<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Turn = AsyncTurn;

    fn dialect(&self) -> Dialect {
        C::DIALECT
    }

    async fn run<K: Call>(
        &self,
        turn: &AsyncTurn,
        sql: Arc<K::Sql>,
        call: K,
    ) -> Result<K::Output, BoxError> {
        let pool = self.clone();
        let turn = turn.clone();
        spawned(async move {
            let _turn = turn.lock.lock().await;
            let mut conn = connection(&pool, turn.detached, &*sql).await?;
            call.run(&mut conn.session(), &sql).await
        })
        .await
    }

    fn detach(&self, turn: &AsyncTurn) -> Option<(Self, AsyncTurn)> {
        let turn = AsyncTurn {
            detached: true,
            lock: Arc::clone(&turn.lock),
        };
        Some((self.clone(), turn))
    }
}

impl<C: AsyncDieselConnection> crate::lease::IntoLeaseStore<DieselAsyncMarker>
    for AsyncDieselPool<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Store = AsyncDieselLeaseStore<C>;
    fn into_lease_store(self, table: &str) -> AsyncDieselLeaseStore<C> {
        SqlLeaseStore::named(self, table)
    }
}

/// A connection of `pool` (or, `detached`, one of its own), for the lease table of `sql`.
async fn connection<C: AsyncDieselConnection>(
    pool: &AsyncDieselPool<C>,
    detached: bool,
    sql: &impl CallTarget,
) -> Result<Connection<C>, BoxError>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    let conn = if detached {
        unpooled(pool)
            .await
            .map(|conn| Connection::Own(conn, Unsettled::default()))
    } else {
        pooled::<C>(pool)
            .await
            .map(|conn| Connection::Pooled(Lent::new(conn)))
    };
    conn.map_err(|e| {
        let message = format!("no connection for {}: {e}", sql.describe());
        CallError::new(message, e).into()
    })
}

/// A connection of the pool, or of a detached store's own.
enum Connection<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    /// Closed rather than given back to the pool if a call left it unsettled ([`Lent`]).
    Pooled(Lent<C>),
    /// Closed when dropped.
    Own(C, Unsettled),
}

impl<C: AsyncDieselConnection> Connection<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn session(&mut self) -> AsyncDieselSession<'_, C> {
        match self {
            Connection::Pooled(lent) => lent.session(),
            Connection::Own(conn, state) => AsyncDieselSession { conn, state },
        }
    }
}

/// Runs `call` as a task of its own on the caller's runtime: a caller that stops waiting (the
/// engine's time-out) neither cancels a statement half-way nor waits for it. (diesel-async's
/// `SyncConnectionWrapper` blocks the dropping thread until a cancelled statement ends, up to
/// SQLite's busy timeout: the engine's time-out would only fire after it.)
async fn spawned<T: Send + 'static>(
    call: impl Future<Output = Result<T, BoxError>> + Send + 'static,
) -> Result<T, BoxError> {
    tokio::spawn(call)
        .await
        .unwrap_or_else(|e| Err(format!("the lease statement's task failed: {e}").into()))
}
