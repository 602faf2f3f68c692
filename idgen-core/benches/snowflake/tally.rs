//! Totals of every timed run of each benchmark, and the comparison table printed at the end.

use std::cell::RefCell;
use std::time::Duration;

/// One benchmark's totals: IDs issued and time taken, over all of criterion's timed runs
/// (warm-up and measurement).
struct Row {
    section: &'static str,
    name: &'static str,
    /// IDs per second the generator cannot exceed, if it has such a cap.
    cap_per_s: Option<f64>,
    /// The name of our row this one is compared with; `None` for our own rows.
    versus: Option<&'static str>,
    ids: u64,
    elapsed: Duration,
    /// Time the timing thread was runnable but waiting for a CPU during the timed time (rows that
    /// issue on the timing thread, on Linux).
    runqueue: Option<Duration>,
    /// IDs and time while the thread had a CPU (see [`Timed::on_cpu`]).
    on_cpu: Option<(u64, Duration)>,
    /// For capped rows: IDs and time of the runs of at least [`QUIET_MIN`] in which the thread
    /// waited for a CPU at most [`QUIET_MAX_WAIT`] of the time, and how many of how many runs.
    quiet: (u64, Duration, u32, u32),
}

/// The shortest run counted in the "quiet runs" column: many ticks long.
const QUIET_MIN: Duration = Duration::from_millis(20);
/// The largest share of a run's time the thread may wait for a CPU for the run to count as quiet.
const QUIET_MAX_WAIT: f64 = 0.05;

impl Row {
    fn ns_per_id(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e9 / self.ids as f64
    }

    fn ids_per_s(&self) -> f64 {
        self.ids as f64 / self.elapsed.as_secs_f64()
    }

    /// Nanoseconds per ID while the thread had a CPU. Only for rows without a cap (a capped
    /// generator's time is set by the cap).
    fn on_cpu_ns_per_id(&self) -> Option<f64> {
        let (ids, time) = self
            .on_cpu
            .filter(|&(ids, _)| ids > 0 && self.cap_per_s.is_none())?;
        Some(time.as_secs_f64() * 1e9 / ids as f64)
    }
}

/// The time a routine took, and what is known of the thread's CPU while it ran.
pub(crate) struct Timed {
    pub(crate) elapsed: Duration,
    /// How long the timing thread was runnable but waited for a CPU (`None` when not known:
    /// not on Linux, or the IDs were issued on other threads).
    pub(crate) cpu_wait: Option<Duration>,
    /// IDs issued and time taken while the thread had a CPU: for one long loop, all its IDs and
    /// its time less `cpu_wait`; for bursts, only the bursts that never waited for a CPU.
    pub(crate) on_cpu: Option<(u64, Duration)>,
}

/// What one benchmark is: where it goes in the table and what it is compared with.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) section: &'static str,
    pub(crate) name: &'static str,
    pub(crate) cap_per_s: Option<f64>,
    pub(crate) versus: Option<&'static str>,
}

#[derive(Default)]
pub(crate) struct Tally {
    rows: RefCell<Vec<Row>>,
}

impl Tally {
    /// Adds a timed run of `ids` IDs to the row of `spec`.
    pub(crate) fn add(&self, spec: Spec, ids: u64, timed: &Timed) {
        let mut rows = self.rows.borrow_mut();
        let row = match rows
            .iter_mut()
            .position(|r| r.section == spec.section && r.name == spec.name)
        {
            Some(i) => &mut rows[i],
            None => {
                rows.push(Row {
                    section: spec.section,
                    name: spec.name,
                    cap_per_s: spec.cap_per_s,
                    versus: spec.versus,
                    ids: 0,
                    elapsed: Duration::ZERO,
                    runqueue: Some(Duration::ZERO),
                    on_cpu: Some((0, Duration::ZERO)),
                    quiet: (0, Duration::ZERO, 0, 0),
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.ids += ids;
        row.elapsed += timed.elapsed;
        if row.cap_per_s.is_some() && timed.elapsed >= QUIET_MIN {
            row.quiet.3 += 1;
            let share = timed
                .cpu_wait
                .map(|wait| wait.as_secs_f64() / timed.elapsed.as_secs_f64());
            if share.is_some_and(|share| share <= QUIET_MAX_WAIT) {
                row.quiet.0 += ids;
                row.quiet.1 += timed.elapsed;
                row.quiet.2 += 1;
            }
        }
        row.runqueue = row.runqueue.zip(timed.cpu_wait).map(|(a, b)| a + b);
        row.on_cpu = row
            .on_cpu
            .zip(timed.on_cpu)
            .map(|((ids_a, a), (ids_b, b))| (ids_a + ids_b, a + b));
    }

    /// The table in Markdown: IDs/s, ns per ID (wall clock, and on CPU), share of the cap, share
    /// of the time the thread was runnable but had no CPU, share of the cap in the quiet runs,
    /// and our cost per ID divided by the peer's (on-CPU cost when both rows have it; below 1:
    /// ours is cheaper).
    pub(crate) fn table(&self) -> String {
        let rows = self.rows.borrow();
        let mut out = String::from(
            "| section | generator | IDs/s | ns/ID | ns/ID on CPU | % of cap | no CPU | % of cap, quiet runs | ours ÷ peer (ns/ID) |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for row in rows.iter() {
            let share = row.cap_per_s.map_or("—".to_string(), |cap| {
                format!("{:.1} %", 100.0 * row.ids_per_s() / cap)
            });
            let ratio = row
                .versus
                .and_then(|ours| {
                    rows.iter()
                        .find(|r| r.section == row.section && r.name == ours)
                })
                .map_or("—".to_string(), |ours| {
                    let (a, b) = match (ours.on_cpu_ns_per_id(), row.on_cpu_ns_per_id()) {
                        (Some(a), Some(b)) => (a, b),
                        _ => (ours.ns_per_id(), row.ns_per_id()),
                    };
                    format!("{:.2}", a / b)
                });
            let on_cpu = row
                .on_cpu_ns_per_id()
                .map_or("—".to_string(), |ns| format!("{ns:.1}"));
            let no_cpu = row.runqueue.map_or("—".to_string(), |wait| {
                format!(
                    "{:.0} %",
                    100.0 * wait.as_secs_f64() / row.elapsed.as_secs_f64()
                )
            });
            let quiet = match (row.cap_per_s, row.quiet) {
                (Some(cap), (ids, time, quiet, all)) if quiet > 0 => format!(
                    "{:.1} % ({quiet} of {all})",
                    100.0 * ids as f64 / time.as_secs_f64() / cap
                ),
                (Some(_), (_, _, _, all)) if row.runqueue.is_some() => format!("— (0 of {all})"),
                _ => "—".to_string(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {:.1} | {} | {} | {} | {} | {} |\n",
                row.section,
                row.name,
                group_thousands(row.ids_per_s()),
                row.ns_per_id(),
                on_cpu,
                share,
                no_cpu,
                quiet,
                ratio
            ));
        }
        out
    }
}

fn group_thousands(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The time this thread has spent runnable but waiting for a CPU, from Linux's
/// `/proc/thread-self/schedstat` (`None` elsewhere).
pub(crate) fn runqueue_wait() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}
