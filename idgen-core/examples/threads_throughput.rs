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
//! table gives the median and the best round. Wall-clock figures depend on the machine's load:
//! give `uptime` with them.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// IDs per second from `threads` threads calling `next` for one round.
fn round(threads: usize, next: Arc<dyn Fn() -> u64 + Send + Sync>) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (stop, total, start, next) =
                (stop.clone(), total.clone(), start.clone(), next.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        black_box(next());
                    }
                    n += 256;
                }
                total.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    std::thread::sleep(ROUND);
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().expect("a worker");
    }
    total.load(Ordering::Relaxed) as f64 / began.elapsed().as_secs_f64()
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

    let mut results: Vec<(String, Vec<f64>, Option<f64>)> = Vec::new();
    let mut measure = |set: &[(&str, Next)], threads: usize, cap: Option<f64>| {
        let mut got = vec![Vec::new(); set.len()];
        for _ in 0..rounds {
            for (i, (_, next)) in set.iter().enumerate() {
                got[i].push(round(threads, next.clone()));
            }
        }
        for ((name, _), mut ids) in set.iter().zip(got) {
            ids.sort_by(f64::total_cmp);
            results.push((format!("{name}, {threads} thread(s)"), ids, cap));
        }
    };
    measure(&uncapped, threads, None);
    measure(&capped, 1, Some(4_096_000.0));

    println!("| generator | median IDs/s | best IDs/s | median % of cap |");
    println!("|---|---:|---:|---:|");
    for (name, ids, cap) in results {
        let median = ids[ids.len() / 2];
        let best = ids[ids.len() - 1];
        let share = cap.map_or("—".into(), |cap| format!("{:.1} %", 100.0 * median / cap));
        println!("| {name} | {median:.0} | {best:.0} | {share} |");
    }
}
