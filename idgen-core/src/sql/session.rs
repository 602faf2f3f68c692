//! [`Session`]: the few primitives an adapter gives the shared procedures (run a statement,
//! read a number, a text, a claimed row or the lease rows, pause), and [`block_on`] for
//! blocking adapters.

use std::future::Future;
use std::time::Duration;

use super::{Dialect, ErrorClass, Statement};

/// One row of the lease table, as [`LeaseSql::rows`](super::LeaseSql::rows) reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseRow {
    /// The node ID.
    pub node: u64,
    /// Who holds it (`None` if it was never claimed or was released).
    pub holder: Option<String>,
    /// When the lease ends (ended), in Unix ms on the database's clock.
    pub expires_at_ms: i64,
    /// The largest timestamp (Unix ms) a holder of this node ID may have issued.
    pub last_timestamp_ms: Option<i64>,
}

impl LeaseRow {
    /// A row from its columns; `None` for a negative node ID (never written by idgen).
    ///
    /// ```
    /// use idgen_core::sql::LeaseRow;
    /// let row = LeaseRow::new(3, Some("web-1".into()), 1_700_000_000_000, None).unwrap();
    /// assert_eq!(row.node, 3);
    /// assert!(LeaseRow::new(-1, None, 0, None).is_none());
    /// ```
    pub fn new(
        node: i64,
        holder: Option<String>,
        expires_at_ms: i64,
        last_timestamp_ms: Option<i64>,
    ) -> Option<LeaseRow> {
        Some(LeaseRow {
            node: u64::try_from(node).ok()?,
            holder,
            expires_at_ms,
            last_timestamp_ms,
        })
    }
}

/// A database session of an adapter (one connection, in autocommit), as the shared lease and
/// hi-lo procedures need it. Each method runs one [`Statement`], binding its values in order,
/// and returns the driver's error unchanged; a statement without values may hold several
/// statements (DDL after [`PG_DDL_LOCK`](super::PG_DDL_LOCK)) and is sent as one simple query.
pub trait Session: Send {
    /// The driver's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The database.
    fn dialect(&self) -> Dialect;

    /// What `err` means ([`Dialect::classify`] on the driver's code and message).
    fn classify(&self, err: &Self::Error) -> ErrorClass;

    /// Runs a statement; the number of rows it affected (found, not changed, on MySQL), or 0
    /// for a statement without values.
    fn execute(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// The first column of the first row as a number, `None` without a row.
    fn fetch_i64(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Option<i64>, Self::Error>> + Send;

    /// The first column of the first row as a text, `None` without a row.
    fn fetch_text(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Option<String>, Self::Error>> + Send;

    /// `node, last_timestamp` of the first row, `None` without a row.
    fn fetch_claim(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Option<(i64, Option<i64>)>, Self::Error>> + Send;

    /// `node, holder, expires_at_ms, last_timestamp` of every row.
    fn fetch_lease_rows(
        &mut self,
        statement: Statement<'_>,
    ) -> impl Future<Output = Result<Vec<LeaseRow>, Self::Error>> + Send;

    /// Waits `pause` (a runtime's timer, or a blocking sleep on a thread of its own).
    fn pause(&mut self, pause: Duration) -> impl Future<Output = ()> + Send;
}

/// Runs the create-if-missing `ddl` (a statement without values); a creator that took no lock
/// (a migration tool running the same statement) can still collide with it: the statement then
/// runs once more, and finds the object there.
pub async fn create_if_missing<S: Session>(session: &mut S, ddl: &str) -> Result<(), S::Error> {
    let statement = || Statement {
        sql: ddl.to_owned(),
        params: Vec::new(),
    };
    match session.execute(statement()).await {
        Err(e) if session.classify(&e) == ErrorClass::AlreadyExists => {
            session.execute(statement()).await.map(drop)
        }
        outcome => outcome.map(drop),
    }
}

/// Runs `future` to completion on this thread, parking it while the future waits: for
/// blocking adapters, whose [`Session`] never waits on a runtime (its `pause` sleeps the
/// thread).
///
/// ```
/// assert_eq!(idgen_core::sql::block_on(async { 6 * 7 }), 42);
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}
