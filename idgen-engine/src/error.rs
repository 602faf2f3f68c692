//! The error of the engines and of every store and source crate: [`Error`], a boxed
//! [`ErrorKind`].

/// Everything that can go wrong in a lease, a hi-lo generator or a store: the engines'
/// own failures, and an [`idgen_core::Error`] of the ID values and generators they drive
/// ([`ErrorKind::Id`]). The adapter crates return this type (`idgen_sqlx::Error`, …).
///
/// It is one pointer wide (the [`ErrorKind`] is boxed), so a `Result<Option<i64>, Error>` is
/// 16 bytes and the per-ID calls that return one (hi-lo's `try_next_id`) copy no more. Match
/// on [`kind`](Error::kind) (or take it with [`into_kind`](Error::into_kind)).
///
/// Every message names the value that was rejected and the limit it broke:
///
/// ```
/// use idgen_engine::{ErrorKind, SqlName};
///
/// let err = SqlName::parse("hi-lo counter", "orders;").unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::InvalidSqlName { what: "hi-lo counter", .. }));
/// assert!(err.to_string().starts_with("hi-lo counter name \"orders;\" is invalid"));
/// ```
///
/// An error of the generator converts with `?` and keeps its variant:
///
/// ```
/// use idgen_engine::{Error, ErrorKind, Layout, Parts};
///
/// fn compose() -> Result<i64, Error> {
///     Ok(Layout::TWITTER.compose(Parts { ticks: 0, node: 1024, sequence: 0 })?.get())
/// }
/// let err = compose().unwrap_err();
/// assert!(matches!(
///     err.kind(),
///     ErrorKind::Id(idgen_core::Error::FieldOutOfRange { field: "node", .. })
/// ));
/// assert_eq!(std::mem::size_of::<Result<Option<i64>, Error>>(), 16);
/// ```
///
/// `Debug` reads like `Display` followed by the causes not already in the message, so
/// `fn main() -> Result<(), idgen_engine::Error>` prints the same helpful text.
#[derive(Clone)]
pub struct Error(Box<ErrorKind>);

impl Error {
    /// What went wrong, to match on.
    ///
    /// ```
    /// use idgen_engine::{Error, ErrorKind};
    ///
    /// let err = Error::from(ErrorKind::InvalidOptions { reason: "no counter".into() });
    /// match err.kind() {
    ///     ErrorKind::InvalidOptions { reason } => assert_eq!(reason, "no counter"),
    ///     other => panic!("unexpected: {other}"),
    /// }
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// What went wrong, owned (the box taken apart).
    ///
    /// ```
    /// use idgen_engine::{Error, ErrorKind};
    ///
    /// let err = Error::from(ErrorKind::InvalidOptions { reason: "no counter".into() });
    /// let ErrorKind::InvalidOptions { reason } = err.into_kind() else { unreachable!() };
    /// assert_eq!(reason, "no counter");
    /// ```
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// The lease store's failure to do `operation` (`"claim"`, `"renew"`, `"release"`):
    /// [`ErrorKind::LeaseStore`] with the store's error `err` as its message and its source.
    ///
    /// ```
    /// use std::error::Error as _;
    /// use idgen_engine::{Error, ErrorKind};
    ///
    /// let err = Error::lease_store("renew", std::io::Error::other("connection reset"));
    /// assert!(matches!(err.kind(), ErrorKind::LeaseStore { operation: "renew", .. }));
    /// assert_eq!(err.to_string(), "node ID lease store failed to renew: connection reset");
    /// assert_eq!(err.source().unwrap().to_string(), "connection reset");
    /// ```
    #[cold]
    pub fn lease_store(
        operation: &'static str,
        err: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Error {
        let err = err.into();
        ErrorKind::LeaseStore {
            operation,
            message: err.to_string(),
            source: Some(std::sync::Arc::from(err)),
        }
        .into()
    }
}

impl From<ErrorKind> for Error {
    #[cold]
    #[inline(never)]
    fn from(kind: ErrorKind) -> Self {
        Error(Box::new(kind))
    }
}

impl From<idgen_core::Error> for Error {
    #[cold]
    fn from(err: idgen_core::Error) -> Self {
        ErrorKind::Id(err).into()
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        idgen_core::display_then_causes(self, f)
    }
}

/// What went wrong: the variants of an [`Error`] (its [`kind`](Error::kind)). Every variant
/// converts into an `Error` with `into()` (or `?`).
///
/// ```
/// use std::time::Duration;
/// use idgen_engine::{Error, ErrorKind};
///
/// let err: Error = ErrorKind::LeaseOptionOutOfRange {
///     option: "ttl",
///     value: Duration::ZERO,
///     min: Duration::from_secs(1),
///     max: Duration::from_secs(3600),
/// }
/// .into();
/// assert!(matches!(err.kind(), ErrorKind::LeaseOptionOutOfRange { option: "ttl", .. }));
/// ```
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An error of the ID values and generators: a fence that is closed, a clock behind the
    /// last ID, a layout or value out of range, a forked copy.
    #[error(transparent)]
    Id(#[from] idgen_core::Error),

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

    /// The namespace's node IDs are leased under another layout: the same node ID under two
    /// layouts can issue the same 63-bit value. Use another namespace (or the same layout).
    #[error(
        "namespace {namespace:?} is used with the layout {recorded}; this process asks for {requested}: the same node ID under two layouts can issue the same ID, so use another namespace for this layout (or the same layout)"
    )]
    LayoutMismatch {
        /// The lease namespace.
        namespace: String,
        /// The layout the namespace was first used with ([`layout_key`](crate::lease::layout_key)).
        recorded: String,
        /// This process's layout, in the same form.
        requested: String,
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

    /// A lease timing outside its sane range (a TTL of zero or of years, a time-out of
    /// `Duration::MAX`, a clock allowance of days): refused by
    /// [`LeaseOptions::acquire`](crate::lease::LeaseOptions::acquire) before any store call.
    #[error(
        "lease option {option} = {value:?} is out of range: it must be between {min:?} and {max:?}"
    )]
    LeaseOptionOutOfRange {
        /// The option's name, e.g. `ttl`.
        option: &'static str,
        /// The rejected value.
        value: std::time::Duration,
        /// The smallest value allowed.
        min: std::time::Duration,
        /// The largest value allowed.
        max: std::time::Duration,
    },

    /// The node ID was taken by another holder while
    /// [`acquire`](crate::lease::LeaseOptions::acquire) waited for its takeover bound (its
    /// renewal found the row held by someone else): no lease is returned. Acquire again.
    #[error(
        "node ID {node} in namespace {namespace:?} was taken by another holder while acquire waited for its takeover bound; acquire again"
    )]
    LeaseLostDuringTakeover {
        /// The lease namespace.
        namespace: String,
        /// The node ID that was lost.
        node: u64,
    },

    /// The clock this lease issues IDs from and the lease store's clock differ by more than
    /// the [clock allowance](crate::lease::LeaseOptions::clock_allowance): a claim is refused
    /// (nothing is claimed), a renewal is not sent (the generator is fenced at once when the
    /// difference is certain, at its deadline when only a slow round trip left it unsure).
    ///
    /// The store reads its clock at some moment between this process's send and receive, so
    /// `lead_ms` is the worst the round trip allows: this clock at the receive minus the
    /// store's (a lead), or minus the store's minus this clock at the send (a lag, negative).
    ///
    /// ```
    /// use std::time::Duration;
    /// let err = idgen_engine::ErrorKind::ClockSkew {
    ///     operation: "claim",
    ///     lead_ms: 38_300,
    ///     round_trip_ms: 2,
    ///     allowance: Duration::from_secs(1),
    ///     certain: true,
    /// };
    /// assert!(err.to_string().starts_with(
    ///     "claim refused: the clock this process issues IDs from leads the lease store's clock by 38300 ms, more than the clock allowance of 1s"
    /// ));
    /// ```
    #[error(
        "{operation} refused: the clock this process issues IDs from {} the lease store's clock by {}{} ms, more than the clock allowance of {allowance:?} (measured over a {round_trip_ms} ms round trip{}); fix the host's clock (NTP) or raise LeaseOptions::clock_allowance",
        if *.lead_ms >= 0 { "leads" } else { "lags" },
        if *.certain { "" } else { "up to " },
        .lead_ms.unsigned_abs(),
        if *.certain { "" } else { ", which leaves it unsure" }
    )]
    ClockSkew {
        /// `"claim"` or `"renew"`.
        operation: &'static str,
        /// How far this clock leads the store's, in ms (negative: how far it lags), at the
        /// worst the round trip allows.
        lead_ms: i64,
        /// The round trip of the store's clock read, in ms on this clock.
        round_trip_ms: i64,
        /// The clock allowance it exceeds.
        allowance: std::time::Duration,
        /// Whether even the best case the round trip allows exceeds the allowance (`false`:
        /// only a slow round trip made the difference possibly too large).
        certain: bool,
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
        last_error: Option<Error>,
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
        /// What start-up was waiting for: `"the counter's creation"`, `"the counter's increment
        /// check"`, `"the floor query"`, `"moving the counter above the floor"` or (a striped
        /// hi-lo) `"the counter's start value"`.
        waiting_for: &'static str,
    },
    // ---- names written into SQL or store keys, and the SQL counters (idgen-sql) ----
    /// A table, sequence or counter name written into SQL that is not `name` or `schema.name`
    /// of plain identifier parts ([`SqlName`](crate::name::SqlName)).
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

    /// The counter does not exist and start-up does not create it
    /// ([`HiLoBuilder::create_if_missing(false)`](crate::hilo::HiLoBuilder::create_if_missing),
    /// or a store that may have forgotten it): nothing was created.
    #[error(
        "hi-lo counter {counter} does not exist ({missing}) and this start-up does not create it: {remedy}"
    )]
    HiLoCounterNotCreated {
        /// The counter's name.
        counter: String,
        /// What is missing, as in [`ErrorKind::HiLoCounterMissing`].
        missing: String,
        /// What to do: the migration to run, or how to create the counter safely.
        remedy: String,
    },

    // ---- database-side generators (idgen-db-generator) ----
    /// A database-side generator (`idgen_db_generator`) could not be
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

    /// Two counters of a [`StripedHiLo`](crate::hilo::StripedHiLo) (feature `hilo`; or one counter with itself) can
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
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl std::fmt::Debug for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        idgen_core::display_then_causes(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::{Error, ErrorKind};

    #[derive(Debug, thiserror::Error)]
    #[error("connection refused")]
    struct Refused(#[source] std::io::Error);

    #[test]
    fn debug_is_display_then_the_causes_not_already_shown() {
        let err = Error::from(ErrorKind::HiLoSource {
            counter: "orders".into(),
            source: std::sync::Arc::new(Refused(std::io::Error::other("os error 111"))),
        });
        assert_eq!(
            format!("{err:?}"),
            "hi-lo counter orders failed: connection refused\n\ncaused by: os error 111"
        );
        let missing = Error::from(ErrorKind::HiLoCounterMissing {
            counter: "hilo".into(),
            missing: "no sequence named hilo".into(),
        });
        assert_eq!(format!("{missing:?}"), missing.to_string());
        assert!(format!("{missing:?}").contains("create_if_missing(true)"));
    }

    #[test]
    fn a_core_error_keeps_its_message() {
        let core = idgen_core::Error::MissingNode;
        let err = Error::from(core.clone());
        assert_eq!(err.to_string(), core.to_string());
        assert!(matches!(
            err.kind(),
            ErrorKind::Id(idgen_core::Error::MissingNode)
        ));
    }

    #[test]
    fn the_error_is_one_pointer_and_keeps_the_kinds_source() {
        use std::error::Error as _;
        assert_eq!(std::mem::size_of::<Error>(), 8);
        assert_eq!(std::mem::size_of::<super::Result<Option<i64>>>(), 16);
        let err = Error::from(ErrorKind::HiLoSource {
            counter: "orders".into(),
            source: std::sync::Arc::new(std::io::Error::other("refused")),
        });
        assert_eq!(err.source().unwrap().to_string(), "refused");
        assert_eq!(format!("{:?}", err.kind()), format!("{err:?}"));
        assert!(matches!(
            err.clone().into_kind(),
            ErrorKind::HiLoSource { .. }
        ));
    }
}
