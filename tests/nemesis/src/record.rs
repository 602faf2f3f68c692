//! The compact record every issuing process writes: one line per run of consecutive IDs (per
//! Snowflake millisecond, per stretch of a hi-lo block, per batch of database-made IDs), and
//! one per state change, each prefixed with the host's wall-clock time in Unix ms.

use std::fmt;

/// What kind of IDs a run holds, and so which key space it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Snowflake IDs issued by the process (node ID leased from its store).
    Snowflake,
    /// Hi-lo IDs from its store's counter.
    HiLo,
    /// Snowflake IDs made by the database-side generator (`idgen_next_id()` in a column
    /// default), on a node ID from the same lease table as the applications'.
    Database,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Snowflake => "S",
            Kind::HiLo => "H",
            Kind::Database => "D",
        }
    }

    fn from_tag(tag: &str) -> Option<Kind> {
        match tag {
            "S" => Some(Kind::Snowflake),
            "H" => Some(Kind::HiLo),
            "D" => Some(Kind::Database),
            _ => None,
        }
    }
}

/// One line of an issuing process's record.
///
/// ```
/// use idgen_nemesis::record::{Event, Kind};
///
/// let run = Event::Run { kind: Kind::Snowflake, first: 10, last: 19, first_ms: 5 };
/// let text = run.to_text(7);
/// assert_eq!(text, "7 R S 10 19 5");
/// assert_eq!(Event::parse(&text), Some((7, run)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The process started; `clock_step_ms` is the step its wall clock was given (0: none).
    Start {
        /// The step, in ms (negative: back).
        clock_step_ms: i64,
    },
    /// A lease on this node ID (or, for the database generator, its install's node ID).
    Lease(u64),
    /// The IDs `first..=last` (consecutive) were issued, the first at `first_ms`, the last at
    /// the line's time.
    Run {
        /// Which key space.
        kind: Kind,
        /// The first ID of the run.
        first: i64,
        /// The last ID of the run.
        last: i64,
        /// When the first was issued (host wall clock, Unix ms).
        first_ms: i64,
    },
    /// The Snowflake generator refused with `Fenced` (first refusal after issuing).
    Fenced(String),
    /// Another error (first of a run of them): what failed and why.
    Error(String),
}

impl Event {
    /// The text of this event at `unix_ms` (one line, no newline).
    ///
    /// ```
    /// assert_eq!(idgen_nemesis::record::Event::Lease(3).to_text(5), "5 LEASE 3");
    /// ```
    pub fn to_text(&self, unix_ms: i64) -> String {
        format!("{unix_ms} {self}").replace('\n', " ")
    }

    /// An event [`to_text`](Self::to_text) printed, or `None` for any other line.
    ///
    /// ```
    /// use idgen_nemesis::record::Event;
    /// assert_eq!(Event::parse("9 FENCED lease lost"), Some((9, Event::Fenced("lease lost".into()))));
    /// assert_eq!(Event::parse("garbage"), None);
    /// ```
    pub fn parse(text: &str) -> Option<(i64, Event)> {
        let mut parts = text.trim_end().splitn(3, ' ');
        let at = parts.next()?.parse().ok()?;
        let tag = parts.next()?;
        let rest = parts.next().unwrap_or("");
        let event = match tag {
            "START" => Event::Start {
                clock_step_ms: rest.parse().ok()?,
            },
            "LEASE" => Event::Lease(rest.parse().ok()?),
            "FENCED" => Event::Fenced(rest.to_owned()),
            "ERR" => Event::Error(rest.to_owned()),
            "R" => {
                let mut f = rest.split(' ');
                let kind = Kind::from_tag(f.next()?)?;
                let first = f.next()?.parse().ok()?;
                let last = f.next()?.parse().ok()?;
                let first_ms = f.next()?.parse().ok()?;
                Event::Run {
                    kind,
                    first,
                    last,
                    first_ms,
                }
            }
            _ => return None,
        };
        Some((at, event))
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Start { clock_step_ms } => write!(f, "START {clock_step_ms}"),
            Event::Lease(node) => write!(f, "LEASE {node}"),
            Event::Run {
                kind,
                first,
                last,
                first_ms,
            } => write!(f, "R {} {first} {last} {first_ms}", kind.tag()),
            Event::Fenced(why) => write!(f, "FENCED {why}"),
            Event::Error(why) => write!(f, "ERR {why}"),
        }
    }
}

/// Collects IDs of one kind into runs of consecutive IDs; a run is handed to the sink when the
/// next ID does not follow it (stamped with the time that ID was issued: within a round, right
/// after the run's last ID), or at [`flush`](Self::flush). The clock is read once per run, not
/// once per ID.
///
/// ```
/// use idgen_nemesis::record::{Kind, Runs};
///
/// let mut runs = Runs::new(Kind::HiLo);
/// let mut out = Vec::new();
/// for (id, at) in [(1, 10), (2, 10), (3, 11), (7, 12)] {
///     runs.push(id, || at, &mut |e, at| out.push((e, at)));
/// }
/// runs.flush(13, &mut |e, at| out.push((e, at)));
/// assert_eq!(out.len(), 2);
/// assert_eq!(out[0].0.to_text(out[0].1), "12 R H 1 3 10");
/// assert_eq!(out[1].0.to_text(out[1].1), "13 R H 7 7 12");
/// ```
#[derive(Debug)]
pub struct Runs {
    kind: Kind,
    open: Option<(i64, i64, i64)>,
}

impl Runs {
    /// No run open yet.
    pub fn new(kind: Kind) -> Runs {
        Runs { kind, open: None }
    }

    /// Adds `id`; `now` (the time it was issued) is read only when it begins a new run.
    pub fn push(&mut self, id: i64, now: impl FnOnce() -> i64, sink: &mut impl FnMut(Event, i64)) {
        match &mut self.open {
            Some((_, last, _)) if id == *last + 1 => *last = id,
            _ => {
                let at = now();
                self.flush(at, sink);
                self.open = Some((id, id, at));
            }
        }
    }

    /// Hands the open run, if any, to `sink`, stamped `at_ms`.
    pub fn flush(&mut self, at_ms: i64, sink: &mut impl FnMut(Event, i64)) {
        if let Some((first, last, first_ms)) = self.open.take() {
            sink(
                Event::Run {
                    kind: self.kind,
                    first,
                    last,
                    first_ms,
                },
                at_ms,
            );
        }
    }
}
