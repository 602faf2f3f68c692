//! [`DieselCounter`]: idgen-sql's one hi-lo counter over an r2d2 pool of diesel connections,
//! on a connection of its own ([`CounterConnection`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::r2d2::{ConnectionManager, PooledConnection, R2D2Connection};
use idgen_sql::Call;
use idgen_sql::{CounterPool, Dialect, SqlCounter, SqlPool, block_on};

use crate::hilo::{BoxError, IntoHiLoSource};
use crate::session::DieselConnection;
use crate::session::{DieselSession, Unsettled, break_connection};
use crate::{DieselPool, R2d2Marker};

/// The counter table's default name (MySQL table mode, SQLite; idgen-sql's).
pub use idgen_sql::DEFAULT_COUNTER_TABLE as DEFAULT_TABLE;

/// The longest an allocation waits for its connection (the engine retries after that).
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// A hi-lo counter over an r2d2 pool of diesel connections: idgen-sql's [`SqlCounter`], the
/// [`HiLoSource`](crate::hilo::HiLoSource) behind `HiLo::new(&pool, 1000)`, with idgen-sqlx's
/// SQL and semantics (pooled-lo; the increment read from the catalog at start-up; one
/// autocommit statement per block).
///
/// Allocations run on tokio's blocking threads, on a connection the counter takes from the
/// pool once and keeps ([`CounterConnection`]; taken again after a failure): never a
/// connection in a caller's transaction, and never waiting behind the callers for a pool slot
/// once it holds one. This costs one connection of the pool per counter (clones share it).
/// From blocking code, run its `async` methods with [`block_on`](crate::hilo::block_on): they
/// then run on the calling thread.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::hilo::{DieselCounter, HiLo};
///
/// # let dir = tempfile::tempdir()?;
/// # let database_url = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
/// let counter = DieselCounter::new(&pool, "hilo")?;
/// assert_eq!(counter.counter_table(), "idgen_hilo");
/// counter.create(1000).await?; // once, or a migration: `counter.migration_sql(1000)`
///
/// let ids = HiLo::new(&pool, 1000).await?; // the counter "hilo"
/// assert_eq!(ids.next_id().await?, 1);
/// assert_eq!(ids.next_id().await?, 2);
///
/// // Where migrations own the schema: a missing counter is refused, naming the migration.
/// let orders = HiLo::builder(&pool).counter("orders").block(1000).create_if_missing(false).build().await;
/// assert!(orders.unwrap_err().to_string().contains("no row 'orders' in table idgen_hilo"));
/// assert!(DieselCounter::new(&pool, "orders'); DROP TABLE orders; --").is_err());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
///
/// From blocking code (a diesel application without an async runtime):
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::hilo::{DieselCounter, block_on};
/// # let dir = tempfile::tempdir()?;
/// # let database_url = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
/// let orders = DieselCounter::new(&pool, "orders")?.with_table("counters")?;
/// block_on(orders.create(1000))?;
/// block_on(orders.create(1000))?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub type DieselCounter<C> = SqlCounter<R2d2Marker, CounterConnection<C>>;

/// A [`DieselCounter`]'s own connection: taken from the application's r2d2 pool on first use
/// and kept (given back to the pool after a failure, or closed if a transaction's end failed);
/// clones share it. Made by the counter's constructors; never named by applications.
pub struct CounterConnection<C: R2D2Connection + 'static> {
    pool: DieselPool<C>,
    slot: Arc<Mutex<Option<PooledConnection<ConnectionManager<C>>>>>,
}

impl<C: DieselConnection> CounterConnection<C> {
    /// Runs `op` on the counter's connection (taken from the pool if it has none yet).
    fn with_session<T>(
        &self,
        op: impl FnOnce(&mut DieselSession<'_, C>) -> Result<T, BoxError>,
    ) -> Result<T, BoxError> {
        let mut slot = self
            .slot
            .lock()
            .map_err(|_| "a hi-lo allocation panicked while holding the counter's connection")?;
        if slot.is_none() {
            let wait = self.pool.connection_timeout().min(CONNECTION_WAIT);
            let mut conn = self.pool.get_timeout(wait)?;
            conn.prepare()?;
            *slot = Some(conn);
        }
        let Some(conn) = slot.as_mut() else {
            return Err("the counter has no connection".into());
        };
        let mut state = Unsettled::default();
        let outcome = op(&mut DieselSession {
            conn: &mut **conn,
            state: &mut state,
        });
        if state.any() {
            // A transaction whose end failed: r2d2 closes the connection instead of lending it
            // on.
            break_connection(&mut **conn);
        }
        if outcome.is_err() || state.any() {
            *slot = None;
        }
        outcome
    }
}

/// Each call on tokio's blocking threads when a runtime is running, else (a blocking caller,
/// through [`block_on`]) on the calling thread; one call at a time on the counter's connection.
impl<C: DieselConnection + Send> SqlPool<R2d2Marker> for CounterConnection<C> {
    type Turn = ();

    fn dialect(&self) -> Dialect {
        C::DIALECT
    }

    async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, call: K) -> Result<K::Output, BoxError> {
        let me = self.clone();
        let op = move || me.with_session(|session| block_on(call.run(session, &sql)));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.spawn_blocking(op).await.unwrap_or_else(|e| {
                Err(format!("the hi-lo allocation's blocking task failed: {e}").into())
            }),
            Err(_) => op(),
        }
    }

    /// `None`: a counter is never detached (only leases are released at shutdown).
    fn detach(&self, _: &()) -> Option<(Self, ())> {
        None
    }
}

impl<C: DieselConnection + Send> CounterPool<R2d2Marker> for CounterConnection<C> {
    type Of = DieselPool<C>;

    fn for_counter(pool: &DieselPool<C>) -> Self {
        CounterConnection {
            pool: pool.clone(),
            slot: Arc::new(Mutex::new(None)),
        }
    }
}

impl<C: DieselConnection + Send> IntoHiLoSource<R2d2Marker> for DieselPool<C> {
    type Source = DieselCounter<C>;
    /// The counter `counter` on this pool; a refused name fails at start-up, naming it.
    fn into_hilo_source(self, counter: &str) -> DieselCounter<C> {
        SqlCounter::named(&self, counter)
    }
}

impl<C: R2D2Connection + 'static> Clone for CounterConnection<C> {
    fn clone(&self) -> Self {
        CounterConnection {
            pool: self.pool.clone(),
            slot: Arc::clone(&self.slot),
        }
    }
}
