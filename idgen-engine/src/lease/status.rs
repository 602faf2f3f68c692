//! [`LeaseStatus`]: what a lease's background renewal has seen.

/// What the lease's background renewal has seen, from
/// [`LeaseHandle::status`](crate::lease::LeaseHandle::status).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeaseStatus {
    /// Successful renewals.
    pub renewals: u64,
    /// Renewals that failed (store error or time-out).
    pub failed_renewals: u64,
    /// The last renewal error, if the last renewal failed.
    pub last_error: Option<String>,
    /// The node ID was taken by another holder (after this one's lease expired); the generator
    /// is stopped for good.
    pub lost: bool,
    /// The fence deadline, in Unix ms: the generator issues IDs until then.
    pub valid_until_ms: i64,
}
