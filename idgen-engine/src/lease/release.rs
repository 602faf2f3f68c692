//! The release: a graceful [`LeaseHandle::release`], and the best-effort one of a dropped lease
//! (in a task on the runtime, or on a short-lived thread of its own when the runtime is gone).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::error::{ErrorKind, Result};
use crate::lease::RenewRequest;
use crate::lease::shared::Shared;
use crate::lease::store::timed;
use crate::lease::worker::{LeaseHandle, WorkerLease};

impl LeaseHandle {
    /// Graceful shutdown: stops the generator (at once, also for threads issuing right now),
    /// stops renewing, and gives the node ID back with the exact last timestamp issued, so the
    /// next holder can start at once. Calling it again after it succeeded does nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`] when the store fails or does not answer within the store time-out.
    /// The generator is stopped all the same (before the store call), and the release can be
    /// tried again: a release that failed, or whose future was dropped, did not count. If no
    /// release succeeded, dropping the lease tries once more in the background.
    /// [`idgen_core::Error::Forked`] in a forked child, for the parent's lease (nothing is sent).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_engine::Error> {
    /// use idgen_engine::lease::{MemoryLeaseStore, WorkerLease};
    /// use idgen_core::{Layout, Snowflake};
    ///
    /// let store = MemoryLeaseStore::new();
    /// let tiny = Layout::builder().node_bits(1).build()?; // 2 node IDs
    /// let lease = WorkerLease::options().capacity(1).acquire(store.clone(), &tiny).await?;
    /// let handle = lease.handle();
    /// let ids = Snowflake::builder().layout(tiny).lease(lease).build()?;
    /// let last = ids.next_id()?;
    /// handle.release().await?;
    ///
    /// // The node ID is free at once, and its next holder issues only after `last`.
    /// let next = WorkerLease::options().capacity(1).acquire(store, &tiny).await?;
    /// let ids = Snowflake::builder().layout(tiny).lease(next).build()?;
    /// assert!(ids.next_id_async().await? > last);
    /// # Ok(()) }
    /// ```
    pub async fn release(&self) -> Result<()> {
        if self.shared.in_forked_child() {
            return Err(ErrorKind::Id(idgen_core::Error::Forked {
                what: "node ID lease",
            })
            .into());
        }
        if self.shared.released.load(Ordering::SeqCst) {
            return Ok(());
        }
        let last = self.shared.stop_issuing();
        self.shared.release_row(last).await
    }
}

impl Drop for WorkerLease {
    /// Stops the generator and the renewals, and gives the node ID back: in a task on the
    /// running tokio runtime, or, when there is none or it shuts down before the task has run,
    /// on a short-lived thread of its own (bounded, best effort; see [`WorkerLease`]).
    fn drop(&mut self) {
        if self.shared.in_forked_child() {
            return; // the parent's lease: a copy in a child gives nothing back
        }
        self.heartbeat.abort();
        // Also after a release that failed or was cancelled: only one that succeeded is enough.
        if self.shared.released.load(Ordering::SeqCst) {
            return;
        }
        let last = self.shared.stop_issuing();
        give_back(Arc::clone(&self.shared), last);
    }
}

impl Shared {
    /// Stops the generator for good and the renewals, before any release's store call; the
    /// exact last tick issued. Revoking first stops every issuer and yields that tick (see
    /// `Fence`); revoking again (a retried release) yields the same one, as nothing can be
    /// issued after the first.
    pub(super) fn stop_issuing(&self) -> Option<i64> {
        let last = self.fence.revoke();
        self.stopped.store(true, Ordering::SeqCst);
        self.stop.notify_one();
        last
    }

    /// Gives the node ID back, unless a release already has. `last` is what
    /// [`stop_issuing`](Shared::stop_issuing) returned. Counts as done only once the store
    /// answered it: a failed or dropped call leaves the release to be tried again.
    pub(super) async fn release_row(&self, last: Option<i64>) -> Result<()> {
        // After a renewal in flight, so that one cannot land after the release; and one
        // release at a time, so a retry sees whether another one succeeded meanwhile.
        let _calls = self.store_calls.lock().await;
        if self.released.load(Ordering::SeqCst) {
            return Ok(());
        }
        timed(
            "release",
            self.options.store_timeout,
            self.store.release(self.release_request(last)),
        )
        .await?;
        self.released.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn release_request(&self, last: Option<i64>) -> RenewRequest<'_> {
        self.request(Duration::ZERO, last.max(self.floor_ms))
    }
}

/// Releases a claimed node ID in the background: in a task on the running tokio runtime, or,
/// when there is none or it shuts down before the task has run, on a thread of its own.
pub(super) fn give_back(shared: Arc<Shared>, last: Option<i64>) {
    let release = ReleaseOnDrop {
        shared,
        last,
        finished: false,
    };
    match tokio::runtime::Handle::try_current() {
        // Never blocks a runtime thread: if the runtime drops the task unfinished (it is
        // shutting down), the task's own drop takes the thread route.
        Ok(runtime) => drop(runtime.spawn(release.run())),
        Err(_) => drop(release),
    }
}

/// The release of a dropped lease. Run as a task; dropped unfinished (no runtime, or the runtime
/// shut down before it completed), it releases on a thread with a runtime of its own.
struct ReleaseOnDrop {
    shared: Arc<Shared>,
    last: Option<i64>,
    finished: bool,
}

impl ReleaseOnDrop {
    async fn run(mut self) {
        if self.shared.release_row(self.last).await.is_ok() {
            self.finished = true;
            return;
        }
        // The release failed. One cause is the runtime itself: as it shuts down, it drops the
        // store's connection tasks (a multiplexed Redis connection, an etcd channel) before this
        // task, and the call fails at once. So try again on the store's detached copy, off the
        // runtime's threads. If the runtime is shutting down the blocking task never runs, this
        // one is dropped unfinished, and `Drop` takes the thread route (bounded) instead.
        let (shared, last) = (Arc::clone(&self.shared), self.last);
        let retried = tokio::task::spawn_blocking(move || release_without_runtime(&shared, last));
        if retried.await.is_ok() {
            self.finished = true;
        }
    }
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            release_without_runtime(&self.shared, self.last);
        }
    }
}

/// The longest a dropped lease waits for its release when its runtime is gone.
const DROP_RELEASE_LIMIT: Duration = Duration::from_secs(2);

/// Releases on a new thread with a current-thread runtime and the store's
/// [`detached`](crate::lease::LeaseStore::detached) copy, waiting at most
/// `min(store_timeout, 2 s)`.
fn release_without_runtime(shared: &Arc<Shared>, last: Option<i64>) {
    if shared.released.load(Ordering::SeqCst) {
        return;
    }
    let limit = shared.options.store_timeout.min(DROP_RELEASE_LIMIT);
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let shared = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("idgen-lease-release".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    // Made inside this runtime, so its connections belong to it.
                    if let Some(store) = shared.store.detached() {
                        let request = shared.release_request(last);
                        let released = tokio::time::timeout(limit, store.release(request)).await;
                        if let Ok(Ok(())) = released {
                            shared.released.store(true, Ordering::SeqCst);
                        }
                    }
                });
                drop(runtime);
            }
            // Everything this thread holds goes before the caller is told: the runtime (with
            // any task the store left in it) and its share of the lease, which may be the last
            // one and so own the store's pool. The caller may be a process on its way out of
            // `main`; a pool closing its connections on this thread while `exit` runs the C
            // libraries' clean-up (OpenSSL's `atexit` handler under libpq) kills the process
            // with SIGSEGV. Torn down first, the caller's side is the last to hold anything.
            drop(shared);
            let _ = done.send(());
        });
    if spawned.is_ok() {
        let _ = finished.recv_timeout(limit + Duration::from_millis(200));
    }
}
