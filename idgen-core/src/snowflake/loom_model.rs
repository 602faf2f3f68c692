//! Model checks of revocation under every interleaving loom explores:
//! `RUSTFLAGS="--cfg loom" cargo test -p idgen-core --release --lib snowflake::loom_model`.

use std::sync::Arc;

use crate::clock::ManualClock;
use crate::error::Error;
use crate::snowflake::{Fence, Layout, Snowflake};

const T0: i64 = 1_800_000_000_000;

fn layout() -> Layout {
    Layout::builder()
        .epoch_ms(0)
        .timestamp_bits(44)
        .node_bits(1)
        .sequence_bits(2)
        .build()
        .unwrap()
}

/// A renewal (`extend_until`) racing a release (`revoke`): whatever the order, the fence ends
/// revoked, and a generator on it issues nothing more.
#[test]
fn a_renewal_racing_a_revoke_never_reopens_the_fence() {
    loom::model(|| {
        let fence = Fence::new(T0 + 1_000);
        let renewal = {
            let fence = fence.clone();
            loom::thread::spawn(move || fence.extend_until(T0 + 50_000))
        };
        fence.revoke();
        renewal.join().unwrap();
        assert!(fence.is_revoked());
        assert!(!fence.is_open_at(T0));
        let ids = Snowflake::builder()
            .layout(layout())
            .node(0)
            .clock(ManualClock::new(T0))
            .fence(fence)
            .build()
            .unwrap();
        assert!(matches!(ids.next_id(), Err(Error::Fenced { .. })));
    });
}

/// A thread issuing while another revokes: every ID it got is at or below the tick `revoke`
/// returned, and once `revoke` returned, it gets no more.
#[test]
fn revoke_returns_a_bound_on_every_id_issued_and_stops_the_rest() {
    loom::model(|| {
        let clock = ManualClock::new(T0);
        let fence = Fence::new(i64::MAX);
        let ids = Arc::new(
            Snowflake::builder()
                .layout(layout())
                .node(1)
                .clock(clock.clone())
                .fence(fence.clone())
                .build()
                .unwrap(),
        );
        let issuer = {
            let ids = Arc::clone(&ids);
            let clock = clock.clone();
            loom::thread::spawn(move || {
                let mut got = Vec::new();
                for step in 0..2 {
                    clock.set(T0 + step); // a new tick for each ID
                    if let Ok(id) = ids.next_id() {
                        got.push(id);
                    }
                }
                got
            })
        };
        let last = fence.revoke();
        let after = ids.next_id();
        let got = issuer.join().unwrap();
        assert!(matches!(after, Err(Error::Fenced { .. })));
        for id in got {
            let ms = layout().decompose(id).unwrap().unix_ms;
            assert!(
                last.is_some_and(|last| ms <= last),
                "issued at {ms}, but revoke returned {last:?}"
            );
        }
    });
}
