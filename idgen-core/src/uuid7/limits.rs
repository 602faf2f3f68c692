//! What a UUIDv7 can hold, in a file that imports nothing, so that the crate's error can name
//! the limit without an import circle through the generator.

/// The last millisecond a UUIDv7 can hold: 2⁴⁸ − 1 ms after the Unix epoch (year 10889).
pub(crate) const MAX_UNIX_MS: i64 = (1 << 48) - 1;
