//! The generator's promises: uniqueness and order across threads, clock policies, sequence
//! exhaustion, fences and floors.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use idgen_core::{
    ClockPolicy, Error, Fence, Layout, ManualClock, Snowflake, SnowflakeBuilder, SnowflakeId,
};

const T0: i64 = 1_800_000_000_000; // 2027-01-15, well inside every preset's range

/// A generator's builder: `layout`, `node`, on `clock`.
fn builder(layout: Layout, node: u64, clock: &ManualClock) -> SnowflakeBuilder<ManualClock> {
    Snowflake::builder()
        .layout(layout)
        .node(node)
        .clock(clock.clone())
}

fn manual(policy: ClockPolicy) -> (Snowflake<ManualClock>, ManualClock) {
    let clock = ManualClock::new(T0);
    let ids = builder(Layout::TWITTER, 1, &clock)
        .clock_policy(policy)
        .build()
        .unwrap();
    (ids, clock)
}

/// A generator (`layout`, node 1, `policy`) on a manual clock at [`T0`], stopped by a fence
/// valid until `valid_until_ms`.
fn fenced(
    layout: Layout,
    policy: ClockPolicy,
    valid_until_ms: i64,
) -> (Snowflake<ManualClock>, ManualClock, Fence) {
    let clock = ManualClock::new(T0);
    let fence = Fence::new(valid_until_ms);
    let ids = builder(layout, 1, &clock)
        .fence(fence.clone())
        .clock_policy(policy)
        .build()
        .unwrap();
    (ids, clock, fence)
}

fn wait_ms(ms: u64) -> ClockPolicy {
    ClockPolicy::Wait {
        max: Duration::from_millis(ms),
    }
}

fn borrow_ms(ms: u64) -> ClockPolicy {
    ClockPolicy::Borrow {
        max: Duration::from_millis(ms),
    }
}

#[test]
fn four_threads_share_one_generator_4m_distinct_ids_each_thread_increasing() {
    let ids = Arc::new(Snowflake::new(Layout::TWITTER, 1).unwrap());
    let per_thread = 1_000_000;
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let ids = Arc::clone(&ids);
            std::thread::spawn(move || {
                let mut out = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    out.push(ids.next_id().unwrap());
                }
                out
            })
        })
        .collect();
    let mut all: Vec<SnowflakeId> = Vec::with_capacity(4 * per_thread);
    for h in handles {
        let mine = h.join().unwrap();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs are not strictly increasing"
        );
        all.extend(mine);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 4_000_000);
    assert_eq!(ids.stats().ids_issued, 4_000_000);
    // 4,000,000 IDs at 4,096 per ms take at least 977 ticks: the sequence ran out many times.
    assert!(ids.stats().exhaustion_waits > 0);
}

#[test]
fn four_generators_with_different_nodes_never_collide() {
    let handles: Vec<_> = (0..4u64)
        .map(|node| {
            std::thread::spawn(move || {
                let ids = Snowflake::new(Layout::TWITTER, node).unwrap();
                (0..250_000)
                    .map(|_| ids.next_id().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for (node, h) in handles.into_iter().enumerate() {
        for id in h.join().unwrap() {
            assert_eq!(Layout::TWITTER.decompose(id).unwrap().node, node as u64);
            assert!(seen.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(seen.len(), 1_000_000);
}

#[test]
fn refuse_names_how_far_the_clock_went_back() {
    let (ids, clock) = manual(ClockPolicy::Refuse);
    let before = ids.next_id().unwrap();
    clock.step_back(Duration::from_millis(5));
    let err = ids.next_id().unwrap_err();
    assert!(matches!(
        err,
        Error::ClockMovedBackwards {
            behind_ms: 5,
            allowed_ms: 0,
            policy: "refuse"
        }
    ));
    assert!(
        err.to_string()
            .contains("the clock moved backwards by 5 ms"),
        "{err}"
    );
    assert_eq!(ids.stats().backwards_steps, 1);
    assert_eq!(ids.stats().max_backwards, Duration::from_millis(5));
    // Once the clock is past the old timestamp again, IDs resume, still increasing.
    clock.advance(Duration::from_millis(6));
    assert!(ids.next_id().unwrap() > before);
}

#[test]
fn wait_policy_waits_out_a_small_step_back() {
    let (ids, clock) = manual(wait_ms(10));
    let before = ids.next_id().unwrap();
    clock.step_back(Duration::from_millis(3));
    let after = ids.next_id().unwrap();
    assert!(after > before);
    // The (simulated) wait moved the clock back up to the last issued tick.
    assert_eq!(clock.now_ms_for_test(), T0);
    let stats = ids.stats();
    assert_eq!(stats.backwards_steps, 1);
    assert_eq!(stats.max_backwards, Duration::from_millis(3));
    assert_eq!(stats.waited, Duration::from_millis(3));
    assert_eq!(stats.exhaustion_waits, 0);
}

#[test]
fn wait_policy_refuses_a_two_second_step_back() {
    let (ids, clock) = manual(wait_ms(10));
    ids.next_id().unwrap();
    clock.step_back(Duration::from_secs(2));
    let err = ids.next_id().unwrap_err();
    assert!(
        matches!(
            err,
            Error::ClockMovedBackwards {
                behind_ms: 2000,
                allowed_ms: 10,
                policy: "wait"
            }
        ),
        "{err}"
    );
}

#[test]
fn borrow_policy_keeps_issuing_from_the_last_timestamp() {
    let (ids, clock) = manual(borrow_ms(50));
    let first = ids.next_id().unwrap();
    clock.step_back(Duration::from_millis(20));
    let mut last = first;
    for _ in 0..100 {
        let id = ids.next_id().unwrap();
        assert!(id > last);
        assert_eq!(
            Layout::TWITTER.decompose(id).unwrap().unix_ms,
            T0,
            "issued from the last timestamp"
        );
        last = id;
    }
    // No waiting happened: the clock is still 20 ms behind.
    assert_eq!(clock.now_ms_for_test(), T0 - 20);
    clock.step_back(Duration::from_millis(100));
    assert!(matches!(
        ids.next_id(),
        Err(Error::ClockMovedBackwards { behind_ms: 120, .. })
    ));
}

#[test]
fn sequence_exhaustion_waits_for_the_next_tick_and_is_counted() {
    let (ids, clock) = manual(ClockPolicy::Refuse);
    let mut prev = ids.next_id().unwrap();
    for _ in 1..4096 {
        let id = ids.next_id().unwrap();
        assert!(id > prev);
        prev = id;
    }
    assert_eq!(clock.now_ms_for_test(), T0);
    assert_eq!(ids.stats().exhaustion_waits, 0);
    assert_eq!(ids.try_next_id().unwrap(), None, "try_next_id never waits");

    let next = ids.next_id().unwrap(); // the 4,097th: waits one tick
    let d = Layout::TWITTER.decompose(next).unwrap();
    assert_eq!((d.unix_ms, d.sequence), (T0 + 1, 0));
    assert_eq!(clock.now_ms_for_test(), T0 + 1);
    let stats = ids.stats();
    assert_eq!(stats.exhaustion_waits, 1);
    assert_eq!(stats.waited, Duration::from_millis(1));
    assert_eq!(stats.ids_issued, 4097);
}

#[test]
fn sequence_exhaustion_on_the_real_clock_moves_to_the_next_tick() {
    let ids = Snowflake::new(Layout::SONYFLAKE, 1).unwrap();
    let got: Vec<_> = (0..1000).map(|_| ids.next_id().unwrap()).collect();
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    let ticks: HashSet<u64> = got
        .iter()
        .map(|&id| Layout::SONYFLAKE.decompose(id).unwrap().ticks)
        .collect();
    assert!(
        ticks.len() >= 4,
        "1000 IDs at 256 per tick span at least 4 ticks"
    );
    assert!(ids.stats().exhaustion_waits >= 3);
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "current_thread")]
async fn the_async_path_waits_without_blocking_the_runtime() {
    let ids = Arc::new(Snowflake::new(Layout::SONYFLAKE, 1).unwrap());
    // A second task must keep running while the first waits for ticks.
    let ticker = tokio::spawn(async {
        let mut n = 0u32;
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(1)).await;
            n += 1;
        }
        n
    });
    let mut last = ids.next_id_async().await.unwrap();
    for _ in 0..1500 {
        let id = ids.next_id_async().await.unwrap();
        assert!(id > last);
        last = id;
    }
    assert!(ids.stats().exhaustion_waits >= 5);
    assert_eq!(ticker.await.unwrap(), 20);
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "current_thread")]
async fn the_async_path_uses_simulated_waits_on_a_manual_clock() {
    let (ids, clock) = manual(ClockPolicy::Refuse);
    for _ in 0..4096 * 3 {
        ids.next_id_async().await.unwrap();
    }
    assert_eq!(clock.now_ms_for_test(), T0 + 2);
    assert_eq!(ids.stats().exhaustion_waits, 2);
}

#[test]
fn a_floor_from_a_previous_holder_is_never_issued_at_or_below() {
    // The node ID's previous holder issued up to T0 + 2000; our clock reads T0.
    let clock = ManualClock::new(T0);
    let strict = builder(Layout::TWITTER, 3, &clock)
        .clock_policy(wait_ms(100))
        .not_before_ms(T0 + 2000)
        .build()
        .unwrap();
    assert!(matches!(
        strict.next_id(),
        Err(Error::ClockMovedBackwards {
            behind_ms: 2000,
            ..
        })
    ));

    let patient = builder(Layout::TWITTER, 3, &clock)
        .clock_policy(wait_ms(3_000))
        .not_before_ms(T0 + 2000)
        .build()
        .unwrap();
    let id = patient.next_id().unwrap();
    assert_eq!(
        Layout::TWITTER.decompose(id).unwrap().unix_ms,
        T0 + 2001,
        "strictly after the floor"
    );
}

#[test]
fn a_fenced_generator_stops_and_resumes() {
    let (ids, clock, fence) = fenced(Layout::TWITTER, ClockPolicy::default(), T0 + 10);
    let a = ids.next_id().unwrap();
    clock.advance(Duration::from_millis(10));
    let err = ids.next_id().unwrap_err();
    assert!(
        matches!(err, Error::Fenced { now_ms, valid_until_ms } if now_ms == T0 + 10 && valid_until_ms == T0 + 10)
    );
    assert!(ids.try_next_id().is_err());
    fence.extend_until(T0 + 1000);
    let b = ids.next_id().unwrap();
    assert!(b > a);
    assert_eq!(fence.last_issued_ms(), Some(T0 + 10));
    fence.revoke();
    assert!(matches!(ids.next_id(), Err(Error::Fenced { .. })));
}

#[test]
fn time_past_the_layout_is_an_error_not_a_wrap() {
    let clock = ManualClock::new(Layout::TWITTER.last_unix_ms());
    let ids = Snowflake::with_clock(Layout::TWITTER, 1023, clock.clone()).unwrap();
    let last = ids.next_id().unwrap();
    assert!(last.get() > 0);
    clock.advance(Duration::from_millis(1));
    assert!(matches!(ids.next_id(), Err(Error::TimeOverflow { .. })));
    clock.set(Layout::TWITTER.epoch_ms() - 1);
    assert!(matches!(ids.next_id(), Err(Error::BeforeEpoch { .. })));
}

#[test]
fn a_node_out_of_range_is_refused_at_construction() {
    let err = Snowflake::new(Layout::SONYFLAKE, 65_536).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node 65536 does not fit in 16 bits: the largest node is 65535"
    );
    let err = Snowflake::builder()
        .layout(Layout::TWITTER)
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::MissingNode));
}

#[test]
fn ids_carry_the_node_and_increasing_sequence_under_both_orders() {
    for layout in [Layout::TWITTER, Layout::SONYFLAKE, Layout::INSTAGRAM] {
        let node = layout.max_node();
        let ids = Snowflake::with_clock(layout, node, ManualClock::new(T0)).unwrap();
        for expected_seq in 0..10 {
            let d = layout.decompose(ids.next_id().unwrap()).unwrap();
            assert_eq!((d.node, d.sequence), (node, expected_seq));
            assert_eq!(d.ticks, layout.ticks_at(T0).unwrap());
        }
    }
}

trait NowForTest {
    fn now_ms_for_test(&self) -> i64;
}
impl NowForTest for ManualClock {
    fn now_ms_for_test(&self) -> i64 {
        idgen_core::Clock::now_ms(self)
    }
}

/// Issue 12, item 11: under `Borrow`, a used-up tick while the clock is behind moves on to the
/// following ticks without waiting, as long as they stay within the bound ahead of the clock;
/// beyond it, the generator waits until they are within it again.
#[test]
fn borrow_moves_on_to_the_following_ticks_within_its_bound() {
    let clock = ManualClock::new(T0);
    let ids = builder(Layout::SONYFLAKE, 1, &clock)
        .clock_policy(borrow_ms(1_000))
        .build()
        .unwrap();
    let first = ids.next_id().unwrap();
    let start_ms = Layout::SONYFLAKE.decompose(first).unwrap().unix_ms;
    clock.step_back(Duration::from_millis(500));
    // 256 IDs per 10 ms tick: 40 ticks' worth, while the clock stands still 500 ms behind.
    let mut last = first;
    for _ in 0..256 * 40 {
        let id = ids.next_id().unwrap();
        assert!(id > last);
        last = id;
    }
    let stats = ids.stats();
    assert_eq!(stats.waited, Duration::ZERO, "Borrow waited: {stats:?}");
    assert_eq!(stats.exhaustion_waits, 0);
    assert_eq!(clock.now_ms_for_test(), T0 - 500, "the clock did not move");
    let lead = Layout::SONYFLAKE.decompose(last).unwrap().unix_ms - (T0 - 500);
    assert!(
        lead <= 1000,
        "issued {lead} ms ahead of the clock, above the 1 s bound"
    );
    assert_eq!(
        Layout::SONYFLAKE.decompose(last).unwrap().unix_ms,
        start_ms + 10 * 40,
        "ticks borrowed one after another"
    );

    // Borrowing further would run more than 1 s ahead: wait until within the bound again.
    for _ in 0..256 * 70 {
        let id = ids.next_id().unwrap();
        assert!(id > last);
        last = id;
        let ahead = Layout::SONYFLAKE.decompose(id).unwrap().unix_ms - clock.now_ms_for_test();
        assert!(ahead <= 1000, "{ahead} ms ahead of the clock");
    }
    assert!(
        ids.stats().waited > Duration::ZERO,
        "it never waited at the bound"
    );
}

/// Borrowed ticks run ahead of the clock, so a fence must stop them before they pass its
/// deadline (a lease's renewal bound covers only timestamps up to the deadline).
#[test]
fn borrowed_ticks_never_pass_the_fence_deadline() {
    let (ids, clock, _fence) = fenced(Layout::SONYFLAKE, borrow_ms(1_000), T0 + 100);
    ids.next_id().unwrap();
    clock.step_back(Duration::from_millis(50));
    let mut max_ms = 0;
    loop {
        match ids.next_id() {
            Ok(id) => max_ms = max_ms.max(Layout::SONYFLAKE.decompose(id).unwrap().unix_ms),
            Err(Error::Fenced { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(max_ms < T0 + 100, "issued at {max_ms}, past the deadline");
}

/// Issue 12, item 7: a lease brings its node ID and fence; giving the builder another node ID
/// or fence as well is an error, in whichever order the calls come.
#[test]
fn a_lease_with_a_node_or_fence_of_its_own_is_refused_in_any_order() {
    use idgen_core::NodeLease;
    struct Leased(Fence);
    impl NodeLease for Leased {
        fn node(&self) -> u64 {
            9
        }
        fn fence(&self) -> Fence {
            self.0.clone()
        }
        fn not_before_ms(&self) -> Option<i64> {
            None
        }
    }
    let lease = || Leased(Fence::new(i64::MAX));
    let refused = [
        Snowflake::builder().lease(lease()).node(3).build(),
        Snowflake::builder().node(3).lease(lease()).build(),
        Snowflake::builder()
            .lease(lease())
            .fence(Fence::new(i64::MAX))
            .build(),
        Snowflake::builder()
            .fence(Fence::new(i64::MAX))
            .lease(lease())
            .build(),
        Snowflake::builder()
            .lease(lease())
            .node_id(idgen_core::NodeId::Fixed(9))
            .build(),
        Snowflake::builder().lease(lease()).lease(lease()).build(),
    ];
    for (i, outcome) in refused.into_iter().enumerate() {
        let err = outcome
            .err()
            .unwrap_or_else(|| panic!("case {i} was accepted"));
        assert!(
            matches!(err, Error::InvalidOptions { .. }),
            "case {i}: {err}"
        );
    }
    // The lease alone: its node ID, fenced by its fence.
    let fence = Fence::new(i64::MAX);
    let ids = Snowflake::builder()
        .lease(Leased(fence.clone()))
        .build()
        .unwrap();
    assert_eq!(ids.node(), 9);
    fence.revoke();
    assert!(matches!(
        ids.next_id(),
        Err(Error::Fenced {
            valid_until_ms: i64::MIN,
            ..
        })
    ));
}

/// A generator built on a fence that was already revoked never issues.
#[test]
fn a_generator_built_on_a_revoked_fence_never_issues() {
    let fence = Fence::new(i64::MAX);
    assert_eq!(fence.revoke(), None);
    let ids = Snowflake::builder().node(1).fence(fence).build().unwrap();
    let err = ids.next_id().unwrap_err();
    assert!(err.to_string().contains("released or lost"), "{err}");
}

/// The issue count is kept per tick, not per ID: it must stay exact across tick changes, a
/// floor (which is not an issued ID), borrowed ticks and a revoke.
#[test]
fn the_issue_count_is_exact_across_ticks_floors_and_borrowing() {
    let clock = ManualClock::new(T0);
    let fence = Fence::new(i64::MAX);
    let ids = builder(Layout::SONYFLAKE, 1, &clock)
        .fence(fence.clone())
        .not_before_ms(T0 + 20)
        .clock_policy(borrow_ms(1_000))
        .build()
        .unwrap();
    assert_eq!(ids.stats().ids_issued, 0, "the floor is not an issued ID");
    for n in 1..=1000u64 {
        ids.next_id().unwrap();
        assert_eq!(ids.stats().ids_issued, n);
        if n % 300 == 0 {
            clock.advance(Duration::from_millis(50));
        }
    }
    fence.revoke();
    assert!(ids.next_id().is_err());
    assert_eq!(
        ids.stats().ids_issued,
        1000,
        "a revoke does not change the count"
    );
}
