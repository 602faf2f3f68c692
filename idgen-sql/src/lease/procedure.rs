//! The procedure of every SQL lease store, written once over a [`Session`]: the statements of
//! [`LeaseSql`] in their order, the rounds of a claim, the wait for rows locked for a moment,
//! the "full" decision, the retries after transient errors, and the error messages.
//!
//! An adapter implements [`Session`] on one connection and [`SqlPool`](crate::SqlPool) on its
//! pool (how one [`Call`](crate::Call) reaches a session: which connection, on which thread or task); the
//! one [`SqlLeaseStore`](crate::SqlLeaseStore) runs these procedures over them. So stores of
//! every adapter answer the same situation the same way.

mod calls;
mod free;

pub(crate) use calls::{
    ClaimCall, CreateTable, FreeCall, NowCall, RecordLayoutCall, ReleaseCall, RenewCall, RowsCall,
};
pub use free::{FreeRequest, Freed, NotFreed, free, now_ms};

use std::ops::Range;
use std::time::Duration;

use super::sql::LeaseSql;
use crate::dialect::{Dialect, ErrorClass};
use crate::server::Server;
use crate::session::{LeaseRow, Session, check_outside_transaction};
use crate::session::{begin_transaction, end_transaction, in_own_transaction};
use crate::statement::Statement;
use idgen_engine::CallError;
use idgen_engine::lease::{BoxError, Claim, ClaimRequest, RenewRequest};

/// Rows of a namespace are created in chunks of this many node IDs, as they are needed.
pub(crate) const CHUNK: u64 = 1024;

/// Rounds of a claim that found expired rows, all locked by other sessions for the moment,
/// before it gives up (with an error, not "full").
pub(crate) const LOCKED_ROUNDS: u64 = 100;

/// Attempts of one call that failed on a deadlock, lock time-out or busy database.
pub(crate) const TRANSIENT_ATTEMPTS: u32 = 8;

/// Why a claim failed.
#[derive(Debug)]
enum Failure<E> {
    Step(E),
    StayedLocked,
}

impl<E> From<E> for Failure<E> {
    fn from(err: E) -> Self {
        Failure::Step(err)
    }
}

/// Claims the lowest free or expired node ID: each round takes an expired row, or creates the
/// next chunk of rows, or, when every row exists and none could be locked, counts the expired
/// rows without locking. None: the node space is full (`Ok(None)`). Some: they were only
/// locked for a moment (by another claim's scan, or on MySQL by a concurrent insert of the same
/// rows), so it waits a little and looks again, up to 100 times. The whole claim is tried
/// again after a transient error (a deadlock, a lock time-out, a busy database), up to 8 times.
///
/// On MySQL/MariaDB each step runs in a transaction of its own (see [`Session`]).
///
/// Errors name the operation and the table, with a hint when the table is missing.
pub async fn claim<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, BoxError> {
    check_outside_transaction(session).await?;
    let mut attempt = 0;
    loop {
        match claim_once(session, sql, req).await {
            Ok(claim) => return Ok(claim),
            Err(Failure::Step(e)) if retry(session, &e, &mut attempt) => {
                session.pause(transient_pause(attempt)).await;
            }
            Err(Failure::Step(e)) => return Err(describe(session, sql, "claim", e)),
            Err(Failure::StayedLocked) => {
                return Err(format!(
                    "claim on lease table {}: expired rows stayed locked by other sessions through {LOCKED_ROUNDS} attempts",
                    sql.table()
                )
                .into());
            }
        }
    }
}

async fn claim_once<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, Failure<S::Error>> {
    // Only MySQL/MariaDB lock a row to claim it (PostgreSQL and SQLite update in one statement).
    let skip_locked = match sql.dialect() {
        Dialect::MySql => Server::read(session).await?.has_skip_locked(),
        _ => true,
    };
    let rounds = req.capacity.div_ceil(CHUNK) + 2 + LOCKED_ROUNDS;
    let mut locked_rounds = 0;
    for _ in 0..rounds {
        // Rows are never deleted, so every row counted here is seen by the claim after it.
        let next = in_own_transaction!(
            session,
            session.fetch_i64(sql.next_missing(req.namespace, req.capacity))
        )
        .await?;
        let next = u64::try_from(next.unwrap_or(0)).unwrap_or(0);
        // A released row first: its last timestamp is exact, so its new holder issues at
        // once; any other expired row may hide a holder the store forgot (see `Claim::exact`).
        for released in [true, false] {
            if let Some(claim) = take_expired(session, sql, req, skip_locked, released).await? {
                return Ok(Some(claim));
            }
        }
        if next < req.capacity {
            let nodes: Range<u64> = next..req.capacity.min(next + CHUNK);
            in_own_transaction!(
                session,
                session.execute(sql.insert_rows(req.namespace, nodes))
            )
            .await?;
            continue;
        }
        // Every row exists and none could be locked: full, unless some were only locked.
        let expired = in_own_transaction!(
            session,
            session.fetch_i64(sql.count_expired(req.namespace, req.capacity))
        )
        .await?;
        if expired.unwrap_or(0) == 0 {
            return Ok(None);
        }
        locked_rounds += 1;
        session
            .pause(Duration::from_millis(5 * locked_rounds.min(20)))
            .await;
    }
    Err(Failure::StayedLocked)
}

/// Takes the lowest expired row this session can lock (only a released one if `released`):
/// one statement on PostgreSQL and SQLite; on MySQL/MariaDB a short transaction of idgen's own
/// that locks the row, assigns it, and reads its last timestamp back (after any `BEFORE
/// UPDATE` trigger raised it, as PostgreSQL's `RETURNING` gives it). It runs in the
/// connection's isolation level, which idgen does not change (the connection may be the
/// application's): the lock is a locking read, which reads the latest committed rows at any
/// level, and the read back sees the transaction's own update. (Under `REPEATABLE READ`
/// its gap locks can make a concurrent insert of rows wait until it commits, a few
/// milliseconds.) The claim is [`exact`](Claim::exact) only from a released row.
async fn take_expired<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: ClaimRequest<'_>,
    skip_locked: bool,
    released: bool,
) -> Result<Option<Claim>, S::Error> {
    let ttl_ms = i64::try_from(req.ttl.as_millis()).unwrap_or(i64::MAX);
    let row = if sql.dialect() == Dialect::MySql {
        begin_transaction(session).await?;
        let assigned = async {
            let lock = if released {
                sql.lock_released(req.namespace, req.capacity, skip_locked)
            } else {
                sql.lock_expired(req.namespace, req.capacity, skip_locked)
            };
            let Some((node, locked_last)) = session.fetch_claim(lock).await? else {
                return Ok(None);
            };
            let assign = sql.assign(req.namespace, node, req.holder, ttl_ms);
            session.execute(assign).await?;
            // The last timestamp as the UPDATE left it, read in the same transaction (as
            // PostgreSQL's RETURNING gives it): a BEFORE UPDATE trigger may have raised it
            // (the database generator's fence records its last issued tick there).
            let assigned = u64::try_from(node).ok().map(|n| sql.row(req.namespace, n));
            let last = match assigned {
                Some(read) => session
                    .fetch_lease_rows(read)
                    .await?
                    .into_iter()
                    .next()
                    .map_or(locked_last, |r| r.last_timestamp_ms.max(locked_last)),
                None => locked_last,
            };
            Ok(Some((node, last)))
        }
        .await;
        end_transaction(session, assigned).await?
    } else {
        let statement = if released {
            sql.take_released(req.namespace, req.capacity, req.holder, ttl_ms)
        } else {
            sql.take_expired(req.namespace, req.capacity, req.holder, ttl_ms)
        };
        session.fetch_claim(statement).await?
    };
    Ok(row.and_then(|(node, last_timestamp_ms)| {
        Some(Claim {
            node: u64::try_from(node).ok()?,
            last_timestamp_ms,
            exact: released,
        })
    }))
}

fn raw(sql: &str) -> Statement<'static> {
    Statement {
        sql: sql.to_owned(),
        params: Vec::new(),
    }
}

/// Renews, retrying transient errors: `true` while `holder` still holds the row; `false` when
/// another holder has it, the row is gone, or the whole table is (dropped by an operator, or a
/// database back without it): a table that is not there holds no lease, so the holder fences at
/// once and its application can acquire again, which creates the table (`create_if_missing`)
/// and claims under the takeover bound of a store that forgot. (Taken as a store error, the
/// renewals would fail until the deadline and after it, for ever: nothing re-creates the table
/// while every holder keeps renewing a lease that no longer exists.)
pub async fn renew<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: RenewRequest<'_>,
) -> Result<bool, BoxError> {
    check_outside_transaction(session).await?;
    let ttl_ms = i64::try_from(req.ttl.as_millis()).unwrap_or(i64::MAX);
    let mut attempt = 0;
    loop {
        let statement = sql.renew(
            req.namespace,
            req.node,
            req.holder,
            ttl_ms,
            req.last_timestamp_ms,
        );
        match in_own_transaction!(session, session.execute(statement)).await {
            Err(e) if retry(session, &e, &mut attempt) => {
                session.pause(transient_pause(attempt)).await;
            }
            Err(e) if session.classify(&e) == ErrorClass::MissingRelation => return Ok(false),
            outcome => {
                return outcome
                    .map(|rows| rows == 1)
                    .map_err(|e| describe(session, sql, "renew", e));
            }
        }
    }
}

/// Releases, retrying transient errors.
pub async fn release<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: RenewRequest<'_>,
) -> Result<(), BoxError> {
    check_outside_transaction(session).await?;
    let mut attempt = 0;
    loop {
        let statement = sql.release(req.namespace, req.node, req.holder, req.last_timestamp_ms);
        match in_own_transaction!(session, session.execute(statement)).await {
            Err(e) if retry(session, &e, &mut attempt) => {
                session.pause(transient_pause(attempt)).await;
            }
            outcome => {
                return outcome
                    .map(drop)
                    .map_err(|e| describe(session, sql, "release", e));
            }
        }
    }
}

/// Records `layout` as `namespace`'s layout unless one is recorded, and returns the recorded
/// one (see [`LeaseStore::record_layout`](idgen_engine::lease::LeaseStore::record_layout)).
pub async fn record_layout<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    namespace: &str,
    layout: &str,
) -> Result<Option<String>, BoxError> {
    check_outside_transaction(session).await?;
    let key = LeaseSql::layout_namespace(namespace);
    // The insert comes first in its transaction, so the read after it sees a row another
    // session committed meanwhile (MySQL's consistent read starts at the first read).
    let recorded = in_own_transaction!(session, async {
        session.execute(sql.record_layout(&key, layout)).await?;
        session.fetch_text(sql.recorded_layout(&key)).await
    })
    .await
    .map_err(|e| describe(session, sql, "record the layout", e))?;
    match recorded {
        Some(recorded) => Ok(Some(recorded)),
        // Fail closed: a claim never goes on without the namespace's layout.
        None => Err(format!(
            "the layout of namespace {namespace:?} is not in lease table {} after it was recorded",
            sql.table()
        )
        .into()),
    }
}

/// The rows of `namespace` by node ID: for operators and tests.
pub async fn rows<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    namespace: &str,
) -> Result<Vec<LeaseRow>, BoxError> {
    check_outside_transaction(session).await?;
    in_own_transaction!(session, session.fetch_lease_rows(sql.rows(namespace)))
        .await
        .map_err(|e| describe(session, sql, "read rows", e))
}

/// Creates the table if it does not exist, safely when other processes do the same at the
/// same moment (on PostgreSQL after [`PG_DDL_LOCK`](crate::PG_DDL_LOCK); a creator that
/// took no lock, such as a migration tool, can still collide: then it runs once more).
///
/// The table is looked for first and the DDL runs only when it is missing: start-up on an
/// existing table takes no lock and needs no right to create anything (PostgreSQL checks the
/// schema's `CREATE` privilege before it sees that a table exists, and from version 15 an
/// ordinary user has none on `public`).
pub async fn create_table<S: Session>(session: &mut S, sql: &LeaseSql) -> Result<(), BoxError> {
    check_outside_transaction(session).await?;
    let probe = raw(&format!(
        "SELECT 0 AS value FROM {} WHERE 1 = 0",
        sql.table()
    ));
    match in_own_transaction!(session, session.fetch_i64(probe)).await {
        Ok(_) => return Ok(()),
        Err(e) if session.classify(&e) == ErrorClass::MissingRelation => {}
        Err(e) => return Err(describe(session, sql, "look for", e)),
    }
    let ddl = sql.create_guarded();
    in_own_transaction!(session, crate::session::create_if_missing(session, &ddl))
        .await
        .map_err(|e| describe(session, sql, "create", e))
}

/// Whether a call that failed with `err` is tried again (counting the attempt).
fn retry<S: Session>(session: &S, err: &S::Error, attempt: &mut u32) -> bool {
    if session.classify(err) == ErrorClass::Transient && *attempt + 1 < TRANSIENT_ATTEMPTS {
        *attempt += 1;
        true
    } else {
        false
    }
}

fn transient_pause(attempt: u32) -> Duration {
    Duration::from_millis(5 << attempt)
}

/// A store error naming the operation and the table, with a hint when the table is missing,
/// and the driver's error as its source.
fn describe<S: Session>(session: &S, sql: &LeaseSql, operation: &str, err: S::Error) -> BoxError {
    let hint = if session.classify(&err) == ErrorClass::MissingRelation {
        format!(
            " (the lease options' `create_if_missing(false)` leaves its creation to a migration: run\n{};\nor let start-up create it)",
            sql.create_table()
        )
    } else {
        String::new()
    };
    let context = format!("{operation} on lease table {}: {err}{hint}", sql.table());
    Box::new(CallError::new(context, err))
}

#[cfg(test)]
mod tests {
    //! The procedure over a scripted session (a fake in a unit test of pure logic; the real
    //! stores run the conformance suites on real databases).

    use super::*;
    use crate::block_on;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Fake(&'static str);

    /// A node space of `rows` rows, `free` of them expired, all locked for the first
    /// `locked_for` looks; the first `transient` statements fail with a transient error.
    #[derive(Default)]
    struct Script {
        dialect: Option<Dialect>,
        rows: u64,
        free: u64,
        locked_for: u32,
        transient: u32,
        looks: u32,
        released_looks: u32,
        paused: Duration,
        missing_table: bool,
        /// The connection is inside a transaction of the application's.
        in_transaction: bool,
        /// The last timestamp a claimed row holds once assigned (a trigger raised it).
        raised_last: Option<i64>,
        /// The server is MySQL (no `@@in_transaction`), before 5.7.20 if `old_mysql`
        /// (no `@@transaction_isolation` either).
        mysql_server: bool,
        old_mysql: bool,
        statements: Vec<String>,
    }

    impl Session for Script {
        type Error = Fake;
        fn dialect(&self) -> Dialect {
            self.dialect.unwrap_or(Dialect::Sqlite)
        }
        fn classify(&self, err: &Fake) -> ErrorClass {
            match err.0 {
                "busy" => ErrorClass::Transient,
                "no such table" => ErrorClass::MissingRelation,
                _ => ErrorClass::Other,
            }
        }
        async fn execute(&mut self, st: Statement<'_>) -> Result<u64, Fake> {
            self.statements.push(st.sql.clone());
            if self.missing_table && st.sql.starts_with("UPDATE") {
                return Err(Fake("no such table"));
            }
            if st.sql.starts_with("SET @@") {
                if self.old_mysql && st.sql.contains("transaction_isolation") {
                    return Err(Fake("Unknown system variable 'transaction_isolation'"));
                }
                if self.in_transaction {
                    return Err(Fake(
                        "1568 (25001): Transaction characteristics can't be changed while a transaction is in progress",
                    ));
                }
                return Ok(0);
            }
            if st.sql.contains("INSERT INTO") {
                let end = match st.params[2] {
                    crate::statement::Value::BigInt(end) => u64::try_from(end).unwrap(),
                    _ => unreachable!(),
                };
                self.free += end - self.rows;
                self.rows = end;
            }
            Ok(1)
        }
        async fn fetch_i64(&mut self, st: Statement<'_>) -> Result<Option<i64>, Fake> {
            self.statements.push(st.sql.clone());
            if st.sql.contains("@@in_transaction") {
                if self.mysql_server {
                    return Err(Fake("Unknown system variable 'in_transaction'"));
                }
                return Ok(Some(i64::from(self.in_transaction)));
            }
            if self.missing_table {
                return Err(Fake("no such table"));
            }
            if self.transient > 0 {
                self.transient -= 1;
                return Err(Fake("busy"));
            }
            let n = if st.sql.contains("COUNT(*)") {
                self.free
            } else {
                self.rows
            };
            Ok(Some(i64::try_from(n).unwrap()))
        }
        async fn fetch_text(&mut self, _: Statement<'_>) -> Result<Option<String>, Fake> {
            Ok(Some("10.11.6-MariaDB".to_owned()))
        }
        async fn fetch_claim(
            &mut self,
            st: Statement<'_>,
        ) -> Result<Option<(i64, Option<i64>)>, Fake> {
            self.statements.push(st.sql.clone());
            if st
                .sql
                .contains("holder IS NULL AND last_timestamp IS NOT NULL")
            {
                self.released_looks += 1;
                return Ok(None); // no released rows in these scripts
            }
            self.looks += 1;
            if self.free == 0 || self.looks <= self.locked_for {
                return Ok(None);
            }
            self.free -= 1;
            Ok(Some((
                i64::try_from(self.rows - self.free - 1).unwrap(),
                None,
            )))
        }
        async fn fetch_lease_rows(&mut self, st: Statement<'_>) -> Result<Vec<LeaseRow>, Fake> {
            self.statements.push(st.sql.clone());
            let node = match st.params.get(1) {
                Some(crate::statement::Value::BigInt(node)) => *node,
                _ => return Ok(Vec::new()),
            };
            Ok(LeaseRow::new(node, Some("h".into()), 0, self.raised_last)
                .into_iter()
                .collect())
        }
        async fn pause(&mut self, pause: Duration) {
            self.paused += pause;
        }
    }

    fn req(capacity: u64) -> ClaimRequest<'static> {
        ClaimRequest {
            namespace: "n",
            capacity,
            holder: "h",
            ttl: Duration::from_secs(30),
        }
    }

    fn run(s: &mut Script, capacity: u64) -> Result<Option<Claim>, BoxError> {
        let sql = LeaseSql::new(s.dialect(), "leases").unwrap();
        block_on(claim(s, &sql, req(capacity)))
    }

    /// `claim`'s documentation names these numbers.
    #[test]
    fn the_rounds_and_attempts_are_those_claim_documents() {
        assert_eq!((LOCKED_ROUNDS, TRANSIENT_ATTEMPTS), (100, 8));
    }

    #[test]
    fn rows_are_created_in_chunks_as_needed_then_claimed() {
        let mut s = Script::default();
        let first = run(&mut s, 3000).unwrap().unwrap();
        assert_eq!((first.node, s.rows), (0, 1024), "one chunk of 1024 rows");
        let mut s = Script {
            rows: 2048,
            ..Script::default()
        };
        let next = run(&mut s, 3000).unwrap().unwrap();
        assert_eq!(
            (next.node, s.rows),
            (2048, 3000),
            "the last chunk ends at the capacity"
        );
    }

    #[test]
    fn rows_locked_for_a_moment_are_waited_for_not_called_full() {
        let mut s = Script {
            rows: 4,
            free: 1,
            locked_for: 30,
            ..Script::default()
        };
        assert!(run(&mut s, 4).unwrap().is_some());
        assert_eq!(s.looks, 31);
        assert!(s.paused >= Duration::from_millis(5 * (1..=20).sum::<u64>()));
    }

    #[test]
    fn no_expired_row_is_full_at_once() {
        let mut s = Script {
            rows: 4,
            ..Script::default()
        };
        assert_eq!(run(&mut s, 4).unwrap(), None);
        assert_eq!((s.looks, s.paused), (1, Duration::ZERO));
    }

    #[test]
    fn rows_locked_through_every_round_are_an_error_naming_the_table() {
        let mut s = Script {
            rows: 4,
            free: 1,
            locked_for: u32::MAX,
            ..Script::default()
        };
        let err = run(&mut s, 4).unwrap_err().to_string();
        assert!(
            err.contains("\"leases\"") && err.contains("stayed locked"),
            "{err}"
        );
    }

    #[test]
    fn transient_errors_are_retried_others_described_with_a_hint() {
        let mut s = Script {
            transient: TRANSIENT_ATTEMPTS - 1,
            ..Script::default()
        };
        assert!(run(&mut s, 8).unwrap().is_some());
        let mut s = Script {
            transient: TRANSIENT_ATTEMPTS,
            ..Script::default()
        };
        let err = run(&mut s, 8).unwrap_err().to_string();
        assert_eq!(err, "claim on lease table \"leases\": busy");
        let mut s = Script {
            missing_table: true,
            ..Script::default()
        };
        let err = run(&mut s, 8).unwrap_err().to_string();
        assert!(
            err.contains("no such table (the lease options' `create_if_missing(false)`"),
            "{err}"
        );
        assert!(
            err.contains("CREATE TABLE IF NOT EXISTS \"leases\""),
            "{err}"
        );
    }

    #[test]
    fn a_mysql_claim_runs_each_step_in_a_transaction_of_its_own_and_sets_nothing() {
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            rows: 2,
            free: 1,
            ..Script::default()
        };
        let claim = run(&mut s, 2).unwrap().unwrap();
        assert!(!claim.exact, "an expired row, not a released one");
        let tx: Vec<&str> = s.statements.iter().map(|s| &s[..s.len().min(24)]).collect();
        assert_eq!(
            tx,
            [
                "SELECT CAST(@@in_transac",
                "START TRANSACTION",
                "SELECT CAST(COALESCE(MAX",
                "COMMIT",
                "START TRANSACTION",
                "SELECT node, last_timest", // a released row first: none
                "COMMIT",
                "START TRANSACTION",
                "SELECT node, last_timest",
                "UPDATE `leases` SET hold",
                "SELECT node, holder, CAS", // the last timestamp as the update left it
                "COMMIT"
            ]
        );
        assert!(s.statements[5].contains("holder IS NULL AND last_timestamp IS NOT NULL"));
        assert!(s.statements[8].ends_with("FOR UPDATE SKIP LOCKED"));
        assert_eq!(s.released_looks, 1);
        assert!(!s.statements.iter().any(|st| st.starts_with("SET ")));
    }

    /// A `BEFORE UPDATE` trigger (the database generator's fence) raises the row's last
    /// timestamp as the claim assigns it: the claim returns the raised one, as `RETURNING`
    /// does on PostgreSQL, not the one its lock read before.
    #[test]
    fn a_mysql_claim_reads_the_last_timestamp_the_update_left() {
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            rows: 2,
            free: 1,
            raised_last: Some(1_700_000_000_123),
            ..Script::default()
        };
        let claim = run(&mut s, 2).unwrap().unwrap();
        assert_eq!(claim.last_timestamp_ms, Some(1_700_000_000_123));
    }

    #[test]
    fn a_mysql_connection_inside_the_applications_transaction_is_left_alone() {
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            rows: 2,
            free: 1,
            in_transaction: true,
            ..Script::default()
        };
        let err = run(&mut s, 2).unwrap_err().to_string();
        assert!(
            err.contains("inside a transaction of the application's"),
            "{err}"
        );
        assert_eq!(s.statements.len(), 1, "only the check: {:?}", s.statements);
    }

    /// Issue 37, item 5: MySQL has no `@@in_transaction`; the check asks it with a one-shot
    /// `SET @@transaction_isolation` (to the session's own level), which it refuses inside a
    /// transaction, and before MySQL 5.7.20 with `@@tx_isolation`. MariaDB answers the first
    /// probe; PostgreSQL and SQLite are not asked.
    #[test]
    fn the_in_transaction_check_asks_each_server_what_it_knows() {
        let check = |s: &mut Script| block_on(check_outside_transaction(s));
        let first = |s: &Script| -> Vec<String> {
            s.statements
                .iter()
                .map(|st| st[..st.len().min(24)].to_owned())
                .collect()
        };
        // MariaDB: @@in_transaction only.
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            ..Script::default()
        };
        check(&mut s).unwrap();
        assert_eq!(first(&s), ["SELECT CAST(@@in_transac"]);
        // MySQL 5.7.20 and later: the one-shot SET, outside and inside a transaction.
        for inside in [false, true] {
            let mut s = Script {
                dialect: Some(Dialect::MySql),
                mysql_server: true,
                in_transaction: inside,
                ..Script::default()
            };
            let outcome = check(&mut s);
            assert_eq!(
                s.statements,
                [
                    "SELECT CAST(@@in_transaction AS SIGNED) AS value",
                    "SET @@transaction_isolation = @@SESSION.transaction_isolation"
                ]
            );
            match outcome {
                Ok(()) => assert!(!inside),
                Err(e) => {
                    assert!(inside, "{e}");
                    assert!(
                        e.to_string()
                            .contains("inside a transaction of the application's")
                    );
                }
            }
        }
        // Older MySQL: tx_isolation.
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            mysql_server: true,
            old_mysql: true,
            in_transaction: true,
            ..Script::default()
        };
        let err = check(&mut s).unwrap_err().to_string();
        assert!(
            err.contains("inside a transaction of the application's"),
            "{err}"
        );
        assert_eq!(
            s.statements[2],
            "SET @@tx_isolation = @@SESSION.tx_isolation"
        );
        // PostgreSQL and SQLite: nothing asked.
        for dialect in [Dialect::Postgres, Dialect::Sqlite] {
            let mut s = Script {
                dialect: Some(dialect),
                in_transaction: true,
                ..Script::default()
            };
            check(&mut s).unwrap();
            assert!(s.statements.is_empty());
        }
    }

    /// On MySQL a claim on a connection inside the application's transaction is refused before
    /// idgen's `START TRANSACTION` (which would commit the application's work).
    #[test]
    fn a_mysql_servers_connection_inside_the_applications_transaction_is_left_alone() {
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            mysql_server: true,
            in_transaction: true,
            rows: 2,
            free: 1,
            ..Script::default()
        };
        let err = run(&mut s, 2).unwrap_err().to_string();
        assert!(
            err.contains("inside a transaction of the application's"),
            "{err}"
        );
        assert!(!s.statements.iter().any(|st| st.starts_with("START")));
        // Outside one, the claim goes on.
        let mut s = Script {
            dialect: Some(Dialect::MySql),
            mysql_server: true,
            rows: 2,
            free: 1,
            ..Script::default()
        };
        assert!(run(&mut s, 2).unwrap().is_some());
    }

    #[test]
    fn a_renewal_that_finds_no_table_reports_the_lease_lost() {
        let renewal = |s: &mut Script| {
            let sql = LeaseSql::new(s.dialect(), "leases").unwrap();
            let req = RenewRequest {
                namespace: "n",
                node: 3,
                holder: "h",
                ttl: Duration::from_secs(30),
                last_timestamp_ms: Some(7),
            };
            block_on(renew(s, &sql, req))
        };
        let mut s = Script::default();
        assert!(renewal(&mut s).unwrap(), "the row is there");
        let mut s = Script {
            missing_table: true,
            ..Script::default()
        };
        assert!(!renewal(&mut s).unwrap(), "no table: lost, not an error");
    }
}
