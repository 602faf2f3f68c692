//! [`AsyncDieselCounter`]: idgen-sql's one hi-lo counter over a diesel-async deadpool pool, on
//! a connection of its own ([`AsyncCounterConnection`]).

use std::sync::Arc;

use deadpool::managed::{Manager, Object};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError};
use idgen_engine::CallError;
use idgen_sql::{Call, CallTarget};
use idgen_sql::{CounterPool, Dialect, SqlCounter, SqlPool};

use crate::async_session::{AsyncDieselConnection, AsyncDieselPool, DieselAsyncMarker};
use crate::async_session::{Lent, pooled};
use crate::hilo::{BoxError, IntoHiLoSource};

/// A hi-lo counter over a diesel-async deadpool pool: idgen-sql's [`SqlCounter`], the
/// [`HiLoSource`](crate::hilo::HiLoSource) behind `HiLo::new(&pool, 1000)`, with idgen-sqlx's
/// SQL and semantics.
///
/// Each call runs as a task of its own on the caller's runtime (a caller that stops waiting
/// neither cancels a statement half-way nor waits for it), on a connection the counter takes
/// from the pool once and keeps ([`AsyncCounterConnection`]; closed, not given back, if a call
/// is dropped half-way or fails).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel_async::pooled_connection::AsyncDieselConnectionManager;
/// use diesel_async::pooled_connection::deadpool::Pool;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use idgen_diesel::hilo::{AsyncDieselCounter, HiLo};
///
/// type Sqlite = SyncConnectionWrapper<diesel::SqliteConnection>;
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::builder(AsyncDieselConnectionManager::<Sqlite>::new(path)).build()?;
/// let orders = AsyncDieselCounter::new(&pool, "orders")?;
/// orders.create(100).await?;
/// let ids = HiLo::new(orders, 100).await?;
/// assert_eq!(ids.next_id().await?, 1);
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub type AsyncDieselCounter<C> = SqlCounter<DieselAsyncMarker, AsyncCounterConnection<C>>;

/// The pool's connection an [`AsyncDieselCounter`] keeps.
type Slot<C> = Arc<tokio::sync::Mutex<Option<Object<AsyncDieselConnectionManager<C>>>>>;

/// An [`AsyncDieselCounter`]'s own connection: taken from the application's pool on first use
/// and kept; clones share it. Made by the counter's constructors; never named by applications.
pub struct AsyncCounterConnection<C: AsyncDieselConnection>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    pool: AsyncDieselPool<C>,
    slot: Slot<C>,
}

/// Each call as a task of its own, one at a time on the counter's connection.
impl<C: AsyncDieselConnection> SqlPool<DieselAsyncMarker> for AsyncCounterConnection<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Turn = ();

    fn dialect(&self) -> Dialect {
        C::DIALECT
    }

    async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, call: K) -> Result<K::Output, BoxError> {
        let (pool, slot) = (self.pool.clone(), Arc::clone(&self.slot));
        // A task of its own: a caller that stops waiting neither cancels a statement half-way
        // nor waits for it (diesel-async's `SyncConnectionWrapper` blocks the dropping thread
        // until a cancelled statement ends).
        let task = tokio::spawn(async move {
            let mut slot = slot.lock().await;
            let conn = match slot.take() {
                Some(conn) => conn,
                None => pooled::<C>(&pool).await.map_err(|e| {
                    CallError::new(format!("no connection for {}: {e}", sql.describe()), e)
                })?,
            };
            // Closed, not given back to the pool, if this task is dropped halfway.
            let mut lent = Lent::new(conn);
            let outcome = call.run(&mut lent.session(), &sql).await;
            if outcome.is_ok() {
                *slot = lent.settled();
            }
            outcome
        });
        task.await
            .unwrap_or_else(|e| Err(format!("the hi-lo statement's task failed: {e}").into()))
    }

    /// `None`: a counter is never detached (only leases are released at shutdown).
    fn detach(&self, _: &()) -> Option<(Self, ())> {
        None
    }
}

impl<C: AsyncDieselConnection> CounterPool<DieselAsyncMarker> for AsyncCounterConnection<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Of = AsyncDieselPool<C>;

    fn for_counter(pool: &AsyncDieselPool<C>) -> Self {
        AsyncCounterConnection {
            pool: pool.clone(),
            slot: Arc::default(),
        }
    }
}

impl<C: AsyncDieselConnection> IntoHiLoSource<DieselAsyncMarker> for AsyncDieselPool<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Source = AsyncDieselCounter<C>;
    /// The counter `counter` on this pool; a refused name fails at start-up, naming it.
    fn into_hilo_source(self, counter: &str) -> AsyncDieselCounter<C> {
        SqlCounter::named(&self, counter)
    }
}

impl<C: AsyncDieselConnection> Clone for AsyncCounterConnection<C>
where
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    fn clone(&self) -> Self {
        AsyncCounterConnection {
            pool: self.pool.clone(),
            slot: Arc::clone(&self.slot),
        }
    }
}
