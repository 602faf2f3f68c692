//! uuid 1.29 `new_v4` and `now_v7` without the `fast-rng` feature: the same table and
//! callgrind mode as idgen-engine's `per_id` bench, from the same harness (see there).

#[path = "../../case_table/mod.rs"]
mod case_table;

use std::hint::black_box;

use case_table::{Case, timed};

const CASES: &[Case] = &[
    Case {
        name: "uuid Uuid::new_v4 (no fast-rng)",
        peer: None,
        run: |n| timed(n, || _ = black_box(uuid::Uuid::new_v4())),
    },
    Case {
        name: "uuid Uuid::now_v7 (no fast-rng)",
        peer: None,
        run: |n| timed(n, || _ = black_box(uuid::Uuid::now_v7())),
    },
];

fn main() {
    case_table::main(CASES, || {});
}
