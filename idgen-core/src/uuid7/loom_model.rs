use loom::sync::Arc;
use uuid::Uuid;

use super::*;
use crate::clock::ManualClock;

const T0: i64 = 1_700_000_000_000;

fn two_each(ids: &Uuid7Generator<ManualClock>) -> [Uuid; 2] {
    let a = ids.next_uuid().unwrap();
    let b = ids.next_uuid().unwrap();
    assert!(b > a, "a thread's second UUID sorts before its first");
    [a, b]
}

#[test]
fn two_threads_get_distinct_ordered_uuids_in_one_millisecond() {
    loom::model(|| {
        let ids = Arc::new(Uuid7Generator::with_clock(ManualClock::new(T0)));
        let other = Arc::clone(&ids);
        let t = loom::thread::spawn(move || two_each(&other));
        let mine = two_each(&ids);
        let theirs = t.join().unwrap();
        let mut all = [mine[0], mine[1], theirs[0], theirs[1]];
        all.sort();
        assert!(
            all.windows(2).all(|w| w[0] < w[1]),
            "duplicate UUIDs: {all:?}"
        );
        // After both threads are done, the next UUID sorts after all of them.
        assert!(ids.next_uuid().unwrap() > all[3]);
    });
}

#[test]
fn a_clock_tick_during_contention_keeps_order() {
    loom::model(|| {
        let clock = ManualClock::new(T0);
        let ids = Arc::new(Uuid7Generator::with_clock(clock.clone()));
        let other = Arc::clone(&ids);
        let t = loom::thread::spawn(move || two_each(&other));
        let first = ids.next_uuid().unwrap();
        clock.set(T0 + 1);
        let second = ids.next_uuid().unwrap();
        assert!(second > first);
        let theirs = t.join().unwrap();
        let mut all = [first, second, theirs[0], theirs[1]];
        all.sort();
        assert!(
            all.windows(2).all(|w| w[0] < w[1]),
            "duplicate UUIDs: {all:?}"
        );
    });
}
