//! The fleet and the nemesis that runs a schedule against it: PostgreSQL, MariaDB, Redis and
//! etcd in containers (`idgen_faults::cluster`), two application processes leasing from each,
//! and a database-side generator's process on each database ([`DB_GENERATORS`]); then every
//! process's record read back, the databases' rows with it, and all of it handed to the
//! [`checker`](mod@crate::checker).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use idgen_faults::cluster::{Cluster, docker, now_ms};
use idgen_faults::node::Store;

use crate::checker::{self, Applied, Report, Run};
use crate::node::{CLOCK_STEP_FILE, DB_ROWS};
use crate::record::{Event, Kind};
use crate::schedule::{Fault, FaultKind, Schedule, Targets};

/// Where a restore's dump is kept in the database's container (`.dump` or `.sql`).
const DUMP: &str = "/tmp/nemesis-restore";

/// The lease TTL of every process (ms).
pub const TTL_MS: u64 = 3_000;

/// The database-side generators' processes and the database each one's `idgen_next_id()` is
/// installed in (on a node ID of that database's lease table, beside its applications).
pub const DB_GENERATORS: [(&str, Store); 2] =
    [("dbgen", Store::Postgres), ("dbgen-ma", Store::MariaDb)];

/// How the fleet issues and how long the nemesis runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The schedule's seed.
    pub seed: u64,
    /// Stop injecting after this long…
    pub duration: Duration,
    /// …or once this many IDs were recorded (counted every 20 s; `None`: by time only).
    pub ids: Option<u64>,
    /// IDs of each kind per round and process.
    pub batch: u64,
    /// The pause between rounds (ms).
    pub interval_ms: u64,
    /// The Docker network's name part.
    pub name: String,
    /// Hi-lo above a floor read from the rows its IDs go into (the documented protection
    /// against a counter that forgets: Redis restarted, a database restored). `false` only to
    /// see the checker catch what follows.
    pub hilo_floor: bool,
    /// The `idgen` command (idgen-cli with the feature `leases`) the operator runs.
    pub idgen: PathBuf,
}

/// The `idgen` command beside `binary` (cargo puts every binary of the workspace in one
/// directory; `cargo build -p idgen-cli --features leases` builds it).
///
/// ```
/// let idgen = idgen_nemesis::fleet::idgen_beside(std::path::Path::new("/t/debug/idgen-nemesis-node"));
/// assert_eq!(idgen, std::path::Path::new("/t/debug/idgen"));
/// ```
pub fn idgen_beside(binary: &Path) -> PathBuf {
    binary.with_file_name("idgen")
}

/// The table in another database where a process leasing from `store` puts its hi-lo IDs, the
/// rows its floor is read from: PostgreSQL's processes in MariaDB, MariaDB's and Redis's in
/// PostgreSQL (none on etcd, which never forgets in the soak). In *another* database, so that a
/// restore of the counter's database leaves the floor above what was handed out: the README
/// documents no floor for a counter restored together with the table its floor reads.
fn rows_of(store: Store) -> Option<(Store, &'static str)> {
    match store {
        Store::Postgres => Some((Store::MariaDb, "hilo_rows_postgres")),
        Store::MariaDb => Some((Store::Postgres, "hilo_rows_mariadb")),
        Store::Redis => Some((Store::Postgres, "hilo_rows_redis")),
        Store::Etcd => None,
    }
}

/// One process of the fleet.
#[derive(Debug, Clone)]
struct Process {
    name: String,
    store: Store,
    container: String,
}

/// The store's network alias.
fn alias(store: Store) -> &'static str {
    match store {
        Store::Postgres => "db",
        Store::Redis => "redis",
        Store::MariaDb => "mariadb",
        Store::Etcd => "etcd",
    }
}

fn say(text: &str) {
    eprintln!("nemesis: {text}");
}

/// Reads container `id`'s log line by line (it may be large), calling `each` per line.
fn read_log(id: &str, mut each: impl FnMut(&str)) -> Result<(), String> {
    let mut child = Command::new("docker")
        .args(["logs", id])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("docker logs {id}: {e}"))?;
    let out = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(out).lines() {
        let line = line.map_err(|e| e.to_string())?;
        each(&line);
    }
    child.wait().map_err(|e| e.to_string())?;
    Ok(())
}

/// The names of the application processes leasing from `store`.
fn app_names(store: Store) -> [String; 2] {
    [1, 2].map(|i| format!("{}{i}", &store.name()[..2]))
}

/// What the schedule may target in the fleet [`Fleet::start`] starts: its application
/// processes, the database generators' processes, its four stores, Redis restarted.
///
/// ```
/// let targets = idgen_nemesis::fleet::targets();
/// assert_eq!(targets.apps.len(), 8);
/// assert!(targets.apps.contains(&"ma2".to_owned()));
/// assert_eq!(targets.others, ["dbgen", "dbgen-ma"]);
/// ```
pub fn targets() -> Targets {
    Targets {
        apps: Store::ALL.into_iter().flat_map(app_names).collect(),
        others: DB_GENERATORS
            .iter()
            .map(|(name, _)| (*name).to_owned())
            .collect(),
        stores: Store::ALL.iter().map(|s| alias(*s).to_owned()).collect(),
        restartable: vec!["redis".into()],
        lease_tables: vec!["db".into(), "mariadb".into()],
        ttl_ms: TTL_MS,
    }
}

/// `kill -9` of container `id`'s process, returning once the container has stopped
/// (`docker kill` returns before: a `docker start` right after would find it still running,
/// do nothing, and leave it dead).
fn kill_9(id: &str) -> Result<(), String> {
    docker(&["kill", "--signal", "KILL", id])?;
    docker(&["wait", id]).map(drop)
}

/// IDs recorded so far in `containers`' logs.
fn count(containers: &[String]) -> Result<u64, String> {
    let mut ids = 0;
    for id in containers {
        read_log(id, |line| {
            if let Some((_, Event::Run { first, last, .. })) = Event::parse(line) {
                ids += (last - first + 1) as u64;
            }
        })?;
    }
    Ok(ids)
}

/// Counts the IDs `containers` recorded every 20 s on a thread of its own (reading the logs
/// takes seconds: the schedule must not wait for it); the count is in the returned cell until
/// the flag is set.
fn counting(containers: Vec<String>) -> (Arc<AtomicU64>, Arc<AtomicBool>) {
    let ids = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (cell, flag) = (ids.clone(), stop.clone());
    let started = Instant::now();
    std::thread::spawn(move || {
        while !flag.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_secs(20));
            if let Ok(n) = count(&containers) {
                cell.store(n, Ordering::SeqCst);
                say(&format!("{n} IDs recorded after {:?}", started.elapsed()));
            }
        }
    });
    (ids, stop)
}

/// The fleet: the cluster and its processes.
pub struct Fleet {
    cluster: Cluster,
    processes: Vec<Process>,
    /// The operator's container, where `idgen` runs.
    operator: String,
}

impl Fleet {
    /// Starts the stores and the processes (`binary`: `idgen-nemesis-node`) and waits until
    /// every process issues.
    ///
    /// ```no_run
    /// # let options: idgen_nemesis::fleet::Options = todo!();
    /// let fleet = idgen_nemesis::fleet::Fleet::start(std::path::Path::new("idgen-nemesis-node"), &options).unwrap();
    /// ```
    pub fn start(binary: &Path, options: &Options) -> Result<Fleet, String> {
        let started = Instant::now();
        let mut cluster = Cluster::start(&options.name, binary)?;
        cluster.start_redis()?;
        cluster.start_etcd()?;
        // On disk: a restart keeps its data.
        cluster.start_mariadb_on_disk()?;
        say(&format!("stores up in {:?}", started.elapsed()));
        let batch = options.batch.to_string();
        let interval = options.interval_ms.to_string();
        let ttl = TTL_MS.to_string();
        let mut processes = Vec::new();
        for store in Store::ALL {
            let capacity = match store {
                Store::Postgres | Store::MariaDb => "4",
                _ => "3",
            };
            for name in app_names(store) {
                let mut env = vec![
                    ("IDGEN_FAULT_STORE", store.name()),
                    // One node ID more than the store's processes (on a database, the database
                    // generator's among them): a restarted process takes the one another left
                    // behind, so node IDs change hands all the time, and a lease left behind
                    // stays expired until then (for the operator to free).
                    ("IDGEN_FAULT_CAPACITY", capacity),
                    ("IDGEN_FAULT_REACQUIRE", "1"),
                    ("IDGEN_FAULT_TTL_MS", ttl.as_str()),
                    ("IDGEN_FAULT_INTERVAL_MS", interval.as_str()),
                    ("IDGEN_NEMESIS_BATCH", batch.as_str()),
                ];
                let rows = rows_of(store)
                    .filter(|_| options.hilo_floor)
                    .map(|(db, table)| format!("{}:{table}", db.name()));
                if let Some(rows) = &rows {
                    // A counter can forget (Redis restarted, a database restored): the
                    // documented protection is a floor read from the data (the rows its IDs go
                    // into) plus what running generators hold in memory: 8 processes × 2
                    // blocks × 100.
                    env.push(("IDGEN_NEMESIS_HILO_ROWS", rows.as_str()));
                    env.push(("IDGEN_FAULT_HILO_FLOOR_MARGIN", "1600"));
                }
                let container = cluster.start_node(&name, &env)?;
                processes.push(Process {
                    name,
                    store,
                    container,
                });
            }
        }
        for (name, store) in DB_GENERATORS {
            let container = cluster.start_node(
                name,
                &[
                    ("IDGEN_NEMESIS_ROLE", "dbgen"),
                    ("IDGEN_FAULT_STORE", store.name()),
                    ("IDGEN_FAULT_TTL_MS", &ttl),
                    ("IDGEN_FAULT_INTERVAL_MS", &interval),
                    ("IDGEN_NEMESIS_BATCH", "100"),
                ],
            )?;
            processes.push(Process {
                name: name.into(),
                store,
                container,
            });
        }
        let operator = cluster.start_node("operator", &[("IDGEN_NEMESIS_ROLE", "operator")])?;
        if !options.idgen.exists() {
            return Err(format!(
                "no idgen command at {} for the operator: cargo build -p idgen-cli --features leases",
                options.idgen.display()
            ));
        }
        let idgen = options.idgen.to_string_lossy();
        docker(&["cp", &idgen, &format!("{operator}:/usr/local/bin/idgen")])?;
        docker(&["exec", &operator, "idgen", "--version"])?;
        let fleet = Fleet {
            cluster,
            processes,
            operator,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        for process in &fleet.processes {
            loop {
                let mut kinds = (false, false);
                read_log(&process.container, |line| {
                    if let Some((_, Event::Run { kind, .. })) = Event::parse(line) {
                        match kind {
                            Kind::HiLo => kinds.1 = true,
                            _ => kinds.0 = true,
                        }
                    }
                })?;
                let dbgen = DB_GENERATORS.iter().any(|(name, _)| *name == process.name);
                if kinds.0 && (kinds.1 || dbgen) {
                    break;
                }
                if Instant::now() > deadline {
                    let tail =
                        docker(&["logs", "--tail", "5", &process.container]).unwrap_or_default();
                    return Err(format!("{} does not issue: {tail}", process.name));
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        say(&format!("fleet issuing after {:?}", started.elapsed()));
        Ok(fleet)
    }

    fn process(&self, name: &str) -> Result<&Process, String> {
        self.processes
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("no process {name}"))
    }

    /// The processes a fault on `target` hits: the process, or those leasing from the store
    /// (and, where a fault breaks a database's connections, the processes whose hi-lo rows go
    /// there).
    fn hits(&self, fault: &Fault) -> Vec<String> {
        let with_rows = match fault.kind {
            FaultKind::StoreRestart | FaultKind::LeaseTableLost | FaultKind::Operator => false,
            FaultKind::CutStore | FaultKind::DbRestart | FaultKind::DbRestore => true,
            _ => return vec![fault.target.clone()],
        };
        let leasing = |p: &Process| alias(p.store) == fault.target;
        let storing =
            |p: &Process| rows_of(p.store).is_some_and(|(db, _)| alias(db) == fault.target);
        self.processes
            .iter()
            .filter(|p| leasing(p) || (with_rows && storing(p)))
            .map(|p| p.name.clone())
            .collect()
    }

    /// Applies the start of `fault`; returns when it is in force.
    fn begin(&self, fault: &Fault) -> Result<(), String> {
        match fault.kind {
            FaultKind::Kill => kill_9(&self.process(&fault.target)?.container),
            FaultKind::ClockStep => {
                let id = &self.process(&fault.target)?.container;
                let write = format!("echo {} >{CLOCK_STEP_FILE}", fault.step_ms);
                docker(&["exec", id, "sh", "-c", &write])?;
                kill_9(id)
            }
            FaultKind::Pause => docker(&[
                "kill",
                "--signal",
                "STOP",
                &self.process(&fault.target)?.container,
            ])
            .map(drop),
            FaultKind::CutProcess => self
                .cluster
                .disconnect(&self.process(&fault.target)?.container),
            FaultKind::CutStore => self.cluster.connect_service(&fault.target, false),
            FaultKind::StoreRestart => self.cluster.restart_redis(),
            FaultKind::LeaseTableLost => self.lose_lease_table(&fault.target, fault.drop_table),
            FaultKind::DbRestart => self.cluster.restart_service(&fault.target),
            FaultKind::DbRestore => self.dump(&fault.target),
            FaultKind::Operator => self.operate(fault),
            FaultKind::Burst => docker(&[
                "kill",
                "--signal",
                "USR2",
                &self.process(&fault.target)?.container,
            ])
            .map(drop),
        }
    }

    /// Applies the end of `fault`.
    fn end(&self, fault: &Fault) -> Result<(), String> {
        match fault.kind {
            FaultKind::Kill | FaultKind::ClockStep => {
                docker(&["start", &self.process(&fault.target)?.container]).map(drop)
            }
            FaultKind::Pause => docker(&[
                "kill",
                "--signal",
                "CONT",
                &self.process(&fault.target)?.container,
            ])
            .map(drop),
            FaultKind::CutProcess => self
                .cluster
                .connect(&self.process(&fault.target)?.container),
            FaultKind::CutStore => self.cluster.connect_service(&fault.target, true),
            FaultKind::DbRestore => self.restore(&fault.target),
            FaultKind::StoreRestart
            | FaultKind::Burst
            | FaultKind::LeaseTableLost
            | FaultKind::DbRestart
            | FaultKind::Operator => Ok(()),
        }
    }

    /// An operator's `TRUNCATE` or `DROP TABLE` of the lease table in the database under
    /// `alias`, without the documented procedure (`idgen leases free` of each holder first, the
    /// database generator uninstalled), through the database's own client.
    fn lose_lease_table(&self, alias: &str, drop_table: bool) -> Result<(), String> {
        let table = idgen_sqlx::lease::DEFAULT_TABLE;
        let sql = match drop_table {
            true => format!("DROP TABLE {table}"),
            false => format!("TRUNCATE TABLE {table}"),
        };
        let db = self
            .cluster
            .service(alias)
            .ok_or_else(|| format!("no store {alias}"))?;
        let database = idgen_faults::cluster::DATABASE;
        match alias {
            "db" => docker(&[
                "exec",
                "--user",
                "postgres",
                db,
                "psql",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                database,
                "-c",
                &sql,
            ]),
            _ => docker(&["exec", db, "mariadb", "-uroot", database, "-e", &sql]),
        }
        .map(drop)
    }

    /// Runs the shell `script` in the container of the database under `alias` (`db`: as user
    /// `postgres`).
    fn db_shell(&self, alias: &str, script: &str) -> Result<String, String> {
        let id = self
            .cluster
            .service(alias)
            .ok_or_else(|| format!("no store {alias}"))?;
        match alias {
            "db" => docker(&["exec", "--user", "postgres", id, "sh", "-c", script]),
            _ => docker(&["exec", id, "sh", "-c", script]),
        }
    }

    /// The backup a restore starts from: the whole database, as the database's own dump tool
    /// takes it (`pg_dump`, `mariadb-dump --single-transaction` with the routines, triggers and
    /// events: the lease table, the hi-lo counter, the generator's function, sequences, state
    /// and triggers, the rows), into a file in the database's container.
    fn dump(&self, alias: &str) -> Result<(), String> {
        let database = idgen_faults::cluster::DATABASE;
        let script = match alias {
            "db" => format!("pg_dump --format=custom --file={DUMP}.dump {database}"),
            _ => format!(
                "mariadb-dump -uroot --single-transaction --routines --triggers --events {database} >{DUMP}.sql"
            ),
        };
        self.db_shell(alias, &script).map(drop)
    }

    /// The restore of the dump [`dump`](Self::dump) took, by the README's procedure
    /// (idgen-sqlx's "What the database does not guarantee": "Stop the application … before
    /// restoring a lease table from a backup"): every process leasing from that database (its
    /// applications and its database generator's) stopped, the database dropped, created and
    /// loaded from the dump, the processes started again (the generator's installs itself
    /// again, idempotently, on the node ID its restored state names). The processes whose hi-lo
    /// rows the database holds are not stopped: their counters live elsewhere.
    fn restore(&self, alias: &str) -> Result<(), String> {
        let stopped: Vec<&Process> = self
            .processes
            .iter()
            .filter(|p| self::alias(p.store) == alias)
            .collect();
        for process in &stopped {
            // One another fault killed is stopped already (`docker kill` refuses it).
            let _ = docker(&["kill", "--signal", "KILL", &process.container]);
            docker(&["wait", &process.container])?;
        }
        let database = idgen_faults::cluster::DATABASE;
        let script = match alias {
            "db" => format!(
                "psql -v ON_ERROR_STOP=1 -qAt -d postgres -c 'DROP DATABASE {database} WITH (FORCE)' \
                 -c 'CREATE DATABASE {database}' && \
                 pg_restore --exit-on-error --single-transaction --dbname={database} {DUMP}.dump"
            ),
            _ => format!(
                "mariadb -uroot -e 'DROP DATABASE {database}; CREATE DATABASE {database}' && \
                 mariadb -uroot {database} <{DUMP}.sql"
            ),
        };
        let restored = self.db_shell(alias, &script).map(drop);
        for process in &stopped {
            docker(&["start", &process.container])?;
        }
        restored
    }

    /// The operator's routine on the lease table of the database under `alias`, with the
    /// `idgen` command and the rules of idgen-cli's README: `idgen leases list`, then
    /// `idgen leases free NODE --holder H` of every expired lease (`--holder`: only if that
    /// holder still holds it), and with [`Fault::force`] `--force` of one live lease (the
    /// database generator's among them: its trigger fences it, and its process installs it
    /// again). A free the CLI refuses (the node ID claimed meanwhile) is reported, not forced.
    fn operate(&self, fault: &Fault) -> Result<(), String> {
        let database = idgen_faults::cluster::DATABASE;
        let url = match fault.target.as_str() {
            "db" => format!("postgres://postgres:postgres@db:5432/{database}"),
            _ => format!("mysql://root@mariadb:3306/{database}"),
        };
        let idgen = |args: &[&str]| {
            let mut argv = vec!["exec", self.operator.as_str(), "idgen", "leases"];
            argv.extend(args);
            argv.extend(["--database-url", url.as_str()]);
            docker(&argv)
        };
        let listed = idgen(&["list", "--json"])?;
        let table: serde_json::Value = serde_json::from_str(&listed)
            .map_err(|e| format!("idgen leases list --json: {e}: {listed}"))?;
        let leases: Vec<(u64, String, bool)> = table["leases"]
            .as_array()
            .ok_or_else(|| format!("idgen leases list --json: no leases: {listed}"))?
            .iter()
            .filter_map(|l| {
                Some((
                    l["node"].as_u64()?,
                    l["holder"].as_str()?.to_owned(),
                    l["live"].as_bool()?,
                ))
            })
            .collect();
        let mut done = Vec::new();
        for (node, holder, _) in leases.iter().filter(|l| !l.2) {
            let node = node.to_string();
            done.push(
                match idgen(&["free", node.as_str(), "--holder", holder.as_str()]) {
                    Ok(_) => format!("freed expired {node} ({holder})"),
                    Err(err) => format!("free of expired {node} refused: {err}"),
                },
            );
        }
        let live: Vec<&(u64, String, bool)> = leases.iter().filter(|l| l.2).collect();
        if fault.force && !live.is_empty() {
            let (node, holder, _) = live[(fault.at_ms % live.len() as u64) as usize];
            let node = node.to_string();
            done.push(
                match idgen(&[
                    "free",
                    node.as_str(),
                    "--holder",
                    holder.as_str(),
                    "--force",
                ]) {
                    Ok(_) => format!("forced live {node} ({holder})"),
                    Err(err) => format!("forced free of live {node} refused: {err}"),
                },
            );
        }
        say(&format!(
            "operator on {}: {} leases listed ({} live); {}",
            fault.target,
            leases.len(),
            live.len(),
            if done.is_empty() {
                "nothing to free".to_owned()
            } else {
                done.join("; ")
            }
        ));
        Ok(())
    }

    /// Ends `fault`, or says why it could not.
    fn end_or_say(&self, fault: &Fault) {
        if let Err(err) = self.end(fault) {
            self.say_failed(fault, &err);
        }
    }

    /// Reports a fault that could not be applied, with the end of its target's log (errors
    /// included) and the container's state (how its process ended: exit code, killed for
    /// memory, when): a process that is not running has exited on its own.
    fn say_failed(&self, fault: &Fault, err: &str) {
        let process = self.process(&fault.target).ok();
        let tail = process.map(|p| {
            Command::new("sh")
                .args(["-c", "docker logs --tail 6 \"$1\" 2>&1", "sh", &p.container])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).replace('\n', " | "))
                .unwrap_or_default()
        });
        let state = process.map(|p| {
            docker(&[
                "inspect",
                "--format",
                "status {{.State.Status}}, exit code {{.State.ExitCode}}, OOM-killed {{.State.OOMKilled}}, started {{.State.StartedAt}}, finished {{.State.FinishedAt}}, restarts {{.RestartCount}} {{.State.Error}}",
                &p.container,
            ])
            .unwrap_or_else(|e| e)
        });
        say(&format!(
            "FAULT NOT APPLIED: {fault}: {err}; container: {}; log ends: {}",
            state.unwrap_or_default(),
            tail.unwrap_or_default()
        ));
    }

    /// Runs the schedule of `options.seed` until its time or ID count is reached, then lets the
    /// fleet settle, stops it and checks everything it recorded.
    ///
    /// ```no_run
    /// # let options: idgen_nemesis::fleet::Options = todo!();
    /// # let fleet: idgen_nemesis::fleet::Fleet = todo!();
    /// let report = fleet.run(&options).unwrap();
    /// assert_eq!(report.duplicate_ids, 0, "{report}");
    /// ```
    pub fn run(self, options: &Options) -> Result<Report, String> {
        say(&format!(
            "seed {} (the same seed replays the same schedule)",
            options.seed
        ));
        let schedule = Schedule::new(options.seed, targets());
        let start = Instant::now();
        let mut applied: Vec<Applied> = Vec::new();
        // Faults begun and not ended yet: (when to end, fault, start ms, index in `applied`).
        let mut open: Vec<(Instant, Fault, usize)> = Vec::new();
        let counted = options
            .ids
            .map(|_| counting(self.processes.iter().map(|p| p.container.clone()).collect()));
        for (n, fault) in schedule.enumerate() {
            // The first faults are one of each kind: all of them begin, however late.
            let first = n < FaultKind::ALL.len();
            let due = start + Duration::from_millis(fault.at_ms);
            // End what is due before this fault begins.
            loop {
                open.sort_by_key(|(at, _, _)| *at);
                match open.first() {
                    Some((at, _, _)) if *at <= due => {
                        let (at, done, i) = open.remove(0);
                        std::thread::sleep(at.saturating_duration_since(Instant::now()));
                        self.end_or_say(&done);
                        applied[i].end_ms = now_ms();
                    }
                    _ => break,
                }
            }
            let over = start.elapsed() >= options.duration && !first;
            if over && open.is_empty() {
                break;
            }
            if over {
                continue;
            }
            if let (Some(target), Some((ids, _))) = (options.ids, &counted)
                && ids.load(Ordering::SeqCst) >= target
            {
                break;
            }
            // The schedule keeps a target clear for its fault's hold and a second, but a fault
            // ends `hold` after its begin *returned*, and a begin (`docker kill` and `docker
            // wait`, `docker exec`) can take many seconds on a loaded machine: a fault still in
            // force on this target ends first, when it is due. (Without this, the next fault
            // met a process still killed or paused, was "not applied", and a pause's end then
            // found its process killed.)
            while let Some(k) = open.iter().position(|(_, f, _)| f.target == fault.target) {
                let (at, done, i) = open.remove(k);
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
                self.end_or_say(&done);
                applied[i].end_ms = now_ms();
            }
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            say(&format!("{fault}"));
            let start_ms = now_ms();
            let begun = self.begin(&fault);
            if fault.kind == FaultKind::DbRestore && begun.is_ok() {
                say(&format!(
                    "dump of {} taken; restored in {} ms",
                    fault.target, fault.hold_ms
                ));
            }
            if let Err(err) = begun {
                // Not fatal: the report says so, and the process's log tells why.
                self.say_failed(&fault, &err);
                continue;
            }
            let now = now_ms();
            applied.push(Applied {
                kind: fault.kind,
                target: fault.target.clone(),
                hits: self.hits(&fault),
                start_ms,
                end_ms: now,
            });
            let ends = Instant::now() + Duration::from_millis(fault.hold_ms);
            open.push((ends, fault, applied.len() - 1));
        }
        for (at, done, i) in std::mem::take(&mut open) {
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            self.end_or_say(&done);
            applied[i].end_ms = now_ms();
        }
        if let Some((_, stop)) = &counted {
            stop.store(true, Ordering::SeqCst);
        }
        // Every process issues again after the last fault (or the report shows it did not).
        std::thread::sleep(Duration::from_millis(2 * TTL_MS + 2_000));
        self.finish(options.seed, &applied)
    }

    /// Stops every process, reads every record and the database's rows, and checks them.
    fn finish(self, seed: u64, applied: &[Applied]) -> Result<Report, String> {
        let ids: Vec<String> = self.processes.iter().map(|p| p.container.clone()).collect();
        let mut kill = vec!["kill", "--signal", "KILL"];
        kill.extend(ids.iter().map(String::as_str));
        let _ = docker(&kill);
        let mut runs: Vec<Run> = Vec::new();
        let mut fenced: Vec<(String, i64)> = Vec::new();
        for process in &self.processes {
            let mut incarnation = 0;
            let mut failed = None;
            let mut errors: Vec<String> = Vec::new();
            let mut error_count = 0;
            read_log(&process.container, |line| {
                let Some((at, event)) = Event::parse(line) else {
                    return;
                };
                let issuer = format!("{}#{incarnation}", process.name);
                match event {
                    Event::Start { clock_step_ms } => {
                        incarnation += 1;
                        if clock_step_ms != 0 {
                            say(&format!(
                                "{}#{incarnation} started with its clock stepped {clock_step_ms:+} ms",
                                process.name
                            ));
                        }
                    }
                    Event::Fenced(_) => fenced.push((issuer, at)),
                    Event::Run {
                        kind,
                        first,
                        last,
                        first_ms,
                    } => {
                        if last < first {
                            failed = Some(format!("{issuer}: a run {first}..{last}"));
                        }
                        let space = match kind {
                            Kind::Snowflake | Kind::Database => {
                                format!("snowflake@{}", process.store.name())
                            }
                            Kind::HiLo => format!("hilo@{}", process.store.name()),
                        };
                        runs.push(Run {
                            space,
                            issuer,
                            snowflake: kind != Kind::HiLo,
                            first,
                            last,
                            first_ms,
                            last_ms: at,
                        });
                    }
                    Event::Error(why) => {
                        error_count += 1;
                        let what: String = why.chars().take(160).collect();
                        if errors.len() < 4 && !errors.contains(&what) {
                            errors.push(what);
                        }
                    }
                    Event::Lease(_) => {}
                }
            })?;
            if error_count > 0 {
                say(&format!(
                    "{}: {error_count} errors reported, among them: {}",
                    process.name,
                    errors.join(" | ")
                ));
            }
            if let Some(why) = failed {
                return Err(why);
            }
        }
        // The database generators' rows that their processes did not record (one died between
        // the commit and the record) are checked too.
        for (name, store) in DB_GENERATORS {
            let prefix = format!("{name}#");
            let recorded: Vec<Run> = runs
                .iter()
                .filter(|r| r.issuer.starts_with(&prefix))
                .cloned()
                .collect();
            let rows = self.rows(store, DB_ROWS)?;
            for (first, last) in checker::uncovered(&rows, &recorded) {
                runs.push(Run {
                    space: format!("snowflake@{}", store.name()),
                    issuer: format!("{name}#rows ({DB_ROWS} in {}, not recorded)", store.name()),
                    snowflake: true,
                    first,
                    last,
                    first_ms: checker::time_ms(first),
                    last_ms: checker::time_ms(last),
                });
            }
            say(&format!(
                "{} rows in {DB_ROWS} in {}",
                rows.len(),
                store.name()
            ));
        }
        Ok(checker::check(seed, &runs, applied, &fenced))
    }

    /// The keys of `table` in `store`'s database (PostgreSQL or MariaDB), sorted (empty if it
    /// does not exist), read by the database's own client.
    fn rows(&self, store: Store, table: &str) -> Result<Vec<i64>, String> {
        let sql = format!("SELECT id FROM {table} ORDER BY id");
        let database = idgen_faults::cluster::DATABASE;
        let args: Vec<&str> = match store {
            Store::Postgres => {
                let db = self.cluster.service("db").ok_or("no PostgreSQL")?;
                vec![
                    "exec", "--user", "postgres", db, "psql", "-qAt", "-d", database, "-c", &sql,
                ]
            }
            Store::MariaDb => {
                let db = self.cluster.service("mariadb").ok_or("no MariaDB")?;
                vec![
                    "exec", db, "mariadb", "-uroot", "-N", "-B", database, "-e", &sql,
                ]
            }
            _ => return Err(format!("no rows table in {}", store.name())),
        };
        let mut rows = Vec::new();
        let mut child = Command::new("docker")
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let out = child.stdout.take().ok_or("no stdout")?;
        for line in BufReader::new(out).lines() {
            if let Ok(id) = line.map_err(|e| e.to_string())?.trim().parse() {
                rows.push(id);
            }
        }
        child.wait().map_err(|e| e.to_string())?;
        Ok(rows)
    }
}
