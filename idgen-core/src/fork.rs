//! Which process an ID source was made in: a forked child must not issue from its parent's.
//!
//! `fork()` without `exec` copies every object of the parent into the child: a leased
//! [`Snowflake`](crate::snowflake::Snowflake) (its node ID, its last timestamp, its sequence), a
//! `HiLo` buffer, a `WorkerLease` (both idgen-engine). Both
//! processes would then issue the same IDs, and the child, dropping its copy of the lease, would
//! give the *parent's* node ID back. So a `pthread_atfork` child handler counts forks (one atomic
//! add, async-signal-safe), every generator and lease records the count it was made under, and
//! one relaxed load on the path of an ID tells a copy in a child from the original: the copy
//! returns [`Error::Forked`] and never calls the lease store.
//!
//! A raw `clone` system call that skips the C library's fork handlers is not covered, nor is
//! `vfork` without `exec` (which POSIX forbids anyway).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Error;

/// Forks in this process's ancestry since the handler was registered (the child handler adds
/// one). An object made under another count was made in an ancestor.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The fork count to record in a new generator, fence, lease or hi-lo buffer. Registers the
/// child handler first (once per process), so every fork after this call is counted.
pub fn generation() -> u64 {
    // A failed registration is reported by `protected`, which every generator's build calls.
    let _ = protected();
    FORKS.load(Ordering::Relaxed)
}

/// The fork count now, without registering the handler (for a caller that checked
/// [`protected`] already).
#[inline(always)]
pub fn count() -> u64 {
    FORKS.load(Ordering::Relaxed)
}

/// What the child handler does in a forked child, for tests of what reacts to it (tests that
/// fork for real: `tests/fork.rs`, idgen-engine's `tests/fork_generators.rs`).
#[cfg(test)]
pub(crate) fn count_a_fork_for_tests() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// Whether this process was forked since `generation` was recorded: the object is a copy in a
/// child. One relaxed load of a word only a child handler ever writes (so it stays in every
/// core's cache) and one compare: the cost on the path of an ID.
#[inline(always)]
pub fn is_forked_since(generation: u64) -> bool {
    FORKS.load(Ordering::Relaxed) != generation
}

/// The handler is registered, or the reason it could not be (a generator refuses to build
/// without it rather than issue unprotected).
pub fn protected() -> Result<(), Error> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(register)
        .clone()
        .map_err(|reason| Error::ForkHandler { reason })
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn register() -> Result<(), String> {
    /// Runs in the child of every `fork()`, in the only thread it has, before `fork` returns.
    extern "C" fn in_child() {
        FORKS.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: `pthread_atfork` only records the three function pointers (two are null). The
    // child handler is an `extern "C" fn()` that does one atomic add: async-signal-safe, as
    // POSIX requires of code that runs in a child of a multi-threaded process. It is called
    // once per process (`OnceLock`), never from inside a fork handler. Tested by
    // `tests/fork.rs` here and idgen-engine's `tests/fork_generators.rs`, which fork a real
    // child.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "could not register the fork handler that stops generators copied into a child process and reseeds its random IDs (pthread_atfork returned {rc})"
        ))
    }
}

/// No `fork` outside Unix.
#[cfg(not(unix))]
fn register() -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_made_in_this_process_is_not_a_forked_copy() {
        let made = generation();
        assert!(protected().is_ok());
        assert!(!is_forked_since(made));
        // (A fork moves the count: tests/fork_generators.rs forks a real child.)
        assert!(is_forked_since(made.wrapping_add(1)));
    }
}
