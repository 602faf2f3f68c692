//! uuid 1.29 `new_v4` and `now_v7` without the `fast-rng` feature: the same table and
//! callgrind mode as idgen-core's `per_id` bench (see there).

use std::hint::black_box;
use std::time::{Duration, Instant};

struct Case {
    name: &'static str,
    run: fn(u64) -> Duration,
}

fn timed(n: u64, mut f: impl FnMut()) -> Duration {
    let began = Instant::now();
    for _ in 0..n {
        f();
    }
    began.elapsed()
}

const CASES: &[Case] = &[
    Case {
        name: "uuid Uuid::new_v4 (no fast-rng)",
        run: |n| timed(n, || _ = black_box(uuid::Uuid::new_v4())),
    },
    Case {
        name: "uuid Uuid::now_v7 (no fast-rng)",
        run: |n| timed(n, || _ = black_box(uuid::Uuid::now_v7())),
    },
];

/// (minimum, median) ns per call over 7 rounds of about 20 ms.
fn measure(case: &Case) -> (f64, f64) {
    let mut n = 1_000u64;
    loop {
        let took = (case.run)(n);
        if took >= Duration::from_millis(5) {
            let per = took.as_nanos() as f64 / n as f64;
            n = ((20e6 / per.max(0.1)) as u64).max(1_000);
            break;
        }
        n *= 4;
    }
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| (case.run)(n).as_nanos() as f64 / n as f64)
        .collect();
    rounds.sort_by(f64::total_cmp);
    (rounds[0], rounds[3])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--run") {
        let name = &args[at + 1];
        let n: u64 = args[at + 2].parse().expect("iterations");
        let case = CASES
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name:?}"));
        (case.run)(n);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        for case in CASES {
            println!("{}", case.name);
        }
        return;
    }
    println!("| case | ns/call min | ns/call median |");
    println!("|---|---:|---:|");
    for case in CASES {
        let (min, median) = measure(case);
        println!("| {} | {min:.1} | {median:.1} |", case.name);
    }
}
