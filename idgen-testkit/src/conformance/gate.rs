//! [`GatedStore`]: a lease store whose renewals wait at a gate the test opens.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use idgen_engine::lease::{BoxError, Claim, ClaimRequest, LeaseStore, RenewRequest};
use tokio::sync::{Semaphore, mpsc, watch};

/// How long the test waits for a renewal to reach the gate, or for its answer.
const WAIT: Duration = Duration::from_secs(30);

/// Wraps a real store; while armed, every renewal stops at the gate until the test opens it.
///
/// A held renewal is sent on from a task of its own, so it reaches the database even if the
/// lease stopped waiting for it, as a request already on the wire would; its answer is kept
/// for the test ([`GatedStore::answer`]). Claims and releases pass straight through.
#[derive(Clone)]
pub(crate) struct GatedStore<S> {
    inner: S,
    gate: Arc<Gate>,
}

struct Gate {
    armed: AtomicBool,
    arrived: Semaphore,
    open: watch::Sender<bool>,
    answers: mpsc::UnboundedSender<bool>,
    answered: tokio::sync::Mutex<mpsc::UnboundedReceiver<bool>>,
}

impl<S: LeaseStore + Clone> GatedStore<S> {
    pub(crate) fn new(inner: S) -> Self {
        let (answers, answered) = mpsc::unbounded_channel();
        let gate = Gate {
            armed: AtomicBool::new(false),
            arrived: Semaphore::new(0),
            open: watch::Sender::new(false),
            answers,
            answered: tokio::sync::Mutex::new(answered),
        };
        GatedStore {
            inner,
            gate: Arc::new(gate),
        }
    }

    /// From now on, renewals stop at the (closed) gate.
    pub(crate) fn arm(&self) {
        self.gate.armed.store(true, Ordering::SeqCst);
    }

    /// Returns once a renewal waits at the gate.
    pub(crate) async fn renewal_waiting(&self) {
        let permit = tokio::time::timeout(WAIT, self.gate.arrived.acquire())
            .await
            .expect("a renewal reaches the gate")
            .expect("the gate is never closed");
        permit.forget();
    }

    /// Lets the held renewals go on to the real store.
    pub(crate) fn open(&self) {
        self.gate.open.send_replace(true);
    }

    /// The real store's answer to the next held renewal (`true`: it renewed).
    pub(crate) async fn answer(&self) -> bool {
        let mut answered = self.gate.answered.lock().await;
        tokio::time::timeout(WAIT, answered.recv())
            .await
            .expect("the held renewal is answered")
            .expect("the gate keeps its sender")
    }
}

impl<S: LeaseStore + Clone> LeaseStore for GatedStore<S> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.inner.claim(req).await
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        if !self.gate.armed.load(Ordering::SeqCst) {
            return self.inner.renew(req).await;
        }
        let (namespace, holder) = (req.namespace.to_owned(), req.holder.to_owned());
        let (node, ttl, last) = (req.node, req.ttl, req.last_timestamp_ms);
        let inner = self.inner.clone();
        let gate = Arc::clone(&self.gate);
        let sent = tokio::spawn(async move {
            let mut open = gate.open.subscribe();
            gate.arrived.add_permits(1);
            let _ = open.wait_for(|open| *open).await;
            let request = RenewRequest {
                namespace: &namespace,
                node,
                holder: &holder,
                ttl,
                last_timestamp_ms: last,
            };
            let answer = inner.renew(request).await;
            if let Ok(renewed) = &answer {
                let _ = gate.answers.send(*renewed);
            }
            answer
        });
        sent.await?
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.inner.release(req).await
    }

    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        self.inner.clock_ms().await
    }
}
