//! [`DieselLeaseStore`]: node-ID leases in a table of the application's database, over an r2d2
//! pool of diesel connections.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use idgen_sql::{Call, CallTarget};
use idgen_sql::{Dialect, SqlLeaseStore, SqlPool, block_on};

use crate::lease::exit_wait;
use crate::lease::{BoxError, IntoLeaseStore};
use crate::session::DieselConnection;
use crate::session::{DieselSession, Unsettled, break_connection};
use crate::{DieselPool, R2d2Marker};
use idgen_engine::CallError;
use idgen_engine::Error;

/// The lease table's default name (idgen-engine's, shared by every adapter).
pub use idgen_sql::DEFAULT_LEASE_TABLE as DEFAULT_TABLE;
/// One row of the lease table, from [`DieselLeaseStore::rows`].
pub use idgen_sql::LeaseRow;

/// The longest a call waits for a pooled connection (less if the pool's own time-out is
/// shorter): idgen-engine's default store time-out, so a blocking call does not outlive the
/// engine's time-out by r2d2's 30 s, nor hold up a runtime's shutdown that long.
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// Node-ID leases kept in a table of a PostgreSQL, MySQL/MariaDB or SQLite database, over an
/// r2d2 pool of diesel connections: the [`LeaseStore`](crate::lease::LeaseStore) behind
/// `WorkerLease::acquire(&pool, &layout)`.
///
/// The table, the SQL and the guarantees are idgen-sqlx's, so diesel and sqlx processes lease
/// from one table without ever sharing a node ID. Each call takes a connection of its own from
/// the pool, changes none of its settings (on MySQL/MariaDB each step runs in an explicit
/// transaction of its own), never inside a transaction of the caller, on a short-lived thread of its own per call, so
/// async executors never block on the database (and a release still runs while the runtime
/// shuts down). A store (with its clones) runs one call at a time.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::lease::{DieselLeaseStore, WorkerLease};
/// use idgen_diesel::Layout;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// let store = DieselLeaseStore::with_table(pool, "my_leases")?;
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
/// idgen-sql's one [`SqlLeaseStore`], shared by every SQL adapter; from blocking code, run them
/// with [`block_on`](idgen_sql::block_on).
pub type DieselLeaseStore<C> = SqlLeaseStore<R2d2Marker, DieselPool<C>>;

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist,
/// on a connection of `pool`. Blocking: call it at start-up or from `spawn_blocking`. The SQL
/// for migrations is in the [module documentation](crate::lease).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(path))?;
/// idgen_diesel::lease::create_lease_table(&pool)?;
/// idgen_diesel::lease::create_lease_table(&pool)?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub fn create_lease_table<C: DieselConnection>(pool: &DieselPool<C>) -> Result<(), Error> {
    block_on(DieselLeaseStore::<C>::new(pool.clone()).create_table())
}

/// How the one SQL lease store reaches an r2d2 pool's diesel connections: each call on a
/// short-lived thread of its own (so async executors never block on the database, and a release
/// still runs while the runtime shuts down), with a connection of its own, one call of a store
/// (its clones and detached copies included) at a time: the turn is taken by each statement's
/// thread for its whole statement.
impl<C: DieselConnection + Send> SqlPool<R2d2Marker> for DieselPool<C> {
    type Turn = Arc<Mutex<()>>;

    fn dialect(&self) -> Dialect {
        C::DIALECT
    }

    async fn run<K: Call>(
        &self,
        turn: &Self::Turn,
        sql: Arc<K::Sql>,
        call: K,
    ) -> Result<K::Output, BoxError> {
        on_thread(self, turn, sql, move |session, sql| {
            block_on(call.run(session, sql))
        })
        .await
    }

    fn detach(&self, turn: &Self::Turn) -> Option<(Self, Self::Turn)> {
        Some((self.clone(), Arc::clone(turn)))
    }
}

impl<C: DieselConnection + Send> IntoLeaseStore<R2d2Marker> for DieselPool<C> {
    type Store = DieselLeaseStore<C>;
    fn into_lease_store(self, table: &str) -> DieselLeaseStore<C> {
        SqlLeaseStore::named(self, table)
    }
}

/// Runs `op` on a pooled connection on a thread of its own.
///
/// Not `spawn_blocking`: a runtime that is shutting down cancels blocking tasks before they
/// start, so a lease's release in its last moments would fail at once instead of reaching
/// the database. A thread per call (a claim at start-up, a renewal every few seconds) always
/// runs; if the caller stops waiting, the statement still completes on its own.
///
/// One statement of this store at a time: two at once (a dropped lease's release task and
/// the release its `Drop` starts when the runtime shuts down, say) would find the pool's one
/// connection taken, and r2d2 would open another on its own worker thread, which nobody
/// waits for. A process returning from `main` then runs `exit` — OpenSSL's clean-up — under
/// a thread still inside libpq's connect, and dies with SIGSEGV. Taking turns, the second
/// statement gets the first one's connection back.
async fn on_thread<C: DieselConnection + Send, Q: CallTarget, T, F>(
    self_pool: &DieselPool<C>,
    turn: &Arc<Mutex<()>>,
    sql: Arc<Q>,
    op: F,
) -> Result<T, BoxError>
where
    T: Send + 'static,
    F: FnOnce(&mut DieselSession<'_, C>, &Q) -> Result<T, BoxError> + Send + 'static,
{
    let pool = self_pool.clone();
    let (answer, answered) = tokio::sync::oneshot::channel();
    // Counted from before the spawn to the thread's last step, so a process that exits
    // meanwhile waits for it (bounded) instead of tearing libpq down under it.
    let running = exit_wait::Running::start();
    let turn = Arc::clone(turn);
    std::thread::Builder::new()
        .name("idgen-diesel-lease".to_owned())
        .spawn(move || {
            let outcome = {
                let _turn = turn.lock().unwrap_or_else(PoisonError::into_inner);
                run_on(&pool, &*sql, |session, sql| {
                    exit_wait::wait_at_exit();
                    op(session, sql)
                })
            };
            // The pool's clone goes before the answer: when the caller has its answer, this
            // thread no longer holds a connection (it may be the pool's last clone, whose
            // drop closes them).
            drop(pool);
            let _ = answer.send(outcome);
            drop(running);
        })
        .map_err(|e| format!("no thread to run the lease statement on: {e}"))?;
    answered.await.unwrap_or_else(|_| {
        Err("the thread running the lease statement ended without an answer".into())
    })
}

/// Runs `op` on a readied connection of `pool` (waiting at most [`CONNECTION_WAIT`]).
fn run_on<C: DieselConnection, Q: CallTarget, T>(
    pool: &DieselPool<C>,
    sql: &Q,
    op: impl FnOnce(&mut DieselSession<'_, C>, &Q) -> Result<T, BoxError>,
) -> Result<T, BoxError> {
    let wait = pool.connection_timeout().min(CONNECTION_WAIT);
    let mut conn = pool.get_timeout(wait).map_err(|e| {
        let message = format!("no connection for {}: {e}", sql.describe());
        CallError::new(message, e)
    })?;
    conn.prepare()?;
    let mut state = Unsettled::default();
    let outcome = op(
        &mut DieselSession {
            conn: &mut *conn,
            state: &mut state,
        },
        sql,
    );
    if state.any() {
        // A transaction whose end failed: r2d2 closes the connection instead of lending it on.
        break_connection(&mut *conn);
    }
    outcome
}
