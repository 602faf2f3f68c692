//! The error type of `idgen-core`.

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
///
/// `Debug` reads like `Display` followed by the causes not already in the message, so
/// `fn main() -> Result<(), idgen_core::Error>` prints the same helpful text:
///
/// ```
/// let err = "12x".parse::<idgen_core::SnowflakeId>().unwrap_err();
/// assert_eq!(format!("{err:?}"), err.to_string());
/// ```
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A text that should hold a decimal [`SnowflakeId`](crate::snowflake::SnowflakeId) does not.
    #[error("{input:?} is not a Snowflake ID: {reason}")]
    InvalidIdText {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A number outside `0..=i64::MAX` was offered as a [`SnowflakeId`](crate::snowflake::SnowflakeId).
    #[error("{value} is not a Snowflake ID: an ID is between 0 and 9223372036854775807 (i64::MAX)")]
    IdOutOfRange {
        /// The rejected number.
        value: i128,
    },

    /// A [`Layout`](crate::snowflake::Layout) that cannot exist (too wide, no time bits, …).
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

    /// The clock went back further than the generator's [`ClockPolicy`](crate::snowflake::ClockPolicy) allows.
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

    /// The generator's node-ID lease is not known to be valid now, so it issues nothing: its
    /// renewals are failing (it resumes when one gets through), or the lease was released or
    /// lost (`valid_until_ms` is `i64::MIN`; it never resumes).
    #[error("{}", fenced_message(*.now_ms, *.valid_until_ms))]
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

    /// Options that contradict each other.
    #[error("invalid options: {reason}")]
    InvalidOptions {
        /// What is wrong.
        reason: String,
    },

    // ---- public IDs (`PublicId`, `IdCodec`) and UUIDv7 ----
    /// A public ID's text has the wrong type prefix (or none, or one where none belongs).
    #[error(
        "{input:?} is not a public ID of this type: expected {}, found {}",
        describe_expected(expected),
        describe_found(found)
    )]
    PublicIdPrefix {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// The prefix the type requires (`""` for an untyped public ID).
        expected: &'static str,
        /// The text up to and including its last `_` (`""` when it has none; cut to 64 characters).
        found: String,
    },

    /// A public ID's base32 part does not have exactly 26 characters.
    #[error(
        "{input:?} is not a public ID: its base32 part has {found} characters, a public ID has exactly 26"
    )]
    PublicIdLength {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// The number of characters after the prefix and `_`.
        found: usize,
    },

    /// A public ID's base32 part holds a character outside the lower-case Crockford alphabet.
    #[error(
        "{input:?} is not a public ID: character {found:?} at position {position} of the base32 part {reason}"
    )]
    PublicIdCharacter {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// The 0-based position in the 26-character base32 part.
        position: usize,
        /// The offending character.
        found: char,
        /// Why it is rejected.
        reason: &'static str,
    },

    /// A public ID's first base32 character is above `7`: 26 characters would hold more than 128 bits.
    #[error(
        "{input:?} is not a public ID: its first base32 character is {found:?}, the largest allowed is '7' (26 characters hold 130 bits, an ID has 128)"
    )]
    PublicIdOverflow {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// The first character of the base32 part.
        found: char,
    },

    /// An `IdCodec` token did not decode. Deliberately the same error for every
    /// cause (altered, forged, another type's, a retired key's, malformed), so it is no oracle.
    #[error("{input:?} is not a valid token for this type")]
    InvalidToken {
        /// The rejected text (cut to 64 characters).
        input: String,
    },

    /// Two Rust types with the same public-ID prefix were used with one `IdCodec`: the tag
    /// is the prefix's, so their tokens would decode as each other's. Depends on the types
    /// only, never on a token.
    #[error(
        "IdCodec: {second} uses the prefix {prefix:?}, which {first} already uses with this codec; their tokens would decode as each other's, so give each type its own prefix"
    )]
    CodecPrefixShared {
        /// The shared prefix (`""` for none).
        prefix: &'static str,
        /// The type that used the prefix first.
        first: &'static str,
        /// The type that was refused.
        second: &'static str,
    },

    /// An `IdCodec` key or key-slot configuration was refused.
    #[error("{origin}: {reason}")]
    InvalidCodecKey {
        /// Where the key came from (e.g. `environment variable PUBLIC_ID_KEY`, `key slot 2`).
        origin: String,
        /// What is wrong (the key itself is never shown).
        reason: String,
    },

    /// A generator, hi-lo buffer or lease made before a `fork()` (without `exec`) was used in
    /// the child process. The copy would issue the parent's IDs again (same node ID and
    /// sequence, or the same buffered hi-lo block), and renewing or releasing the copied lease
    /// would renew or release the parent's node ID, so the copy refuses; the parent's original
    /// is unaffected. A child builds its own: a new lease (a node ID of its own) and generator,
    /// or a new `HiLo` on a connection pool of its own.
    #[error(
        "this {what} was made in the parent process before fork(): a forked child cannot use it (the parent issues the same IDs from its original, and the lease belongs to the parent); build a new one in the child, with a node ID or connection pool of its own"
    )]
    Forked {
        /// What was copied: `"Snowflake generator"`, `"hi-lo buffer"`, `"node ID lease"` or
        /// `"fence"`.
        what: &'static str,
    },

    /// The `pthread_atfork` handler that stops generators copied into a forked child could not
    /// be registered, so no generator is built (it could not be protected).
    #[error("{reason}")]
    ForkHandler {
        /// The failure.
        reason: String,
    },

    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed: {reason}")]
    RandomSource {
        /// The OS error.
        reason: String,
    },

    /// A UUIDv7 timestamp outside `0..2^48` milliseconds since the Unix epoch.
    #[error(
        "{} cannot be a UUIDv7 timestamp: UUIDv7 holds 1970-01-01T00:00:00.000Z to {}",
        UnixMs(*.unix_ms),
        UnixMs(crate::uuid7::limits::MAX_UNIX_MS)
    )]
    Uuid7TimeOutOfRange {
        /// The instant, in milliseconds since the Unix epoch.
        unix_ms: i64,
    },

    /// A UUID that is not a version 7 UUID was given where one is needed.
    #[error("{uuid} is not a UUIDv7: its version is {version} and its variant {variant}")]
    NotUuid7 {
        /// The rejected UUID.
        uuid: uuid::Uuid,
        /// Its version number (the 4 bits of field `ver`).
        version: u8,
        /// Its variant, as the `uuid` crate names it.
        variant: String,
    },

    // ---- public IDs in database columns (src/integrations/sqlx/public_id/) ----
    /// A database value read as a [`PublicId`](crate::public_id::PublicId) does not hold exactly 16 bytes
    /// (e.g. a `VARBINARY` or `BLOB` written by other code).
    #[error("a {found}-byte value is not a public ID: a public ID is stored as exactly 16 bytes")]
    PublicIdByteLength {
        /// The number of bytes the value holds.
        found: usize,
    },

    // ---- typed IDs (src/typed_id/) and integers read with `serde_string` ----
    /// A text that should hold an [`Id<T>`](crate::typed_id::Id), or an integer read with
    /// [`serde_string`](crate::serde_string), is not its canonical decimal text.
    #[error("{input:?} is not {what}: {reason}")]
    InvalidIntegerText {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// What was expected, e.g. `an ID of type Order` or `an i64`.
        what: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A number outside the range of an [`Id<T>`](crate::typed_id::Id) (`0..=i64::MAX`), or of the
    /// integer type a [`serde_string`](crate::serde_string) field has.
    #[error("{value} is not {what}: {range}")]
    IntegerOutOfRange {
        /// The rejected number.
        value: i128,
        /// What was expected, e.g. `an ID of type Order`.
        what: String,
        /// The allowed range, in words.
        range: &'static str,
    },

    /// A database returned a value that is not an integer (floating point, binary, a date…)
    /// where an [`Id<T>`](crate::typed_id::Id) was expected. Never truncated.
    #[error(
        "{value} is not {what}: the database returned a {kind} value where an integer from 0 to 9223372036854775807 was expected"
    )]
    NotAnInteger {
        /// The value as the database returned it (cut to 64 characters).
        value: String,
        /// What was expected, e.g. `an ID of type Order`.
        what: String,
        /// The kind of value, e.g. `"floating-point"` or `"BLOB"`.
        kind: &'static str,
    },

    /// A public ID's prefix (the text before its last `_`) breaks the TypeID prefix rules:
    /// from [`AnyPublicId`](crate::public_id::AnyPublicId), which takes any prefix.
    #[error("{input:?} is not a public ID: its prefix {prefix:?} is invalid: {reason}")]
    PublicIdPrefixInvalid {
        /// The rejected text (cut to 64 characters).
        input: String,
        /// The text before the last `_` (cut to 64 characters).
        prefix: String,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// An ID names a shard that does not exist ([`Layout::shard_of`](crate::snowflake::Layout::shard_of)).
    #[error(
        "ID {id} belongs to shard {shard}, but there are {shard_count} shards (0 to {})",
        .shard_count.saturating_sub(1)
    )]
    ShardOutOfRange {
        /// The ID.
        id: i64,
        /// The shard its node field names.
        shard: u64,
        /// How many shards there are.
        shard_count: u64,
    },

    /// [`Layout::plan`](crate::snowflake::Layout::plan) found no layout: bad requirements, or
    /// requirements that need more bits than allowed (the [`PlanError`](crate::snowflake::plan::PlanError) says how many).
    #[error(transparent)]
    Plan(#[from] crate::snowflake::plan::requirements::PlanError),
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        display_then_causes(self, f)
    }
}

/// The `Debug` of idgen's errors: `err`'s message, then each cause of its chain that the text
/// so far does not already hold, so `fn main() -> Result<(), E>` prints a helpful text once.
///
/// ```
/// struct Shown(std::io::Error);
/// impl std::fmt::Debug for Shown {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         idgen_core::display_then_causes(&self.0, f)
///     }
/// }
/// let io = std::io::Error::other("connection reset");
/// assert_eq!(format!("{:?}", Shown(io)), "connection reset");
/// ```
pub fn display_then_causes(
    err: &(dyn std::error::Error + 'static),
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    let mut shown = err.to_string();
    f.write_str(&shown)?;
    let mut cause = err.source();
    while let Some(err) = cause {
        let text = err.to_string();
        if !shown.contains(&text) {
            write!(f, "\n\ncaused by: {text}")?;
            shown.push_str(&text);
        }
        cause = err.source();
    }
    Ok(())
}

/// `no prefix` or `the prefix "ord_"`, for messages.
fn describe_expected(prefix: &str) -> String {
    if prefix.is_empty() {
        "no prefix".to_owned()
    } else {
        format!("the prefix \"{prefix}_\"")
    }
}

/// `no prefix` or `"usr_"` (the text up to and including its last `_`), for messages.
fn describe_found(found: &str) -> String {
    if found.is_empty() {
        "no prefix".to_owned()
    } else {
        format!("{found:?}")
    }
}

fn fenced_message(now_ms: i64, valid_until_ms: i64) -> String {
    if valid_until_ms == i64::MIN {
        "the node ID lease was released or lost: this generator issues no more IDs (acquire a new lease and build a new generator)".to_owned()
    } else {
        format!(
            "the node ID lease is not valid at {} (valid until {}): no ID was issued until the lease is renewed",
            UnixMs(now_ms),
            UnixMs(valid_until_ms)
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;

    #[test]
    fn debug_is_display_when_there_is_no_cause() {
        let err = Error::MissingNode;
        assert_eq!(format!("{err:?}"), err.to_string());
    }
}
