//! [`Leases`]: every node-ID lease this process took, so each one is given back on every way
//! out — a finished run, an error, Ctrl-C or SIGTERM — not only on the paths that remember to.

use std::sync::{Arc, Mutex};

use idgen_sqlx::lease::LeaseHandle;

/// The leases this process holds. Cheap to clone; clones share the list.
#[derive(Clone, Debug, Default)]
pub struct Leases {
    held: Arc<Mutex<Vec<LeaseHandle>>>,
}

impl Leases {
    /// Remembers a new lease.
    pub fn add(&self, lease: LeaseHandle) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(lease);
    }

    /// How many leases were taken (released ones included).
    pub fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no lease was taken.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives every lease back (`release` is idempotent, so leases an instance already released
    /// are skipped). Returns one message per lease that could not be released.
    pub async fn release_all(&self) -> Vec<String> {
        let held: Vec<LeaseHandle> = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect();
        let mut failures = Vec::new();
        for lease in held {
            if let Err(e) = lease.release().await {
                failures.push(format!("node ID {}: {e}", lease.node()));
            }
        }
        failures
    }
}
