//! Stopping on Ctrl-C and SIGTERM: every long phase (the workload, the API) watches one
//! [`Shutdown`] and ends early but orderly, so each instance gives its node ID back
//! (`LeaseHandle::release`) instead of leaving it held until the lease's TTL runs out.

use std::sync::Arc;

use tokio::sync::watch;

/// A stop request, shared by everything that runs long. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Shutdown {
    reason: Arc<watch::Sender<Option<&'static str>>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A shutdown that only [`request`](Self::request) triggers (for tests and for code that
    /// stops on its own).
    pub fn new() -> Shutdown {
        Shutdown {
            reason: Arc::new(watch::channel(None).0),
        }
    }

    /// A shutdown triggered by Ctrl-C (SIGINT) or SIGTERM. Installing the handlers replaces the
    /// signals' default action (ending the process at once) for the rest of the process.
    pub fn on_signals() -> std::io::Result<Shutdown> {
        use tokio::signal::unix::{SignalKind, signal};
        let shutdown = Shutdown::new();
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            let reason = tokio::select! {
                _ = interrupt.recv() => "Ctrl-C (SIGINT)",
                _ = terminate.recv() => "SIGTERM",
            };
            trigger.request(reason);
        });
        Ok(shutdown)
    }

    /// Asks everything watching to stop; the first reason is kept.
    pub fn request(&self, reason: &'static str) {
        self.reason.send_if_modified(|current| {
            let first = current.is_none();
            if first {
                *current = Some(reason);
            }
            first
        });
    }

    /// Why a stop was requested, if it was.
    pub fn reason(&self) -> Option<&'static str> {
        *self.reason.borrow()
    }

    /// Waits until a stop is requested; returns the reason.
    pub async fn requested(&self) -> &'static str {
        let mut rx = self.reason.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.unwrap_or("shutdown"),
            // The sender lives in `self`, so it cannot be gone.
            Err(_) => "shutdown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_reason_wins_and_wakes_every_waiter() {
        let shutdown = Shutdown::new();
        assert_eq!(shutdown.reason(), None);
        let waiter = tokio::spawn({
            let s = shutdown.clone();
            async move { s.requested().await }
        });
        tokio::task::yield_now().await;
        shutdown.request("SIGTERM");
        shutdown.request("Ctrl-C (SIGINT)");
        assert_eq!(waiter.await.unwrap(), "SIGTERM");
        assert_eq!(shutdown.reason(), Some("SIGTERM"));
        // A waiter that comes late returns at once.
        assert_eq!(shutdown.requested().await, "SIGTERM");
    }
}
