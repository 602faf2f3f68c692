//! The error type of `idgen-seaorm`'s hooks.

/// Everything that can go wrong in `idgen-seaorm`.
///
/// It converts into [`sea_orm::DbErr`], so `?` works inside `ActiveModelBehavior` hooks. The
/// `DbErr` holds this error itself (as the `source` of `DbErr::TryIntoErr`, turning "idgen" into
/// "an ID"), not its text, so the chain down to a driver's error stays:
///
/// ```
/// use std::error::Error as _;
/// use idgen_seaorm::Error;
///
/// let err: sea_orm::DbErr = Error::NoGenerator.into();
/// assert!(err.to_string().contains("no process-wide Snowflake generator"));
/// let source = err.source().expect("the idgen error");
/// assert!(source.to_string().starts_with("no process-wide Snowflake generator"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An ID was asked of the process-wide generator before [`set_generator`](crate::set_generator).
    #[error(
        "no process-wide Snowflake generator: call idgen_seaorm::set_generator(..) once at start-up before inserting rows with generated IDs"
    )]
    NoGenerator,

    /// [`set_generator`](crate::set_generator) was called a second time.
    #[error(
        "the process-wide Snowflake generator is already set (node {node}); it is set once per process"
    )]
    GeneratorAlreadySet {
        /// The node ID of the generator already set.
        node: u64,
    },

    /// An `i64` ID was asked of the process-wide hi-lo before [`set_hilo`](crate::set_hilo).
    #[error(
        "no process-wide HiLo: call idgen_seaorm::set_hilo(..) once at start-up before inserting rows with hi-lo IDs"
    )]
    NoHiLo,

    /// [`set_hilo`](crate::set_hilo) was called a second time.
    #[error("the process-wide HiLo is already set; it is set once per process")]
    HiLoAlreadySet,

    /// No hi-lo ID was in memory for a caller that cannot wait (`ActiveModelBehavior::new()`);
    /// `before_save` waits for one instead.
    #[error("no hi-lo ID is buffered right now (the next block is being fetched)")]
    HiLoBufferEmpty,

    /// The `DatabaseConnection` is not an sqlx pool of a database this crate was built for.
    #[error(
        "leases and hi-lo counters need an sqlx pool connection to PostgreSQL, MySQL/MariaDB or SQLite (with the idgen-seaorm feature of the same name), not this {backend} connection"
    )]
    UnsupportedConnection {
        /// The connection's backend.
        backend: String,
    },

    /// An error of the engines or the generator: the generator refused to issue an ID (clock
    /// moved backwards, lease fenced, …), or idgen-sqlx's lease store or hi-lo source refused a
    /// name or failed.
    #[error(transparent)]
    Id(#[from] idgen_engine::Error),
}

impl From<idgen_core::Error> for Error {
    fn from(err: idgen_core::Error) -> Self {
        Error::Id(err.into())
    }
}

impl From<Error> for sea_orm::DbErr {
    fn from(err: Error) -> Self {
        sea_orm::DbErr::TryIntoErr {
            from: "idgen",
            into: "an ID",
            source: std::sync::Arc::new(err),
        }
    }
}
