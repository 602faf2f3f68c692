//! The procedure of every SQL lease store, written once over [`LeaseSteps`]: the rounds of a
//! claim, the wait for rows locked for a moment, the "full" decision, the retries after
//! transient errors, and the error messages.
//!
//! An adapter implements [`LeaseSteps`] (each step one statement of
//! [`LeaseSql`](crate::sql::LeaseSql), bound and decoded) and calls [`claim`], [`renew`] and
//! [`release`] from its [`LeaseStore`](super::LeaseStore); a blocking adapter (diesel) runs
//! them on a thread of its own with [`block_on`]. So stores of every adapter answer the same
//! situation the same way.

use std::future::Future;
use std::ops::Range;
use std::time::Duration;

use crate::lease::{BoxError, Claim, ClaimRequest, RenewRequest};
use crate::sql::ErrorClass;

/// Rows of a namespace are created in chunks of this many node IDs, as they are needed.
pub const CHUNK: u64 = 1024;

/// Rounds of a claim that found expired rows, all locked by other sessions for the moment,
/// before it gives up (with an error, not "full").
pub const LOCKED_ROUNDS: u64 = 100;

/// Attempts of one call that failed on a deadlock, lock time-out or busy database.
pub const TRANSIENT_ATTEMPTS: u32 = 8;

/// The statements of a lease store on one database: each method runs one step and returns
/// the driver's error unchanged. Everything around the steps is [`claim`], [`renew`] and
/// [`release`].
pub trait LeaseSteps: Send {
    /// The driver's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The lease table as written into the SQL, for messages.
    fn table(&self) -> &str;

    /// What `err` means: transient errors are retried, a missing table gets a hint.
    fn classify(&self, err: &Self::Error) -> ErrorClass;

    /// The first node ID below `capacity` with no row yet.
    fn next_missing(
        &mut self,
        namespace: &str,
        capacity: u64,
    ) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// Claims the lowest expired row it can lock, atomically.
    fn take_expired(
        &mut self,
        req: ClaimRequest<'_>,
    ) -> impl Future<Output = Result<Option<Claim>, Self::Error>> + Send;

    /// How many rows below `capacity` are expired, locked or not.
    fn count_expired(
        &mut self,
        namespace: &str,
        capacity: u64,
    ) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// Creates the free rows `nodes`, leaving existing ones as they are.
    fn insert_rows(
        &mut self,
        namespace: &str,
        nodes: Range<u64>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Renews; `true` when the holder still held the row.
    fn renew(
        &mut self,
        req: RenewRequest<'_>,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// Releases.
    fn release(
        &mut self,
        req: RenewRequest<'_>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Waits `pause` (a timer of the runtime, or a blocking sleep on a thread of its own).
    fn pause(&mut self, pause: Duration) -> impl Future<Output = ()> + Send;
}

/// Why a claim failed.
#[derive(Debug)]
enum Failure<E> {
    Step(E),
    StayedLocked,
}

/// Claims the lowest free or expired node ID: each round takes an expired row, or creates the
/// next chunk of rows, or, when every row exists and none could be locked, counts the expired
/// rows without locking. None: the node space is full (`Ok(None)`). Some: they were only
/// locked for a moment (by another claim's scan, or on MySQL by a concurrent insert of the same
/// rows), so it waits a little and looks again, up to [`LOCKED_ROUNDS`] times. The whole claim
/// is tried again after a transient error, up to [`TRANSIENT_ATTEMPTS`] times.
///
/// Errors name the operation and the table, with a hint when the table is missing.
pub async fn claim<S: LeaseSteps>(
    steps: &mut S,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, BoxError> {
    let mut attempt = 0;
    loop {
        match claim_once(steps, req).await {
            Err(Failure::Step(e))
                if steps.classify(&e) == ErrorClass::Transient
                    && attempt + 1 < TRANSIENT_ATTEMPTS =>
            {
                attempt += 1;
                steps.pause(transient_pause(attempt)).await;
            }
            Ok(claim) => return Ok(claim),
            Err(Failure::Step(e)) => return Err(describe(steps, "claim", e)),
            Err(Failure::StayedLocked) => {
                return Err(format!(
                    "claim on lease table {}: expired rows stayed locked by other sessions through {LOCKED_ROUNDS} attempts",
                    steps.table()
                )
                .into());
            }
        }
    }
}

async fn claim_once<S: LeaseSteps>(
    steps: &mut S,
    req: ClaimRequest<'_>,
) -> Result<Option<Claim>, Failure<S::Error>> {
    let rounds = req.capacity.div_ceil(CHUNK) + 2 + LOCKED_ROUNDS;
    let mut locked_rounds = 0;
    for _ in 0..rounds {
        // Rows are never deleted, so every row counted here is seen by the claim after it.
        let next = steps
            .next_missing(req.namespace, req.capacity)
            .await
            .map_err(Failure::Step)?;
        if let Some(claim) = steps.take_expired(req).await.map_err(Failure::Step)? {
            return Ok(Some(claim));
        }
        if next < req.capacity {
            let end = req.capacity.min(next + CHUNK);
            steps
                .insert_rows(req.namespace, next..end)
                .await
                .map_err(Failure::Step)?;
            continue;
        }
        // Every row exists and none could be locked: full, unless some were only locked.
        let expired = steps
            .count_expired(req.namespace, req.capacity)
            .await
            .map_err(Failure::Step)?;
        if expired == 0 {
            return Ok(None);
        }
        locked_rounds += 1;
        steps
            .pause(Duration::from_millis(5 * locked_rounds.min(20)))
            .await;
    }
    Err(Failure::StayedLocked)
}

/// Renews, retrying transient errors.
pub async fn renew<S: LeaseSteps>(steps: &mut S, req: RenewRequest<'_>) -> Result<bool, BoxError> {
    let mut attempt = 0;
    loop {
        match steps.renew(req).await {
            Err(e) if retry(steps, &e, &mut attempt) => steps.pause(transient_pause(attempt)).await,
            outcome => return outcome.map_err(|e| describe(steps, "renew", e)),
        }
    }
}

/// Releases, retrying transient errors.
pub async fn release<S: LeaseSteps>(steps: &mut S, req: RenewRequest<'_>) -> Result<(), BoxError> {
    let mut attempt = 0;
    loop {
        match steps.release(req).await {
            Err(e) if retry(steps, &e, &mut attempt) => steps.pause(transient_pause(attempt)).await,
            outcome => return outcome.map_err(|e| describe(steps, "release", e)),
        }
    }
}

/// Whether a call that failed with `err` is tried again (counting the attempt).
fn retry<S: LeaseSteps>(steps: &S, err: &S::Error, attempt: &mut u32) -> bool {
    if steps.classify(err) == ErrorClass::Transient && *attempt + 1 < TRANSIENT_ATTEMPTS {
        *attempt += 1;
        true
    } else {
        false
    }
}

fn transient_pause(attempt: u32) -> Duration {
    Duration::from_millis(5 << attempt)
}

/// A store error naming the operation and the table, with a hint when the table is missing.
fn describe<S: LeaseSteps>(steps: &S, operation: &str, err: S::Error) -> BoxError {
    let hint = if steps.classify(&err) == ErrorClass::MissingRelation {
        " (create it: `create_if_missing(true)` on the lease options, the store's `create_table`, or its migration SQL)"
    } else {
        ""
    };
    format!("{operation} on lease table {}: {err}{hint}", steps.table()).into()
}

/// Runs `future` to completion on this thread, parking it while the future waits: for
/// blocking adapters, whose steps never wait on a runtime (their [`LeaseSteps::pause`] sleeps
/// the thread).
///
/// ```
/// assert_eq!(idgen_core::lease::steps::block_on(async { 6 * 7 }), 42);
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

#[cfg(test)]
mod tests {
    //! The procedure over scripted steps (a fake in a unit test of pure logic; the real
    //! stores run the conformance suites on real databases).

    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Fake(&'static str);

    /// A node space of `rows` rows, of which `locked` expired ones are locked for the first
    /// `locked_for` looks, and `transient` first calls fail with a transient error.
    #[derive(Default)]
    struct Script {
        rows: u64,
        free: u64,
        locked_for: u32,
        transient: u32,
        looks: u32,
        paused: Duration,
        missing_table: bool,
    }

    impl LeaseSteps for Script {
        type Error = Fake;
        fn table(&self) -> &str {
            "\"leases\""
        }
        fn classify(&self, err: &Fake) -> ErrorClass {
            match err.0 {
                "busy" => ErrorClass::Transient,
                "no such table" => ErrorClass::MissingRelation,
                _ => ErrorClass::Other,
            }
        }
        async fn next_missing(&mut self, _: &str, _: u64) -> Result<u64, Fake> {
            if self.missing_table {
                return Err(Fake("no such table"));
            }
            if self.transient > 0 {
                self.transient -= 1;
                return Err(Fake("busy"));
            }
            Ok(self.rows)
        }
        async fn take_expired(&mut self, req: ClaimRequest<'_>) -> Result<Option<Claim>, Fake> {
            self.looks += 1;
            if self.free == 0 || self.looks <= self.locked_for || self.rows < req.capacity {
                return Ok(None);
            }
            self.free -= 1;
            Ok(Some(Claim {
                node: self.rows - self.free - 1,
                last_timestamp_ms: None,
            }))
        }
        async fn count_expired(&mut self, _: &str, _: u64) -> Result<u64, Fake> {
            Ok(self.free)
        }
        async fn insert_rows(&mut self, _: &str, nodes: Range<u64>) -> Result<(), Fake> {
            self.free += nodes.end - nodes.start;
            self.rows = nodes.end;
            Ok(())
        }
        async fn renew(&mut self, _: RenewRequest<'_>) -> Result<bool, Fake> {
            Ok(true)
        }
        async fn release(&mut self, _: RenewRequest<'_>) -> Result<(), Fake> {
            Ok(())
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

    #[test]
    fn rows_are_created_in_chunks_then_claimed() {
        let mut s = Script::default();
        let claim = block_on(claim(&mut s, req(3000))).unwrap();
        assert_eq!(s.rows, 3000, "three chunks: 1024 + 1024 + 952");
        assert!(claim.is_some());
    }

    #[test]
    fn rows_locked_for_a_moment_are_waited_for_not_called_full() {
        let mut s = Script {
            rows: 4,
            free: 1,
            locked_for: 30,
            ..Script::default()
        };
        assert!(block_on(claim(&mut s, req(4))).unwrap().is_some());
        assert_eq!(s.looks, 31);
        assert!(s.paused >= Duration::from_millis(5 * (1..=20).sum::<u64>()));
    }

    #[test]
    fn no_expired_row_is_full_at_once() {
        let mut s = Script {
            rows: 4,
            ..Script::default()
        };
        assert_eq!(block_on(claim(&mut s, req(4))).unwrap(), None);
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
        let err = block_on(claim(&mut s, req(4))).unwrap_err().to_string();
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
        assert!(block_on(claim(&mut s, req(8))).unwrap().is_some());
        let mut s = Script {
            transient: TRANSIENT_ATTEMPTS,
            ..Script::default()
        };
        let err = block_on(claim(&mut s, req(8))).unwrap_err().to_string();
        assert_eq!(err, "claim on lease table \"leases\": busy");
        let mut s = Script {
            missing_table: true,
            ..Script::default()
        };
        let err = block_on(claim(&mut s, req(8))).unwrap_err().to_string();
        assert!(err.contains("no such table (create it"), "{err}");
    }
}
