//! The checker. It trusts nothing the system under test says: it uses no idgen code, only the
//! runs the processes recorded (and the rows the databases hold), plain integer intervals, and
//! its own decoding of the Twitter layout's time field. Two runs in one key space that share an
//! ID are a duplicate, whoever issued them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::schedule::FaultKind;

/// The Twitter layout's epoch (Unix ms), decoded here independently of idgen.
pub const TWITTER_EPOCH_MS: i64 = 1_288_834_974_657;

/// The Unix ms in a Twitter-layout Snowflake ID's time field (bits 22 and up).
///
/// ```
/// // 1000 ms after the epoch, node 33, sequence 0 (`idgen web`'s worked example).
/// assert_eq!(idgen_nemesis::checker::time_ms(4_194_439_168), 1_288_834_975_657);
/// ```
pub fn time_ms(id: i64) -> i64 {
    (id >> 22) + TWITTER_EPOCH_MS
}

/// The node field (bits 12..22) of a Twitter-layout Snowflake ID.
///
/// ```
/// assert_eq!(idgen_nemesis::checker::node_of(4_194_439_168), 33);
/// ```
pub fn node_of(id: i64) -> i64 {
    (id >> 12) & 0x3FF
}

/// A run of consecutive IDs `first..=last` in key space `space`, issued by `issuer` from
/// `first_ms` to `last_ms` (the host's wall clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The key space: Snowflake IDs of one lease table (`snowflake@postgres`, shared with the
    /// database generator), or one hi-lo counter (`hilo@redis`).
    pub space: String,
    /// The process and its incarnation (`pg1#2`), or where rows were found.
    pub issuer: String,
    /// Whether the IDs are Snowflake IDs (their time field and node are decoded).
    pub snowflake: bool,
    /// First ID.
    pub first: i64,
    /// Last ID.
    pub last: i64,
    /// When the first was issued.
    pub first_ms: i64,
    /// When the last was issued.
    pub last_ms: i64,
}

impl Run {
    fn len(&self) -> u64 {
        (self.last - self.first + 1) as u64
    }

    fn describe(&self) -> String {
        let node = match self.snowflake {
            true => format!(" node {}", node_of(self.first)),
            false => String::new(),
        };
        format!(
            "{}{node} [{}..={}] at {}..{} ms",
            self.issuer, self.first, self.last, self.first_ms, self.last_ms
        )
    }
}

/// A fault as it was applied: wall-clock start and end (Unix ms) and the processes it hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// What.
    pub kind: FaultKind,
    /// The process or store it targeted.
    pub target: String,
    /// The processes (names, no incarnation) whose issuing it hit.
    pub hits: Vec<String>,
    /// When it began (a restore: when its dump was taken, the state the database goes back to).
    pub start_ms: i64,
    /// When it ended (the process restarted or continued, the store reconnected or answered).
    pub end_ms: i64,
}

/// Two runs that share IDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The earlier run (by first ID).
    pub a: Run,
    /// The later one.
    pub b: Run,
    /// The first shared ID.
    pub first_shared: i64,
    /// How many IDs they share.
    pub shared: u64,
}

/// The checker's findings.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The schedule's seed.
    pub seed: u64,
    /// IDs checked (every ID of every run, duplicates included).
    pub ids: u64,
    /// Runs checked.
    pub runs: usize,
    /// IDs per key space.
    pub per_space: BTreeMap<String, u64>,
    /// IDs issued more than once (total minus distinct).
    pub duplicate_ids: u64,
    /// The overlapping pairs found (each duplicate ID is in at least one).
    pub duplicates: Vec<Duplicate>,
    /// Per duplicate (same order), the faults in force around it.
    pub faults_in_force: Vec<Vec<String>>,
    /// Faults injected per kind.
    pub faults: BTreeMap<&'static str, usize>,
    /// Per fault kind: recoveries (from a fault's end to the hit process's next ID) in ms.
    pub recovery_ms: BTreeMap<&'static str, Vec<i64>>,
    /// The largest lead of an ID's time field over its issue time (ms), and whose.
    pub max_lead: (i64, String),
    /// The largest lag (time field behind issue time, as a positive number of ms), and whose.
    pub max_lag: (i64, String),
    /// Processes that reported `Fenced`, with how often.
    pub fenced: BTreeMap<String, usize>,
    /// How often a node ID passed from one issuer to another (Snowflake spaces).
    pub handovers: usize,
    /// The tightest handover: the new issuer's first time field minus the old one's last on
    /// that node (ms; negative would mean they shared milliseconds), and who.
    pub tightest_handover: Option<(i64, String)>,
}

/// Per Snowflake space and node, the issuers in the order of their IDs' time fields: how often
/// the node changed hands, and the tightest change (see [`Report::tightest_handover`]).
fn handovers(runs: &[Run]) -> (usize, Option<(i64, String)>) {
    let mut by_node: BTreeMap<(&str, i64), Vec<&Run>> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.snowflake) {
        by_node
            .entry((run.space.as_str(), node_of(run.first)))
            .or_default()
            .push(run);
    }
    let mut count = 0;
    let mut tightest: Option<(i64, String)> = None;
    for ((space, node), mut list) in by_node {
        list.sort_by_key(|r| r.first);
        for pair in list.windows(2) {
            let (old, new) = (pair[0], pair[1]);
            let process = |r: &Run| r.issuer.split('#').next().unwrap_or("").to_owned();
            // Rows a process's incarnation wrote but did not record are still its own.
            let same_rows = process(old) == process(new)
                && (old.issuer.contains("#rows") || new.issuer.contains("#rows"));
            if old.issuer == new.issuer || same_rows {
                continue;
            }
            count += 1;
            let gap = time_ms(new.first) - time_ms(old.last);
            if tightest.as_ref().is_none_or(|(g, _)| gap < *g) {
                let who = format!("{space} node {node}: {} then {}", old.issuer, new.issuer);
                tightest = Some((gap, who));
            }
        }
    }
    (count, tightest)
}

/// The overlapping runs within each key space, and how many IDs were issued more than once.
///
/// ```
/// use idgen_nemesis::checker::{Run, duplicates};
/// let run = |issuer: &str, first, last| Run {
///     space: "s".into(), issuer: issuer.into(), snowflake: false,
///     first, last, first_ms: 0, last_ms: 0,
/// };
/// let (pairs, ids) = duplicates(&[run("a", 1, 10), run("b", 11, 20), run("c", 20, 25)]);
/// assert_eq!(ids, 1);
/// assert_eq!((pairs[0].a.issuer.as_str(), pairs[0].b.issuer.as_str()), ("b", "c"));
/// ```
pub fn duplicates(runs: &[Run]) -> (Vec<Duplicate>, u64) {
    let mut by_space: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
    for run in runs {
        by_space.entry(run.space.as_str()).or_default().push(run);
    }
    let mut pairs = Vec::new();
    let mut repeated = 0;
    for runs in by_space.values_mut() {
        runs.sort_by_key(|r| (r.first, r.last));
        // The run reaching furthest so far: any later run starting at or below its end overlaps.
        let mut reach: Option<&Run> = None;
        for run in runs.iter() {
            if let Some(prev) = reach
                && run.first <= prev.last
            {
                let end = run.last.min(prev.last);
                pairs.push(Duplicate {
                    a: prev.clone(),
                    b: (*run).clone(),
                    first_shared: run.first,
                    shared: (end - run.first + 1) as u64,
                });
            }
            // IDs of this run beyond everything before it are new; the rest repeat.
            let covered_to = reach.map_or(i64::MIN, |r| r.last);
            let new = match covered_to {
                c if c < run.first => run.len(),
                c if c >= run.last => 0,
                c => (run.last - c) as u64,
            };
            repeated += run.len() - new;
            if reach.is_none_or(|r| run.last > r.last) {
                reach = Some(run);
            }
        }
    }
    (pairs, repeated)
}

/// The IDs in `rows` (sorted) that no run of `runs` covers, as runs of consecutive IDs:
/// rows a database holds that no process recorded (it died between the commit and its record).
///
/// ```
/// use idgen_nemesis::checker::{Run, uncovered};
/// let run = Run { space: "s".into(), issuer: "a".into(), snowflake: false,
///     first: 5, last: 7, first_ms: 0, last_ms: 0 };
/// assert_eq!(uncovered(&[1, 2, 5, 6, 7, 9], &[run]), vec![(1, 2), (9, 9)]);
/// ```
pub fn uncovered(rows: &[i64], runs: &[Run]) -> Vec<(i64, i64)> {
    let mut spans: Vec<(i64, i64)> = runs.iter().map(|r| (r.first, r.last)).collect();
    spans.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    let mut i = 0;
    for &id in rows {
        while i < spans.len() && spans[i].1 < id {
            i += 1;
        }
        let covered = spans[i..]
            .iter()
            .take_while(|s| s.0 <= id)
            .any(|s| s.1 >= id);
        if covered {
            continue;
        }
        match out.last_mut() {
            Some((_, last)) if *last + 1 == id => *last = id,
            _ => out.push((id, id)),
        }
    }
    out
}

/// How long after the end of a fault the issuer could be down before the fault no longer
/// counts as "in force" (the lease TTL and more: a takeover's effects outlast the fault).
const AFTERMATH_MS: i64 = 10_000;

/// Checks `runs` against each other, and reports them with `faults` and the `fenced` events
/// (process, time).
///
/// ```
/// use idgen_nemesis::checker::{Run, check};
/// let run = |issuer: &str, first, last| Run {
///     space: "s".into(), issuer: issuer.into(), snowflake: false,
///     first, last, first_ms: 0, last_ms: 0,
/// };
/// let report = check(9, &[run("a#1", 1, 10), run("b#1", 5, 6)], &[], &[]);
/// assert_eq!(report.duplicate_ids, 2);
/// assert!(report.to_string().contains("seed 9"));
/// ```
pub fn check(seed: u64, runs: &[Run], faults: &[Applied], fenced: &[(String, i64)]) -> Report {
    let (duplicates, duplicate_ids) = duplicates(runs);
    let mut report = Report {
        seed,
        runs: runs.len(),
        duplicate_ids,
        ..Report::default()
    };
    for run in runs {
        report.ids += run.len();
        *report.per_space.entry(run.space.clone()).or_default() += run.len();
        if run.snowflake {
            for (id, at) in [(run.first, run.first_ms), (run.last, run.last_ms)] {
                let lead = time_ms(id) - at;
                if lead > report.max_lead.0 {
                    report.max_lead = (lead, run.issuer.clone());
                }
                if -lead > report.max_lag.0 {
                    report.max_lag = (-lead, run.issuer.clone());
                }
            }
        }
    }
    for dup in &duplicates {
        let from = dup.a.first_ms.min(dup.b.first_ms);
        let to = dup.a.last_ms.max(dup.b.last_ms);
        let process = |r: &Run| r.issuer.split('#').next().unwrap_or("").to_owned();
        let mut issuers = vec![process(&dup.a), process(&dup.b)];
        issuers.dedup();
        let in_force = faults
            .iter()
            .filter(|f| f.start_ms <= to && f.end_ms + AFTERMATH_MS >= from)
            .map(|f| {
                // Which of the two issuers it hit, if any.
                let hit: Vec<&str> = issuers
                    .iter()
                    .filter(|p| f.hits.contains(p))
                    .map(String::as_str)
                    .collect();
                let hit = match hit.is_empty() {
                    true => String::new(),
                    false => format!(", hit {}", hit.join(" and ")),
                };
                let span = match f.kind {
                    // The IDs at risk are those issued between the dump and the restore.
                    FaultKind::DbRestore => "dump at {}, restored by {} ms",
                    _ => "at {}..{} ms",
                };
                let span = span.replacen("{}", &f.start_ms.to_string(), 1).replacen(
                    "{}",
                    &f.end_ms.to_string(),
                    1,
                );
                format!("{} {} {span}{hit}", f.kind.name(), f.target)
            })
            .collect();
        report.faults_in_force.push(in_force);
    }
    report.duplicates = duplicates;
    // Per process (no incarnation), the start times of its runs, sorted.
    let mut starts: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for run in runs {
        let process = run.issuer.split('#').next().unwrap_or("");
        starts.entry(process).or_default().push(run.first_ms);
    }
    for list in starts.values_mut() {
        list.sort_unstable();
    }
    for fault in faults {
        *report.faults.entry(fault.kind.name()).or_default() += 1;
        for process in &fault.hits {
            let next = starts.get(process.as_str()).and_then(|list| {
                let i = list.partition_point(|&t| t < fault.end_ms);
                list.get(i).copied()
            });
            if let Some(next) = next {
                report
                    .recovery_ms
                    .entry(fault.kind.name())
                    .or_default()
                    .push(next - fault.end_ms);
            }
        }
    }
    for (process, _) in fenced {
        *report.fenced.entry(process.clone()).or_default() += 1;
    }
    (report.handovers, report.tightest_handover) = handovers(runs);
    report
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "seed {}: {} IDs checked in {} runs, {} issued more than once",
            self.seed, self.ids, self.runs, self.duplicate_ids
        );
        for (space, ids) in &self.per_space {
            let (pairs, shared) = self
                .duplicates
                .iter()
                .filter(|d| &d.a.space == space)
                .fold((0, 0), |(n, ids), d| (n + 1, ids + d.shared));
            let _ = writeln!(
                out,
                "  {space}: {ids} IDs, {pairs} overlapping pairs of runs sharing {shared} IDs"
            );
        }
        const SHOWN: usize = 10;
        if self.duplicates.len() > SHOWN {
            let _ = writeln!(
                out,
                "  {} overlapping pairs of runs; the first {SHOWN} by key space and ID:",
                self.duplicates.len()
            );
        }
        for (dup, faults) in self
            .duplicates
            .iter()
            .zip(&self.faults_in_force)
            .take(SHOWN)
        {
            let _ = writeln!(
                out,
                "  DUPLICATE (seed {}): {} IDs from {}: {} and {}; faults in force: {}",
                self.seed,
                dup.shared,
                dup.first_shared,
                dup.a.describe(),
                dup.b.describe(),
                if faults.is_empty() {
                    "none".to_owned()
                } else {
                    faults.join("; ")
                }
            );
        }
        for (kind, count) in &self.faults {
            let recoveries = self.recovery_ms.get(kind).map_or(&[][..], Vec::as_slice);
            let max = recoveries.iter().max().copied().unwrap_or(0);
            let mean = match recoveries.len() {
                0 => 0,
                n => recoveries.iter().sum::<i64>() / n as i64,
            };
            let _ = writeln!(
                out,
                "  fault {kind}: {count} injected; from its end to the hit process's next ID: mean {mean} ms, max {max} ms ({} measured)",
                recoveries.len()
            );
        }
        let _ = writeln!(
            out,
            "  time field vs issue time: largest lead {} ms ({}), largest lag {} ms ({})",
            self.max_lead.0, self.max_lead.1, self.max_lag.0, self.max_lag.1
        );
        if let Some((gap, who)) = &self.tightest_handover {
            let _ = writeln!(
                out,
                "  node IDs changed hands {} times; tightest: {gap} ms between the time fields ({who})",
                self.handovers
            );
        }
        let fenced: Vec<String> = self
            .fenced
            .iter()
            .map(|(p, n)| format!("{p} ×{n}"))
            .collect();
        let _ = write!(
            out,
            "  fenced: {}",
            if fenced.is_empty() {
                "none".to_owned()
            } else {
                fenced.join(", ")
            }
        );
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(space: &str, issuer: &str, first: i64, last: i64) -> Run {
        Run {
            space: space.into(),
            issuer: issuer.into(),
            snowflake: false,
            first,
            last,
            first_ms: 1_000,
            last_ms: 2_000,
        }
    }

    /// Snowflake IDs of node `node` at `ms` after the epoch, sequences `from..=to`.
    fn snowflakes(issuer: &str, ms: i64, node: i64, from: i64, to: i64) -> Run {
        let base = (ms << 22) | (node << 12);
        Run {
            space: "snowflake@postgres".into(),
            issuer: issuer.into(),
            snowflake: true,
            first: base | from,
            last: base | to,
            first_ms: ms + TWITTER_EPOCH_MS,
            last_ms: ms + TWITTER_EPOCH_MS,
        }
    }

    #[test]
    fn a_clean_history_has_no_duplicate() {
        let mut runs = Vec::new();
        for ms in 0..1_000 {
            runs.push(snowflakes("a#1", ms, 1, 0, 4095));
            runs.push(snowflakes("b#1", ms, 2, 0, 4095));
        }
        runs.push(run("hilo@redis", "a#1", 1, 100));
        runs.push(run("hilo@redis", "b#1", 101, 200));
        // The same numbers in another key space are no duplicate.
        runs.push(run("hilo@etcd", "c#1", 1, 200));
        let report = check(1, &runs, &[], &[]);
        assert_eq!(report.ids, 2 * 1_000 * 4096 + 400);
        assert_eq!(report.duplicate_ids, 0);
        assert!(report.duplicates.is_empty());
        assert_eq!(report.max_lead.0, 0);
    }

    #[test]
    fn a_planted_duplicate_is_found_with_both_issuers_and_the_faults_in_force() {
        let mut runs = Vec::new();
        for ms in 0..1_000 {
            runs.push(snowflakes("a#1", ms, 1, 0, 4095));
        }
        // After a takeover, b issues on a's node in a millisecond a already used.
        let mut planted = snowflakes("b#2", 500, 1, 10, 19);
        planted.first_ms += 30_000;
        planted.last_ms += 30_000;
        runs.push(planted);
        let fault = Applied {
            kind: FaultKind::ClockStep,
            target: "b".into(),
            hits: vec!["b".into()],
            start_ms: TWITTER_EPOCH_MS + 29_000,
            end_ms: TWITTER_EPOCH_MS + 29_500,
        };
        let report = check(42, &runs, &[fault], &[]);
        assert_eq!(report.duplicate_ids, 10);
        assert_eq!(report.duplicates.len(), 1);
        let dup = &report.duplicates[0];
        assert_eq!(
            (dup.a.issuer.as_str(), dup.b.issuer.as_str()),
            ("a#1", "b#2")
        );
        assert_eq!(dup.shared, 10);
        assert_eq!(report.faults_in_force[0].len(), 1);
        assert_eq!(report.max_lag, (30_000, "b#2".to_owned()));
        let text = report.to_string();
        assert!(text.contains("DUPLICATE (seed 42): 10 IDs"), "{text}");
        assert!(text.contains("node 1"), "{text}");
        assert!(text.contains("clock-step b"), "{text}");
    }

    #[test]
    fn a_duplicate_after_a_restore_names_the_dump_and_the_issuers_it_hit() {
        let mut before = run("hilo@postgres", "po1#1", 101, 200);
        (before.first_ms, before.last_ms) = (10_000, 10_500);
        let mut after = run("hilo@postgres", "po1#2", 150, 160);
        (after.first_ms, after.last_ms) = (14_000, 14_100);
        let restore = Applied {
            kind: FaultKind::DbRestore,
            target: "db".into(),
            hits: vec!["po1".into(), "po2".into()],
            start_ms: 9_000,
            end_ms: 13_000,
        };
        let elsewhere = Applied {
            kind: FaultKind::Kill,
            target: "re1".into(),
            hits: vec!["re1".into()],
            start_ms: 11_000,
            end_ms: 12_000,
        };
        let report = check(5, &[before, after], &[restore, elsewhere], &[]);
        assert_eq!(report.duplicate_ids, 11);
        assert_eq!(
            report.faults_in_force[0],
            [
                "db-restore db dump at 9000, restored by 13000 ms, hit po1",
                "kill-9 re1 at 11000..12000 ms",
            ]
        );
    }

    #[test]
    fn one_id_shared_by_adjacent_runs_and_nested_runs_are_counted_exactly() {
        let runs = [
            run("h", "a#1", 1, 100),
            run("h", "b#1", 100, 100),
            run("h", "c#1", 20, 30),
            run("h", "d#1", 101, 150),
        ];
        let (pairs, repeated) = duplicates(&runs);
        assert_eq!(repeated, 12);
        assert_eq!(pairs.len(), 2);
        // A duplicate within one process counts too.
        let (_, repeated) = duplicates(&[run("h", "a#1", 1, 5), run("h", "a#1", 5, 9)]);
        assert_eq!(repeated, 1);
    }

    #[test]
    fn recovery_is_measured_from_a_fault_end_to_the_next_run_of_the_process_hit() {
        let mut a = run("h", "a#2", 1, 1);
        a.first_ms = 5_300;
        let fault = Applied {
            kind: FaultKind::Kill,
            target: "a".into(),
            hits: vec!["a".into()],
            start_ms: 4_000,
            end_ms: 5_000,
        };
        let report = check(
            1,
            &[run("h", "a#1", 2, 2), a],
            &[fault],
            &[("a#1".into(), 4_100)],
        );
        assert_eq!(report.recovery_ms["kill-9"], vec![300]);
        assert_eq!(report.fenced["a#1"], 1);
    }

    #[test]
    fn handovers_of_a_node_are_counted_with_the_tightest_gap() {
        let runs = [
            snowflakes("a#1", 10, 1, 0, 9),
            snowflakes("a#1", 11, 1, 0, 9),
            snowflakes("b#1", 15, 1, 0, 9),
            snowflakes("a#2", 40, 1, 0, 9),
            snowflakes("c#1", 11, 2, 0, 9),
        ];
        let report = check(1, &runs, &[], &[]);
        assert_eq!(report.handovers, 2);
        assert_eq!(
            report.tightest_handover,
            Some((4, "snowflake@postgres node 1: a#1 then b#1".to_owned()))
        );
    }

    #[test]
    fn rows_no_process_recorded_are_found() {
        let recorded = [run("d", "dbgen#1", 10, 20), run("d", "dbgen#1", 30, 40)];
        let rows: Vec<i64> = (5..=45).collect();
        assert_eq!(
            uncovered(&rows, &recorded),
            vec![(5, 9), (21, 29), (41, 45)]
        );
    }
}
