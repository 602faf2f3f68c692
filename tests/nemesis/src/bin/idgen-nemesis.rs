//! `idgen-nemesis`: the long form of the soak. Starts the fleet, runs the schedule of a seed
//! for `--hours H` (or `--secs S`) or until `--ids N` IDs are recorded, and prints the checker's
//! report; exits 1 on any duplicate. `--seed N --print-schedule K` prints the first K faults of
//! the seed's schedule and exits (the same seed gives the same schedule).
//! `--idgen PATH`: the `idgen` command the operator runs (default: beside this binary;
//! `cargo build -p idgen-cli --features leases`).
//! `--without-hilo-floor` leaves hi-lo on Redis without its floor: a Redis restart then makes
//! it hand out IDs again, which the checker must report (a check of the soak itself).
//!
//! ```text
//! cargo run --release -p idgen-nemesis --bin idgen-nemesis -- --seed 7 --ids 1000000000 --batch 20000 --interval-ms 1
//! ```

use std::path::PathBuf;
use std::time::Duration;

use idgen_nemesis::fleet::{Fleet, Options};
use idgen_nemesis::schedule::Schedule;

fn main() {
    let mut options = Options {
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs()),
        duration: Duration::from_secs(3600),
        ids: None,
        batch: 20_000,
        interval_ms: 1,
        name: "nemesis-long".into(),
        hilo_floor: true,
        idgen: PathBuf::new(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).map(String::as_str).unwrap_or("");
        let number = || -> f64 {
            value.parse().unwrap_or_else(|_| {
                eprintln!("idgen-nemesis: {} needs a number, not {value:?}", args[i]);
                std::process::exit(2)
            })
        };
        match args[i].as_str() {
            "--without-hilo-floor" => {
                options.hilo_floor = false;
                i += 1;
                continue;
            }
            "--seed" => options.seed = number() as u64,
            "--ids" => {
                options.ids = Some(number() as u64);
                options.duration = Duration::from_secs(24 * 3600);
            }
            "--hours" => options.duration = Duration::from_secs_f64(number() * 3600.0),
            "--secs" => options.duration = Duration::from_secs_f64(number()),
            "--batch" => options.batch = number() as u64,
            "--idgen" => options.idgen = PathBuf::from(value),
            "--interval-ms" => options.interval_ms = number() as u64,
            "--print-schedule" => {
                let schedule = Schedule::new(options.seed, idgen_nemesis::fleet::targets());
                println!("seed {}:", options.seed);
                for fault in schedule.take(number() as usize) {
                    println!("  {fault}");
                }
                return;
            }
            other => {
                eprintln!(
                    "idgen-nemesis: unknown argument {other:?}; use --seed N, --ids N, --hours H, --secs S, --batch N, --interval-ms N, --print-schedule K, --without-hilo-floor, --idgen PATH"
                );
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let node: PathBuf = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("idgen-nemesis-node")))
        .unwrap_or_else(|| PathBuf::from("idgen-nemesis-node"));
    if options.idgen.as_os_str().is_empty() {
        options.idgen = idgen_nemesis::fleet::idgen_beside(&node);
    }
    let started = std::time::Instant::now();
    let report = Fleet::start(&node, &options).and_then(|fleet| fleet.run(&options));
    match report {
        Ok(report) => {
            println!("{report}");
            println!("  wall time: {:?}", started.elapsed());
            if report.duplicate_ids > 0 {
                std::process::exit(1);
            }
        }
        Err(err) => {
            eprintln!("idgen-nemesis: {err}");
            std::process::exit(2);
        }
    }
}
