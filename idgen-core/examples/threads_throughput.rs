//! IDs per second from one generator shared by several threads, idgen beside ferroid, in one run
//! (issue 43): uncapped (41 + 1 + 21 bits: 2,097,152 IDs per ms, which no run here reaches) and
//! at Twitter's cap (4,096 IDs per ms, one thread).
//!
//! ```sh
//! cargo run --release -p idgen-core --example threads_throughput            # 4 threads, 5 rounds
//! cargo run --release -p idgen-core --example threads_throughput -- 2 9     # 2 threads, 9 rounds
//! ```
//!
//! Each round runs every generator for 300 ms, in turn (so load changes hit all alike); the
//! tables give the median and the best round, idgen's throughput over ferroid's within each
//! round, and the share of the cap. Wall-clock figures depend on the machine's load: the load
//! average is printed before and after.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH, TimeSource};
use idgen_core::{Clock, Layout, Snowflake, SystemClock, TickerClock};

// The macro's items have no docs of their own.
#[allow(missing_docs)]
mod wide {
    use ferroid::define_snowflake_id;
    define_snowflake_id!(
    /// 41 + 1 + 21 bits: the uncapped layout, for ferroid.
    WideId, u64,
    reserved: 1,
    timestamp: 41,
    machine_id: 1,
        sequence: 21
    );
}
use wide::WideId;

/// idgen's `SystemClock` as a ferroid time source (ms since the Twitter epoch).
#[derive(Clone, Copy)]
struct IdgenClock(SystemClock);

impl TimeSource<u64> for IdgenClock {
    fn current_millis(&self) -> u64 {
        (self.0.now_ms() - Layout::TWITTER.epoch_ms()) as u64
    }
}

/// idgen's `SystemClock` with the wait `Clock::wait_until` had before it slept through the
/// last millisecond: it yielded the thread in a loop. Kept to compare the two in one run.
struct YieldingWait(SystemClock);

impl Clock for YieldingWait {
    #[inline]
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn wait_until(&self, target_ms: i64) {
        loop {
            let now = self.0.now_ms();
            if now >= target_ms {
                return;
            }
            if target_ms - now >= 2 {
                std::thread::sleep(Duration::from_millis((target_ms - now - 1) as u64));
            } else {
                std::thread::yield_now();
            }
        }
    }
}

const ROUND: Duration = Duration::from_millis(300);

fn wide() -> Layout {
    Layout::builder()
        .timestamp_bits(41)
        .node_bits(1)
        .sequence_bits(21)
        .epoch_ms(Layout::TWITTER.epoch_ms())
        .build()
        .expect("a layout")
}

/// IDs per second from `threads` threads calling `next` for one round: all their IDs over the
/// longest of their own windows (each from its release at the barrier to its last ID), so the
/// main thread's wake-up and the joins are not counted.
fn round(threads: usize, next: Arc<dyn Fn() -> u64 + Send + Sync>) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (stop, start, next) = (stop.clone(), start.clone(), next.clone());
            std::thread::spawn(move || {
                start.wait();
                let began = Instant::now();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        black_box(next());
                    }
                    n += 256;
                }
                (n, began.elapsed())
            })
        })
        .collect();
    start.wait();
    std::thread::sleep(ROUND);
    stop.store(true, Ordering::Relaxed);
    let (mut total, mut window) = (0u64, Duration::ZERO);
    for w in workers {
        let (n, took) = w.join().expect("a worker");
        total += n;
        window = window.max(took);
    }
    total as f64 / window.as_secs_f64()
}

/// The load average (1, 5 and 15 minutes) from `/proc/loadavg`, or "?" where there is none.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "?".to_owned(),
        |text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}

/// The median of `values` (sorted here).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args
        .next()
        .map_or(4, |a| a.parse().expect("a thread count"));
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("a round count"));

    type Next = Arc<dyn Fn() -> u64 + Send + Sync>;
    let ticker = TickerClock::new().expect("the ticker thread");
    let uncapped: Vec<(&str, Next)> = vec![
        ("idgen Snowflake, SystemClock", {
            let ids = Snowflake::with_clock(wide(), 1, SystemClock::new()).unwrap();
            Arc::new(move || ids.next_id().unwrap().get() as u64)
        }),
        ("idgen Snowflake, TickerClock", {
            let ids = Snowflake::with_clock(wide(), 1, ticker.clone()).unwrap();
            Arc::new(move || ids.next_id().unwrap().get() as u64)
        }),
        ("ferroid Atomic, MonotonicClock", {
            let clock = MonotonicClock::<1>::with_epoch(TWITTER_EPOCH);
            let ids = AtomicSnowflakeGenerator::<WideId, _>::new(1, clock);
            Arc::new(move || ids.next_id(|_| std::thread::yield_now()).to_raw())
        }),
        ("ferroid Atomic, idgen SystemClock", {
            let ids = AtomicSnowflakeGenerator::<WideId, _>::new(1, IdgenClock(SystemClock::new()));
            Arc::new(move || ids.next_id(|_| std::thread::yield_now()).to_raw())
        }),
    ];
    let capped: Vec<(&str, Next)> = vec![
        ("idgen Snowflake TWITTER, SystemClock", {
            let ids = Snowflake::with_clock(Layout::TWITTER, 1, SystemClock::new()).unwrap();
            Arc::new(move || ids.next_id().unwrap().get() as u64)
        }),
        (
            "idgen Snowflake TWITTER, SystemClock, yielding wait (before)",
            {
                let clock = YieldingWait(SystemClock::new());
                let ids = Snowflake::with_clock(Layout::TWITTER, 1, clock).unwrap();
                Arc::new(move || ids.next_id().unwrap().get() as u64)
            },
        ),
        ("idgen Snowflake TWITTER, TickerClock", {
            let ids = Snowflake::with_clock(Layout::TWITTER, 1, ticker.clone()).unwrap();
            Arc::new(move || ids.next_id().unwrap().get() as u64)
        }),
        ("ferroid Atomic TWITTER, MonotonicClock", {
            let clock = MonotonicClock::<1>::with_epoch(TWITTER_EPOCH);
            let ids = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, clock);
            Arc::new(move || ids.next_id(|_| std::thread::yield_now()).to_raw())
        }),
    ];

    println!("load average before: {}", load_average());
    // Every round runs each generator once, in turn, starting one further along each round, so
    // a change of load meets all of them alike; ratios are taken within a round.
    let measure = |set: &[(&str, Next)], threads: usize| {
        let mut got = vec![Vec::new(); set.len()];
        for r in 0..rounds {
            for k in 0..set.len() {
                let i = (r + k) % set.len();
                got[i].push(round(threads, set[i].1.clone()));
            }
        }
        got
    };
    let free = measure(&uncapped, threads);
    let at_cap = measure(&capped, 1);
    println!("load average after: {}", load_average());

    println!();
    println!("Uncapped (41 + 1 + 21 bits), {threads} threads, {rounds} rounds of {ROUND:?}:");
    println!();
    println!("| generator | median IDs/s | best IDs/s |");
    println!("|---|---:|---:|");
    for ((name, _), ids) in uncapped.iter().zip(&free) {
        let mut ids = ids.clone();
        let best = ids.iter().copied().fold(0.0, f64::max);
        println!("| {name} | {:.0} | {best:.0} |", median(&mut ids));
    }
    println!();
    println!(
        "| idgen ÷ ferroid, same round | median | lowest | highest | rounds idgen ≥ ferroid |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (ours, theirs, what) in [
        (1, 2, "TickerClock ÷ MonotonicClock"),
        (0, 3, "both on SystemClock"),
    ] {
        let mut ratios: Vec<f64> = free[ours]
            .iter()
            .zip(&free[theirs])
            .map(|(a, b)| a / b)
            .collect();
        let wins = ratios.iter().filter(|&&r| r >= 1.0).count();
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(0.0, f64::max);
        println!(
            "| {what} | {:.3} | {low:.3} | {high:.3} | {wins} of {rounds} |",
            median(&mut ratios)
        );
    }
    println!();
    println!("At Twitter's cap (4,096,000 IDs/s), one thread, {rounds} rounds of {ROUND:?}:");
    println!();
    println!("| generator | median % of cap | lowest | highest |");
    println!("|---|---:|---:|---:|");
    for ((name, _), ids) in capped.iter().zip(&at_cap) {
        let mut share: Vec<f64> = ids.iter().map(|ids| 100.0 * ids / 4_096_000.0).collect();
        let low = share.iter().copied().fold(f64::INFINITY, f64::min);
        let high = share.iter().copied().fold(0.0, f64::max);
        println!(
            "| {name} | {:.2} % | {low:.2} % | {high:.2} % |",
            median(&mut share)
        );
    }
}
