//! The nemesis's schedule: a seeded, endless sequence of faults over the fleet. The same seed
//! and fleet give the same schedule; the first [`FaultKind::ALL`]`.len()` faults of every
//! schedule are one of each kind (in a seeded order), so any seed injects every kind.

use std::fmt;

/// A fault the nemesis can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// `kill -9` of a process (`docker kill --signal KILL`), restarted after the hold.
    Kill,
    /// `SIGSTOP` of a process for longer than the lease's TTL, then `SIGCONT`.
    Pause,
    /// A process cut off the network (`docker network disconnect`) for the hold.
    CutProcess,
    /// A store cut off the network for the hold.
    CutStore,
    /// Redis killed and started again without persistence: it forgets every lease and counter.
    StoreRestart,
    /// A process killed and started again with its wall clock stepped by ± up to 60 s.
    ClockStep,
    /// A process issues Snowflake IDs flat out, past the layout's cap, for 250 ms.
    Burst,
    /// An operator empties a database's lease table without the documented procedure:
    /// `TRUNCATE`, or `DROP TABLE` ([`Fault::drop_table`]), under its running holders (the
    /// applications and the database generator). What must hold: no ID twice, the holders
    /// fenced or renewing on a new claim, the first claim of each node ID after it bounded as
    /// for a store that forgot (its takeover bound).
    LeaseTableLost,
    /// PostgreSQL or MariaDB restarted (`docker restart`: the server shut down and started
    /// again on the data it kept; every connection breaks). What must hold: no ID twice; the
    /// holders renew or fence and claim again; the database generator keeps working or is
    /// installed again after its `IDG` error.
    DbRestart,
    /// PostgreSQL or MariaDB restored from a dump taken [`Fault::hold_ms`] earlier (the whole
    /// database: lease table, hi-lo counter, the generator's state and sequences, the rows), by
    /// the README's procedure: the applications on that database stopped first, then the
    /// restore, then the applications started again (and the generator installed again).
    DbRestore,
    /// The operator's routine: `idgen leases list` of a database's lease table, `idgen leases
    /// free NODE --holder H` of every expired lease, and (when [`Fault::force`]) `--force` of
    /// one live lease, as idgen-cli's README documents.
    Operator,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [FaultKind; 11] = [
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::CutProcess,
        FaultKind::CutStore,
        FaultKind::StoreRestart,
        FaultKind::ClockStep,
        FaultKind::Burst,
        FaultKind::LeaseTableLost,
        FaultKind::DbRestart,
        FaultKind::DbRestore,
        FaultKind::Operator,
    ];

    /// Its name in reports.
    ///
    /// ```
    /// assert_eq!(idgen_nemesis::schedule::FaultKind::Pause.name(), "pause");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Kill => "kill-9",
            FaultKind::Pause => "pause",
            FaultKind::CutProcess => "cut-process",
            FaultKind::CutStore => "cut-store",
            FaultKind::StoreRestart => "store-restart",
            FaultKind::ClockStep => "clock-step",
            FaultKind::Burst => "burst",
            FaultKind::LeaseTableLost => "lease-table-lost",
            FaultKind::DbRestart => "db-restart",
            FaultKind::DbRestore => "db-restore",
            FaultKind::Operator => "operator",
        }
    }

    /// Whether it targets a store (else a process).
    fn on_store(self) -> bool {
        matches!(
            self,
            FaultKind::CutStore
                | FaultKind::StoreRestart
                | FaultKind::LeaseTableLost
                | FaultKind::DbRestart
                | FaultKind::DbRestore
                | FaultKind::Operator
        )
    }
}

/// One fault of a schedule: `kind` on `target` (a process or store name) at `at_ms` after the
/// schedule's start, for `hold_ms`; `step_ms` is a clock step's size (0 otherwise), `drop_table`
/// whether a lost lease table is dropped (else truncated), `force` whether the operator also
/// frees a live lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Milliseconds from the schedule's start.
    pub at_ms: u64,
    /// What.
    pub kind: FaultKind,
    /// On which process or store.
    pub target: String,
    /// How long it lasts (a kill: until the restart).
    pub hold_ms: u64,
    /// A clock step's size in ms (negative: back).
    pub step_ms: i64,
    /// [`FaultKind::LeaseTableLost`]: `DROP TABLE` (else `TRUNCATE`).
    pub drop_table: bool,
    /// [`FaultKind::Operator`]: also frees one live lease (`idgen leases free --force`), the
    /// one at index `at_ms` modulo the live leases listed.
    pub force: bool,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "+{}ms {} {} for {}ms",
            self.at_ms,
            self.kind.name(),
            self.target,
            self.hold_ms
        )?;
        if self.kind == FaultKind::ClockStep {
            write!(f, " step {:+}ms", self.step_ms)?;
        }
        if self.kind == FaultKind::LeaseTableLost {
            f.write_str(if self.drop_table {
                " (DROP TABLE)"
            } else {
                " (TRUNCATE)"
            })?;
        }
        if self.kind == FaultKind::DbRestore {
            write!(
                f,
                " (restored from a dump taken {}ms earlier)",
                self.hold_ms
            )?;
        }
        if self.kind == FaultKind::Operator && self.force {
            f.write_str(" (and a live lease, --force)")?;
        }
        Ok(())
    }
}

/// splitmix64: small, and the same numbers on every platform and version (the seed must replay).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }
}

/// What the schedule may target.
#[derive(Debug, Clone)]
pub struct Targets {
    /// Application processes (every fault kind on processes).
    pub apps: Vec<String>,
    /// Other processes (the database generator's): kill, pause and cut only.
    pub others: Vec<String>,
    /// Stores that can be cut off.
    pub stores: Vec<String>,
    /// Stores that can be restarted without persistence.
    pub restartable: Vec<String>,
    /// Stores whose lease table an operator can lose, and which can be restarted, restored
    /// and operated on (the databases).
    pub lease_tables: Vec<String>,
    /// The lease TTL in ms (a pause lasts longer).
    pub ttl_ms: u64,
}

/// The endless schedule of `seed` over `targets`: iterate it.
///
/// ```
/// use idgen_nemesis::schedule::{Schedule, Targets, FaultKind};
///
/// let targets = Targets {
///     apps: vec!["a".into(), "b".into()],
///     others: vec![],
///     stores: vec!["db".into()],
///     restartable: vec!["redis".into()],
///     lease_tables: vec!["db".into()],
///     ttl_ms: 3000,
/// };
/// let one: Vec<_> = Schedule::new(7, targets.clone()).take(20).collect();
/// let again: Vec<_> = Schedule::new(7, targets).take(20).collect();
/// assert_eq!(one, again);
/// let mut kinds: Vec<_> = one[..FaultKind::ALL.len()].iter().map(|f| f.kind).collect();
/// kinds.sort();
/// assert_eq!(kinds, FaultKind::ALL);
/// ```
#[derive(Debug, Clone)]
pub struct Schedule {
    rng: Rng,
    targets: Targets,
    /// The first kinds, one of each, in a seeded order.
    first: Vec<FaultKind>,
    at_ms: u64,
    /// Per target, when it is free again.
    busy: Vec<(String, u64)>,
}

impl Schedule {
    /// The schedule of `seed`.
    pub fn new(seed: u64, targets: Targets) -> Schedule {
        let mut rng = Rng::new(seed);
        let mut first = FaultKind::ALL.to_vec();
        for i in (1..first.len()).rev() {
            let j = rng.between(0, i as u64) as usize;
            first.swap(i, j);
        }
        first.reverse();
        Schedule {
            rng,
            targets,
            first,
            at_ms: 0,
            busy: Vec::new(),
        }
    }

    fn free(&self, name: &str, at: u64) -> bool {
        self.busy.iter().all(|(n, until)| n != name || *until <= at)
    }

    fn pick(&mut self, names: &[String], at: u64) -> Option<String> {
        let free: Vec<&String> = names.iter().filter(|n| self.free(n, at)).collect();
        if free.is_empty() {
            return None;
        }
        let i = self.rng.between(0, free.len() as u64 - 1) as usize;
        Some(free[i].clone())
    }
}

impl Iterator for Schedule {
    type Item = Fault;

    fn next(&mut self) -> Option<Fault> {
        loop {
            self.at_ms += self.rng.between(1_500, 5_000);
            let at = self.at_ms;
            let kind = match self.first.pop() {
                Some(kind) => kind,
                None => {
                    FaultKind::ALL[self.rng.between(0, FaultKind::ALL.len() as u64 - 1) as usize]
                }
            };
            let ttl = self.targets.ttl_ms;
            let (hold_ms, step_ms) = match kind {
                FaultKind::Kill => (self.rng.between(500, 4_000), 0),
                FaultKind::Pause => (self.rng.between(ttl + 500, ttl + 3_000), 0),
                FaultKind::CutProcess => (self.rng.between(1_000, 2 * ttl), 0),
                FaultKind::CutStore => (self.rng.between(1_000, 2 * ttl), 0),
                FaultKind::StoreRestart => (0, 0),
                FaultKind::ClockStep => {
                    let by = self.rng.between(1_000, 60_000) as i64;
                    let back = self.rng.next_u64().is_multiple_of(2);
                    (self.rng.between(200, 2_000), if back { -by } else { by })
                }
                FaultKind::Burst => (crate::node::BURST.as_millis() as u64, 0),
                FaultKind::LeaseTableLost | FaultKind::DbRestart | FaultKind::Operator => (0, 0),
                // The dump's age: from one TTL to two.
                FaultKind::DbRestore => (self.rng.between(ttl, 2 * ttl), 0),
            };
            let drop_table =
                kind == FaultKind::LeaseTableLost && self.rng.next_u64().is_multiple_of(2);
            // Rarely: one operator's routine in four also frees a live lease.
            let force = kind == FaultKind::Operator && self.rng.next_u64().is_multiple_of(4);
            let names = match kind {
                FaultKind::StoreRestart => self.targets.restartable.clone(),
                FaultKind::LeaseTableLost
                | FaultKind::DbRestart
                | FaultKind::DbRestore
                | FaultKind::Operator => self.targets.lease_tables.clone(),
                FaultKind::CutStore => self.targets.stores.clone(),
                FaultKind::Kill | FaultKind::Pause | FaultKind::CutProcess => {
                    let mut all = self.targets.apps.clone();
                    all.extend(self.targets.others.iter().cloned());
                    all
                }
                FaultKind::ClockStep | FaultKind::Burst => self.targets.apps.clone(),
            };
            let Some(target) = self.pick(&names, at) else {
                if kind.on_store() && names.is_empty() {
                    // Nothing of this kind can ever be injected here.
                    continue;
                }
                self.first.push(kind);
                continue;
            };
            // A restart takes seconds on a loaded machine: keep it clear of other faults on it.
            let busy_for = hold_ms.max(if kind.on_store() { 6_000 } else { 1_000 }) + 1_000;
            self.busy.retain(|(_, until)| *until > at);
            self.busy.push((target.clone(), at + busy_for));
            if kind == FaultKind::DbRestore {
                // One restore at a time, and no other database's fault meanwhile: each
                // database holds the rows the other's hi-lo floor is read from (fleet.rs), and a
                // floor restored with its counter would be no floor.
                for other in &self.targets.lease_tables {
                    self.busy.push((other.clone(), at + busy_for));
                }
            }
            return Some(Fault {
                at_ms: at,
                kind,
                target,
                hold_ms,
                step_ms,
                drop_table,
                force,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets() -> Targets {
        Targets {
            apps: ["po1", "po2", "ma1", "ma2", "re1"]
                .map(String::from)
                .to_vec(),
            others: vec!["dbgen".into()],
            stores: ["db", "mariadb", "redis"].map(String::from).to_vec(),
            restartable: vec!["redis".into()],
            lease_tables: vec!["db".into(), "mariadb".into()],
            ttl_ms: 3_000,
        }
    }

    #[test]
    fn every_seed_begins_with_one_fault_of_each_kind_and_replays() {
        for seed in [1, 2, 5, 7, 40, 1_000_003] {
            let faults: Vec<Fault> = Schedule::new(seed, targets()).take(200).collect();
            let again: Vec<Fault> = Schedule::new(seed, targets()).take(200).collect();
            assert_eq!(faults, again, "seed {seed}");
            let mut first: Vec<FaultKind> = faults[..FaultKind::ALL.len()]
                .iter()
                .map(|f| f.kind)
                .collect();
            first.sort();
            assert_eq!(first, FaultKind::ALL, "seed {seed}");
        }
    }

    #[test]
    fn the_database_faults_target_the_databases_with_their_parameters() {
        let faults: Vec<Fault> = Schedule::new(3, targets()).take(2_000).collect();
        let mut forced = 0;
        let mut operated = 0;
        for fault in &faults {
            match fault.kind {
                FaultKind::DbRestart | FaultKind::DbRestore | FaultKind::Operator => {
                    assert!(
                        ["db", "mariadb"].contains(&fault.target.as_str()),
                        "{fault}"
                    )
                }
                _ => {}
            }
            if fault.kind == FaultKind::DbRestore {
                assert!((3_000..=6_000).contains(&fault.hold_ms), "{fault}");
                assert!(fault.to_string().contains("dump taken"), "{fault}");
            }
            if fault.kind == FaultKind::Operator {
                operated += 1;
                forced += usize::from(fault.force);
            }
            assert!(!fault.force || fault.kind == FaultKind::Operator, "{fault}");
        }
        // Rarely, not never: about one in four.
        assert!(operated > 50, "{operated}");
        assert!(
            forced > 0 && forced * 2 < operated,
            "{forced} of {operated}"
        );
    }

    #[test]
    fn no_fault_of_either_database_begins_while_a_restore_is_in_force() {
        let faults: Vec<Fault> = Schedule::new(11, targets()).take(2_000).collect();
        let mut restores = 0;
        for restore in faults.iter().filter(|f| f.kind == FaultKind::DbRestore) {
            restores += 1;
            let until = restore.at_ms + restore.hold_ms + 1_000;
            for other in &faults {
                let database = ["db", "mariadb"].contains(&other.target.as_str());
                if database && other.at_ms > restore.at_ms && other.at_ms < until {
                    panic!("{other} begins while {restore} is in force");
                }
            }
        }
        assert!(restores > 50, "{restores}");
    }
}
