//! The error the store and the counter give `idgen-core` (as the source of its own errors).

use std::fmt;

/// A Redis call that failed: what was being done, on which server, and the client's error as
/// the [`source`](std::error::Error::source).
#[derive(Debug)]
pub(crate) struct RedisCallError {
    pub(crate) action: String,
    pub(crate) server: String,
    pub(crate) source: redis::RedisError,
}

impl fmt::Display for RedisCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on Redis at {}: {}",
            self.action, self.server, self.source
        )
    }
}

impl std::error::Error for RedisCallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A reply that is not what the script returns (another program changed the keys' types).
#[derive(Debug)]
pub(crate) struct UnexpectedReply(pub(crate) String);

impl fmt::Display for UnexpectedReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnexpectedReply {}
