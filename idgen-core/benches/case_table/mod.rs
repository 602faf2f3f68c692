//! The harness of the per-call benches: `per_id` (idgen-engine's bench) and
//! `uuid-without-fast-rng` (a workspace of its own, which includes this file by path). Both
//! give the same table and the same callgrind mode:
//!
//! - `--bench` (as `cargo bench` passes it): each case runs in 7 rounds of about 20 ms (the
//!   iteration count is calibrated first); the table gives the minimum and the median of the 7
//!   rounds' ns per call, and for a case with a peer the ratio of the minimums (ours ÷ peer).
//! - `--run <case> <iterations>`: runs only that case, once, for callgrind.
//! - `--list`: the case names, one a line.
//! - none of these (`cargo test --benches`): one short pass over every case, no table.

use std::time::{Duration, Instant};

/// One benchmark: runs `n` iterations and returns the time they took.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// The case this one is compared with (ours ÷ peer), if any.
    pub(crate) peer: Option<&'static str>,
    pub(crate) run: fn(u64) -> Duration,
}

/// The time `n` calls of `f` take.
pub(crate) fn timed(n: u64, mut f: impl FnMut()) -> Duration {
    let began = Instant::now();
    for _ in 0..n {
        f();
    }
    began.elapsed()
}

fn ns_per_call(case: &Case, n: u64) -> f64 {
    (case.run)(n).as_nanos() as f64 / n as f64
}

/// (minimum, median) ns per call over 7 rounds of about 20 ms.
fn measure(case: &Case) -> (f64, f64) {
    let mut n = 1_000u64;
    loop {
        let took = (case.run)(n);
        if took >= Duration::from_millis(5) || n >= 1 << 30 {
            let per = took.as_nanos() as f64 / n as f64;
            n = ((20e6 / per.max(0.1)) as u64).max(1_000);
            break;
        }
        n *= 4;
    }
    let mut rounds: Vec<f64> = (0..7).map(|_| ns_per_call(case, n)).collect();
    rounds.sort_by(f64::total_cmp);
    (rounds[0], rounds[3])
}

/// Does what the command line asks (see the module's doc); `callgrind_mode` runs first in
/// `--run` mode.
pub(crate) fn main(cases: &[Case], callgrind_mode: fn()) {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--run") {
        let name = &args[at + 1];
        let n: u64 = args[at + 2].parse().expect("iterations");
        let case = cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name:?}"));
        callgrind_mode();
        (case.run)(n);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        for case in cases {
            println!("{}", case.name);
        }
        return;
    }
    if !args.iter().any(|a| a == "--bench") {
        for case in cases {
            ns_per_call(case, 1_000);
        }
        return;
    }
    let results: Vec<(f64, f64)> = cases.iter().map(measure).collect();
    println!("| case | ns/call min | ns/call median | peer | peer ns min | ours ÷ peer |");
    println!("|---|---:|---:|---|---:|---:|");
    for (case, (min, median)) in cases.iter().zip(&results) {
        let (peer, peer_min, ratio) = match case.peer {
            Some(peer) => {
                let at = cases.iter().position(|c| c.name == peer).expect("peer");
                let peer_min = results[at].0;
                (
                    peer,
                    format!("{peer_min:.1}"),
                    format!("{:.2}", min / peer_min),
                )
            }
            None => ("—", "—".to_owned(), "—".to_owned()),
        };
        println!(
            "| {} | {min:.1} | {median:.1} | {peer} | {peer_min} | {ratio} |",
            case.name
        );
    }
}
