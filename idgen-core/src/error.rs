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
///
/// `Debug` reads like `Display` followed by the causes not already in the message, so
/// `fn main() -> Result<(), idgen_core::Error>` prints the same helpful text:
///
/// ```
/// let err = idgen_sql::SqlName::parse("hi-lo counter", "orders;").unwrap_err();
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
        /// The store's error itself, when it returned one (with the driver's error in its
        /// chain, for the SQL stores), for callers that inspect it.
        source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>>,
    },

    /// Options that contradict each other.
    #[error("invalid options: {reason}")]
    InvalidOptions {
        /// What is wrong.
        reason: String,
    },
    // ---- hi-lo (src/hilo/) ----
    /// A [`HiLoBuilder`](crate::hilo::HiLoBuilder) option outside its allowed range.
    #[error("hi-lo option {option} = {value} is invalid: {reason}")]
    HiLoInvalidOption {
        /// The option's name, e.g. `block`.
        option: &'static str,
        /// The rejected value, as text.
        value: String,
        /// The allowed range.
        reason: &'static str,
    },

    /// The database advances the counter by a different step than the configured block size
    /// (the Hibernate `allocationSize` / EF Core `UseHiLo` duplicate-ID bug). Refused at start-up.
    #[error(
        "hi-lo counter {counter} advances by {database} per call in the database, but the configured block size is {configured}; refusing to start (make them equal, or opt in to adopting the database's increment)"
    )]
    HiLoIncrementMismatch {
        /// The counter's name.
        counter: String,
        /// The configured block size.
        configured: u64,
        /// The increment the database reported.
        database: u64,
    },

    /// The counter returned a block at or below one this generator already holds (a restored
    /// backup, a failover to a lagging replica). The generator fails closed: no further IDs.
    #[error(
        "hi-lo counter {counter} went backwards: it returned block start {start}, but IDs up to {highest} were already taken from it; refusing all further IDs"
    )]
    HiLoCounterWentBackwards {
        /// The counter's name.
        counter: String,
        /// The block start the counter returned.
        start: i64,
        /// The highest ID of the blocks this generator had before.
        highest: i64,
    },

    /// A counter with a fixed increment (a sequence) returned a block start off the grid its
    /// blocks lie on (`origin + k × step`): its increment or value was changed while the
    /// generator ran (`ALTER SEQUENCE … INCREMENT BY`, `setval`, `RESTART`), so its blocks may
    /// overlap those of other processes or counters. The generator fails closed: no further IDs.
    #[error(
        "hi-lo counter {counter} returned block start {start}, off the grid {origin} + k × {step} of its blocks: its increment or value was changed while it ran (ALTER SEQUENCE … INCREMENT BY, setval, RESTART); refusing all further IDs"
    )]
    HiLoBlockOffGrid {
        /// The counter's name.
        counter: String,
        /// The block start the counter returned.
        start: i64,
        /// A block start on the grid (the first block this generator received, or the
        /// counter's start).
        origin: i64,
        /// The distance between block starts (the increment).
        step: u64,
    },

    /// The counter returned a block that does not lie in `1..=i64::MAX`. Fails closed.
    #[error(
        "hi-lo counter {counter} returned block start {start} for a block of {len}: IDs must lie between 1 and 9223372036854775807 (i64::MAX); refusing all further IDs"
    )]
    HiLoBlockOutOfRange {
        /// The counter's name.
        counter: String,
        /// The block start the counter returned.
        start: i64,
        /// The block length asked for.
        len: u64,
    },

    /// No ID within the timeout: the buffer is empty and the counter has not answered.
    #[error(
        "no hi-lo ID from counter {counter} within {waited_ms} ms: the buffer is empty{}",
        match .last_error { Some(e) => format!("; last error: {e}"), None => String::new() }
    )]
    HiLoUnavailable {
        /// The counter's name.
        counter: String,
        /// How long the caller waited, in milliseconds.
        waited_ms: u64,
        /// The last error the counter returned, if any.
        last_error: Option<Box<Error>>,
    },

    /// The counter (database) returned an error.
    #[error("hi-lo counter {counter} failed: {source}")]
    HiLoSource {
        /// The counter's name.
        counter: String,
        /// The source's error.
        source: std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// `reserve(n)` asked for more IDs than one block from this counter can hold contiguously.
    #[error(
        "cannot reserve {requested} contiguous hi-lo IDs: the most this counter can give at once is {max}"
    )]
    HiLoReserveTooLarge {
        /// The number of IDs asked for.
        requested: u64,
        /// The largest contiguous range available (the fixed increment, or the engine's limit).
        max: u64,
    },

    /// A [`HiLo`](crate::hilo::HiLo) was started outside a tokio runtime.
    #[error("hi-lo needs a tokio runtime to fetch blocks in the background: start it inside one")]
    HiLoNoRuntime,

    /// [`HiLoBuilder::build`](crate::hilo::HiLoBuilder::build) did not finish within the
    /// builder's [`timeout`](crate::hilo::HiLoBuilder::timeout): the counter's creation or its
    /// increment check got no answer (another session holds the counter's lock, say). The
    /// call in flight was cancelled; nothing was started.
    #[error(
        "hi-lo counter {counter} did not start within its timeout of {timeout_ms} ms: no answer while waiting for {waiting_for}"
    )]
    HiLoStartTimeout {
        /// The counter's name.
        counter: String,
        /// The builder's timeout, in milliseconds: the bound of the whole start-up.
        timeout_ms: u64,
        /// What start-up was waiting for: `"the counter's creation"` or `"the counter's increment check"`.
        waiting_for: &'static str,
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
        UnixMs(crate::uuid7::MAX_UNIX_MS)
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

    // ---- the SQL contract (src/sql/) ----
    /// A table, sequence or counter name written into SQL that is not `name` or `schema.name`
    /// of plain identifier parts ([`SqlName`](crate::sql::SqlName)).
    #[error(
        "{what} name {name:?} is invalid: {reason} (a name is `name` or `schema.name`, each part 1 to 63 ASCII letters, digits or `_`, not starting with a digit)"
    )]
    InvalidSqlName {
        /// What the name is for: `"lease table"`, `"hi-lo counter"`, `"hi-lo counter table"`.
        what: &'static str,
        /// The rejected name (cut to 64 characters).
        name: String,
        /// The rule it breaks.
        reason: String,
    },

    /// The counter's sequence, table or row does not exist in the database.
    #[error(
        "hi-lo counter {counter} does not exist: {missing}; create it first (`create_if_missing(true)` on the HiLo builder, the counter's `create`, or its migration SQL)"
    )]
    HiLoCounterMissing {
        /// The counter's name.
        counter: String,
        /// What is missing, e.g. `no sequence named orders` or `no row 'orders' in table idgen_hilo`.
        missing: String,
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

    // ---- database-side generators (src/db_generator/) ----
    /// A database-side generator (module `db_generator`, feature `lease`) could not be
    /// installed, uninstalled or called: the database's error is the source.
    #[error("database ID generator {function} failed to {operation}: {source}")]
    DbGenerator {
        /// The generator function's name.
        function: String,
        /// What was being done, e.g. `install` or `issue an ID`.
        operation: &'static str,
        /// The database's error.
        source: std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>,
    },

    /// Two counters of a `hilo::StripedHiLo` (feature `hilo`; or one counter with itself) can
    /// hand out overlapping blocks. Refused at start-up.
    #[error(
        "hi-lo counters {first} and {second} can hand out overlapping blocks: {reason}; refusing to start"
    )]
    HiLoCountersOverlap {
        /// The first counter's name.
        first: String,
        /// The second counter's name (the same as `first` when one counter overlaps itself).
        second: String,
        /// Their settings and why their blocks meet.
        reason: String,
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
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = self.to_string();
        f.write_str(&shown)?;
        let mut cause = std::error::Error::source(self);
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

    #[derive(Debug, thiserror::Error)]
    #[error("connection refused")]
    struct Refused(#[source] std::io::Error);

    #[test]
    fn debug_is_display_then_the_causes_not_already_shown() {
        let err = Error::HiLoSource {
            counter: "orders".into(),
            source: std::sync::Arc::new(Refused(std::io::Error::other("os error 111"))),
        };
        assert_eq!(
            format!("{err:?}"),
            "hi-lo counter orders failed: connection refused\n\ncaused by: os error 111"
        );
        let missing = Error::HiLoCounterMissing {
            counter: "hilo".into(),
            missing: "no sequence named hilo".into(),
        };
        assert_eq!(format!("{missing:?}"), missing.to_string());
        assert!(format!("{missing:?}").contains("create_if_missing(true)"));
    }
}
