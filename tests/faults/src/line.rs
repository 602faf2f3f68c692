//! The instance's output: one line per issued ID or state change, prefixed with the wall-clock
//! time in Unix milliseconds (all containers share the host's clock).

use std::fmt;

/// One line of `idgen-fault-node`'s output.
///
/// ```
/// use idgen_faults::Line;
///
/// let line = Line::Snowflake(42);
/// let text = line.to_text(1_700_000_000_000);
/// assert_eq!(text, "1700000000000 S 42");
/// assert_eq!(Line::parse(&text), Some((1_700_000_000_000, line)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The process started (before it connects to any store).
    Start,
    /// The instance starts to acquire a lease (the claim's wait runs from here to its first ID).
    Claim,
    /// The lease was acquired: this node ID.
    Lease(u64),
    /// The lease was lost (its node ID taken by another holder, or its row or key gone); the
    /// instance acquires a new one when told to (`IDGEN_FAULT_REACQUIRE`).
    Lost(String),
    /// Acquiring failed (e.g. every node ID is held); retrying.
    LeaseWait(String),
    /// A Snowflake ID was issued.
    Snowflake(i64),
    /// The Snowflake generator refused (first refusal of a run of them): `Fenced`, or another
    /// error's message.
    SnowflakeError(String),
    /// A hi-lo ID was issued.
    HiLo(i64),
    /// Hi-lo returned an error (first of a run of them).
    HiLoError(String),
}

impl Line {
    /// The text of this line at `unix_ms`.
    ///
    /// ```
    /// assert_eq!(idgen_faults::Line::Lease(3).to_text(5), "5 LEASE 3");
    /// ```
    pub fn to_text(&self, unix_ms: i64) -> String {
        format!("{unix_ms} {self}")
    }

    /// A line printed by [`to_text`](Self::to_text), or `None` for anything else.
    ///
    /// ```
    /// use idgen_faults::Line;
    /// assert_eq!(Line::parse("7 HE hi-lo timed out"), Some((7, Line::HiLoError("hi-lo timed out".into()))));
    /// assert_eq!(Line::parse("garbage"), None);
    /// ```
    pub fn parse(text: &str) -> Option<(i64, Line)> {
        let mut parts = text.trim_end().splitn(3, ' ');
        let unix_ms = parts.next()?.parse().ok()?;
        let tag = parts.next()?;
        let rest = parts.next().unwrap_or("");
        let line = match tag {
            "START" => Line::Start,
            "CLAIM" => Line::Claim,
            "LEASE" => Line::Lease(rest.parse().ok()?),
            "LOST" => Line::Lost(rest.to_owned()),
            "WAIT" => Line::LeaseWait(rest.to_owned()),
            "S" => Line::Snowflake(rest.parse().ok()?),
            "SE" => Line::SnowflakeError(rest.to_owned()),
            "H" => Line::HiLo(rest.parse().ok()?),
            "HE" => Line::HiLoError(rest.to_owned()),
            _ => return None,
        };
        Some((unix_ms, line))
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::Start => write!(f, "START"),
            Line::Claim => write!(f, "CLAIM"),
            Line::Lease(node) => write!(f, "LEASE {node}"),
            Line::Lost(why) => write!(f, "LOST {why}"),
            Line::LeaseWait(why) => write!(f, "WAIT {why}"),
            Line::Snowflake(id) => write!(f, "S {id}"),
            Line::SnowflakeError(why) => write!(f, "SE {why}"),
            Line::HiLo(id) => write!(f, "H {id}"),
            Line::HiLoError(why) => write!(f, "HE {why}"),
        }
    }
}
