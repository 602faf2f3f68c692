//! `fill_ids_on_insert!`'s `before_save` waits for a Snowflake ID on the runtime: a generator
//! whose tick is used up, or whose clock is behind, never puts the runtime's thread to sleep.
//!
//! Deterministic: the clock moves only when a task of the same current-thread runtime moves
//! it, and a blocking wait on the clock is recorded (and ends at once) instead of blocking.
//! So the insert can only get its ID after that other task ran on the one runtime thread; code
//! that waited on the thread would record a blocking wait. (Its own binary: the generator is
//! process-wide.)

#![allow(unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::SeqCst};

use idgen_seaorm::{Clock, Layout, Snowflake};
use sea_orm::{ActiveModelTrait, ActiveValue::NotSet, ActiveValue::Set, ConnectionTrait, Schema};

mod event {
    use idgen_seaorm::SnowflakeId;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "events")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: SnowflakeId,
        pub kind: String,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    idgen_seaorm::fill_ids_on_insert!(id);
}

/// A real-time clock as far as the generator knows (`is_simulated` is false), whose time only
/// moves when a task calls [`SteppedClock::set`].
#[derive(Clone, Default)]
struct SteppedClock {
    now: Arc<AtomicI64>,
    blocking_waits: Arc<AtomicU64>,
}

impl SteppedClock {
    fn set(&self, ms: i64) {
        self.now.store(ms, SeqCst);
    }
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> i64 {
        self.now.load(SeqCst)
    }

    /// What the blocking path calls: counted, then the time moves so the test ends.
    fn wait_until(&self, target_ms: i64) {
        self.blocking_waits.fetch_add(1, SeqCst);
        self.now.fetch_max(target_ms, SeqCst);
    }
}

const T: i64 = 1_800_000_000_000;

#[test]
fn before_save_waits_on_the_runtime_for_a_used_up_tick_and_a_clock_behind() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let clock = SteppedClock::default();
        clock.set(T);
        let ids = Arc::new(
            Snowflake::builder()
                .layout(Layout::TWITTER)
                .node(9)
                .clock(clock.clone())
                .build()
                .unwrap(),
        );
        idgen_seaorm::set_generator(Arc::clone(&ids)).unwrap();
        let db = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let schema = Schema::new(db.get_database_backend());
        db.execute(&schema.create_table_from_entity(event::Entity))
            .await
            .unwrap();
        // Inserts the event `kind` while a task sets the clock to `ms`: its ID waits for that
        // task (so on the runtime, never blocking its one thread) and carries that time.
        // `waiting` says for what.
        let insert_when_the_clock_reaches = |kind: &str, ms: i64, waiting: &'static str| {
            let ticker = tokio::spawn({
                let clock = clock.clone();
                async move { clock.set(ms) }
            });
            // `id: NotSet`: the ID comes from `before_save`, not from `new()`.
            let insert = event::ActiveModel {
                id: NotSet,
                kind: Set(kind.to_owned()),
            }
            .insert(&db);
            let blocking_waits = &clock.blocking_waits;
            async move {
                let row = insert.await.unwrap();
                assert_eq!(
                    blocking_waits.load(SeqCst),
                    0,
                    "before_save blocked the runtime thread on {waiting}"
                );
                assert!(ticker.is_finished());
                assert_eq!(Layout::TWITTER.decompose(row.id).unwrap().unix_ms, ms);
            }
        };

        // Tick T's sequence used up: the next ID needs tick T + 1, which only the ticker makes.
        while ids.try_next_id().unwrap().is_some() {}
        insert_when_the_clock_reaches("after a used-up tick", T + 1, "a used-up tick").await;
        assert_eq!(ids.stats().exhaustion_waits, 1);

        // The clock steps back 1 ms (within the default policy, wait up to 10 ms): the next ID
        // waits until the clock is past T + 1 again.
        clock.set(T);
        insert_when_the_clock_reaches("after a step back", T + 2, "a clock behind").await;
        assert_eq!(ids.stats().backwards_steps, 1);
    });
}
