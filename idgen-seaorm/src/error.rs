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

    /// The generator refused to issue an ID (clock moved backwards, lease fenced, …).
    #[error(transparent)]
    Id(#[from] idgen_core::Error),
}

impl From<Error> for sea_orm::DbErr {
    fn from(err: Error) -> Self {
        sea_orm::DbErr::Custom(err.to_string())
    }
}
