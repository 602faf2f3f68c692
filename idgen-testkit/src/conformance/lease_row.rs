//! [`LeaseRow`]: one row of a lease table as the suites read it, from SQL or from a key-value
//! store's keys.

/// One row of the lease table, as the suites read it (with their own SQL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRow {
    /// The node ID.
    pub node: u64,
    /// Who holds it; `None` when free.
    pub holder: Option<String>,
    /// When the lease ends (ended), Unix ms on the database's clock.
    pub expires_at_ms: i64,
    /// The stored last timestamp.
    pub last_timestamp_ms: Option<i64>,
}
