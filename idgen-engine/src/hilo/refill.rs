//! The background fetch tasks: as many at a time as the buffer needs (at most
//! `max_fetches_in_flight`), each fetching until the buffer is above its goal, retrying failures
//! with exponential backoff and jitter (one task at a time while fetches fail).

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::planner::{Call, Shared};
use super::source::BoxError;

/// Runs until the buffer needs nothing more, the generator failed closed, or every `HiLo`
/// clone was dropped. Holds only a weak reference across the round trip.
///
/// The latency it records runs from the request (`kicked_at` for the first fetch) to the
/// block's arrival, so it includes the time the runtime took to schedule this task: that is
/// what the low-water mark has to cover.
///
/// The task's guard exists from the moment the future does, so a task its runtime drops before
/// ever polling it (a runtime shutting down) gives its slot back too.
pub(crate) fn task(me: Weak<Shared>, kicked_at: Instant) -> impl Future<Output = ()> + Send {
    let task = Task {
        me,
        fetch: None,
        running: true,
    };
    run(task, kicked_at)
}

/// [`task`], boxed: the `RefillTask` a `Shared` starts.
pub(crate) fn boxed_task(
    me: Weak<Shared>,
    kicked_at: Instant,
) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(task(me, kicked_at))
}

async fn run(mut task: Task, kicked_at: Instant) {
    let me = task.me.clone();
    let mut failures: u32 = 0;
    let mut jitter = Jitter::new();
    let mut requested = Some(kicked_at);
    loop {
        let (source, fetch, floor_query, timeout) = {
            let Some(shared) = me.upgrade() else {
                task.running = false;
                return;
            };
            let Some(fetch) = shared.plan_or_stop() else {
                task.running = false;
                return;
            };
            (
                Arc::clone(&shared.source),
                fetch,
                shared.floor_query(),
                shared.timeout(),
            )
        };
        task.fetch = Some(fetch.id);
        let started = requested.take().unwrap_or_else(Instant::now);
        let result = async {
            // The floor first: what it shows was handed out before the block is taken, so
            // none of it can be another process's later block.
            let floor = match &floor_query {
                Some(query) => Some(tokio::time::timeout(timeout, query.read()).await.map_err(
                    |_| {
                        BoxError::from(format!(
                            "the floor query (floor_from) did not answer within {timeout:?}"
                        ))
                    },
                )??),
                None => None,
            };
            let starts = match fetch.call {
                Call::Allocate(size) => vec![source.allocate(size).await?],
                Call::AllocateBlocks(size, count) => {
                    let starts = source.allocate_blocks(size, count).await?;
                    if starts.is_empty() {
                        return Err("the source's allocate_blocks returned no block".into());
                    }
                    starts
                }
            };
            Ok::<_, BoxError>((starts, floor))
        }
        .await;
        let latency = started.elapsed();
        task.fetch = None;
        let Some(shared) = me.upgrade() else {
            task.running = false;
            return;
        };
        match result {
            Ok((starts, floor)) => {
                if failures > 0 {
                    crate::observe::events::hilo_counter_available(source.name(), failures);
                }
                failures = 0;
                if shared.land(&fetch, starts, latency, floor).is_err() {
                    // Failed closed; `land` gave the task's slot back.
                    task.running = false;
                    return;
                }
            }
            Err(err) => {
                crate::observe::events::hilo_counter_unavailable(source.name(), failures + 1, &err);
                shared.record_failure(&fetch, err);
                let (initial, max) = shared.backoff();
                drop(shared);
                let delay = jitter.apply(backoff_delay(initial, max, failures));
                failures = failures.saturating_add(1);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

/// The task's claim on the engine: one of its running tasks and, during a round trip, one
/// fetch in flight. If the task is dropped without returning (its runtime shut down, or the
/// source panicked), this gives both back and wakes the waiters, so the next caller starts a
/// new task instead of waiting for one that is gone. (A normal return hands the slot over under
/// the engine's mutex instead: resetting it again here could let a second task start.)
struct Task {
    me: Weak<Shared>,
    fetch: Option<u64>,
    running: bool,
}

impl Drop for Task {
    fn drop(&mut self) {
        if self.running
            && let Some(shared) = self.me.upgrade()
        {
            shared.task_lost(self.fetch, std::thread::panicking());
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
