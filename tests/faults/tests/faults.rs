//! Fault tests across hosts: `idgen-fault-node` instances in containers on a Docker network,
//! PostgreSQL (and Redis, MariaDB or etcd) in other containers. Every ID every instance issued is counted at the
//! end.
//!
//! The store-forgets scenarios (issue 24) print one report line each: the fault's start and the
//! store's return (time 0), per old holder its last ID under its old lease and when it was
//! lost and leased again, per new process when it began to claim, got its lease and issued its
//! first ID (the claim's wait), and the totals.
//!
//! Needs a Docker engine and the local images (`scripts/test-images`); without them each test
//! says why and passes, unless `IDGEN_TESTKIT_ROUTE=containers` (as CI runs) makes that a
//! failure. The tests run one at a time (they time leases of 3 s).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use idgen_faults::Line;
use idgen_faults::cluster::{Cluster, now_ms, unavailable};
use idgen_faults::node::{LAYOUT, Store};

const TTL_MS: i64 = 3000;
const BINARY: &str = env!("CARGO_BIN_EXE_idgen-fault-node");

/// One scenario at a time: they measure time against 3-second leases.
static SERIAL: Mutex<()> = Mutex::new(());

fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// `true` when the test can run; panics when Docker is required but missing.
fn can_run(test: &str) -> bool {
    let Some(why) = unavailable() else {
        return true;
    };
    let required = std::env::var("IDGEN_TESTKIT_ROUTE").is_ok_and(|route| route == "containers");
    assert!(!required, "IDGEN_TESTKIT_ROUTE=containers, but {why}");
    say(&format!("{test}: skipped, {why}"));
    false
}

fn node(lines: &[(i64, Line)]) -> Option<u64> {
    lines.iter().find_map(|(_, line)| match line {
        Line::Lease(node) => Some(*node),
        _ => None,
    })
}

/// The IDs of one kind in `lines` (`Line::Snowflake`, or with `hilo` `Line::HiLo`), each with
/// the time it was printed.
fn ids(lines: &[(i64, Line)], hilo: bool) -> Vec<(i64, i64)> {
    lines
        .iter()
        .filter_map(|(at, line)| match (line, hilo) {
            (Line::Snowflake(id), false) | (Line::HiLo(id), true) => Some((*at, *id)),
            _ => None,
        })
        .collect()
}

fn snowflakes(lines: &[(i64, Line)]) -> Vec<(i64, i64)> {
    ids(lines, false)
}

fn hilos(lines: &[(i64, Line)]) -> Vec<(i64, i64)> {
    ids(lines, true)
}

/// The Unix milliseconds inside a Snowflake ID.
fn id_ms(id: i64) -> i64 {
    let id = idgen_sqlx::SnowflakeId::try_from(id).expect("a valid Snowflake ID");
    LAYOUT.decompose(id).expect("decodable").unix_ms
}

fn issuing(lines: &[(i64, Line)], count: usize) -> bool {
    snowflakes(lines).len() >= count && hilos(lines).len() >= count
}

/// Counts every Snowflake and hi-lo ID of every instance; returns (Snowflake IDs, hi-lo IDs,
/// duplicate Snowflake IDs, duplicate hi-lo IDs).
fn count(all: &HashMap<String, Vec<(i64, Line)>>) -> (usize, usize, usize, usize) {
    let (mut s, mut h) = (HashSet::new(), HashSet::new());
    let (mut s_total, mut h_total) = (0, 0);
    for lines in all.values() {
        for (_, id) in snowflakes(lines) {
            s_total += 1;
            s.insert(id);
        }
        for (_, id) in hilos(lines) {
            h_total += 1;
            h.insert(id);
        }
    }
    (s_total, h_total, s_total - s.len(), h_total - h.len())
}

fn ready(cluster: &Cluster, id: &str) -> Vec<(i64, Line)> {
    cluster
        .wait_until(
            id,
            Duration::from_secs(60),
            "lease and 50 IDs of each kind",
            |l| node(l).is_some() && issuing(l, 50),
        )
        .unwrap()
}

fn short_id(id: &str) -> &str {
    &id[..12.min(id.len())]
}

/// Runs the scenario `scenario` (one at a time; `test` in what it says) once its first two
/// instances, `a` and `b`, both with the environment `env`, hold a lease and issue (every node ID
/// is then held: capacity 2): `body` gets the cluster, `a`, `b` and `a`'s node ID. Does nothing
/// when the test cannot run.
fn with_two_issuing(
    test: &str,
    scenario: &str,
    env: &[(&str, &str)],
    body: impl FnOnce(Cluster, String, String, u64),
) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run(test) {
        return;
    }
    let mut cluster = Cluster::start(scenario, Path::new(BINARY)).unwrap();
    let a = cluster.start_node("a", env).unwrap();
    let b = cluster.start_node("b", env).unwrap();
    let a_node = node(&ready(&cluster, &a)).unwrap();
    ready(&cluster, &b);
    body(cluster, a, b, a_node);
}

#[test]
fn an_instance_cut_off_from_the_database_is_fenced_and_its_node_is_taken_over() {
    with_two_issuing("cut off", "cut", &[], |mut cluster, a, _, a_node| {
        let cut_ms = now_ms();
        cluster.disconnect(&a).unwrap();
        // Every node ID (capacity 2) is held: c waits for a's to expire.
        let c = cluster.start_node("c", &[]).unwrap();
        let c_lines = cluster
            .wait_until(&c, Duration::from_secs(30), "c's lease", |l| issuing(l, 20))
            .unwrap();
        let taken_ms = c_lines
            .iter()
            .find(|(_, l)| matches!(l, Line::Lease(_)))
            .unwrap()
            .0;
        std::thread::sleep(Duration::from_secs(1));
        let reconnect_ms = now_ms();
        cluster.connect(&a).unwrap();
        std::thread::sleep(Duration::from_secs(3));
        let all = cluster.finish().unwrap();

        let a_lines = &all[&a];
        let a_ids = snowflakes(a_lines);
        let last_a = a_ids.last().unwrap();
        let fenced_ms = a_lines
            .iter()
            .find(|(at, l)| {
                *at >= cut_ms && matches!(l, Line::SnowflakeError(e) if e.starts_with("fenced"))
            })
            .map(|(at, _)| *at)
            .expect("a reported Fenced after the cut");
        let c_ids = snowflakes(&all[&c]);
        let (s_total, h_total, s_dup, h_dup) = count(&all);
        say(&format!(
            "cut off: a ({}) held node {a_node}; cut at 0 ms; a's last Snowflake ID {} (its time {:+} ms, printed {:+} ms), \
         Fenced at {:+} ms; c ({}) leased node {:?} at {:+} ms, first ID time {:+} ms; a reconnected at {:+} ms and \
         issued {} Snowflake IDs after that; {s_total} Snowflake IDs and {h_total} hi-lo IDs from 3 instances, \
         {s_dup} and {h_dup} duplicates",
            short_id(&a),
            last_a.1,
            id_ms(last_a.1) - cut_ms,
            last_a.0 - cut_ms,
            fenced_ms - cut_ms,
            short_id(&c),
            node(&all[&c]),
            taken_ms - cut_ms,
            id_ms(c_ids[0].1) - cut_ms,
            reconnect_ms - cut_ms,
            a_ids.iter().filter(|(at, _)| *at >= reconnect_ms).count(),
        ));

        assert_eq!(node(&all[&c]), Some(a_node), "c took over a's node ID");
        // When a issued its last ID (not that ID's time field, which leads the clock after a
        // takeover: issue 37), within the lease it renewed before the cut.
        assert!(
            last_a.0 < cut_ms + TTL_MS,
            "a issued an ID {} ms after the cut, past the lease it renewed before the cut",
            last_a.0 - cut_ms
        );
        assert!(
            taken_ms > fenced_ms,
            "a was fenced before c got its node ID"
        );
        assert!(
            id_ms(c_ids[0].1) > id_ms(last_a.1),
            "c's first ID is not above a's last on the same node ID"
        );
        assert!(
            a_ids.iter().all(|(at, _)| *at < reconnect_ms),
            "a issued again after reconnecting, with a node ID c holds"
        );
        assert_eq!((s_dup, h_dup), (0, 0), "duplicate IDs");
    });
}

#[test]
fn hilo_serves_its_buffer_then_a_typed_error_and_recovers_after_a_database_restart() {
    // Blocks of 300, at least 600 IDs buffered: about 3 s of IDs at this rate.
    let env = [
        ("IDGEN_FAULT_BLOCK", "300"),
        ("IDGEN_FAULT_MIN_LOW_WATER", "600"),
    ];
    with_two_issuing("database restart", "restart", &env, |cluster, a, b, _| {
        std::thread::sleep(Duration::from_secs(1));

        cluster.stop_db().unwrap();
        let down_ms = now_ms(); // the server has shut down
        std::thread::sleep(Duration::from_secs(8));
        let restart_ms = now_ms();
        cluster.start_db().unwrap();
        for id in [&a, &b] {
            cluster
                .wait_until(
                    id,
                    Duration::from_secs(30),
                    "hi-lo IDs after the restart",
                    |l| hilos(l).iter().filter(|(at, _)| *at > restart_ms).count() >= 20,
                )
                .unwrap();
        }
        let all = cluster.finish().unwrap();
        let (s_total, h_total, s_dup, h_dup) = count(&all);
        for (name, id) in [("a", &a), ("b", &b)] {
            let lines = &all[id];
            let served = hilos(lines)
                .iter()
                .filter(|(at, _)| *at > down_ms && *at < restart_ms)
                .count();
            let error = lines.iter().find_map(|(at, l)| match l {
                Line::HiLoError(e) if *at > down_ms => Some((*at, e.clone())),
                _ => None,
            });
            let recovered = hilos(lines)
                .iter()
                .find(|(at, _)| *at > restart_ms)
                .map(|(at, _)| *at);
            say(&format!(
                "database restart, {name} ({}): database down at 0 ms; {served} hi-lo IDs served from the buffer while down; \
             first error at {:+} ms: {}; database restarted at {:+} ms; hi-lo IDs again from {:+} ms",
                short_id(id),
                error.as_ref().map_or(0, |(at, _)| at - down_ms),
                error.as_ref().map_or("none", |(_, e)| e.as_str()),
                restart_ms - down_ms,
                recovered.map_or(0, |at| at - down_ms),
            ));
            assert!(
                served > 0,
                "{name} served no buffered hi-lo ID while the database was down"
            );
            let (error_ms, error) = error.expect("a hi-lo error while the database was down");
            assert!(
                error.starts_with("unavailable"),
                "not HiLoUnavailable: {error}"
            );
            assert!(
                error_ms < restart_ms,
                "the error came only after the restart"
            );
            assert!(recovered.is_some(), "{name} did not recover");
        }
        say(&format!(
            "database restart: {s_total} Snowflake IDs and {h_total} hi-lo IDs from 2 instances, {s_dup} and {h_dup} duplicates"
        ));
        assert_eq!((s_dup, h_dup), (0, 0), "duplicate IDs");
    });
}

#[test]
fn a_paused_instance_does_not_issue_with_its_lapsed_lease() {
    with_two_issuing("pause", "pause", &[], |mut cluster, a, _, a_node| {
        let pause_ms = now_ms();
        cluster.pause(&a, true).unwrap();
        let c = cluster.start_node("c", &[]).unwrap();
        cluster
            .wait_until(&c, Duration::from_secs(30), "c's lease", |l| issuing(l, 20))
            .unwrap();
        let wait = (pause_ms + TTL_MS + 2000 - now_ms()).max(0) as u64;
        std::thread::sleep(Duration::from_millis(wait));
        let unpause_ms = now_ms();
        cluster.pause(&a, false).unwrap();
        std::thread::sleep(Duration::from_secs(3));
        let all = cluster.finish().unwrap();

        let a_lines = &all[&a];
        let a_ids = snowflakes(a_lines);
        let after = a_ids.iter().filter(|(at, _)| *at >= unpause_ms).count();
        let fenced = a_lines.iter().find_map(|(at, l)| match l {
            Line::SnowflakeError(e) if *at >= unpause_ms => Some((*at, e.clone())),
            _ => None,
        });
        let (s_total, h_total, s_dup, h_dup) = count(&all);
        say(&format!(
            "pause: a ({}) held node {a_node}, paused at 0 ms, its last ID's time {:+} ms; c leased node {:?}; \
         a unpaused at {:+} ms, then issued {after} Snowflake IDs and reported at {:+} ms: {}; \
         {s_total} Snowflake IDs and {h_total} hi-lo IDs from 3 instances, {s_dup} and {h_dup} duplicates",
            short_id(&a),
            id_ms(a_ids.last().unwrap().1) - pause_ms,
            node(&all[&c]),
            unpause_ms - pause_ms,
            fenced.as_ref().map_or(0, |(at, _)| at - pause_ms),
            fenced.as_ref().map_or("nothing", |(_, e)| e.as_str()),
        ));
        assert_eq!(node(&all[&c]), Some(a_node), "c took over a's node ID");
        assert_eq!(
            after, 0,
            "a issued Snowflake IDs with its lapsed lease after the pause"
        );
        let (_, error) = fenced.expect("a reported an error after the pause");
        assert!(error.starts_with("fenced"), "not Fenced: {error}");
        assert_eq!((s_dup, h_dup), (0, 0), "duplicate IDs");
    });
}

// ---------------------------------------------------------------------------------------------
// The store forgets (issue 24): three holders issue, the store loses what it acknowledged, three
// new processes start right after, and every ID of every process is counted.

/// The environment of every instance in a store-forgets scenario: node IDs 0..8 (so the new
/// processes find the ones the old holders hold free only if the store forgot them), and an
/// instance whose lease is lost acquires a new one.
const FORGET_ENV: [(&str, &str); 2] = [
    ("IDGEN_FAULT_CAPACITY", "8"),
    ("IDGEN_FAULT_REACQUIRE", "1"),
];

/// The hi-lo counter lives in Redis or etcd, the IDs go into a PostgreSQL table
/// (`IDGEN_FAULT_HILO_ROWS`): the case where a floor read from the data protects a counter the
/// store forgot. The floor is
/// the table's largest key plus what running generators may hold in memory and not have
/// stored yet: 6 instances (at most 8) × 2 blocks (the current one and one buffered) × 100. With
/// the largest key alone, old holders still serve their blocks after the fault while the new
/// processes' blocks start just above the largest stored key: measured, 29 IDs handed out twice.
const HILO_FLOOR_ENV: [(&str, &str); 2] = [
    ("IDGEN_FAULT_HILO_ROWS", "1"),
    ("IDGEN_FAULT_HILO_FLOOR_MARGIN", "1600"),
];

/// One lease of one instance: its node ID, when it was acquired (printed), the Snowflake IDs
/// issued under it (printed time, ID), and when it was reported lost.
struct Segment {
    node: u64,
    /// When the instance began to acquire this lease (`CLAIM`).
    claimed_at: i64,
    leased_at: i64,
    ids: Vec<(i64, i64)>,
    lost_at: Option<i64>,
}

/// `lines` split at each `LEASE`: the leases of one instance in order.
fn segments(lines: &[(i64, Line)]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut claimed_at = None;
    for (at, line) in lines {
        match line {
            Line::Claim => claimed_at = Some(*at),
            Line::Lease(node) => out.push(Segment {
                node: *node,
                claimed_at: claimed_at.take().unwrap_or(*at),
                leased_at: *at,
                ids: Vec::new(),
                lost_at: None,
            }),
            Line::Snowflake(id) => {
                if let Some(segment) = out.last_mut() {
                    segment.ids.push((*at, *id));
                }
            }
            Line::Lost(_) => {
                if let Some(segment) = out.last_mut() {
                    segment.lost_at.get_or_insert(*at);
                }
            }
            _ => {}
        }
    }
    out
}

/// The overlaps between leases of different instances on the same node ID: for each pair
/// whose ranges of ID timestamps intersect, how many milliseconds they share. Zero overlaps is
/// what "two instances never share a node ID" means; a duplicate ID needs an overlap.
fn overlaps(all: &[(&str, &[(i64, Line)])]) -> Vec<(String, String, u64, i64)> {
    let mut ranges = Vec::new();
    for (name, lines) in all {
        for (i, segment) in segments(lines).iter().enumerate() {
            if let (Some(first), Some(last)) = (segment.ids.first(), segment.ids.last()) {
                ranges.push((
                    format!("{name}#{i}"),
                    segment.node,
                    id_ms(first.1),
                    id_ms(last.1),
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (i, a) in ranges.iter().enumerate() {
        for b in &ranges[i + 1..] {
            let same_instance = a.0.split('#').next() == b.0.split('#').next();
            if a.1 == b.1 && !same_instance {
                let shared = a.3.min(b.3) - a.2.max(b.2);
                if shared >= 0 {
                    out.push((a.0.clone(), b.0.clone(), a.1, shared + 1));
                }
            }
        }
    }
    out
}

/// Whether `lines` show at least 20 Snowflake IDs printed after `since_ms`, the last of them
/// less than a second before `now_ms`.
fn issuing_since(lines: &[(i64, Line)], since_ms: i64, now_ms: i64) -> bool {
    let ids = snowflakes(lines);
    ids.iter().filter(|(at, _)| *at > since_ms).count() >= 20
        && ids.last().is_some_and(|(at, _)| *at > now_ms - 1000)
}

/// What a store-forgets scenario measured.
struct Outcome {
    snowflakes: usize,
    hilos: usize,
    snowflake_duplicates: usize,
    hilo_duplicates: usize,
    overlaps: Vec<(String, String, u64, i64)>,
    /// Hi-lo IDs the new processes handed out that some instance had printed before the
    /// fault began.
    hilo_reissued: usize,
    /// Per old holder: whether it was issuing at the end (under a new lease or its old one).
    old_resumed: Vec<bool>,
    /// Per new process: from the start of its claim to its first Snowflake ID (the claim's
    /// wait), in ms.
    claim_waits: Vec<i64>,
}

/// How a store-forgets scenario runs (see [`store_forgets`]).
struct Scenario<'a> {
    /// What the report calls it.
    test: &'a str,
    /// The Docker network's name.
    name: &'a str,
    /// Where the instances lease and count (Redis, MariaDB and etcd are started for them).
    store: Store,
    /// More environment for every instance.
    env: &'a [(&'a str, &'a str)],
    /// Cut the old holders off the network from the start of the fault until the new processes
    /// hold their leases (at most 3 s): their next renewals come after the new claims, the
    /// order in which the store's forgetting does harm, forced instead of left to the race
    /// between a claim and a renewal interval (which a loaded machine decides).
    hold_old: bool,
    /// Hi-lo has a floor read from the data: no hi-lo ID may be handed out twice either.
    hilo_floor: bool,
}

impl<'a> Scenario<'a> {
    /// A scenario that holds the old holders back ([`Scenario::hold_old`]), with no floor.
    fn new(test: &'a str, name: &'a str, store: Store) -> Self {
        Scenario {
            test,
            name,
            store,
            env: &[],
            hold_old: true,
            hilo_floor: false,
        }
    }

    /// Hi-lo with a floor read from the data (the table the IDs go into), checked too.
    fn with_hilo_floor(self) -> Self {
        Scenario {
            env: &HILO_FLOOR_ENV,
            hilo_floor: true,
            ..self
        }
    }

    /// Runs it ([`store_forgets`]) and asserts what every store-forgets scenario must give.
    fn never_shares_a_node_id(
        &self,
        prepare: impl FnOnce(&mut Cluster),
        fault: impl FnOnce(&mut Cluster),
    ) {
        let Some(outcome) = store_forgets(self, prepare, fault) else {
            return;
        };
        assert_never_shared(&outcome);
        if self.hilo_floor {
            assert_hilo_never_reissued(&outcome);
        }
    }
}

/// Lets a copy of the store (a standby, a replica, a dump) fall behind by more than a TTL:
/// renewals go on on the primary meanwhile, so in the copy every lease has expired.
fn lag_past_the_ttl() {
    std::thread::sleep(Duration::from_millis(TTL_MS as u64 + 500));
}

/// Runs a store-forgets scenario: three holders `a`, `b`, `c` (with [`FORGET_ENV`]) lease node
/// IDs and issue; three new processes `d`, `e`, `f` are started and wait; `prepare` readies
/// the fault (untimed, the holders issue meanwhile); `fault` breaks the store and returns once
/// it answers again (the store's return, time 0 of the report); the new processes are let go
/// right then. Returns `None` when the test cannot run.
fn store_forgets(
    scenario: &Scenario<'_>,
    prepare: impl FnOnce(&mut Cluster),
    fault: impl FnOnce(&mut Cluster),
) -> Option<Outcome> {
    let Scenario {
        test,
        name,
        store,
        env,
        hold_old,
        ..
    } = *scenario;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run(test) {
        return None;
    }
    // PostgreSQL when the instances lease or keep their rows there.
    let postgres =
        store == Store::Postgres || env.iter().any(|(k, _)| *k == "IDGEN_FAULT_HILO_ROWS");
    let mut cluster = Cluster::start_with(name, Path::new(BINARY), postgres).unwrap();
    let mut env: Vec<(&str, &str)> = env.to_vec();
    env.extend(FORGET_ENV);
    match store {
        Store::Postgres => {}
        Store::Redis => cluster.start_redis().unwrap(),
        Store::MariaDb => cluster.start_mariadb().unwrap(),
        Store::Etcd => cluster.start_etcd().unwrap(),
    }
    env.push(("IDGEN_FAULT_STORE", store.name()));
    let old: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| cluster.start_node(n, &env).unwrap())
        .collect();
    for id in &old {
        ready(&cluster, id);
    }
    // The new processes start now, but wait for a signal before they connect: let go the
    // moment the store is back, they claim within milliseconds, not after a container start.
    let mut gated = env.clone();
    gated.push(("IDGEN_FAULT_GATE", "1"));
    let new: Vec<String> = ["d", "e", "f"]
        .iter()
        .map(|n| cluster.start_node(n, &gated).unwrap())
        .collect();
    for id in &new {
        cluster
            .wait_until(
                id,
                Duration::from_secs(30),
                "the gated instance's start",
                |l| l.iter().any(|(_, line)| *line == Line::Start),
            )
            .unwrap();
    }
    prepare(&mut cluster);
    let fault_ms = now_ms();
    if hold_old {
        for id in &old {
            cluster.disconnect(id).unwrap();
        }
    }
    fault(&mut cluster);
    let back_ms = now_ms();
    cluster.signal(&new, "USR1").unwrap();
    if hold_old {
        for id in &new {
            let left = (back_ms + 3000 - now_ms()).max(0) as u64;
            let _ = cluster.wait_until(id, Duration::from_millis(left), "a lease", |l| {
                node(l).is_some()
            });
        }
        for id in &old {
            cluster.connect(id).unwrap();
        }
        say(&format!(
            "{test}: old holders cut off from {:+} ms to {:+} ms",
            fault_ms - back_ms,
            now_ms() - back_ms
        ));
    }
    // Every instance, old and new, issues again (or 30 s pass: reported below): 20 IDs since
    // the store's return, the last one just now (an old holder that stopped and leases anew
    // is waited for).
    for id in old.iter().chain(&new) {
        let _ = cluster.wait_until(
            id,
            Duration::from_secs(30),
            "Snowflake IDs after the fault",
            |l| issuing_since(l, back_ms + 200, now_ms()),
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    let end_ms = now_ms();
    let all = cluster.finish().unwrap();
    let (snowflakes_n, hilos_n, s_dup, h_dup) = count(&all);
    let names = ["a", "b", "c", "d", "e", "f"];
    let named: Vec<(&str, &[(i64, Line)])> = names
        .iter()
        .zip(old.iter().chain(&new))
        .map(|(n, id)| (*n, all[id].as_slice()))
        .collect();
    let overlaps = overlaps(&named);
    let before: HashSet<i64> = named
        .iter()
        .flat_map(|(_, lines)| hilos(lines))
        .filter(|(at, _)| *at < fault_ms)
        .map(|(_, id)| id)
        .collect();
    let hilo_reissued = named[3..]
        .iter()
        .flat_map(|(_, lines)| hilos(lines))
        .filter(|(_, id)| before.contains(id))
        .count();
    let mut report = format!(
        "{test}: fault from {:+} ms to 0 ms (the store's return); ",
        fault_ms - back_ms
    );
    let mut old_resumed = Vec::new();
    for (n, lines) in &named[..3] {
        let segs = segments(lines);
        let first = &segs[0];
        let tail = first.ids.last().map_or(i64::MIN, |(at, _)| at - back_ms);
        let resumed = issuing_since(lines, back_ms + 200, end_ms);
        let again = segs.get(1).map(|s| {
            let first_id = s.ids.first().map_or(i64::MAX, |(at, _)| *at);
            format!(
                "claimed again at {:+} ms, leased node {} at {:+} ms, issued from {:+} ms",
                s.claimed_at - back_ms,
                s.node,
                s.leased_at - back_ms,
                first_id.saturating_sub(back_ms)
            )
        });
        report += &format!(
            "old {n} (node {}): last ID {tail:+} ms, lost at {}, {}, resumed: {resumed}; ",
            first.node,
            first
                .lost_at
                .map_or("-".to_owned(), |at| format!("{:+} ms", at - back_ms)),
            again.unwrap_or_else(|| "no new lease".to_owned()),
        );
        old_resumed.push(resumed);
    }
    let mut claim_waits = Vec::new();
    for (n, lines) in &named[3..] {
        let segs = segments(lines);
        let Some(first) = segs.first() else {
            report += &format!("new {n}: no lease; ");
            claim_waits.push(i64::MAX);
            continue;
        };
        let first_id = first.ids.first().map_or(i64::MAX, |(at, _)| *at);
        let wait = first_id.saturating_sub(first.claimed_at);
        let started = lines
            .iter()
            .filter(|(_, l)| *l == Line::Start)
            .nth(1)
            .map_or(i64::MAX, |(at, _)| at - back_ms);
        let mut waits: Vec<&str> = lines
            .iter()
            .filter_map(|(_, l)| match l {
                Line::LeaseWait(why) => Some(why.as_str()),
                _ => None,
            })
            .collect();
        waits.dedup();
        waits.truncate(3);
        report += &format!("new {n}: let go at {started:+} ms, waits {waits:?}; ");
        report += &format!(
            "new {n}: claim from {:+} ms, node {} leased at {:+} ms, first ID at {:+} ms (claim wait {wait} ms); ",
            first.claimed_at - back_ms,
            first.node,
            first.leased_at - back_ms,
            first_id.saturating_sub(back_ms),
        );
        claim_waits.push(wait);
    }
    report += &format!(
        "{snowflakes_n} Snowflake IDs and {hilos_n} hi-lo IDs from 6 instances, {s_dup} and {h_dup} duplicates, \
         {hilo_reissued} hi-lo IDs printed before the fault handed out again by the new processes; \
         leases of two instances on one node ID at the same time: {overlaps:?}"
    );
    say(&report);
    Some(Outcome {
        snowflakes: snowflakes_n,
        hilos: hilos_n,
        snowflake_duplicates: s_dup,
        hilo_duplicates: h_dup,
        overlaps,
        hilo_reissued,
        old_resumed,
        claim_waits,
    })
}

/// What every store-forgets scenario must give: no two instances on one node ID at the same
/// time, so no duplicate Snowflake ID; every instance issuing again on its own.
fn assert_never_shared(outcome: &Outcome) {
    assert!(
        outcome.snowflakes > 0 && outcome.hilos > 0,
        "nothing issued"
    );
    assert!(
        outcome.overlaps.is_empty(),
        "two instances issued on one node ID at the same time: {:?}",
        outcome.overlaps
    );
    assert_eq!(outcome.snowflake_duplicates, 0, "duplicate Snowflake IDs");
    assert!(
        outcome.old_resumed.iter().all(|r| *r),
        "an old holder did not issue again on its own: {:?}",
        outcome.old_resumed
    );
    assert!(
        outcome.claim_waits.iter().all(|w| *w < 30_000),
        "a new process issued nothing: {:?}",
        outcome.claim_waits
    );
}

/// What a hi-lo counter in Redis with a floor read from the data (the largest key in the
/// PostgreSQL table the IDs go into) must give when Redis forgets the counter: no ID handed
/// out twice, by the new processes or by anyone.
fn assert_hilo_never_reissued(outcome: &Outcome) {
    assert_eq!(
        outcome.hilo_reissued, 0,
        "new processes handed out hi-lo IDs printed before the fault"
    );
    assert_eq!(outcome.hilo_duplicates, 0, "duplicate hi-lo IDs");
}

#[test]
fn redis_restarted_without_persistence_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "Redis restarted without persistence",
        "redis-restart",
        Store::Redis,
    )
    .with_hilo_floor();
    // A restart takes long enough: the old holders race the new claims as they would.
    let scenario = Scenario {
        hold_old: false,
        ..scenario
    };
    scenario.never_shares_a_node_id(|_| {}, |cluster| cluster.restart_redis().unwrap());
}

#[test]
fn postgres_replaced_by_an_empty_database_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "PostgreSQL replaced by an empty database",
        "pg-empty",
        Store::Postgres,
    );
    scenario.never_shares_a_node_id(
        |cluster| cluster.prepare_empty_db().unwrap(),
        |cluster| cluster.replace_db().unwrap(),
    );
}

#[test]
fn postgres_restored_from_an_older_dump_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "PostgreSQL restored from a dump taken 15 s earlier",
        "pg-restore",
        Store::Postgres,
    );
    scenario.never_shares_a_node_id(
        |cluster| {
            let dumped = Instant::now();
            cluster.dump_db().unwrap();
            cluster.restore_db_beside().unwrap();
            std::thread::sleep(Duration::from_secs(15).saturating_sub(dumped.elapsed()));
        },
        |cluster| cluster.swap_in_restored_db().unwrap(),
    );
}

#[test]
fn redis_failover_to_a_lagging_replica_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "Redis failover to a lagging replica",
        "redis-failover",
        Store::Redis,
    )
    .with_hilo_floor();
    scenario.never_shares_a_node_id(
        |cluster| {
            cluster.start_redis_replica().unwrap();
            // The replica's link is cut; renewals go on on the primary for longer than the
            // TTL, so in the replica's copy every lease has expired.
            cluster.cut_redis_replica().unwrap();
            lag_past_the_ttl();
        },
        |cluster| cluster.fail_over_redis().unwrap(),
    );
}

#[test]
fn postgres_failover_to_a_lagging_standby_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "PostgreSQL failover to a lagging streaming standby",
        "pg-standby",
        Store::Postgres,
    );
    scenario.never_shares_a_node_id(
        |cluster| {
            cluster.start_pg_standby().unwrap();
            // Replay paused and link cut: renewals go on on the primary for longer than the
            // TTL, so in the standby's copy every lease has expired.
            cluster.pause_pg_standby().unwrap();
            lag_past_the_ttl();
            cluster.promote_pg_standby().unwrap();
        },
        |cluster| cluster.fail_over_to_pg_standby().unwrap(),
    );
}

#[test]
fn mariadb_restored_from_an_older_dump_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "MariaDB restored from a dump taken 15 s earlier",
        "mariadb-restore",
        Store::MariaDb,
    );
    scenario.never_shares_a_node_id(
        |cluster| {
            let dumped = Instant::now();
            cluster.dump_mariadb().unwrap();
            std::thread::sleep(Duration::from_secs(15).saturating_sub(dumped.elapsed()));
        },
        |cluster| cluster.restore_mariadb().unwrap(),
    );
}

#[test]
fn mariadb_failover_to_a_lagging_replica_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "MariaDB failover to a lagging replica",
        "mariadb-replica",
        Store::MariaDb,
    );
    scenario.never_shares_a_node_id(
        |cluster| {
            cluster.start_mariadb_replica().unwrap();
            // The replica's threads stopped and its link cut: renewals go on on the primary for
            // longer than the TTL, so in the replica's copy every lease has expired.
            cluster.stop_mariadb_replica().unwrap();
            lag_past_the_ttl();
            cluster.promote_mariadb_replica().unwrap();
        },
        |cluster| cluster.fail_over_to_mariadb_replica().unwrap(),
    );
}

#[test]
fn etcd_restored_from_an_older_snapshot_never_lets_two_instances_share_a_node_id() {
    let scenario = Scenario::new(
        "etcd restored from a snapshot taken 4 s earlier",
        "etcd-restore",
        Store::Etcd,
    )
    .with_hilo_floor();
    scenario.never_shares_a_node_id(
        |cluster| {
            // The snapshot holds a's and b's leases (etcd keeps leases in it, and a restart
            // gives each a full TTL again): they keep their node IDs. c is paused past its TTL
            // first, so in the snapshot its node ID is free; it then leases again and issues,
            // a claim the restore forgets, which new processes find free.
            let c = cluster.container("c");
            cluster.pause(&c, true).unwrap();
            std::thread::sleep(Duration::from_millis(TTL_MS as u64 + 1000));
            cluster.snapshot_etcd().unwrap();
            let taken = Instant::now();
            let unpaused_ms = now_ms();
            cluster.pause(&c, false).unwrap();
            cluster
                .wait_until(&c, Duration::from_secs(30), "c issuing again", |l| {
                    issuing_since(l, unpaused_ms, now_ms())
                })
                .unwrap();
            // Renewals go on for longer than the TTL after the snapshot.
            let wait = Duration::from_millis(TTL_MS as u64 + 1000);
            std::thread::sleep(wait.saturating_sub(taken.elapsed()));
        },
        |cluster| cluster.restore_etcd().unwrap(),
    );
}
