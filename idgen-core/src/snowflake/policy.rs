//! [`ClockPolicy`]: what a generator does when the clock is behind its last timestamp.

use std::fmt;
use std::time::Duration;

/// What a [`Snowflake`](crate::snowflake::Snowflake) generator does when the clock reads earlier than the
/// last timestamp it issued (an NTP or manual step back, a leased node ID whose previous holder
/// issued later timestamps, or a hand-made clock).
///
/// The default is [`Wait`](ClockPolicy::Wait) up to 10 ms: a small step is absorbed by a short
/// wait that no caller notices, and a large one becomes an error the caller sees instead of IDs
/// from a time that has not come yet. [`SystemClock`](crate::clock::SystemClock) never steps back
/// inside a process, so with it the policy matters across restarts (through a leased node ID's
/// last timestamp) and for custom clocks.
///
/// ```
/// use std::time::Duration;
/// use idgen_core::ClockPolicy;
///
/// assert_eq!(ClockPolicy::default(), ClockPolicy::Wait { max: Duration::from_millis(10) });
/// assert_eq!(ClockPolicy::Refuse.to_string(), "refuse");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockPolicy {
    /// Refuse at once with [`Error::ClockMovedBackwards`](crate::error::Error::ClockMovedBackwards)
    /// naming how far it went back, as Twitter's original generator does.
    Refuse,
    /// Wait until the clock catches up, when it is behind by at most `max`; refuse beyond that.
    Wait {
        /// The largest step back that is waited out.
        max: Duration,
    },
    /// Keep issuing from the last timestamp (and, when its sequence is used up, from the
    /// following ticks) while the clock is behind by at most `max`, as Sonyflake does; refuse
    /// beyond that. IDs stay unique and increasing; their timestamps run ahead of the clock.
    Borrow {
        /// How far ahead of the clock issued timestamps may run.
        max: Duration,
    },
}

impl ClockPolicy {
    /// How far behind the clock may be before this policy refuses, in milliseconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use idgen_core::ClockPolicy;
    /// assert_eq!(ClockPolicy::Refuse.tolerance_ms(), 0);
    /// assert_eq!(ClockPolicy::Borrow { max: Duration::from_secs(1) }.tolerance_ms(), 1000);
    /// ```
    pub fn tolerance_ms(&self) -> u64 {
        match self {
            ClockPolicy::Refuse => 0,
            ClockPolicy::Wait { max } | ClockPolicy::Borrow { max } => {
                u64::try_from(max.as_millis()).unwrap_or(u64::MAX)
            }
        }
    }

    /// The policy's name in text (`refuse`, `wait` or `borrow`), as the database-side
    /// generator's configuration spells it.
    ///
    /// ```
    /// use idgen_core::ClockPolicy;
    /// assert_eq!(ClockPolicy::Refuse.name(), "refuse");
    /// assert_eq!(ClockPolicy::default().name(), "wait");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            ClockPolicy::Refuse => "refuse",
            ClockPolicy::Wait { .. } => "wait",
            ClockPolicy::Borrow { .. } => "borrow",
        }
    }
}

impl Default for ClockPolicy {
    fn default() -> Self {
        ClockPolicy::Wait {
            max: Duration::from_millis(10),
        }
    }
}

impl fmt::Display for ClockPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
