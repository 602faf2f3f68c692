//! Fault tests across hosts: `idgen-fault-node` instances in containers on a Docker network,
//! PostgreSQL in another container. Every ID every instance issued is counted at the end.
//!
//! Needs a Docker engine and the local images (`scripts/test-images`); without them each test
//! says why and passes, unless `IDGEN_TESTKIT_ROUTE=containers` (as CI runs) makes that a
//! failure. The tests run one at a time (they time leases of 3 s).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use idgen_faults::Line;
use idgen_faults::cluster::{Cluster, now_ms, unavailable};
use idgen_faults::node::LAYOUT;

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
        assert!(
            id_ms(last_a.1) < cut_ms + TTL_MS,
            "a issued an ID at {} ms after the cut, past the lease it renewed before the cut",
            id_ms(last_a.1) - cut_ms
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
