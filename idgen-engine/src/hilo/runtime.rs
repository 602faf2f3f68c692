//! Where a [`HiLo`](super::HiLo)'s fetches run, and how a caller without a runtime waits.
//!
//! A fetch runs on the tokio runtime of the caller that needs it (so an application's
//! database pool is driven by the application's runtime), never on a runtime captured when the
//! `HiLo` was built: that one may be gone. A caller with no runtime (a plain thread, a diesel
//! application), or a blocking caller on a current-thread runtime (whose only thread may be the
//! one that blocks), gets the fetch run on a small runtime of idgen's own: one thread per
//! process, started on first need, never stopped.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::Instant;

use tokio::runtime::{Handle, RuntimeFlavor};

/// Which runtime a fetch started on behalf of this caller should run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
    /// An async caller: its own runtime if it is on one (it will `.await`, so even a
    /// current-thread runtime gets to run the fetch), else the background runtime.
    Async,
    /// A caller about to block its thread: its runtime only if that is a multi-thread one
    /// (other workers run the fetch meanwhile), else the background runtime.
    Blocking,
}

/// Spawns `fetch` on the runtime chosen for `caller`; `Err` names why the background runtime
/// could not be started (the only way this fails).
pub(crate) fn spawn(
    caller: Caller,
    fetch: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    match Handle::try_current() {
        Ok(handle)
            if caller == Caller::Async || handle.runtime_flavor() == RuntimeFlavor::MultiThread =>
        {
            // On a runtime that is shutting down the task is dropped at once; its guard
            // (refill::Task) then gives the slot back, and the next caller spawns again.
            handle.spawn(fetch);
        }
        _ => {
            background()?.spawn(fetch);
        }
    }
    Ok(())
}

/// Runs `future` to completion on the background runtime and returns its output, blocking this
/// thread (for `HiLoBuilder::build_blocking`).
pub(crate) fn block_on<T: Send + 'static>(
    future: impl Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    background()?.spawn(async move {
        // The receiver only goes away if this thread panicked meanwhile.
        let _ = tx.send(future.await);
    });
    rx.recv()
        .map_err(|_| "the hi-lo background runtime dropped the start-up task".to_owned())
}

/// The process's background runtime: a current-thread runtime on a thread of its own.
fn background() -> Result<&'static Handle, String> {
    static BACKGROUND: OnceLock<Result<Handle, String>> = OnceLock::new();
    BACKGROUND
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .thread_name("idgen-hilo")
                .build()
                .map_err(|e| format!("could not start the hi-lo background runtime: {e}"))?;
            let handle = runtime.handle().clone();
            std::thread::Builder::new()
                .name("idgen-hilo".to_owned())
                .spawn(move || runtime.block_on(std::future::pending::<()>()))
                .map_err(|e| format!("could not start the hi-lo background thread: {e}"))?;
            Ok(handle)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Blocks this thread until `future` is ready or `deadline` passes; its output if it became
/// ready. Needs no runtime: the thread parks and the future's waker unparks it.
pub(crate) fn wait_until<F: Future>(
    mut future: Pin<&mut F>,
    deadline: Instant,
) -> Option<F::Output> {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return Some(output);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        // Spurious wake-ups only cost another poll.
        std::thread::park_timeout(deadline - now);
    }
}
