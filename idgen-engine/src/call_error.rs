//! [`CallError`]: the error of a store's or counter's call to its database or server, with the
//! driver's error kept as its source. Every adapter's (SQL, etcd, Redis) is this one type.

/// A call that failed: what was being done where, with the driver's message (its `Display`),
/// and the driver's error itself as its [`source`](std::error::Error::source), for callers that
/// inspect it.
///
/// ```
/// use std::error::Error as _;
/// use idgen_engine::CallError;
///
/// let driver = std::io::Error::other("connection refused");
/// let err = CallError::new(format!("renew node 3 on Redis at 10.0.0.1:6379: {driver}"), driver);
/// assert_eq!(err.to_string(), "renew node 3 on Redis at 10.0.0.1:6379: connection refused");
/// assert_eq!(err.source().unwrap().to_string(), "connection refused");
/// ```
#[derive(Debug)]
pub struct CallError {
    context: String,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl CallError {
    /// The error `context` (what was done where, usually ending with the driver's message),
    /// caused by the driver's error `source`.
    pub fn new(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        CallError {
            context: context.into(),
            source: source.into(),
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.context)
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}
