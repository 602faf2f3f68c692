//! The cost of one ID, ours beside the peers', in one run: a wall-clock table, and a mode that
//! runs one case N times for valgrind's callgrind (instruction counts repeat under any load).
//!
//! ```text
//! cargo bench -p idgen-engine --features hilo --bench per_id              # the table
//! idgen-core/benches/instructions.sh                                     # callgrind, every case
//! ```
//!
//! Wall clock: each case runs in 7 rounds of about 20 ms (the iteration count is calibrated
//! first); the table gives the minimum and the median of the 7 rounds' ns per call. The ratio
//! is ours over the peer's (below 1: ours is cheaper), from the minimums. The harness (table,
//! callgrind mode, the short pass of `cargo test --benches`) is `case_table`, shared with
//! `benches/uuid-without-fast-rng`.
//!
//! Callgrind mode: `per_id --run <case> <iterations>` runs only that case, once. The script
//! runs it twice with different counts and divides the difference of the instruction totals
//! by the difference of the counts, so start-up (runtime, first seeding) cancels out. In this
//! mode the hi-lo cases take all their IDs from one block of 2^24: the count is the per-ID
//! path, repeatable (block switches and refills run on other threads and would make it depend
//! on scheduling; their cost per ID is in the wall-clock table, with blocks of 1000).
//!
//! Peers: uuid 1.29 with `fast-rng` (rand's thread-local ChaCha12), ulid 3; uuid *without*
//! `fast-rng` cannot be built in this binary (cargo unifies features), so it has a bench of its
//! own, `benches/uuid-without-fast-rng`, which the script and BENCHMARKS.md run next to this one.
#![allow(missing_docs)]

#[path = "../../idgen-core/benches/case_table/mod.rs"]
mod case_table;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use case_table::{Case, timed};

use idgen_core::{PublicId, PublicIdPrefix, Uuid7Generator};
use idgen_engine::hilo::{HiLo, MemorySource};

struct Order;
impl PublicIdPrefix for Order {
    const PREFIX: &'static str = "ord";
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Set in callgrind mode (`--run`): the hi-lo cases then use one block larger than any run,
/// so the count is the per-ID path alone, the same in every run (block switches and refills,
/// which run on other threads, would make it depend on scheduling).
static ONE_BLOCK: AtomicBool = AtomicBool::new(false);

/// A runtime, and an in-memory hi-lo started on it.
fn hilo() -> (tokio::runtime::Runtime, HiLo) {
    let block = if ONE_BLOCK.load(Ordering::Relaxed) {
        1 << 24
    } else {
        1000
    };
    let rt = runtime();
    let ids = rt
        .block_on(HiLo::new(MemorySource::new(), block))
        .expect("hilo");
    (rt, ids)
}

const CASES: &[Case] = &[
    // Randomness: a public ID (122 random bits) and a UUIDv4.
    Case {
        name: "idgen PublicId::new",
        peer: Some("uuid Uuid::new_v4 (fast-rng)"),
        run: |n| timed(n, || _ = black_box(PublicId::<Order>::new())),
    },
    Case {
        name: "uuid Uuid::new_v4 (fast-rng)",
        peer: None,
        run: |n| timed(n, || _ = black_box(uuid::Uuid::new_v4())),
    },
    // Monotonic UUIDv7.
    Case {
        name: "idgen Uuid7Generator::next_uuid",
        peer: Some("uuid Uuid::now_v7 (fast-rng)"),
        run: |n| {
            let ids = Uuid7Generator::new();
            timed(n, || _ = black_box(ids.next_uuid()))
        },
    },
    Case {
        name: "uuid Uuid::now_v7 (fast-rng)",
        peer: None,
        run: |n| timed(n, || _ = black_box(uuid::Uuid::now_v7())),
    },
    Case {
        name: "ulid Generator::generate",
        peer: None,
        run: |n| {
            let mut ids = ulid::Generator::new();
            timed(n, || _ = black_box(ids.generate()))
        },
    },
    // Text.
    Case {
        name: "idgen PublicId to_string (ord_ + 26)",
        peer: Some("uuid to_string (hyphenated)"),
        run: |n| {
            let id = PublicId::<Order>::new();
            timed(n, || _ = black_box(black_box(&id).to_string()))
        },
    },
    Case {
        name: "uuid to_string (hyphenated)",
        peer: None,
        run: |n| {
            let id = uuid::Uuid::new_v4();
            timed(n, || _ = black_box(black_box(&id).to_string()))
        },
    },
    Case {
        name: "idgen PublicId encode_to (ord_ + 26, no allocation)",
        peer: Some("uuid hyphenated encode_lower (no allocation)"),
        run: |n| {
            let id = PublicId::<Order>::new();
            let mut buf = [0u8; idgen_core::public_id::MAX_TEXT_LEN];
            timed(n, || _ = black_box(black_box(&id).encode_to(&mut buf)))
        },
    },
    Case {
        name: "uuid hyphenated encode_lower (no allocation)",
        peer: None,
        run: |n| {
            let id = uuid::Uuid::new_v4();
            let mut buf = uuid::Uuid::encode_buffer();
            timed(n, || {
                _ = black_box(&*black_box(&id).hyphenated().encode_lower(&mut buf))
            })
        },
    },
    Case {
        name: "idgen PublicId parse (ord_ + 26)",
        peer: Some("uuid parse_str (hyphenated)"),
        run: |n| {
            let text = PublicId::<Order>::new().to_string();
            timed(n, || {
                _ = black_box(black_box(text.as_str()).parse::<PublicId<Order>>())
            })
        },
    },
    Case {
        name: "uuid parse_str (hyphenated)",
        peer: None,
        run: |n| {
            let text = uuid::Uuid::new_v4().hyphenated().to_string();
            timed(n, || {
                _ = black_box(uuid::Uuid::parse_str(black_box(text.as_str())))
            })
        },
    },
    // Hi-lo, in memory.
    Case {
        name: "idgen HiLo next_id().await (in memory, block 1000)",
        peer: Some("AtomicI64::fetch_add"),
        run: |n| {
            let (rt, ids) = hilo();
            rt.block_on(async {
                let began = Instant::now();
                for _ in 0..n {
                    black_box(ids.next_id().await.expect("id"));
                }
                began.elapsed()
            })
        },
    },
    Case {
        name: "idgen HiLo try_next_id (in memory, block 1000)",
        peer: Some("AtomicI64::fetch_add"),
        run: |n| {
            let (rt, ids) = hilo();
            let _guard = rt.enter();
            timed(n, || _ = black_box(ids.try_next_id()))
        },
    },
    Case {
        name: "AtomicI64::fetch_add",
        peer: None,
        run: |n| {
            let counter = AtomicI64::new(1);
            timed(n, || _ = black_box(counter.fetch_add(1, Ordering::Relaxed)))
        },
    },
];

fn main() {
    case_table::main(CASES, || ONE_BLOCK.store(true, Ordering::Relaxed));
}
