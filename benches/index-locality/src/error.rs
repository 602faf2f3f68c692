//! The benchmark's one error type.

/// Errors of the benchmark: anything, with its message.
pub(crate) type BoxResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
