//! The layout vectors of the core issue, exactly, and every layout error.

use idgen_core::{Error, FieldOrder, Layout, Parts, SnowflakeId};

fn unix_ms(rfc3339: &str) -> i64 {
    rfc3339.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn id(v: i64) -> SnowflakeId {
    SnowflakeId::new(v).unwrap()
}

#[test]
fn twitter_one_second_after_epoch() {
    let node = Layout::TWITTER.node_from_fields(&[1, 1]).unwrap();
    let got = Layout::TWITTER
        .compose_at(1_288_834_975_657, node, 0)
        .unwrap();
    assert_eq!(got.get(), 4_194_439_168);
}

#[test]
fn twitter_2026_round_trip() {
    let t = unix_ms("2026-10-31T12:00:00Z");
    let node = Layout::TWITTER.node_from_fields(&[3, 17]).unwrap();
    let got = Layout::TWITTER.compose_at(t, node, 42).unwrap();
    assert_eq!(got.get(), 2_116_500_430_648_709_162);

    let d = Layout::TWITTER.decompose(got).unwrap();
    assert_eq!(d.unix_ms, t);
    assert_eq!(
        d.node_fields().collect::<Vec<_>>(),
        [("datacenter", 3), ("worker", 17)]
    );
    assert_eq!(d.sequence, 42);
}

#[test]
fn sonyflake_2026() {
    let t = unix_ms("2026-10-31T12:00:00Z");
    assert_eq!(Layout::SONYFLAKE.ticks_at(t).unwrap(), 5_775_840_000);
    let got = Layout::SONYFLAKE.compose_at(t, 2565, 7).unwrap();
    assert_eq!(got.get(), 96_902_515_261_901_317);
    let d = Layout::SONYFLAKE.decompose(got).unwrap();
    assert_eq!(
        (d.ticks, d.unix_ms, d.node, d.sequence),
        (5_775_840_000, t, 2565, 7)
    );
    assert_eq!(Layout::SONYFLAKE.order(), FieldOrder::TimeSequenceNode);
}

#[test]
fn custom_2026_epoch_decodes_the_documented_id() {
    let layout = Layout::builder()
        .epoch_ms(unix_ms("2026-01-01T00:00:00Z"))
        .timestamp_bits(41)
        .node_field("worker", 10)
        .sequence_bits(12)
        .build()
        .unwrap();
    let d = layout.decompose(id(112_719_806_108_546_862)).unwrap();
    assert_eq!(d.unix_ms, unix_ms("2026-11-08T01:08:16.009Z"));
    assert_eq!(d.node_field("worker"), Some(3));
    assert_eq!(d.sequence, 1838);
    assert_eq!(
        layout.compose_at(d.unix_ms, 3, 1838).unwrap().get(),
        112_719_806_108_546_862
    );
}

#[test]
fn twitter_ends_in_2080_without_wrapping() {
    // epoch + (2^41 - 1) ms = 3487858230208 = 2080-07-10T17:30:30.208Z. (The issue text says
    // .209; .208 is the last representable millisecond and .209 the first error.)
    let last = unix_ms("2080-07-10T17:30:30.208Z");
    assert_eq!(Layout::TWITTER.last_unix_ms(), last);
    let id_at_last = Layout::TWITTER.compose_at(last, 1023, 4095).unwrap();
    assert_eq!(id_at_last, SnowflakeId::MAX);

    let err = Layout::TWITTER.compose_at(last + 1, 0, 0).unwrap_err();
    assert!(
        matches!(err, Error::TimeOverflow { unix_ms, last_ms } if unix_ms == last + 1 && last_ms == last)
    );
    assert_eq!(
        err.to_string(),
        "2080-07-10T17:30:30.209Z is after 2080-07-10T17:30:30.208Z, the last instant this layout can represent"
    );
    let err = Layout::TWITTER
        .compose(Parts {
            ticks: 1 << 41,
            node: 0,
            sequence: 0,
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "timestamp 2199023255552 does not fit in 41 bits: the largest timestamp is 2199023255551"
    );
}

#[test]
fn before_the_epoch_is_an_error() {
    let err = Layout::TWITTER
        .compose_at(Layout::TWITTER.epoch_ms() - 1, 0, 0)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "2010-11-04T01:42:54.656Z is before the layout's epoch 2010-11-04T01:42:54.657Z"
    );
    assert!(Layout::TWITTER.compose_at(0, 0, 0).is_err());
}

#[test]
fn sonyflake_lasts_until_2199_03_19() {
    let last = Layout::SONYFLAKE.last_unix_ms();
    let text = jiff::Timestamp::from_millisecond(last).unwrap().to_string();
    assert!(text.starts_with("2199-03-19T"), "{text}");
    assert!(Layout::SONYFLAKE.ticks_at(last).is_ok());
    assert!(Layout::SONYFLAKE.ticks_at(last + 1).is_err());
}

#[test]
fn instagram_takes_a_configurable_epoch() {
    assert_eq!(
        (
            Layout::INSTAGRAM.timestamp_bits(),
            Layout::INSTAGRAM.node_bits(),
            Layout::INSTAGRAM.sequence_bits()
        ),
        (40, 13, 10) // Instagram's "41 bits" would make 64; see the preset's docs.
    );
    // Instagram's own scheme: (ms since epoch) << 23 | shard << 10 | seq, as i64.
    let ms_since_epoch = 1_000_000_000_000u64; // about 31.7 years in
    let theirs = (ms_since_epoch << 23) | (5 << 10) | 7;
    let ours = Layout::INSTAGRAM
        .compose_at(Layout::INSTAGRAM.epoch_ms() + ms_since_epoch as i64, 5, 7)
        .unwrap();
    assert_eq!(ours.as_u64(), theirs);
    let mine = Layout::INSTAGRAM
        .with_epoch_ms(unix_ms("2026-01-01T00:00:00Z"))
        .unwrap();
    let t = unix_ms("2026-06-01T00:00:00Z");
    let got = mine.compose_at(t, 8191, 1023).unwrap();
    let d = mine.decompose(got).unwrap();
    assert_eq!(
        (d.unix_ms, d.node_field("shard"), d.sequence),
        (t, Some(8191), 1023)
    );
}

#[test]
fn every_out_of_range_field_names_field_value_and_limit() {
    let cases = [
        (
            Parts {
                ticks: 0,
                node: 1024,
                sequence: 0,
            },
            "node 1024 does not fit in 10 bits: the largest node is 1023",
        ),
        (
            Parts {
                ticks: 0,
                node: 0,
                sequence: 4096,
            },
            "sequence 4096 does not fit in 12 bits: the largest sequence is 4095",
        ),
    ];
    for (parts, message) in cases {
        assert_eq!(
            Layout::TWITTER.compose(parts).unwrap_err().to_string(),
            message
        );
    }
    assert_eq!(
        Layout::TWITTER
            .node_from_fields(&[1, 32])
            .unwrap_err()
            .to_string(),
        "worker 32 does not fit in 5 bits: the largest worker is 31"
    );
}

#[test]
fn impossible_layouts_are_errors() {
    let cases: Vec<(idgen_core::LayoutBuilder, &str)> = vec![
        (
            Layout::builder()
                .timestamp_bits(42)
                .node_bits(10)
                .sequence_bits(12),
            "= 64 bits, more than the 63",
        ),
        (
            Layout::builder().timestamp_bits(0),
            "timestamp field has 0 bits",
        ),
        (Layout::builder().unit_ms(0), "time unit is 0 ms"),
        (
            Layout::builder().epoch_ms(i64::MAX - 10),
            "does not fit in i64 milliseconds",
        ),
        (
            Layout::builder().node_field("a", 5).node_field("a", 5),
            "name \"a\" is used twice",
        ),
        (Layout::builder().node_field("", 5), "empty name"),
        (
            Layout::builder().node_field("a", 0).node_field("b", 10),
            "has 0 bits",
        ),
        (
            Layout::builder()
                .node_field("a", 1)
                .node_field("b", 1)
                .node_field("c", 1)
                .node_field("d", 1)
                .node_field("e", 1),
            "at most 4",
        ),
    ];
    for (builder, needle) in cases {
        let err = builder.build().unwrap_err();
        assert!(matches!(err, Error::InvalidLayout { .. }));
        assert!(err.to_string().contains(needle), "{err} lacks {needle}");
    }
}

#[test]
fn an_id_from_a_wider_layout_does_not_decompose() {
    let narrow = Layout::builder()
        .timestamp_bits(30)
        .node_bits(4)
        .sequence_bits(4)
        .build()
        .unwrap();
    let err = narrow.decompose(SnowflakeId::MAX).unwrap_err();
    assert!(
        matches!(
            err,
            Error::FieldOutOfRange {
                field: "timestamp",
                bits: 30,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_pre_1970_epoch_and_a_late_instant_is_an_error_not_an_overflow() {
    let layout = Layout::builder()
        .epoch_ms(-9_000_000_000_000_000_000)
        .timestamp_bits(41)
        .node_bits(10)
        .sequence_bits(12)
        .build()
        .unwrap();
    assert!(matches!(
        layout.ticks_at(i64::MAX),
        Err(Error::TimeOverflow { .. })
    ));
    assert!(matches!(
        layout.compose_at(9_000_000_000_000_000_000, 0, 0),
        Err(Error::TimeOverflow { .. })
    ));
    assert_eq!(layout.ticks_at(-9_000_000_000_000_000_000 + 5).unwrap(), 5);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn layout() -> impl Strategy<Value = Layout> {
        (1u8..=63)
            .prop_flat_map(|time| (Just(time), 0u8..=(63 - time)))
            .prop_flat_map(|(time, node)| {
                (
                    Just(time),
                    Just(node),
                    0u8..=(63 - time - node),
                    0u8..=node,
                    any::<bool>(),
                    1u32..=1000,
                    0i64..2_000_000_000_000,
                )
            })
            .prop_map(|(time, node, seq, split, sony, unit, epoch)| {
                let mut b = Layout::builder()
                    .epoch_ms(epoch)
                    .unit_ms(unit)
                    .timestamp_bits(time)
                    .sequence_bits(seq)
                    .order(if sony {
                        FieldOrder::TimeSequenceNode
                    } else {
                        FieldOrder::TimeNodeSequence
                    });
                b = if split > 0 && split < node {
                    b.node_field("high", split).node_field("low", node - split)
                } else {
                    b.node_bits(node)
                };
                // Layouts whose span overflows i64 ms are rejected; fall back to a 1 ms unit.
                b.clone()
                    .build()
                    .unwrap_or_else(|_| b.unit_ms(1).epoch_ms(0).build().unwrap())
            })
    }

    fn below(max: u64) -> impl Strategy<Value = u64> {
        (0u64..=u64::MAX).prop_map(move |v| if max == u64::MAX { v } else { v % (max + 1) })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn compose_and_decompose_are_inverse(
            (layout, ticks, node, sequence) in layout().prop_flat_map(|l| {
                (Just(l), below(l.max_ticks()), below(l.max_node()), below(l.max_sequence()))
            })
        ) {
            let id = layout.compose(Parts { ticks, node, sequence }).unwrap();
            prop_assert!(id.get() >= 0);
            let d = layout.decompose(id).unwrap();
            prop_assert_eq!((d.ticks, d.node, d.sequence), (ticks, node, sequence));
            prop_assert_eq!(d.unix_ms, layout.tick_start_ms(ticks));
            let fields: Vec<u64> = d.node_fields().map(|(_, v)| v).collect();
            prop_assert_eq!(layout.node_from_fields(&fields).unwrap(), node);
            prop_assert_eq!(layout.compose_at(d.unix_ms, node, sequence).unwrap(), id);
        }

        #[test]
        fn ids_sort_by_time_first(
            (layout, a, b) in layout().prop_flat_map(|l| {
                let parts = move || (below(l.max_ticks()), below(l.max_node()), below(l.max_sequence()));
                (Just(l), parts(), parts())
            })
        ) {
            let ia = layout.compose(Parts { ticks: a.0, node: a.1, sequence: a.2 }).unwrap();
            let ib = layout.compose(Parts { ticks: b.0, node: b.1, sequence: b.2 }).unwrap();
            if a.0 < b.0 { prop_assert!(ia < ib); }
        }

        /// Issue 12, item 13: any epoch the builder accepts (far before 1970 too) and any
        /// instant: a tick or a typed error, never an arithmetic panic.
        #[test]
        fn any_epoch_and_any_instant_give_a_tick_or_an_error(
            epoch in any::<i64>(),
            time in 1u8..=41,
            unix_ms in any::<i64>(),
            unit in 1u32..=1000,
        ) {
            let Ok(layout) = Layout::builder()
                .epoch_ms(epoch)
                .unit_ms(unit)
                .timestamp_bits(time)
                .node_bits(10)
                .sequence_bits(12)
                .build() else { return Ok(()) };
            match layout.ticks_at(unix_ms) {
                Ok(ticks) => {
                    prop_assert!(ticks <= layout.max_ticks());
                    prop_assert!(layout.tick_start_ms(ticks) <= unix_ms);
                    let id = layout.compose_at(unix_ms, 0, 0).unwrap();
                    prop_assert_eq!(layout.decompose(id).unwrap().ticks, ticks);
                }
                Err(Error::BeforeEpoch { .. }) => prop_assert!(unix_ms < epoch),
                Err(Error::TimeOverflow { .. }) => prop_assert!(unix_ms > layout.last_unix_ms()),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }

        #[test]
        fn out_of_range_fields_are_rejected(layout in layout(), extra in 1u64..1000) {
            if layout.max_node() < u64::MAX - extra {
                let node = layout.max_node() + extra;
                let is_node_error = matches!(
                    layout.compose(Parts { ticks: 0, node, sequence: 0 }),
                    Err(Error::FieldOutOfRange { field: "node", .. })
                );
                prop_assert!(is_node_error);
            }
            let seq = layout.max_sequence() + extra;
            let is_sequence_error = matches!(
                layout.compose(Parts { ticks: 0, node: 0, sequence: seq }),
                Err(Error::FieldOutOfRange { field: "sequence", .. })
            );
            prop_assert!(is_sequence_error);
        }
    }
}

/// Found by the `plan` fuzz target: an epoch near `i64::MIN` with a span wider than `i64::MAX`
/// ms is a valid layout (epoch + span fits), but `last_unix_ms` multiplied ticks by the unit in
/// i64 first (a panic in debug, a wrapped instant in release).
#[test]
fn an_epoch_near_i64_min_with_a_span_past_i64_max_has_an_exact_last_instant() {
    let layout = Layout::builder()
        .epoch_ms(i64::MIN + 2)
        .unit_ms(3)
        .timestamp_bits(62)
        .node_bits(0)
        .sequence_bits(0)
        .build()
        .unwrap();
    let span = i128::from(layout.max_ticks() + 1) * 3;
    assert!(span > i128::from(i64::MAX));
    let last = i128::from(i64::MIN + 2) + span - 1;
    assert_eq!(i128::from(layout.last_unix_ms()), last);
    assert!(!layout.last_rfc3339().is_empty());
    let err = layout.ticks_at(i64::MAX).unwrap_err();
    assert!(matches!(err, Error::TimeOverflow { last_ms, .. } if i128::from(last_ms) == last));
}

/// Found by the `layout_text` fuzz target: `tick_start_ms` saturated `ticks × unit` at
/// `i64::MAX` before adding a negative epoch, so a valid tick's start came out wrong (and
/// `decompose` gave the wrong instant).
#[test]
fn an_epoch_near_i64_min_gives_exact_tick_starts_up_to_the_last_tick() {
    let layout = Layout::builder()
        .epoch_ms(i64::MIN + 2)
        .unit_ms(3)
        .timestamp_bits(62)
        .node_bits(0)
        .sequence_bits(0)
        .build()
        .unwrap();
    let last_tick = layout.max_ticks();
    let want = i128::from(i64::MIN + 2) + i128::from(last_tick) * 3;
    assert_eq!(i128::from(layout.tick_start_ms(last_tick)), want);
    let id = layout
        .compose(Parts {
            ticks: last_tick,
            node: 0,
            sequence: 0,
        })
        .unwrap();
    assert_eq!(i128::from(layout.decompose(id).unwrap().unix_ms), want);
    assert_eq!(
        layout.ticks_at(layout.tick_start_ms(last_tick)).ok(),
        Some(last_tick)
    );
    assert_eq!(layout.tick_start_ms(u64::MAX), i64::MAX);
}
