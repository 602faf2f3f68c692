//! Exit waits for the lease store's threads.
//!
//! Each lease statement runs on a thread of its own (see `DieselLeaseStore::blocking`), and a
//! caller may stop waiting for one (a store time-out, a task dropped by a runtime that shuts
//! down). When a process then returns from `main` while such a thread is still inside libpq or
//! libmysqlclient — finishing its statement, or closing the pool's connections because it held
//! the pool's last clone — the C libraries' own exit-time clean-up (OpenSSL's `atexit` handler,
//! the shared libraries' destructors) runs under it, and the process can die with SIGSEGV
//! instead of exiting (seen once in ~100 runs of the conformance case "a process that returns
//! from main without release").
//!
//! So every such thread is counted while it runs, and an `atexit` handler waits for the count
//! to reach zero, at most [`EXIT_WAIT_LIMIT`]. The handler is registered after the first
//! connection is made, so it runs before the handlers the C libraries registered while
//! connecting (`atexit` handlers run in reverse order of registration).

use std::sync::{Condvar, Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

/// The longest an exiting process waits for lease statements still running.
pub(crate) const EXIT_WAIT_LIMIT: Duration = Duration::from_secs(2);

/// The number of lease threads running, and a signal for when it drops.
static RUNNING: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// One running lease thread: counted from [`Running::start`] (before the thread is spawned)
/// until dropped (the last thing the thread does).
#[must_use = "the thread counts as running until this is dropped"]
pub(crate) struct Running(());

impl Running {
    /// Counts one more running thread.
    pub(crate) fn start() -> Running {
        let (count, _) = &RUNNING;
        *count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let (count, done) = &RUNNING;
        let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
        *count -= 1;
        if *count == 0 {
            done.notify_all();
        }
    }
}

/// Registers the exit handler, once per process. Call after a connection has been made, so the
/// C libraries have registered their own handlers first.
pub(crate) fn wait_at_exit() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        #[cfg(unix)]
        #[allow(unsafe_code)]
        // SAFETY: `atexit` only stores the function pointer; `wait_for_running` is an
        // `extern "C"` function with no arguments that never unwinds (it cannot panic: poisoned
        // locks are taken over, and it only waits on a condition variable). A failed
        // registration (returns non-zero) just leaves the process without the wait.
        unsafe {
            libc::atexit(wait_for_running);
        }
    });
}

/// Waits until no lease thread runs, at most [`EXIT_WAIT_LIMIT`].
extern "C" fn wait_for_running() {
    wait_until_idle(EXIT_WAIT_LIMIT);
}

/// Waits until no lease thread runs or `limit` has passed; whether none runs.
pub(crate) fn wait_until_idle(limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let (count, done) = &RUNNING;
    let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
    while *count > 0 {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        count = done
            .wait_timeout(count, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn the_wait_ends_when_the_last_running_thread_ends_and_not_before() {
        let (go, wait) = mpsc::channel::<()>();
        let running = Running::start();
        let thread = std::thread::spawn(move || {
            wait.recv().unwrap();
            drop(running);
        });
        // Still running: the wait gives up at its limit.
        assert!(!wait_until_idle(Duration::from_millis(50)));
        go.send(()).unwrap();
        assert!(wait_until_idle(Duration::from_secs(10)));
        thread.join().unwrap();
    }
}
