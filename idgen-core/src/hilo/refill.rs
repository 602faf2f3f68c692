//! The background refill task: one per `HiLo` at a time, fetching until the buffer is above its
//! low-water mark, retrying failures with exponential backoff and jitter.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::state::Shared;

/// Runs until the buffer needs nothing more, the generator failed closed, or every `HiLo`
/// clone was dropped. Holds only a weak reference across the round trip.
///
/// The latency it records runs from the request (`kicked_at` for the first fetch) to the
/// block's arrival, so it includes the time the runtime took to schedule this task: that is
/// what the low-water mark has to cover.
pub(crate) async fn run(me: Weak<Shared>, kicked_at: Instant) {
    let _reset_on_panic = ResetOnPanic(me.clone());
    let mut failures: u32 = 0;
    let mut jitter = Jitter::new();
    let mut requested = Some(kicked_at);
    loop {
        let (source, size) = {
            let Some(shared) = me.upgrade() else { return };
            let Some(size) = shared.next_request_or_stop() else {
                return;
            };
            (Arc::clone(&shared.source), size)
        };
        let started = requested.take().unwrap_or_else(Instant::now);
        let result = source.allocate(size).await;
        let latency = started.elapsed();
        let Some(shared) = me.upgrade() else { return };
        match result {
            Ok(start) => {
                if failures > 0 {
                    crate::observe::events::hilo_counter_available(source.name(), failures);
                }
                failures = 0;
                if shared.accept(start, size, latency).is_err() {
                    return;
                }
            }
            Err(err) => {
                crate::observe::events::hilo_counter_unavailable(source.name(), failures + 1, &err);
                shared.record_failure(err);
                let (initial, max) = shared.backoff();
                drop(shared);
                let delay = jitter.apply(backoff_delay(initial, max, failures));
                failures = failures.saturating_add(1);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

/// If a source panics, the task dies; this lets the next caller start a new one instead of
/// waiting forever. (Only on panic: a normal exit hands over under the mutex, and resetting
/// the flag again afterwards could let two fetches run at once.)
struct ResetOnPanic(Weak<Shared>);

impl Drop for ResetOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(shared) = self.0.upgrade()
        {
            shared.task_panicked();
        }
    }
}

/// `initial × 2^failures`, capped at `max`.
pub(crate) fn backoff_delay(initial: Duration, max: Duration, failures: u32) -> Duration {
    initial
        .checked_mul(1u32.checked_shl(failures.min(31)).unwrap_or(u32::MAX))
        .map_or(max, |delay| delay.min(max))
}

/// "Equal jitter": a uniformly random delay between half and all of `delay`, so retries of many
/// processes spread out. A small splitmix64 generator; jitter needs no cryptographic quality.
struct Jitter(u64);

impl Jitter {
    fn new() -> Self {
        Jitter(RandomState::new().hash_one(0u64))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn apply(&mut self, delay: Duration) -> Duration {
        let half = delay / 2;
        let spread = u64::try_from((delay - half).as_nanos()).unwrap_or(u64::MAX);
        half + Duration::from_nanos(if spread == 0 {
            0
        } else {
            self.next() % (spread + 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_caps() {
        let ms = Duration::from_millis;
        assert_eq!(backoff_delay(ms(50), ms(1000), 0), ms(50));
        assert_eq!(backoff_delay(ms(50), ms(1000), 1), ms(100));
        assert_eq!(backoff_delay(ms(50), ms(1000), 4), ms(800));
        assert_eq!(backoff_delay(ms(50), ms(1000), 5), ms(1000));
        assert_eq!(backoff_delay(ms(50), ms(1000), u32::MAX), ms(1000));
    }

    #[test]
    fn jitter_stays_between_half_and_all_of_the_delay() {
        let mut jitter = Jitter::new();
        let delay = Duration::from_millis(100);
        let mut distinct = std::collections::HashSet::new();
        for _ in 0..1000 {
            let d = jitter.apply(delay);
            assert!(d >= delay / 2 && d <= delay, "{d:?}");
            distinct.insert(d);
        }
        assert!(
            distinct.len() > 100,
            "jitter is not spreading: {}",
            distinct.len()
        );
    }
}
