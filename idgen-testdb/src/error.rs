//! The one error type of `idgen-testkit`.

/// Everything that can keep a test from getting its database.
///
/// ```
/// let err = idgen_testdb::Error::Database {
///     action: "create database idgen_test_1".into(),
///     url: "postgres://postgres@127.0.0.1:5432/postgres".into(),
///     reason: "connection refused".into(),
/// };
/// assert!(err.to_string().contains("connection refused"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// None of the three ways gave a server; the message names all three.
    #[error("{0}")]
    NoServer(String),

    /// A throwaway server (local binaries or a container) did not start.
    #[error("could not start {what}: {reason}")]
    Start {
        /// What was being started, e.g. `a local PostgreSQL server`.
        what: String,
        /// Why it failed, with the end of the server's log where there is one.
        reason: String,
    },

    /// A statement or connection on a running server failed.
    #[error("{action} on {url}: {reason}")]
    Database {
        /// What was being done.
        action: String,
        /// The server's URL.
        url: String,
        /// The driver's message.
        reason: String,
    },
}

impl Error {
    pub(crate) fn database(
        action: impl Into<String>,
        url: &str,
        err: impl std::fmt::Display,
    ) -> Self {
        Error::Database {
            action: action.into(),
            url: url.to_owned(),
            reason: err.to_string(),
        }
    }

    pub(crate) fn start(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Start {
            what: what.into(),
            reason: reason.into(),
        }
    }
}
