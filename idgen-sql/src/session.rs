//! [`Session`]: the few primitives an adapter gives the shared procedures (run a statement,
//! read a number, a text, a claimed row or the lease rows, pause), and [`block_on`] for
//! blocking adapters.

use std::future::Future;
use std::time::Duration;

use crate::dialect::{Dialect, ErrorClass};
use crate::statement::Statement;
use idgen_engine::lease::{FREED_HOLDER, HeldLease};

/// One row of the lease table, as [`LeaseSql::rows`](crate::LeaseSql::rows) reads it.
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
    /// use idgen_sql::LeaseRow;
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

    /// The row as an operator lists it (what `idgen leases list` shows of every store), if it
    /// has a holder: a live lease, or an expired one that nobody claimed since. `None` for a
    /// row never claimed, released, or freed by an operator (its holder is the tombstone
    /// [`FREED_HOLDER`]).
    ///
    /// ```
    /// use idgen_sql::LeaseRow;
    /// use idgen_engine::lease::FREED_HOLDER;
    /// let held = LeaseRow::new(3, Some("web-1".into()), 2_000, Some(1_500)).unwrap().held().unwrap();
    /// assert_eq!((held.node, held.holder.as_str(), held.expires_at_ms), (3, "web-1", Some(2_000)));
    /// assert!(held.is_live(1_000));
    /// assert!(LeaseRow::new(4, None, 2_000, None).unwrap().held().is_none());
    /// assert!(LeaseRow::new(5, Some(FREED_HOLDER.into()), 2_000, None).unwrap().held().is_none());
    /// ```
    pub fn held(self) -> Option<HeldLease> {
        Some(HeldLease {
            node: self.node,
            holder: self.holder.filter(|h| h != FREED_HOLDER)?,
            expires_at_ms: Some(self.expires_at_ms),
            last_timestamp_ms: self.last_timestamp_ms,
        })
    }
}

/// A database session of an adapter (one connection, often one the application lent from its
/// pool), as the shared lease and hi-lo procedures need it. Each method runs one [`Statement`],
/// binding its values in order, and returns the driver's error unchanged; a statement without
/// values may hold several statements (DDL after [`PG_DDL_LOCK`](super::PG_DDL_LOCK)) and is
/// sent as one simple query.
///
/// The procedures never change a setting of the session (no `SET autocommit`, no `SET
/// TRANSACTION`; on MySQL the in-transaction check sets the next transaction's isolation level
/// to the session's own, which idgen's transaction then takes): on MySQL/MariaDB, where a
/// pool's connections may run with `autocommit=0`,
/// every unit of work runs in an explicit transaction of its own (`START TRANSACTION` …
/// `COMMIT`), which ends the same way in both modes, after a check that the connection is not
/// already inside a transaction of the application's ([`check_outside_transaction`]).
///
/// An adapter must not give a connection back to a pool while a statement on it has not
/// answered or while [`transaction_open`](Self::transaction_open) says `true`: a session
/// dropped then (the call was cancelled: a time-out, a dropped future, a runtime shutting down)
/// closes its connection instead, so the server rolls the transaction back and the
/// application never gets a connection inside idgen's transaction.
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

    /// Told `true` just before idgen's own transaction starts, `false` once it has ended
    /// (committed or rolled back). While it is open the connection must not go back to a pool
    /// as it is (see the trait's documentation); a transaction whose end failed stays open
    /// here. Default: nothing (a session that is never pooled).
    fn transaction_open(&mut self, open: bool) {
        let _ = open;
    }
}

/// On MySQL/MariaDB, fails if the session's connection is inside a transaction already (the
/// application's: on a connection with `autocommit=0`, any statement of the application's
/// that reads or writes a table opens one, and it lasts until the application commits): idgen
/// then neither runs inside it nor ends it (`START TRANSACTION` would commit the application's
/// work). Other databases: nothing.
///
/// The server is asked with the first of these probes that it knows:
///
/// - MariaDB: `@@in_transaction`.
/// - MySQL, which has no `@@in_transaction`: a one-shot `SET @@transaction_isolation =
///   @@SESSION.transaction_isolation` (`tx_isolation` before MySQL 5.7.20), which the server
///   refuses inside an active transaction ("Transaction characteristics can't be changed while
///   a transaction is in progress", error 1568, SQLSTATE 25001) and which otherwise sets the
///   next transaction's isolation level to the one it would have had anyway: idgen's own
///   transaction, which starts next, runs at the session's level as before. Both servers tell
///   the same thing: a transaction is active once a statement touched a transactional table
///   (its `SERVER_STATUS_IN_TRANS`).
///
/// # Errors
///
/// A message naming the situation; also when the server answered none of the probes (fail
/// closed: idgen does not risk committing the application's work), with the server's error.
pub async fn check_outside_transaction<S: Session>(
    session: &mut S,
) -> Result<(), idgen_core::BoxError> {
    if session.dialect() != Dialect::MySql {
        return Ok(());
    }
    let mut unanswered = String::new();
    for probe in IN_TRANSACTION_PROBES {
        let statement = Statement::new(probe.sql().to_owned(), Vec::new());
        let inside = match probe {
            InTransactionProbe::Variable(_) => match session.fetch_i64(statement).await {
                Ok(Some(open)) => open != 0,
                Ok(None) => continue,
                // No such variable (MySQL): the next probe.
                Err(e) => {
                    unanswered = e.to_string();
                    continue;
                }
            },
            InTransactionProbe::OneShot(_) => match session.execute(statement).await {
                Ok(_) => false,
                Err(e) => {
                    let message = e.to_string();
                    if message.contains("Unknown system variable") {
                        unanswered = message;
                        continue;
                    }
                    if !(message.contains("Transaction characteristics can't be changed")
                        || message.contains("25001"))
                    {
                        return Err(format!(
                            "idgen could not tell whether the pool lent it a connection inside \
                             a transaction of the application's ({}: {message}); it neither \
                             joins nor ends one, so it stops here",
                            probe.sql()
                        )
                        .into());
                    }
                    true
                }
            },
        };
        return if inside {
            Err(
                "the pool lent idgen a connection inside a transaction of the application's \
                 (autocommit=0 and no COMMIT yet): idgen neither joins nor ends it; commit or roll \
                 back before giving the connection back to the pool"
                    .into(),
            )
        } else {
            Ok(())
        };
    }
    Err(format!(
        "idgen could not tell whether the pool lent it a connection inside a transaction of \
         the application's: the server knows neither @@in_transaction (MariaDB) nor \
         @@transaction_isolation or @@tx_isolation (MySQL) ({unanswered}); it neither joins nor \
         ends one, so it stops here"
    )
    .into())
}

/// One way to ask a MySQL/MariaDB connection whether it is inside a transaction (see
/// [`check_outside_transaction`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InTransactionProbe {
    /// A query whose value is 1 inside a transaction, 0 outside (MariaDB's `@@in_transaction`).
    Variable(&'static str),
    /// A statement that changes nothing and that the server refuses inside a transaction
    /// (MySQL's one-shot `SET @@transaction_isolation` to the session's own level).
    OneShot(&'static str),
}

impl InTransactionProbe {
    /// The statement.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            InTransactionProbe::Variable(sql) | InTransactionProbe::OneShot(sql) => sql,
        }
    }
}

/// The probes [`check_outside_transaction`] tries in order until the server knows one:
/// MariaDB answers the first; MySQL 5.7.20 and later the second; older MySQL the third.
pub(crate) const IN_TRANSACTION_PROBES: [InTransactionProbe; 3] = [
    InTransactionProbe::Variable("SELECT CAST(@@in_transaction AS SIGNED) AS value"),
    InTransactionProbe::OneShot("SET @@transaction_isolation = @@SESSION.transaction_isolation"),
    InTransactionProbe::OneShot("SET @@tx_isolation = @@SESSION.tx_isolation"),
];

/// Starts idgen's own transaction on MySQL/MariaDB (`START TRANSACTION`, in the session's
/// isolation level: every read idgen makes inside one is a locking read); nothing elsewhere.
/// End it with [`end_transaction`].
pub(crate) async fn begin_transaction<S: Session>(session: &mut S) -> Result<(), S::Error> {
    if session.dialect() != Dialect::MySql {
        return Ok(());
    }
    session.transaction_open(true);
    session.execute(raw("START TRANSACTION")).await.map(drop)
}

/// Ends the transaction [`begin_transaction`] started: `COMMIT` after `outcome` `Ok`, `ROLLBACK`
/// after an error (whose error is returned); nothing on other databases than MySQL/MariaDB.
pub(crate) async fn end_transaction<S: Session, T>(
    session: &mut S,
    outcome: Result<T, S::Error>,
) -> Result<T, S::Error> {
    if session.dialect() != Dialect::MySql {
        return outcome;
    }
    let end = if outcome.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = session.execute(raw(end)).await;
    if ended.is_ok() {
        session.transaction_open(false);
    }
    let value = outcome?;
    ended.map(|_| value)
}

/// Runs `$body` (an expression using `$session`, a `&mut` session) in idgen's own transaction
/// on MySQL/MariaDB ([`begin_transaction`], [`end_transaction`]); as it is elsewhere. Evaluates
/// to the body's `Result<T, S::Error>`.
macro_rules! in_own_transaction {
    ($session:expr, $body:expr) => {
        async {
            $crate::session::begin_transaction(&mut *$session).await?;
            let outcome = $body.await;
            $crate::session::end_transaction(&mut *$session, outcome).await
        }
    };
}
pub(crate) use in_own_transaction;

fn raw(sql: &str) -> Statement<'static> {
    Statement::new(sql.to_owned(), Vec::new())
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
/// assert_eq!(idgen_sql::block_on(async { 6 * 7 }), 42);
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
