//! `Layout::plan` over a grid of inputs, checked against `Layout`'s own limits and against an
//! exhaustive search that shares no code with the planner.
//!
//! For every input the planner either gives a layout that `Layout` accepts and whose
//! `node_capacity`, `ids_per_second`, `lifetime_ms`, `total_bits` and epoch meet every input,
//! or refuses; a refusal is right when the exhaustive search finds no layout either, its bit
//! count is the fewest that work, and each "at most" it offers is met while one more is not.

use idgen_core::Layout;
use idgen_core::snowflake::plan::{PlanError, Requirements, TooWide};

const EPOCH_2026: i64 = 1_767_225_600_000;
/// 365.2425 days, written out here rather than taken from the planner.
const YEAR: u128 = 365_2425 * 86_400 * 1000 / 10_000;

/// Whether `layout` meets every input, by `Layout`'s own methods.
fn meets(r: &Requirements, layout: &Layout) -> bool {
    layout.epoch_ms() == r.epoch_ms
        && layout.total_bits() <= r.max_bits
        && layout.node_capacity() >= r.nodes
        && layout.ids_per_second() >= r.rate_per_node
        && u128::from(layout.lifetime_ms()) >= u128::from(r.years) * YEAR
}

fn layout(epoch_ms: i64, unit_ms: u32, time: u8, node: u8, seq: u8) -> Option<Layout> {
    Layout::builder()
        .epoch_ms(epoch_ms)
        .unit_ms(unit_ms)
        .timestamp_bits(time)
        .node_bits(node)
        .sequence_bits(seq)
        .build()
        .ok()
}

/// The longest tick (ms) at which `seq` sequence bits still give `rate` IDs/s, found by
/// bisection on `Layout::ids_per_second`; `None` when not even 1 ms does.
fn longest_unit(seq: u8, rate: u64) -> Option<u32> {
    let fast_enough =
        |unit: u32| layout(0, unit, 1, 0, seq).is_some_and(|l| l.ids_per_second() >= rate);
    if !fast_enough(1) {
        return None;
    }
    let (mut lo, mut hi) = (1u32, u32::MAX);
    if fast_enough(hi) {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fast_enough(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// Every layout shape within `r.max_bits`, exhaustively: every node width, every sequence
/// width, the rest to the timestamp (more timestamp bits never shorten the lifetime), at the
/// longest tick the rate allows (a longer tick never shortens it either), or the longest that
/// `Layout` accepts from the epoch. Returns a layout that meets `r`, if any exists.
fn exhaustive(r: &Requirements, units: &[Option<u32>; 64]) -> Option<Layout> {
    for node in 0..=r.max_bits {
        for seq in 0..=r.max_bits - node {
            let time = r.max_bits - node - seq;
            let Some(unit) = units[usize::from(seq)] else {
                continue;
            };
            if time == 0 {
                continue;
            }
            let found = match layout(r.epoch_ms, unit, time, node, seq) {
                Some(l) => Some(l),
                // The span passes i64 milliseconds: the longest tick that does not.
                None => {
                    let builds = |u: u32| layout(r.epoch_ms, u, time, node, seq).is_some();
                    if !builds(1) {
                        None
                    } else {
                        let (mut lo, mut hi) = (1u32, unit);
                        while hi - lo > 1 {
                            let mid = lo + (hi - lo) / 2;
                            if builds(mid) {
                                lo = mid;
                            } else {
                                hi = mid;
                            }
                        }
                        layout(r.epoch_ms, lo, time, node, seq)
                    }
                }
            };
            if let Some(l) = found
                && meets(r, &l)
            {
                return Some(l);
            }
        }
    }
    None
}

fn units_for(rate: u64) -> [Option<u32>; 64] {
    std::array::from_fn(|seq| longest_unit(seq as u8, rate))
}

fn check_refusal(r: &Requirements, w: &TooWide, units: &[Option<u32>; 64]) {
    let what = format!("{r:?}: {w}");
    assert_eq!(&w.requirements, r, "{what}");
    assert!(w.needs_bits() > r.max_bits, "{what}");
    // The bit count is the fewest that work.
    if w.needs_bits() <= 63 {
        let fits = exhaustive(&r.with_max_bits(w.needs_bits()), units);
        assert!(fits.is_some(), "{what}: nothing in {} bits", w.needs_bits());
        // And the narrowest layout it names is one of them.
        let named = layout(
            r.epoch_ms,
            w.unit_ms,
            w.timestamp_bits,
            w.node_bits,
            w.sequence_bits,
        )
        .unwrap();
        assert!(meets(&r.with_max_bits(w.needs_bits()), &named), "{what}");
    }
    if w.needs_bits() - 1 > r.max_bits && w.needs_bits() - 1 <= 63 {
        let fewer = exhaustive(&r.with_max_bits(w.needs_bits() - 1), units);
        assert!(fewer.is_none(), "{what}: {fewer:?} in fewer bits");
    }
    // Each "at most" is met, and one more is not.
    let years = |y: u32| Requirements { years: y, ..*r };
    match w.max_years {
        Some(y) => {
            assert!(exhaustive(&years(y), units).is_some(), "{what}: {y} years");
            assert!(exhaustive(&years(y + 1), units).is_none(), "{what}");
        }
        None => assert!(exhaustive(&years(1), units).is_none(), "{what}"),
    }
    let rate = |rate: u64| Requirements {
        rate_per_node: rate,
        ..*r
    };
    match w.max_rate_per_node {
        Some(v) => {
            assert!(
                exhaustive(&rate(v), &units_for(v)).is_some(),
                "{what}: {v}/s"
            );
            assert!(
                exhaustive(&rate(v + 1), &units_for(v + 1)).is_none(),
                "{what}"
            );
        }
        None => assert!(exhaustive(&rate(1), &units_for(1)).is_none(), "{what}"),
    }
    let nodes = |n: u64| Requirements { nodes: n, ..*r };
    match w.max_nodes {
        Some(n) => {
            assert!(exhaustive(&nodes(n), units).is_some(), "{what}: {n} nodes");
            assert!(exhaustive(&nodes(n + 1), units).is_none(), "{what}");
        }
        None => assert!(exhaustive(&nodes(1), units).is_none(), "{what}"),
    }
}

#[test]
fn every_plan_meets_its_inputs_and_every_refusal_is_right() {
    let nodes = [1, 2, 3, 100, 128, 1024, 1025, 1 << 20, u64::MAX];
    let rates = [
        1,
        2,
        999,
        1000,
        1001,
        25_600,
        100_000,
        1_000_000_000,
        u64::MAX,
    ];
    let years = [1, 10, 50, 87, 100, 1000, 100_000, 1_000_000_000];
    let max_bits = [1, 8, 20, 32, 41, 53, 63];
    // This year, and an epoch 1500 years before the last instant an i64 of milliseconds holds
    // (where the spare bits cannot all go to the timestamp).
    let epochs = [EPOCH_2026, i64::MAX - 1500 * YEAR as i64];
    let mut inputs = Vec::new();
    for rate in rates {
        for n in nodes {
            for y in years {
                for bits in max_bits {
                    for epoch in epochs {
                        inputs.push(
                            Requirements::new(n, rate, y)
                                .with_max_bits(bits)
                                .with_epoch_ms(epoch),
                        );
                    }
                }
            }
        }
    }
    let (mut planned, mut refused, mut too_long) = (0, 0, 0);
    let mut units = (0, units_for(0));
    for r in inputs {
        if units.0 != r.rate_per_node {
            units = (r.rate_per_node, units_for(r.rate_per_node));
        }
        let units = &units.1;
        match Layout::plan(&r) {
            Ok(plan) => {
                planned += 1;
                let l = plan.layout;
                assert!(meets(&r, &l), "{r:?}: {l:?}");
                assert!(meets(&r, &plan.narrowest), "{r:?}: {plan:?}");
                // Layout accepts it: built again from its parts, it is the same.
                let again = layout(
                    l.epoch_ms(),
                    l.unit_ms(),
                    l.timestamp_bits(),
                    l.node_bits(),
                    l.sequence_bits(),
                );
                assert_eq!(again, Some(l), "{r:?}");
                assert!(exhaustive(&r, units).is_some(), "{r:?}");
            }
            Err(PlanError::TooWide(w)) => {
                refused += 1;
                assert!(exhaustive(&r, units).is_none(), "{r:?}: {w}");
                check_refusal(&r, &w, units);
            }
            Err(PlanError::TooLong { .. }) => {
                too_long += 1;
                let room = i128::from(i64::MAX) - i128::from(r.epoch_ms) + 1;
                assert!(i128::from(r.years) * YEAR as i128 > room, "{r:?}");
            }
            Err(e) => panic!("{r:?}: {e}"),
        }
    }
    // The grid covers all three outcomes.
    assert!(
        planned > 100 && refused > 100 && too_long > 0,
        "{planned} {refused} {too_long}"
    );
}

#[test]
fn bad_inputs_are_typed_errors() {
    let ok = Requirements::new(1, 1, 1).with_epoch_ms(EPOCH_2026);
    let cases = [
        (Requirements { nodes: 0, ..ok }, PlanError::ZeroNodes),
        (
            Requirements {
                rate_per_node: 0,
                ..ok
            },
            PlanError::ZeroRate,
        ),
        (Requirements { years: 0, ..ok }, PlanError::ZeroYears),
        (ok.with_max_bits(0), PlanError::MaxBits { max_bits: 0 }),
        (ok.with_max_bits(64), PlanError::MaxBits { max_bits: 64 }),
        (ok.with_max_bits(255), PlanError::MaxBits { max_bits: 255 }),
        (
            Requirements {
                years: u32::MAX,
                ..ok
            },
            PlanError::TooLong {
                years: u32::MAX,
                epoch_ms: EPOCH_2026,
            },
        ),
        (
            ok.with_epoch_ms(i64::MAX),
            PlanError::TooLong {
                years: 1,
                epoch_ms: i64::MAX,
            },
        ),
    ];
    for (r, want) in cases {
        assert_eq!(Layout::plan(&r), Err(want), "{r:?}");
    }
    // The extremes that are valid plan or refuse, never panic.
    for r in [
        Requirements::new(u64::MAX, u64::MAX, u32::MAX).with_epoch_ms(i64::MIN),
        Requirements::new(u64::MAX, u64::MAX, 1).with_epoch_ms(i64::MIN),
        Requirements::new(1, 1, 1).with_epoch_ms(i64::MIN),
        Requirements::new(1, 1, 1).with_epoch_ms(i64::MAX - YEAR as i64),
        Requirements::new(1, u64::MAX, 1).with_max_bits(1),
    ] {
        match Layout::plan(&r) {
            Ok(plan) => assert!(meets(&r, &plan.layout), "{r:?}"),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn the_choice_is_the_documented_one() {
    let r = |n, rate, y, bits| {
        Requirements::new(n, rate, y)
            .with_max_bits(bits)
            .with_epoch_ms(EPOCH_2026)
    };
    // (nodes, rate, years, max bits) → (unit ms, node, seq, time bits).
    for (needs, want) in [
        // Every preferred tick needs 48 bits: the finest wins, 5 spare bits to the timestamp.
        (r(1024, 100_000, 50, 63), (1, 10, 7, 46)),
        // 1 ID/s: 1 s ticks need 29 timestamp bits for 10 years, 1 ms ticks 39.
        (r(1, 1, 10, 40), (1000, 0, 0, 40)),
        // Sonyflake's rate and node count over 87 years in 53 bits: the JS_SAFE preset.
        (r(128, 25_600, 87, 53), (10, 7, 8, 38)),
    ] {
        let l = Layout::plan(&needs).unwrap().layout;
        let got = (
            l.unit_ms(),
            l.node_bits(),
            l.sequence_bits(),
            l.timestamp_bits(),
        );
        assert_eq!(got, want, "{needs:?}");
    }
    assert_eq!(
        Layout::plan(&r(128, 25_600, 87, 53)).unwrap().layout,
        Layout::JS_SAFE
    );
    // 3 IDs/s for 10 years: the preferred ticks need 31 bits, some other tick 30.
    let needs = r(128, 3, 10, 7 + 30);
    assert!(Layout::plan(&needs.with_max_bits(7 + 29)).is_err());
    match Layout::plan(&needs) {
        Ok(plan) => {
            assert!(!plan.preferred_unit(), "{plan:?}");
            assert!(meets(&needs, &plan.layout));
        }
        Err(e) => panic!("{e}"),
    }
}

proptest::proptest! {
    /// Random inputs between the grid's points: the same two outcomes, checked the same way.
    #[test]
    fn random_inputs_plan_or_refuse_rightly(
        nodes in 1u64..=1 << 24,
        rate in 1u64..=100_000_000,
        years in 1u32..=10_000,
        max_bits in 1u8..=63,
    ) {
        let r = Requirements::new(nodes, rate, years)
            .with_max_bits(max_bits)
            .with_epoch_ms(EPOCH_2026);
        let units = units_for(rate);
        match Layout::plan(&r) {
            Ok(plan) => {
                proptest::prop_assert!(meets(&r, &plan.layout), "{:?}: {:?}", r, plan);
                proptest::prop_assert!(meets(&r, &plan.narrowest), "{:?}: {:?}", r, plan);
            }
            Err(PlanError::TooWide(w)) => {
                proptest::prop_assert!(exhaustive(&r, &units).is_none(), "{:?}: {}", r, w);
                check_refusal(&r, &w, &units);
            }
            Err(e) => proptest::prop_assert!(false, "{:?}: {}", r, e),
        }
    }
}
