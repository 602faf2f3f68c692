//! The Snowflake generator against its cap and against the generators a Rust user would pick
//! instead. Run: `cargo bench -p idgen-core --bench snowflake -- --warm-up-time 1 --measurement-time 3`.
//!
//! Sections (criterion groups), each printed as a row of the table at the end:
//! - `a_capped`: single thread, 4,096 IDs per ms per node (Twitter's layout), as many IDs as
//!   possible: bound by the cap of 4,096,000 IDs/s. Ours and the peers with the same cap.
//! - `a_capped_sonyflake`: the same for Sonyflake's 256 IDs per 10 ms (25,600 IDs/s): this
//!   measures sleeping, so it runs small counts.
//! - `b_unbound`: the cost per ID when the sequence never runs out: ours with a 41 + 0 + 22 bit
//!   layout on the real clock, and the peers that have no per-tick cap (uuid with `fast-rng`,
//!   as its README suggests); ours on a `ManualClock` that moves on 1 ms per 4,096 IDs (no clock
//!   read: what rs-snowflake's `lazy_generate` and `SnowflakeIdBucket` do).
//! - `b_burst`: the cost per ID of the capped generators when not bound: bursts of 2,000 IDs,
//!   each started at a fresh millisecond, only the bursts timed.
//! - `d_two_threads`: two threads sharing one generator, total IDs/s.
//!
//! The table adds up every timed run of a benchmark (warm-up and measurement). "no CPU" is the
//! share of the timed time the thread was runnable but had no CPU (Linux schedstat): on a busy
//! machine a capped generator loses those ticks, and an unbound one's wall-clock cost per ID
//! grows; "ns/ID on CPU" removes that wait (for bursts: counts only the bursts that never
//! waited for a CPU). "% of cap, quiet runs" counts, for capped rows, only the timed runs of at
//! least 20 ms in which the thread waited for a CPU at most 5 % of the time (and says how many
//! of how many runs those were). The ratio is our cost per ID over the peer's
//! (on-CPU cost where both have it): below 1, ours is cheaper.

mod tally;

use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use idgen_core::{Clock, Layout, ManualClock, Snowflake, SystemClock};
use tally::{Spec, Tally, Timed};

/// Twitter's layout: 4,096 IDs per ms per node.
const TWITTER_CAP: f64 = 4_096_000.0;
/// Sonyflake's layout: 256 IDs per 10 ms.
const SONYFLAKE_CAP: f64 = 25_600.0;
/// IDs per burst in `b_burst`: at most two bursts meet any one ms, so 4,096 per ms is never
/// reached.
const BURST: u64 = 2_000;

const BURSTS: &str = "b_burst";
const TWO_THREADS: &str = "d_two_threads";

const OURS_TWITTER: &str = "idgen Snowflake, TWITTER";
const OURS_SONYFLAKE: &str = "idgen Snowflake, SONYFLAKE";
const OURS_WIDE: &str = "idgen Snowflake, 41+0+22 bits";
const OURS_NO_CLOCK: &str = "idgen Snowflake, TWITTER, ManualClock";

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let tally = Tally::default();
    capped(&mut c, &tally);
    capped_sonyflake(&mut c, &tally);
    unbound(&mut c, &tally);
    burst(&mut c, &tally);
    two_threads(&mut c, &tally);
    c.final_summary();
    println!("\n{}", tally.table());
}

/// `n` calls of `next` on this thread.
fn time_loop<T>(n: u64, mut next: impl FnMut() -> T) -> Timed {
    let waited_before = tally::runqueue_wait();
    let start = Instant::now();
    for _ in 0..n {
        black_box(next());
    }
    let elapsed = start.elapsed();
    let cpu_wait = waited_before
        .zip(tally::runqueue_wait())
        .map(|(before, after)| after.saturating_sub(before));
    let on_cpu = cpu_wait.map(|wait| (n, elapsed.saturating_sub(wait)));
    Timed {
        elapsed,
        cpu_wait,
        on_cpu,
    }
}

/// `n` calls of `next` in bursts of [`BURST`], each started at a fresh wall-clock millisecond;
/// only the bursts are timed.
fn time_bursts<T>(n: u64, mut next: impl FnMut() -> T) -> Timed {
    let mut left = n;
    let mut elapsed = Duration::ZERO;
    let mut cpu_wait = Some(Duration::ZERO);
    let mut on_cpu = Some((0, Duration::ZERO));
    while left > 0 {
        let this = left.min(BURST);
        wait_for_next_ms();
        let burst = time_loop(this, &mut next);
        elapsed += burst.elapsed;
        cpu_wait = cpu_wait.zip(burst.cpu_wait).map(|(total, w)| total + w);
        // Only bursts that never waited for a CPU count as on-CPU time.
        let clean = burst.cpu_wait.map(|w| w.is_zero());
        on_cpu = on_cpu.zip(clean).map(|((ids, time), clean)| {
            if clean {
                (ids + this, time + burst.elapsed)
            } else {
                (ids, time)
            }
        });
        left -= this;
    }
    Timed {
        elapsed,
        cpu_wait,
        on_cpu,
    }
}

fn wait_for_next_ms() {
    let unix_ms = || {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock after 1970")
            .as_millis()
    };
    let start = unix_ms();
    while unix_ms() == start {
        std::hint::spin_loop();
    }
}

/// `n` calls of `next` split over two threads sharing `generator`, timed from a common start
/// until both are done (their waits for a CPU are not counted).
fn time_two_threads<G: Sync, T>(n: u64, generator: &G, next: impl Fn(&G) -> T + Sync) -> Timed {
    let barrier = Barrier::new(3);
    let start = std::thread::scope(|s| {
        for count in [n / 2, n - n / 2] {
            let (barrier, next) = (&barrier, &next);
            s.spawn(move || {
                barrier.wait();
                for _ in 0..count {
                    black_box(next(generator));
                }
            });
        }
        barrier.wait();
        Instant::now()
    });
    Timed {
        elapsed: start.elapsed(),
        cpu_wait: None,
        on_cpu: None,
    }
}

/// Our generator for node 1 (node 0 when the layout has no node field).
fn ours(layout: Layout) -> Snowflake {
    let node = layout.max_node().min(1);
    Snowflake::new(layout, node).expect("node fits")
}

/// 41-bit ms timestamp, no node, 22-bit sequence: 4,194,304 IDs per ms, far above what one
/// core can issue, so the sequence never runs out.
fn wide_layout() -> Layout {
    Layout::builder()
        .epoch_ms(Layout::TWITTER.epoch_ms())
        .timestamp_bits(41)
        .node_bits(0)
        .sequence_bits(22)
        .build()
        .expect("41 + 0 + 22 = 63 bits")
}

/// How a benchmark's `n` IDs are timed on this thread.
#[derive(Clone, Copy)]
enum Timing {
    /// One loop of `n` calls: [`time_loop`].
    Loop,
    /// Bursts at fresh milliseconds: [`time_bursts`].
    Bursts,
}

impl Timing {
    /// `n` calls of `next`, timed this way (chosen once, outside the loop: the per-ID path is
    /// the same as calling [`time_loop`] or [`time_bursts`] directly).
    fn time<T>(self, n: u64, next: impl FnMut() -> T) -> Timed {
        match self {
            Timing::Loop => time_loop(n, next),
            Timing::Bursts => time_bursts(n, next),
        }
    }
}

/// One criterion group, printed as one section of the table: its benchmarks share a cap and a
/// way of timing, and the peers in it are compared with one of our rows.
struct Section<'a> {
    group: BenchmarkGroup<'a, WallTime>,
    tally: &'a Tally,
    name: &'static str,
    cap_per_s: Option<f64>,
    timing: Timing,
}

impl<'a> Section<'a> {
    fn new(
        c: &'a mut Criterion,
        tally: &'a Tally,
        name: &'static str,
        cap_per_s: Option<f64>,
        timing: Timing,
    ) -> Self {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(1));
        Section {
            group,
            tally,
            name,
            cap_per_s,
            timing,
        }
    }

    /// Registers one benchmark whose routine `run(n)` issues `n` IDs and returns the time it
    /// took; `versus` is the row of ours it is compared with (`None` for our own rows).
    fn bench(
        &mut self,
        name: &'static str,
        versus: Option<&'static str>,
        mut run: impl FnMut(u64) -> Timed,
    ) {
        let spec = Spec {
            section: self.name,
            name,
            cap_per_s: self.cap_per_s,
            versus,
        };
        let tally = self.tally;
        self.group.bench_function(name, |b| {
            b.iter_custom(|n| {
                let timed = run(n);
                tally.add(spec, n, &timed);
                timed.elapsed
            })
        });
    }

    /// A benchmark of `n` calls of `next` on this thread, timed the section's way.
    fn ids<T>(
        &mut self,
        name: &'static str,
        versus: Option<&'static str>,
        mut next: impl FnMut() -> T,
    ) {
        let timing = self.timing;
        self.bench(name, versus, |n| timing.time(n, &mut next));
    }

    /// Our generator on `layout` (node 1), a row others are compared with.
    fn ours(&mut self, name: &'static str, layout: Layout) -> Snowflake {
        let ids = ours(layout);
        self.ids(name, None, || ids.next_id().expect("next_id"));
        ids
    }

    /// The capped single-thread peers of Twitter's layout (rs-snowflake and snowflaked, both
    /// with 4,096 IDs per ms), compared with `versus`.
    fn twitter_peers(&mut self, versus: &'static str) {
        let vs = Some(versus);
        let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
        self.ids("rs-snowflake generate", vs, || rs.generate());
        let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
        self.ids("rs-snowflake real_time_generate", vs, || {
            rs.real_time_generate()
        });
        let mut sf = snowflaked::Generator::new(1);
        self.ids("snowflaked Generator", vs, || sf.generate::<u64>());
        let sf = snowflaked::sync::Generator::new(1);
        self.ids("snowflaked sync::Generator", vs, || sf.generate::<u64>());
    }

    fn finish(self) {
        self.group.finish();
    }
}

fn capped(c: &mut Criterion, tally: &Tally) {
    let mut s = Section::new(c, tally, "a_capped", Some(TWITTER_CAP), Timing::Loop);
    // Few, large samples: the smallest spans tens of ms, so every sample is bound by the cap.
    s.group.sample_size(10);
    s.ours(OURS_TWITTER, Layout::TWITTER);
    s.twitter_peers(OURS_TWITTER);
    s.finish();
}

fn capped_sonyflake(c: &mut Criterion, tally: &Tally) {
    let mut s = Section::new(
        c,
        tally,
        "a_capped_sonyflake",
        Some(SONYFLAKE_CAP),
        Timing::Loop,
    );
    // At 25,600 IDs/s the time is spent sleeping: short runs of a few thousand IDs suffice.
    s.group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    s.ours(OURS_SONYFLAKE, Layout::SONYFLAKE);

    let machine_id = || Ok(1);
    let sony = sonyflake::Sonyflake::builder()
        .machine_id(&machine_id)
        .finalize()
        .expect("sonyflake");
    s.ids("sonyflake next_id", Some(OURS_SONYFLAKE), || {
        sony.next_id().expect("next_id")
    });
    s.finish();
}

fn unbound(c: &mut Criterion, tally: &Tally) {
    let mut s = Section::new(c, tally, "b_unbound", None, Timing::Loop);
    let vs = Some(OURS_WIDE);
    s.ours(OURS_WIDE, wide_layout());

    // Without reading a clock: a ManualClock that moves on by one ms whenever a tick's 4,096
    // IDs are used up, which is what rs-snowflake's lazy_generate does.
    let clock = ManualClock::new(SystemClock::new().now_ms());
    let simulated = Snowflake::with_clock(Layout::TWITTER, 1, clock).expect("node 1 fits");
    s.ids(OURS_NO_CLOCK, None, || {
        simulated.next_id().expect("next_id")
    });
    let no_clock = Some(OURS_NO_CLOCK);
    let mut rs = snowflake::SnowflakeIdGenerator::new(1, 1);
    s.ids("rs-snowflake lazy_generate", no_clock, || {
        rs.lazy_generate()
    });
    let mut bucket = snowflake::SnowflakeIdBucket::new(1, 1);
    s.ids("rs-snowflake SnowflakeIdBucket", no_clock, || {
        bucket.get_id()
    });

    s.ids("uuid Uuid::now_v7", vs, uuid::Uuid::now_v7);
    let mut ulids = ulid::Generator::new();
    s.ids("ulid Generator", vs, || ulids.generate().expect("ulid"));
    // The floor of any thread-safe generator that reads the clock: one atomic read-modify-write
    // and one monotonic clock read per ID.
    let counter = std::sync::atomic::AtomicU64::new(0);
    s.ids("baseline: AtomicU64::fetch_add + Instant::now", vs, || {
        black_box(counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        Instant::now()
    });
    s.finish();
}

fn burst(c: &mut Criterion, tally: &Tally) {
    let mut s = Section::new(c, tally, BURSTS, None, Timing::Bursts);
    // Only the bursts count as measured time, and a burst is ~1/20 of the ms it starts in:
    // the real time is ~20 times the measurement time.
    s.group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300));

    let ids = s.ours(OURS_TWITTER, Layout::TWITTER);
    let waits = ids.stats().exhaustion_waits;
    if waits > 0 {
        eprintln!("warning: {OURS_TWITTER} waited for the next tick {waits} times in bursts");
    }
    s.twitter_peers(OURS_TWITTER);
    s.finish();
}

fn two_threads(c: &mut Criterion, tally: &Tally) {
    let mut s = Section::new(c, tally, TWO_THREADS, Some(TWITTER_CAP), Timing::Loop);
    s.group.sample_size(10);
    let vs = Some(OURS_TWITTER);

    let ids = ours(Layout::TWITTER);
    s.bench(OURS_TWITTER, None, |n| {
        time_two_threads(n, &ids, |g| g.next_id().expect("next_id"))
    });
    let sf = snowflaked::sync::Generator::new(1);
    s.bench("snowflaked sync::Generator", vs, |n| {
        time_two_threads(n, &sf, |g| g.generate::<u64>())
    });
    let rs = Mutex::new(snowflake::SnowflakeIdGenerator::new(1, 1));
    s.bench("rs-snowflake Mutex<generator> generate", vs, |n| {
        time_two_threads(n, &rs, |g| g.lock().expect("lock").generate())
    });

    // The wide layout has no cap to reach.
    s.cap_per_s = None;
    let ids = ours(wide_layout());
    s.bench(OURS_WIDE, None, |n| {
        time_two_threads(n, &ids, |g| g.next_id().expect("next_id"))
    });
    s.finish();
}
