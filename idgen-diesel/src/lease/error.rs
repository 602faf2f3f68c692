//! [`StoreError`]: what a diesel lease store call can fail with.

/// A failure of a [`DieselLeaseStore`](crate::lease::DieselLeaseStore) call outside the lease
/// engine (which reports store failures as [`Error::LeaseStore`](crate::Error::LeaseStore)).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # fn main() {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::lease::{DieselLeaseStore, StoreError};
///
/// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
/// let err = DieselLeaseStore::with_table(pool, "leases; --").unwrap_err();
/// assert!(err.to_string().contains("may contain only ASCII letters, digits and '_'"));
/// let err: StoreError = diesel::result::Error::NotFound.into();
/// assert!(matches!(err, StoreError::Query(_)));
/// # }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The table name was refused ([`Error::InvalidOptions`](crate::Error::InvalidOptions)).
    #[error(transparent)]
    Table(#[from] idgen_core::Error),
    /// No connection from the r2d2 pool.
    #[error("no connection from the r2d2 pool: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// The database refused a statement.
    #[error("{0}")]
    Query(#[from] diesel::result::Error),
    /// The blocking task running the statements panicked or was cancelled.
    #[error("the blocking task of the lease store failed: {0}")]
    Task(String),
}
