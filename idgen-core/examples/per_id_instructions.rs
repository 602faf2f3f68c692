//! Issues `n` IDs with one generator, for counting instructions per ID with valgrind's
//! callgrind (counts repeat under any machine load, unlike wall-clock time):
//!
//! ```sh
//! cargo build --release -p idgen-core --example per_id_instructions
//! scripts/instructions-per-id   # runs each generator at two counts, prints instructions per ID
//! ```
//!
//! Under callgrind a program runs ~50× slower, so no generator here reaches its per-millisecond
//! cap: this is the cost per ID when the cap does not bind.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use idgen_core::{Layout, Snowflake};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(what), Some(n)) = (args.next(), args.next()) else {
        eprintln!("usage: per_id_instructions <generator> <count>");
        eprintln!("generators: {}", GENERATORS.join(", "));
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("a count");
    match what.as_str() {
        "idgen-wide" => {
            let layout = Layout::builder()
                .timestamp_bits(41)
                .node_bits(0)
                .sequence_bits(22)
                .epoch_ms(Layout::TWITTER.epoch_ms())
                .build()
                .unwrap();
            let ids = Snowflake::new(layout, 0).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "idgen-twitter" => {
            let ids = Snowflake::new(Layout::TWITTER, 1).unwrap();
            for _ in 0..n {
                black_box(ids.next_id().unwrap());
            }
        }
        "rs-snowflake" => {
            let mut ids = snowflake::SnowflakeIdGenerator::new(1, 1);
            for _ in 0..n {
                black_box(ids.real_time_generate());
            }
        }
        "snowflaked" => {
            let mut ids = snowflaked::Generator::new(1);
            for _ in 0..n {
                black_box(ids.generate::<u64>());
            }
        }
        "snowflaked-sync" => {
            let ids = snowflaked::sync::Generator::new(1);
            for _ in 0..n {
                black_box(ids.generate::<u64>());
            }
        }
        "baseline" => {
            // The floor any clock-reading, thread-safe generator stands on: one atomic
            // read-modify-write and one monotonic clock read per ID.
            let counter = AtomicU64::new(0);
            for _ in 0..n {
                black_box(counter.fetch_add(1, Ordering::Relaxed));
                black_box(Instant::now());
            }
        }
        other => {
            eprintln!(
                "unknown generator {other:?}; one of {}",
                GENERATORS.join(", ")
            );
            std::process::exit(2);
        }
    }
}

const GENERATORS: &[&str] = &[
    "idgen-wide",
    "idgen-twitter",
    "rs-snowflake",
    "snowflaked",
    "snowflaked-sync",
    "baseline",
];
