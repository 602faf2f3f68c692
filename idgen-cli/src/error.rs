//! [`CliError`]: everything that makes `idgen` exit with status 1.

/// A domain error: the arguments were well-formed, but the library rejected them (a field out of
/// range, an ID from another layout, …). Usage errors are clap's and exit with status 2.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The library refused.
    #[error("{0}")]
    Core(#[from] idgen_core::Error),

    /// An ID has bits set above the layout's fields.
    #[error("ID {id} was not made with layout {layout}: {source}")]
    NotThisLayout {
        /// The ID, in decimal.
        id: String,
        /// The layout's name or spec.
        layout: String,
        /// What the library said (boxed: it is large, and this path is rare).
        source: Box<idgen_core::Error>,
    },

    /// The node sub-field values given do not match the layout's node sub-fields.
    #[error("{0}")]
    NodeFields(String),

    /// Writing the output failed (other than a closed pipe, which ends quietly).
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}
