//! Lease calls their caller gave up on, on a real store: a claim that commits after `acquire`
//! stopped waiting for it, and a release that failed or was cancelled before it reached the
//! store. Neither may leave the node ID held until its TTL runs out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use idgen_engine::lease::{
    BoxError, Claim, ClaimRequest, LeaseOptions, LeaseStore, RenewRequest, WorkerLease,
};
use idgen_engine::{Error, ErrorKind};
use tokio::sync::{Semaphore, mpsc, watch};

use super::Database;
use super::lease::{LeaseSubject, TABLE, generator, layout, setup, short};

/// How long a case waits for something the store does at once: far below the TTLs here (a
/// minute), so a node ID freed only by its TTL fails the case.
const WAIT: Duration = Duration::from_secs(20);

/// Wraps a real store. While `hold_claims` is on, each claim waits at a gate the test opens
/// and is then sent on from a task of its own, so it commits even if its caller stopped
/// waiting (as a statement already on the wire does); the test hears its answer. Releases can
/// be made to fail at once, or to hang until their caller gives up, without reaching the store.
#[derive(Clone)]
struct Abandoning<S> {
    inner: S,
    calls: Arc<Calls>,
}

/// A held claim's answer from the real store (its error as text).
type Landed = Result<Option<Claim>, String>;

struct Calls {
    hold_claims: AtomicBool,
    claim_waiting: Semaphore,
    open: watch::Sender<bool>,
    landed: mpsc::UnboundedSender<Landed>,
    answers: tokio::sync::Mutex<mpsc::UnboundedReceiver<Landed>>,
    fail_next_release: AtomicBool,
    hang_next_release: AtomicBool,
    release_waiting: Semaphore,
}

impl<S: LeaseStore + Clone> Abandoning<S> {
    fn new(inner: S) -> Self {
        let (landed, answers) = mpsc::unbounded_channel();
        let calls = Calls {
            hold_claims: AtomicBool::new(false),
            claim_waiting: Semaphore::new(0),
            open: watch::Sender::new(false),
            landed,
            answers: tokio::sync::Mutex::new(answers),
            fail_next_release: AtomicBool::new(false),
            hang_next_release: AtomicBool::new(false),
            release_waiting: Semaphore::new(0),
        };
        Abandoning {
            inner,
            calls: Arc::new(calls),
        }
    }

    /// Returns once a claim waits at the gate.
    async fn claim_waiting(&self) {
        let permit = tokio::time::timeout(WAIT, self.calls.claim_waiting.acquire())
            .await
            .expect("a claim reaches the gate")
            .expect("the gate is never closed");
        permit.forget();
    }

    /// Lets the held claim go on to the store (and closes the gate behind it); its answer.
    async fn land_held_claim(&self) -> Option<Claim> {
        self.calls.open.send_replace(true);
        let mut answers = self.calls.answers.lock().await;
        let answer = tokio::time::timeout(WAIT, answers.recv())
            .await
            .expect("the held claim lands")
            .expect("the gate keeps its sender");
        self.calls.open.send_replace(false);
        answer.unwrap_or_else(|e| panic!("the held claim failed: {e}"))
    }

    /// Makes the next release fail (`cancel == false`) or hang; then runs `release` and checks
    /// it failed, or drops it once it hangs (the caller's own time-out). Either way the call
    /// never reached the store.
    async fn fail_next_release<F>(&self, cancel: bool, release: F)
    where
        F: Future<Output = Result<(), Error>>,
    {
        if cancel {
            self.calls.hang_next_release.store(true, Ordering::SeqCst);
            tokio::select! {
                outcome = release => panic!("the release returned {outcome:?}"),
                permit = self.calls.release_waiting.acquire() => {
                    permit.expect("never closed").forget()
                }
            }
        } else {
            self.calls.fail_next_release.store(true, Ordering::SeqCst);
            let outcome = release.await;
            assert!(
                matches!(
                    outcome.as_ref().map_err(Error::kind),
                    Err(ErrorKind::LeaseStore {
                        operation: "release",
                        ..
                    })
                ),
                "{outcome:?}"
            );
        }
    }
}

impl<S: LeaseStore + Clone> LeaseStore for Abandoning<S> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        if !self.calls.hold_claims.load(Ordering::SeqCst) {
            return self.inner.claim(req).await;
        }
        let (namespace, holder) = (req.namespace.to_owned(), req.holder.to_owned());
        let (capacity, ttl) = (req.capacity, req.ttl);
        let (inner, calls) = (self.inner.clone(), Arc::clone(&self.calls));
        let sent = tokio::spawn(async move {
            let mut open = calls.open.subscribe();
            calls.claim_waiting.add_permits(1);
            let _ = open.wait_for(|open| *open).await;
            let request = ClaimRequest {
                namespace: &namespace,
                capacity,
                holder: &holder,
                ttl,
            };
            let answer = inner.claim(request).await;
            let _ = calls
                .landed
                .send(answer.as_ref().map(|c| *c).map_err(|e| e.to_string()));
            answer
        });
        sent.await?
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.inner.renew(req).await
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        if self.calls.fail_next_release.swap(false, Ordering::SeqCst) {
            return Err("the connection was reset before the release was sent".into());
        }
        if self.calls.hang_next_release.swap(false, Ordering::SeqCst) {
            self.calls.release_waiting.add_permits(1);
            std::future::pending::<()>().await;
        }
        self.inner.release(req).await
    }

    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        self.inner.clock_ms().await
    }

    fn detached(&self) -> Option<Self> {
        let inner = self.inner.detached()?;
        Some(Abandoning::new(inner))
    }
}

/// The row of node ID 0 once `done` says it is as the case expects; fails after [`WAIT`].
async fn row_once(
    db: &Database,
    what: &str,
    done: impl Fn(&super::LeaseRow) -> bool,
) -> super::LeaseRow {
    let started = Instant::now();
    loop {
        let rows = db.lease_rows(TABLE, "default").await;
        if let Some(row) = rows.iter().find(|r| r.node == 0)
            && done(row)
        {
            return row.clone();
        }
        assert!(started.elapsed() < WAIT, "{what}: {rows:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Options for the node ID 0 of a one-node layout with a minute's TTL, so that only a release
/// frees it while the case runs, and the store time-out `store_timeout`.
fn one_minute(holder: &str, store_timeout: Duration) -> LeaseOptions {
    WorkerLease::options()
        .holder(holder)
        .capacity(1)
        .ttl(Duration::from_secs(60))
        .store_timeout(store_timeout)
}

/// A first holder issues and releases the node ID 0 of a one-node layout: its exact last
/// timestamp (returned) is the row's, and the node ID is free to take at once.
async fn released_by_a_first_holder<S: LeaseStore>(store: S) -> i64 {
    let one = layout(0);
    let first = short(12_000)
        .holder("first")
        .acquire(store, &one)
        .await
        .unwrap();
    let (ids, handle) = generator(first, one);
    let last_ms = one.decompose(ids.next_id().unwrap()).unwrap().unix_ms;
    handle.release().await.unwrap();
    last_ms
}

/// A claim held at a gate past the store time-out (first round), or one whose caller dropped
/// `acquire` while it waited (second round), commits after its caller gave up: it is given back
/// at once, with the last timestamp the previous holder's release stored, and the next
/// `acquire` (capacity 1) gets the node ID and starts above that timestamp.
pub async fn a_claim_that_lands_after_its_caller_gave_up_is_given_back<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    let last_ms = released_by_a_first_holder(store.clone()).await;

    let gated = Abandoning::new(store.clone());
    gated.calls.hold_claims.store(true, Ordering::SeqCst);
    for caller_gives_up in [false, true] {
        if caller_gives_up {
            // The caller's own time-out, long before the store's: it stops waiting as soon as
            // the claim is at the gate.
            let attempt = one_minute("late", WAIT).acquire(gated.clone(), &one);
            tokio::select! {
                outcome = attempt => panic!("acquire returned {:?}", outcome.map(|l| l.node())),
                () = gated.claim_waiting() => {}
            }
        } else {
            let attempt = one_minute("late", Duration::from_secs(1))
                .acquire(gated.clone(), &one)
                .await;
            assert!(
                matches!(
                    attempt.as_ref().map_err(Error::kind),
                    Err(ErrorKind::LeaseStore {
                        operation: "claim",
                        ..
                    })
                ),
                "{:?}",
                attempt.map(|l| l.node())
            );
            gated.claim_waiting().await; // it reached the gate before the time-out
        }
        let landed = gated.land_held_claim().await;
        assert_eq!(landed.map(|c| c.node), Some(0), "the held claim committed");
        let row = row_once(&db, "the late claim is given back", |row| {
            row.holder.is_none()
        })
        .await;
        assert_eq!(
            row.last_timestamp_ms,
            Some(last_ms),
            "caller_gives_up={caller_gives_up}: the give-back changed the floor: {row:?}"
        );
    }

    let next = one_minute("next", Duration::from_secs(5))
        .acquire(store.clone(), &one)
        .await
        .expect("the late claims' node ID is free again");
    assert_eq!(next.node(), 0);
    assert_eq!(next.previous_timestamp_ms(), Some(last_ms));
    next.handle().release().await.unwrap();
}

/// A release that failed (first round) or whose caller stopped waiting (second round) before
/// it reached the store stops the generator all the same, and leaves the node ID held only
/// until `release()` is called again, which reaches the store with the exact last timestamp.
/// A lease dropped after such a release (third and fourth) is released by its `Drop`.
pub async fn a_release_that_did_not_reach_the_store_is_retried<S: LeaseSubject>() {
    let (db, store) = setup::<S>().await;
    let one = layout(0);
    released_by_a_first_holder(store.clone()).await;
    let flaky = Abandoning::new(store.clone());
    for (cancel, then_drop) in [(false, false), (true, false), (false, true), (true, true)] {
        let case = format!("cancel={cancel}, then_drop={then_drop}");
        let lease = one_minute("flaky", Duration::from_secs(5))
            .acquire(flaky.clone(), &one)
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let holder = lease.holder().to_owned();
        let (ids, handle) = generator(lease, one);
        let last = (0..100).map(|_| ids.next_id().unwrap()).max().unwrap();
        let last_ms = one.decompose(last).unwrap().unix_ms;

        flaky.fail_next_release(cancel, handle.release()).await;
        assert!(
            matches!(ids.next_id(), Err(idgen_core::Error::Fenced { .. })),
            "{case}: the generator issued after a release began"
        );
        let rows = db.lease_rows(TABLE, "default").await;
        assert_eq!(rows[0].holder.as_deref(), Some(holder.as_str()), "{case}");

        if then_drop {
            drop((ids, handle)); // the generator owned the lease: its `Drop` releases
        } else {
            handle.release().await.unwrap();
        }
        let row = row_once(&db, &format!("{case}: released"), |row| {
            row.holder.is_none()
        })
        .await;
        assert_eq!(row.last_timestamp_ms, Some(last_ms), "{case}: {row:?}");
    }
}
