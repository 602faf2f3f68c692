//! How long `idgen new -n N` takes at the layout's cap, and progress on a terminal.
//!
//! One generator issues at most `2^sequence_bits` IDs per tick, then waits for the next tick:
//! 4,096,000 a second under Twitter's layout, 25,600 under Sonyflake's. A run that needs more
//! than a second is announced on stderr with its minimum duration, and on a terminal a progress
//! line counts up (it never goes to stdout, so the IDs stay clean for a pipe).

use std::io::Write;
use std::time::{Duration, Instant};

use idgen_core::Layout;

/// Runs shorter than this pass silently.
const ANNOUNCE_ABOVE: Duration = Duration::from_secs(1);
/// How often the progress line is redrawn.
const REDRAW_EVERY: Duration = Duration::from_millis(200);

/// The most IDs one generator can issue per second under `layout`.
pub(crate) fn ids_per_second(layout: &Layout) -> f64 {
    (layout.max_sequence() as f64 + 1.0) * 1000.0 / f64::from(layout.unit_ms())
}

/// The least time `count` IDs take under `layout` (the cap; the clock and the machine may be
/// slower).
pub(crate) fn minimum_time(layout: &Layout, count: u64) -> Duration {
    let per_tick = layout.max_sequence() + 1;
    // The first tick is already running; every further `per_tick` IDs wait one tick.
    let waits = count.saturating_sub(1) / per_tick;
    Duration::from_millis(waits.saturating_mul(u64::from(layout.unit_ms())))
}

/// `850 ms`, `1.5 s`, `6 min 31 s`, `2 h 05 min`.
pub(crate) fn human(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 1 {
        format!("{} ms", d.as_millis())
    } else if secs < 60 {
        format!("{:.1} s", d.as_secs_f64())
    } else if secs < 3600 {
        format!("{} min {} s", secs / 60, secs % 60)
    } else {
        format!("{} h {:02} min", secs / 3600, secs / 60 % 60)
    }
}

/// The note for a run of `count` IDs, if it takes over a second at the cap.
pub(crate) fn announcement(name: &str, layout: &Layout, count: u64) -> Option<String> {
    let least = minimum_time(layout, count);
    (least > ANNOUNCE_ABOVE).then(|| {
        format!(
            "note: layout {name} issues at most {} IDs per second from one node, so {count} IDs \
             take at least {}",
            ids_per_second(layout).round(),
            human(least)
        )
    })
}

/// A progress line on stderr, redrawn at most every [`REDRAW_EVERY`].
pub(crate) struct Progress {
    count: u64,
    started: Instant,
    drawn: Instant,
    shown: bool,
}

impl Progress {
    pub(crate) fn new(count: u64) -> Progress {
        let now = Instant::now();
        Progress {
            count,
            started: now,
            drawn: now,
            shown: false,
        }
    }

    /// Called after each ID; `done` IDs so far.
    pub(crate) fn tick(&mut self, done: u64) {
        if !done.is_multiple_of(256) || self.drawn.elapsed() < REDRAW_EVERY {
            return;
        }
        self.drawn = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let rate = done as f64 / elapsed.max(1e-3);
        let left = Duration::from_secs_f64((self.count - done) as f64 / rate.max(1.0));
        let pct = done as f64 * 100.0 / self.count as f64;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[K{done}/{} IDs ({pct:.0} %, {:.0} IDs/s), about {} left",
            self.count,
            rate,
            human(left)
        );
        let _ = err.flush();
        self.shown = true;
    }

    /// Clears the line.
    pub(crate) fn finish(self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_time_follows_the_cap() {
        // Sonyflake: 256 IDs per 10 ms tick.
        assert_eq!(minimum_time(&Layout::SONYFLAKE, 256), Duration::ZERO);
        assert_eq!(
            minimum_time(&Layout::SONYFLAKE, 257),
            Duration::from_millis(10)
        );
        assert_eq!(
            minimum_time(&Layout::SONYFLAKE, 10_000_000),
            Duration::from_millis(390_620)
        );
        assert_eq!(ids_per_second(&Layout::SONYFLAKE), 25_600.0);
        assert_eq!(ids_per_second(&Layout::TWITTER), 4_096_000.0);
        assert_eq!(
            minimum_time(&Layout::TWITTER, u64::MAX),
            Duration::from_millis(u64::MAX / 4096)
        );
    }

    #[test]
    fn long_runs_are_announced_with_their_least_time() {
        assert_eq!(announcement("sonyflake", &Layout::SONYFLAKE, 25_000), None);
        assert_eq!(
            announcement("sonyflake", &Layout::SONYFLAKE, 10_000_000).as_deref(),
            Some(
                "note: layout sonyflake issues at most 25600 IDs per second from one node, so \
                 10000000 IDs take at least 6 min 30 s"
            )
        );
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::from_millis(850)), "850 ms");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_secs(391)), "6 min 31 s");
        assert_eq!(human(Duration::from_secs(7500)), "2 h 05 min");
    }
}
