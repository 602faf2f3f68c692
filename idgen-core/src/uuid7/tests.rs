use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use uuid::Uuid;

use super::*;
use crate::clock::ManualClock;

const T0: i64 = 1_700_000_000_000;

/// Counts the UUIDs that do not sort strictly after their predecessor, as bytes and as text.
fn out_of_order(ids: &[Uuid]) -> (usize, usize) {
    let bytes = ids
        .windows(2)
        .filter(|w| w[1].as_bytes() <= w[0].as_bytes())
        .count();
    let text = ids
        .windows(2)
        .filter(|w| w[1].to_string() <= w[0].to_string())
        .count();
    (bytes, text)
}

#[test]
fn hundred_thousand_in_a_tight_loop_are_strictly_increasing() {
    let ids = Uuid7Generator::new();
    let v: Vec<Uuid> = (0..100_000).map(|_| ids.next_uuid().unwrap()).collect();
    assert_eq!(out_of_order(&v), (0, 0));
}

#[test]
fn a_naive_generator_would_fail_the_same_check() {
    // The check above can fail: plain `now_v7`-style random bits within one millisecond give
    // roughly half out of order. Simulated here with a fixed clock and no counter.
    let v: Vec<Uuid> = (0..1_000)
        .map(|_| {
            let mut r = [0u8; 8];
            getrandom::fill(&mut r).unwrap();
            layout(T0 as u64, 0, u64::from_le_bytes(r))
        })
        .collect();
    assert!(out_of_order(&v).0 > 100);
}

#[test]
fn fields_follow_rfc_9562() {
    let ids = Uuid7Generator::with_clock(ManualClock::new(T0));
    let id = ids.next_uuid().unwrap();
    assert_eq!(id.get_version(), Some(uuid::Version::SortRand));
    assert_eq!(id.get_variant(), Variant::RFC4122);
    assert_eq!(timestamp_ms(id).unwrap(), T0);
    // The uuid crate reads the same timestamp.
    let (secs, nanos) = id.get_timestamp().unwrap().to_unix();
    assert_eq!(secs as i64 * 1000 + i64::from(nanos / 1_000_000), T0);
    // A new millisecond's counter starts below 2^15.
    assert!((id.as_u128() >> 64) & 0xfff < 0x800);
}

#[test]
fn counter_overflow_borrows_the_next_millisecond_and_keeps_order() {
    let clock = ManualClock::new(T0);
    let ids = Uuid7Generator::with_clock(clock.clone());
    let v: Vec<Uuid> = (0..200_000).map(|_| ids.next_uuid().unwrap()).collect();
    assert_eq!(out_of_order(&v), (0, 0));
    let first = timestamp_ms(v[0]).unwrap();
    let last = timestamp_ms(*v.last().unwrap()).unwrap();
    assert_eq!(first, T0);
    // The first millisecond holds 65 536 − seed (32 769 to 65 536) UUIDs, each borrowed one
    // 65 536 (its counter carries on from 0): 200 000 UUIDs end in the third borrowed ms.
    assert_eq!(last, T0 + 3);
    // When the clock catches up, the next UUID still sorts after the borrowed ones.
    clock.set(last);
    let next = ids.next_uuid().unwrap();
    assert!(next > *v.last().unwrap());
    // And once the clock passes them, the timestamp follows the clock again.
    clock.set(last + 10);
    assert_eq!(timestamp_ms(ids.next_uuid().unwrap()).unwrap(), last + 10);
}

#[test]
fn a_clock_stepping_back_does_not_break_order() {
    let clock = ManualClock::new(T0);
    let ids = Uuid7Generator::with_clock(clock.clone());
    let a = ids.next_uuid().unwrap();
    clock.step_back(Duration::from_secs(5));
    let b = ids.next_uuid().unwrap();
    assert!(b > a);
    assert_eq!(timestamp_ms(b).unwrap(), T0);
}

#[test]
fn refuses_times_outside_the_48_bit_range() {
    let clock = ManualClock::new(MAX_UNIX_MS + 1);
    let ids = Uuid7Generator::with_clock(clock.clone());
    let err = ids.next_uuid().unwrap_err();
    assert!(matches!(err, Error::Uuid7TimeOutOfRange { unix_ms } if unix_ms == MAX_UNIX_MS + 1));
    assert!(
        err.to_string().contains("to +010889-08-02T05:31:50.655Z"),
        "{err}"
    );

    // The last millisecond works, until its counter is used up: then an error, no wrap.
    clock.set(MAX_UNIX_MS);
    let mut last = ids.next_uuid().unwrap();
    assert_eq!(timestamp_ms(last).unwrap(), MAX_UNIX_MS);
    let mut issued = 1;
    let err = loop {
        match ids.next_uuid() {
            Ok(id) => {
                assert!(id > last);
                last = id;
                issued += 1;
            }
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::Uuid7TimeOutOfRange { .. }));
    assert!((32_769..=65_536).contains(&issued), "{issued}");
}

#[test]
fn timestamp_ms_refuses_other_versions() {
    let v4 = Uuid::from_u128(0x0110c853_1d09_42d8_973e_1194e95b5f19);
    let err = timestamp_ms(v4).unwrap_err();
    assert_eq!(
        err.to_string(),
        "0110c853-1d09-42d8-973e-1194e95b5f19 is not a UUIDv7: its version is 4 and its variant RFC4122"
    );
    assert!(timestamp_ms(Uuid::max()).is_err());
}

#[test]
fn strictly_increasing_across_threads() {
    let ids = Arc::new(Uuid7Generator::new());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let ids = Arc::clone(&ids);
            std::thread::spawn(move || {
                (0..50_000)
                    .map(|_| ids.next_uuid().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let per_thread: Vec<Vec<Uuid>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for v in &per_thread {
        assert_eq!(out_of_order(v), (0, 0));
    }
    let mut all: Vec<Uuid> = per_thread.concat();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 200_000, "duplicates across threads");
}

#[test]
fn a_uuid_made_after_another_thread_s_sorts_after_it() {
    // Ping-pong: each thread receives the other's latest UUID (a happens-before edge), makes
    // one, and checks it is greater. A per-thread counter would fail this.
    let ids = Arc::new(Uuid7Generator::with_clock(ManualClock::new(T0)));
    let (to_b, from_a) = mpsc::channel::<Uuid>();
    let (to_a, from_b) = mpsc::channel::<Uuid>();
    let b = {
        let ids = Arc::clone(&ids);
        std::thread::spawn(move || {
            for seen in from_a {
                let mine = ids.next_uuid().unwrap();
                assert!(mine > seen);
                if to_a.send(mine).is_err() {
                    break;
                }
            }
        })
    };
    let mut seen = ids.next_uuid().unwrap();
    for _ in 0..10_000 {
        to_b.send(seen).unwrap();
        let theirs = from_b.recv().unwrap();
        assert!(theirs > seen);
        seen = ids.next_uuid().unwrap();
        assert!(seen > theirs);
    }
    drop(to_b);
    b.join().unwrap();
}

#[test]
fn the_generator_is_send_and_sync() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<Uuid7Generator>();
    send_sync::<Uuid7Generator<ManualClock>>();
    let ids = Uuid7Generator::with_clock(ManualClock::new(T0));
    ids.next_uuid().unwrap();
    let debug = format!("{ids:?}");
    assert!(
        debug.starts_with("Uuid7Generator { last_unix_ms: 1700000000000, last_counter: "),
        "{debug}"
    );
}
