//! The one error type of `idgen-core`.

use crate::fmt_time::UnixMs;

/// Everything that can go wrong in `idgen-core`.
///
/// Every message names the value that was rejected and the limit it broke, so a log line is
/// enough to find the cause:
///
/// ```
/// use idgen_core::{Error, Layout, Parts};
///
/// let err = Layout::TWITTER.compose(Parts { ticks: 0, node: 1024, sequence: 0 }).unwrap_err();
/// assert_eq!(err.to_string(), "node 1024 does not fit in 10 bits: the largest node is 1023");
/// assert!(matches!(err, Error::FieldOutOfRange { field: "node", value: 1024, .. }));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A text that should hold a decimal [`SnowflakeId`](crate::SnowflakeId) does not.
    #[error("{input:?} is not a Snowflake ID: {reason}")]
    InvalidIdText {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A number outside `0..=i64::MAX` was offered as a [`SnowflakeId`](crate::SnowflakeId).
    #[error("{value} is not a Snowflake ID: an ID is between 0 and 9223372036854775807 (i64::MAX)")]
    IdOutOfRange {
        /// The rejected number.
        value: i128,
    },

    /// A [`Layout`](crate::Layout) that cannot exist (too wide, no time bits, …).
    #[error("invalid layout: {reason}")]
    InvalidLayout {
        /// What is wrong with it.
        reason: String,
    },

    /// A field value too large for its bit width.
    #[error("{field} {value} does not fit in {bits} bits: the largest {field} is {max}")]
    FieldOutOfRange {
        /// The field: `"timestamp"`, `"node"`, `"sequence"` or a node sub-field's name.
        field: &'static str,
        /// The rejected value.
        value: u64,
        /// The field's width.
        bits: u8,
        /// The largest value that fits.
        max: u64,
    },

    /// An instant before the layout's epoch.
    #[error("{} is before the layout's epoch {}", UnixMs(*.unix_ms), UnixMs(*.epoch_ms))]
    BeforeEpoch {
        /// The instant, in milliseconds since the Unix epoch.
        unix_ms: i64,
        /// The layout's epoch, in milliseconds since the Unix epoch.
        epoch_ms: i64,
    },

    /// An instant after the last one the layout's timestamp field can hold. Never wrapped.
    #[error(
        "{} is after {}, the last instant this layout can represent",
        UnixMs(*.unix_ms),
        UnixMs(*.last_ms)
    )]
    TimeOverflow {
        /// The instant, in milliseconds since the Unix epoch.
        unix_ms: i64,
        /// The layout's last representable instant, in milliseconds since the Unix epoch.
        last_ms: i64,
    },

    /// The clock went back further than the generator's [`ClockPolicy`](crate::ClockPolicy) allows.
    #[error(
        "the clock moved backwards by {behind_ms} ms (policy {policy} allows {allowed_ms} ms); no ID was issued"
    )]
    ClockMovedBackwards {
        /// How far behind the last issued timestamp the clock was, in milliseconds.
        behind_ms: u64,
        /// How far the policy tolerates, in milliseconds (0 for `Refuse`).
        allowed_ms: u64,
        /// The policy's name.
        policy: &'static str,
    },

    /// A node-ID source (environment variable, hostname, network address) gave no usable node ID.
    #[error("no node ID from {origin}: {reason}")]
    NodeSource {
        /// Where the node ID was looked for, e.g. `environment variable NODE_ID`.
        origin: String,
        /// Why nothing usable was found there.
        reason: String,
    },

    /// The generator's node-ID lease is not known to be valid now, so it issues nothing.
    #[error(
        "the node ID lease is not valid at {} (valid until {}): no ID was issued until the lease is renewed",
        UnixMs(*.now_ms),
        UnixMs(*.valid_until_ms)
    )]
    Fenced {
        /// The clock's reading, in milliseconds since the Unix epoch.
        now_ms: i64,
        /// The fence's deadline, in milliseconds since the Unix epoch (`i64::MIN` when revoked).
        valid_until_ms: i64,
    },

    /// A generator was built without a node ID.
    #[error(
        "no node ID was given to the generator: call .node(), .node_id() or .lease() on the builder"
    )]
    MissingNode,

    // ---- node-ID leases ----
    /// Every node ID of the layout's node space is leased by a live holder.
    #[error(
        "no free node ID in namespace {namespace:?}: all {capacity} node IDs (the layout's node capacity) are leased by live holders"
    )]
    NoFreeNode {
        /// The lease namespace.
        namespace: String,
        /// How many node IDs there are.
        capacity: u64,
    },

    /// The lease store failed or did not answer in time.
    #[error("node ID lease store failed to {operation}: {message}")]
    LeaseStore {
        /// `"claim"`, `"renew"` or `"release"`.
        operation: &'static str,
        /// The store's error.
        message: String,
    },

    /// Options that contradict each other.
    #[error("invalid options: {reason}")]
    InvalidOptions {
        /// What is wrong.
        reason: String,
    },

    // ---- diesel column types ----
    /// A database returned a value that is not an integer (floating point, binary, a date…)
    /// where a [`SnowflakeId`](crate::SnowflakeId) was expected. Never truncated.
    #[error(
        "{value} is not a Snowflake ID: the database returned a {kind} value where an integer from 0 to 9223372036854775807 was expected"
    )]
    IdNotAnInteger {
        /// The value as the database returned it (cut to 64 characters).
        value: String,
        /// The kind of value, e.g. `"floating-point"` or `"BLOB"`.
        kind: &'static str,
    },
}
