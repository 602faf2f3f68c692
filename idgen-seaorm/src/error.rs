//! The one error type of `idgen-seaorm`.

/// Everything that can go wrong in `idgen-seaorm`.
///
/// It converts into [`sea_orm::DbErr`] (as `DbErr::Custom` with the same message), so `?` works
/// inside `ActiveModelBehavior` hooks:
///
/// ```
/// use idgen_seaorm::Error;
///
/// let err: sea_orm::DbErr = Error::NoGenerator.into();
/// assert!(err.to_string().contains("no process-wide Snowflake generator"));
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

    /// A hi-lo counter or table name that cannot be written into SQL.
    #[error("hi-lo counter name {name:?} is invalid: {reason}")]
    InvalidCounterName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// The hi-lo counter (sequence, counter table or its row) does not exist.
    #[error(
        "hi-lo counter {counter} does not exist: {missing} (create it with SeaOrmCounter::create or the migration)"
    )]
    CounterMissing {
        /// The counter's name.
        counter: String,
        /// What is missing.
        missing: String,
    },

    /// The database failed a hi-lo counter statement.
    #[error("hi-lo counter {counter}: {message}")]
    CounterDatabase {
        /// The counter's name.
        counter: String,
        /// The database's error.
        message: String,
    },

    /// The `DatabaseConnection` is not an sqlx pool of a database this crate was built for.
    #[error(
        "a hi-lo counter needs an sqlx pool connection to PostgreSQL, MySQL/MariaDB or SQLite (with the idgen-seaorm feature of the same name), not this {backend} connection"
    )]
    UnsupportedConnection {
        /// The connection's backend.
        backend: String,
    },

    /// The generator refused to issue an ID (clock moved backwards, lease fenced, …).
    #[error(transparent)]
    Id(#[from] idgen_core::Error),
}

impl From<Error> for sea_orm::DbErr {
    fn from(err: Error) -> Self {
        sea_orm::DbErr::Custom(err.to_string())
    }
}
