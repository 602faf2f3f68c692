//! How an adapter binds its pool: [`SqlPool`] (run one [`Call`] on a [`Session`] of one of its
//! connections), the one trait the lease store ([`SqlLeaseStore`](crate::SqlLeaseStore)) and
//! the hi-lo counter ([`SqlCounter`](crate::SqlCounter)) run on.

use std::future::Future;
use std::sync::Arc;

use idgen_core::BoxError;

use crate::dialect::Dialect;
use crate::session::Session;

/// What a [`Call`] works on: a lease table's SQL ([`LeaseSql`](crate::LeaseSql)) or a hi-lo counter
/// ([`SqlCounter`](crate::SqlCounter)'s); an adapter's [`SqlPool`](crate::SqlPool) hands it to
/// the call and names it in its own messages.
///
/// ```
/// use idgen_sql::CallTarget;
/// use idgen_sql::{Dialect, LeaseSql};
/// let sql = LeaseSql::new(Dialect::Postgres, "idgen_worker_lease")?;
/// assert_eq!(sql.describe(), r#"lease table "idgen_worker_lease""#);
/// # Ok::<(), idgen_engine::Error>(())
/// ```
pub trait CallTarget: Send + Sync + 'static {
    /// What a message names: `lease table "idgen_worker_lease"`, `hi-lo counter orders`.
    fn describe(&self) -> String;
}

/// One call over [`Session`]s: its arguments, owned (so that it can move to a thread or a task
/// of its own), what it works on ([`Call::Sql`]: the lease table of a lease store's calls, the
/// counter of a hi-lo counter's), and the procedure it runs.
pub trait Call: Send + 'static {
    /// What the call answers.
    type Output: Send + 'static;
    /// What the call works on: [`LeaseSql`](crate::LeaseSql) for the lease store's calls.
    type Sql: CallTarget;
    /// The operation, for messages (`"claim"`, `"renew"`, …).
    const OPERATION: &'static str;
    /// Runs the call on `session`, with the `sql` of what it works on.
    fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &Self::Sql,
    ) -> impl Future<Output = Result<Self::Output, BoxError>> + Send;
}

/// A connection pool of one adapter, as the [`SqlLeaseStore`](crate::SqlLeaseStore) (and the [`SqlCounter`](crate::SqlCounter)) uses it. `M` is the adapter's
/// marker (the same one its `IntoLeaseStore` uses), so an adapter can implement this for its
/// driver's pool type.
///
/// ```
/// use std::sync::Arc;
/// use idgen_engine::lease::BoxError;
/// use idgen_sql::{Call, CallTarget};
/// use idgen_sql::{Dialect, SqlLeaseStore, SqlPool};
///
/// /// This adapter's marker.
/// enum Mine {}
/// /// A pool that has no connection to lend.
/// #[derive(Clone)]
/// struct Closed;
///
/// impl SqlPool<Mine> for Closed {
///     type Turn = ();
///     fn dialect(&self) -> Dialect {
///         Dialect::Sqlite
///     }
///     async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, _: K) -> Result<K::Output, BoxError> {
///         Err(format!("no connection for {}", sql.describe()).into())
///     }
///     fn detach(&self, _: &()) -> Option<(Self, ())> {
///         Some((self.clone(), ()))
///     }
/// }
///
/// let store = SqlLeaseStore::<Mine, _>::new(Closed);
/// assert_eq!(store.table(), Some(r#""idgen_worker_lease""#));
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let err = store.create_table().await.unwrap_err();
/// assert!(err.to_string().contains(r#"no connection for lease table "idgen_worker_lease""#), "{err}");
/// # })
/// ```
pub trait SqlPool<M>: Clone + Send + Sync + 'static {
    /// What the store keeps beside the pool and hands to every call (`()` for most; a lock
    /// that runs one statement at a time, or a flag saying the store is detached).
    type Turn: Clone + Default + Send + Sync + 'static;

    /// The database the pool's connections speak (known when the pool is made: an adapter
    /// whose pools serve several databases, as sea-orm's, answers per pool).
    fn dialect(&self) -> Dialect;

    /// Runs `call` on a [`Session`](crate::session::Session) of one connection of this pool and gives
    /// the connection back as it found it (or closes it, if the call left it unsettled). `sql`
    /// is what the call works on (a lease table, a hi-lo counter), passed to
    /// [`Call::run`].
    ///
    /// # Errors
    ///
    /// No connection (the message names what the call works on,
    /// [`CallTarget::describe`](CallTarget::describe)), or what the call
    /// returned.
    fn run<K: Call>(
        &self,
        turn: &Self::Turn,
        sql: Arc<K::Sql>,
        call: K,
    ) -> impl Future<Output = Result<K::Output, BoxError>> + Send;

    /// A pool and turn that no longer depend on the application's runtime or pool: what a
    /// lease dropped while its runtime shuts down releases through (see
    /// [`LeaseStore::detached`](idgen_engine::lease::LeaseStore::detached)). `None` when there is no such thing.
    fn detach(&self, turn: &Self::Turn) -> Option<(Self, Self::Turn)>;
}
