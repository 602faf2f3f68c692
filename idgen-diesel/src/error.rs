//! [`DieselError`]: the one error type of idgen-diesel's own calls.

/// A failure of a diesel lease store or hi-lo counter call. Inside the engines these arrive
/// wrapped: [`Error::LeaseStore`](crate::Error::LeaseStore) and
/// [`Error::HiLoSource`](crate::Error::HiLoSource) carry them.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::DieselError;
/// use idgen_diesel::lease::DieselLeaseStore;
///
/// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
/// let err = DieselLeaseStore::with_table(pool, "leases; --").unwrap_err();
/// assert!(err.to_string().contains("may contain only ASCII letters, digits and '_'"));
/// let err: DieselError = diesel::result::Error::NotFound.into();
/// assert!(matches!(err, DieselError::Query(_)));
/// # }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DieselError {
    /// An idgen-core error: a refused lease table name
    /// ([`Error::InvalidOptions`](crate::Error::InvalidOptions)), a refused or missing hi-lo
    /// counter ([`Error::HiLoInvalidCounterName`](crate::Error::HiLoInvalidCounterName),
    /// [`Error::HiLoCounterMissing`](crate::Error::HiLoCounterMissing)), a non-positive
    /// sequence increment.
    #[error(transparent)]
    Core(#[from] idgen_core::Error),
    /// No connection from the r2d2 pool.
    #[error("no connection from the r2d2 pool: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// The database refused a statement.
    #[error("{0}")]
    Query(#[from] diesel::result::Error),
    /// The thread or blocking task running the statements could not start, panicked or was
    /// cancelled.
    #[error("the blocking task of the lease store failed: {0}")]
    Task(String),
}
