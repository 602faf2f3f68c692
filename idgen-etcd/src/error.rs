//! The errors the store and the counter give `idgen-core` (as the source of its own errors).

use std::fmt;

/// An etcd call that failed: what was being done, where, and the client's error as the
/// [`source`](std::error::Error::source).
#[derive(Debug)]
pub(crate) struct EtcdCallError {
    pub(crate) action: String,
    pub(crate) endpoints: String,
    pub(crate) source: etcd_client::Error,
}

impl fmt::Display for EtcdCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on etcd at {}: {}",
            self.action, self.endpoints, self.source
        )
    }
}

impl std::error::Error for EtcdCallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A key whose value is not what idgen writes (another program changed it).
#[derive(Debug)]
pub(crate) struct UnexpectedValue(pub(crate) String);

impl fmt::Display for UnexpectedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnexpectedValue {}
