//! Issues `n` IDs with one generator, for counting instructions per ID with valgrind's
//! callgrind (counts repeat under any machine load, unlike wall-clock time):
//!
//! ```sh
//! cargo build --release -p idgen-core --example per_id_instructions
//! scripts/instructions-per-id   # runs each generator at two counts, prints instructions per ID
//! ```
//!
//! Under callgrind a program runs ~50× slower, so no generator here reaches its per-millisecond
//! cap: this is the cost per ID when the cap does not bind.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ferroid::generator::{AtomicSnowflakeGenerator, BasicSnowflakeGenerator};
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH, TimeSource};
use idgen_core::{Clock, Layout, ManualClock, Snowflake, SystemClock, TickerClock};

/// idgen's `SystemClock` as a ferroid time source (ms since the Twitter epoch), to compare the
/// generators on one clock.
#[derive(Clone, Copy)]
struct IdgenClock(SystemClock);

impl TimeSource<u64> for IdgenClock {
    #[inline]
    fn current_millis(&self) -> u64 {
        (self.0.now_ms() - Layout::TWITTER.epoch_ms()) as u64
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(what), Some(n)) = (args.next(), args.next()) else {
        eprintln!("usage: per_id_instructions <generator> <count>");
        eprintln!("generators: {}", GENERATORS.join(", "));
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("a count");
    match what.as_str() {
        "idgen-wide" => {
            let layout = Layout::builder()
                .timestamp_bits(41)
                .node_bits(0)
                .sequence_bits(22)
                .epoch_ms(Layout::TWITTER.epoch_ms())
                .build()
                .unwrap();
            let ids = Snowflake::new(layout, 0).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "idgen-twitter" => {
            let ids = Snowflake::new(Layout::TWITTER, 1).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "idgen-ticker" => {
            let clock = TickerClock::new().unwrap();
            let ids = Snowflake::with_clock(Layout::TWITTER, 1, clock).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "idgen-manual" => {
            // No clock read: the clock moves only when a tick's 4,096 IDs are used up.
            let clock = ManualClock::new(1_800_000_000_000);
            let ids = Snowflake::with_clock(Layout::TWITTER, 1, clock).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "ferroid-atomic" => {
            // ferroid's README usage: the lock-free generator on its ticker-thread clock.
            let clock = MonotonicClock::<1>::with_epoch(TWITTER_EPOCH);
            let ids = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, clock);
            for _ in 0..n {
                black_box(ids.next_id(|_| std::thread::yield_now()));
            }
        }
        "ferroid-atomic-system" => {
            let ids = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(
                1,
                IdgenClock(SystemClock::new()),
            );
            for _ in 0..n {
                black_box(ids.next_id(|_| std::thread::yield_now()));
            }
        }
        "ferroid-basic" => {
            let clock = MonotonicClock::<1>::with_epoch(TWITTER_EPOCH);
            let ids = BasicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, clock);
            for _ in 0..n {
                black_box(ids.next_id(|_| std::thread::yield_now()));
            }
        }
        "rs-snowflake" => {
            let mut ids = snowflake::SnowflakeIdGenerator::new(1, 1);
            for _ in 0..n {
                black_box(ids.real_time_generate());
            }
        }
        "snowflaked" => {
            let mut ids = snowflaked::Generator::new(1);
            for _ in 0..n {
                black_box(ids.generate::<u64>());
            }
        }
        "snowflaked-sync" => {
            let ids = snowflaked::sync::Generator::new(1);
            for _ in 0..n {
                black_box(ids.generate::<u64>());
            }
        }
        "baseline" => {
            // The floor any clock-reading, thread-safe generator stands on: one atomic
            // read-modify-write and one monotonic clock read per ID.
            let counter = AtomicU64::new(0);
            for _ in 0..n {
                black_box(counter.fetch_add(1, Ordering::Relaxed));
                black_box(Instant::now());
            }
        }
        other => {
            eprintln!(
                "unknown generator {other:?}; one of {}",
                GENERATORS.join(", ")
            );
            std::process::exit(2);
        }
    }
}

const GENERATORS: &[&str] = &[
    "idgen-wide",
    "idgen-twitter",
    "idgen-ticker",
    "idgen-manual",
    "ferroid-atomic",
    "ferroid-atomic-system",
    "ferroid-basic",
    "rs-snowflake",
    "snowflaked",
    "snowflaked-sync",
    "baseline",
];
