use std::time::Duration;

use super::*;
use idgen_sql::Dialect;

fn all_policies() -> [ClockPolicy; 3] {
    [
        ClockPolicy::Refuse,
        ClockPolicy::Wait {
            max: Duration::from_millis(10),
        },
        ClockPolicy::Borrow {
            max: Duration::from_millis(50),
        },
    ]
}

#[test]
fn the_function_carries_the_layouts_numbers() {
    let layout = Layout::SONYFLAKE;
    let g = DbGenerator::new(layout);
    let (time_shift, node_shift, seq_shift) = layout.shifts();
    for dialect in [Dialect::Postgres, Dialect::MySql] {
        let sql = g.routine_sql(dialect, 3).unwrap().join("\n");
        for needle in [
            format!("{}", layout.epoch_ms()),
            format!("{}", layout.last_unix_ms()),
            format!("<< {time_shift})"),
            format!("<< {node_shift})"),
            format!("<< {seq_shift})"),
            format!("& {})", layout.max_sequence()),
        ] {
            assert!(sql.contains(&needle), "{dialect}: {needle} missing");
        }
    }
}

#[test]
fn only_the_borrow_policy_issues_ahead_of_the_clock_without_sleeping() {
    for policy in all_policies() {
        let g = DbGenerator::new(Layout::TWITTER).clock_policy(policy);
        for dialect in [Dialect::Postgres, Dialect::MySql] {
            let sql = g.routine_sql(dialect, 0).unwrap().join("\n");
            let borrows = sql.contains("IF v_tick = v_now_tick + 1 THEN");
            assert_eq!(
                borrows,
                matches!(policy, ClockPolicy::Borrow { .. }),
                "{policy}"
            );
            let allowed = format!("(policy {} allows {} ms)", policy, policy.tolerance_ms());
            assert!(sql.contains(&allowed), "{dialect} {policy}");
        }
    }
}

#[test]
fn names_are_checked_and_quoted_per_dialect() {
    let g = DbGenerator::new(Layout::TWITTER)
        .function("app.next_id")
        .unwrap()
        .state_table("app.gen_state")
        .unwrap()
        .lease_table("app.leases")
        .unwrap();
    let pg = g.migration_sql(Dialect::Postgres).unwrap().join("\n");
    assert!(pg.contains("CREATE TABLE IF NOT EXISTS \"app\".\"gen_state\""));
    assert!(pg.contains("CREATE SEQUENCE IF NOT EXISTS \"app\".\"next_id_count\""));
    assert!(pg.contains("\"app\".\"next_id_decode\"(id bigint"));
    let pg = g.function_sql(Dialect::Postgres, 1).unwrap();
    assert!(pg.contains("\"app\".\"next_id\"()"));
    assert!(pg.contains("nextval('\"app\".\"next_id_count\"'::regclass)"));
    let fence = g.fence_sql(Dialect::Postgres, 1).unwrap().join("\n");
    assert!(fence.contains("ON \"app\".\"leases\""));
    assert!(fence.contains("OLD.holder = 'database:app.next_id'"));
    let my = g.routine_sql(Dialect::MySql, 1).unwrap().join("\n");
    assert!(my.contains("`app`.`next_id`()"));
    assert!(my.contains("NEXTVAL(`app`.`next_id_count`)"));
    let long = "f".repeat(49);
    let err = DbGenerator::new(Layout::TWITTER)
        .function(&long)
        .unwrap_err();
    assert!(err.to_string().contains("is too long"), "{err}");
    assert!(
        DbGenerator::new(Layout::TWITTER)
            .function(&long[1..])
            .is_ok()
    );
    for bad in ["", "a b", "x'y", "a.b.c", "9a"] {
        let err = DbGenerator::new(Layout::TWITTER).function(bad).unwrap_err();
        assert!(err.to_string().contains("generator function name"), "{err}");
        assert!(DbGenerator::new(Layout::TWITTER).state_table(bad).is_err());
        assert!(DbGenerator::new(Layout::TWITTER).lease_table(bad).is_err());
    }
    let err = g
        .column_default_sql(Dialect::Postgres, "orders", "id; --")
        .unwrap_err();
    assert!(err.to_string().contains("column name \"id; --\""), "{err}");
}

#[test]
fn a_claimed_nodes_last_timestamp_becomes_a_used_up_tick() {
    let layout = Layout::builder()
        .epoch_ms(1_000)
        .unit_ms(10)
        .timestamp_bits(30)
        .node_bits(8)
        .sequence_bits(4)
        .build()
        .unwrap();
    let g = DbGenerator::new(layout);
    assert_eq!(g.initial_word(None).unwrap(), 0);
    assert_eq!(g.initial_word(Some(999)).unwrap(), 0);
    // 1_000 + 57 ms is in tick 5.
    assert_eq!(g.initial_word(Some(1_057)).unwrap(), (5 << 4) | 15);
    assert_eq!(g.last_timestamp_ms((5 << 4) | 15), Some(1_050));
    let past_end = layout.last_unix_ms() + 1;
    assert!(matches!(
        g.initial_word(Some(past_end)).map_err(|e| e.into_kind()),
        Err(ErrorKind::Id(idgen_core::Error::TimeOverflow { .. }))
    ));
}

#[test]
fn database_errors_become_the_rust_generators_errors() {
    let g = DbGenerator::new(Layout::TWITTER).clock_policy(ClockPolicy::Borrow {
        max: Duration::from_millis(50),
    });
    let err = g
        .error_from_database(
            "IDG01",
            "idgen: the clock moved backwards by 80 ms (policy borrow allows 50 ms); no ID was issued",
        )
        .unwrap();
    assert_eq!(
        err.to_string(),
        "the clock moved backwards by 80 ms (policy borrow allows 50 ms); no ID was issued"
    );
    let err = g
        .error_from_database("IDG02", "idgen: next_id2 holds no node ID lease")
        .unwrap();
    assert!(matches!(
        err,
        idgen_core::Error::Fenced {
            valid_until_ms: i64::MIN,
            ..
        }
    ));
    let err = g
        .error_from_database(
            "IDG03",
            "idgen: the clock reads -5 ms, before the layout's epoch",
        )
        .unwrap();
    assert!(matches!(
        err,
        idgen_core::Error::BeforeEpoch { unix_ms: -5, .. }
    ));
    let err = g
        .error_from_database(
            "IDG04",
            "idgen: 99999999999999 ms is after the last instant",
        )
        .unwrap();
    assert!(matches!(
        err,
        idgen_core::Error::TimeOverflow {
            unix_ms: 99_999_999_999_999,
            ..
        }
    ));
    assert!(g.error_from_database("IDG01", "no numbers").is_none());
}

#[test]
fn mysql_trigger_names_follow_the_table() {
    let g = DbGenerator::new(Layout::TWITTER);
    let sql = g
        .column_default_sql(Dialect::MySql, "shop.orders", "id")
        .unwrap();
    assert!(sql.starts_with(
        "CREATE TRIGGER `shop`.`orders_id_idgen` BEFORE INSERT ON `shop`.`orders` FOR EACH ROW"
    ));
    assert!(sql.contains("SET NEW.`id` = `idgen_next_id`()"));
}

#[test]
fn sqlite_is_refused_by_name() {
    let g = DbGenerator::new(Layout::TWITTER);
    let err = g.migration_sql(Dialect::Sqlite).unwrap_err();
    assert!(err.to_string().contains("SQLite has neither"), "{err}");
    assert!(g.function_sql(Dialect::Sqlite, 0).is_err());
    assert!(g.next_id_sql(Dialect::Sqlite).is_err());
}

#[test]
fn a_node_the_layout_cannot_hold_is_refused() {
    let g = DbGenerator::new(Layout::SONYFLAKE);
    let last = Layout::SONYFLAKE.node_capacity() - 1;
    assert!(g.function_sql(Dialect::Postgres, last).is_ok());
    let err = g.function_sql(Dialect::Postgres, last + 1).unwrap_err();
    assert!(
        err.to_string().contains(&format!("node ID {}", last + 1)),
        "{err}"
    );
}

#[test]
fn helpers_are_named_after_the_function() {
    let g = DbGenerator::new(Layout::TWITTER)
        .function("next_id")
        .unwrap();
    // A bare "next_id" has no stem to keep: the suffixes are appended.
    assert_eq!(g.helper_names()[1], "next_id_min_id_at");
    let g = DbGenerator::new(Layout::TWITTER)
        .function("app.next_id")
        .unwrap();
    assert_eq!(g.helper_names()[2], "app.next_id_max_id_at");
    let g = DbGenerator::new(Layout::TWITTER)
        .function("orders_next_id")
        .unwrap();
    assert_eq!(g.helper_names()[0], "orders_decode");
}

#[test]
fn the_lock_key_is_stable_and_positive() {
    assert_eq!(lock_key("idgen_next_id"), lock_key("idgen_next_id"));
    assert_ne!(lock_key("idgen_next_id"), lock_key("idgen_next_id2"));
    for name in ["", "a", "idgen_next_id", "ops.order_key"] {
        assert!(lock_key(name) >= 0);
    }
}

/// The protocol of the function's fast path and jump, as a model over every interleaving of
/// three callers, a clock that moves on, and the jumps they make (a unit test of the logic; the
/// SQL itself runs against real servers in idgen-sqlx's tests).
mod protocol {
    use std::collections::HashSet;

    /// Two IDs a tick, so ticks run out and jumps happen often.
    const SEQ_BITS: u32 = 1;

    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    enum Pc {
        ReadBase,
        Draw,
        ReadAgain,
        /// Holds the jump lock.
        JumpRead,
        JumpSet,
        Done,
    }

    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    struct Caller {
        pc: Pc,
        base: i64,
        count: i64,
        /// The base a jump read under the lock.
        jump_base: i64,
        issued: Vec<i64>,
        tries: u32,
    }

    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    struct World {
        count: i64,
        base: i64,
        lock: Option<usize>,
        now_tick: i64,
        clock_moves: u32,
        callers: Vec<Caller>,
    }

    /// A caller gives up after this many draws.
    const MAX_TRIES: u32 = 4;
    const CLOCK_MOVES: u32 = 2;

    /// Runs step `who` (one of three callers, or the clock when `who == callers.len()`); `false` if it
    /// cannot move. `double_read` is the real protocol; without it, the base is read once,
    /// after the draw (the negative control).
    fn step(w: &mut World, who: usize, wanted: usize, double_read: bool) -> bool {
        if who == w.callers.len() {
            if w.clock_moves == 0 {
                return false;
            }
            w.clock_moves -= 1;
            w.now_tick += 1;
            return true;
        }
        let c = &mut w.callers[who];
        match c.pc {
            Pc::Done => return false,
            Pc::ReadBase => {
                c.base = w.base;
                c.pc = Pc::Draw;
            }
            Pc::Draw => {
                w.count += 1;
                c.count = w.count;
                c.tries += 1;
                c.pc = Pc::ReadAgain;
            }
            Pc::ReadAgain => {
                let again = w.base;
                let seen = if double_read { c.base } else { again };
                if again != seen {
                    c.pc = if c.tries >= MAX_TRIES {
                        Pc::Done
                    } else {
                        Pc::ReadBase
                    };
                    return true;
                }
                let word = c.count + seen;
                let tick = word >> SEQ_BITS;
                if tick < w.now_tick {
                    if w.lock.is_some() {
                        return false; // waits for the lock
                    }
                    w.lock = Some(who);
                    c.pc = Pc::JumpRead;
                } else {
                    // In the tick, or ahead (the call waits for its tick, then issues).
                    c.issued.push(word);
                    c.pc = if c.issued.len() == wanted || c.tries >= MAX_TRIES {
                        Pc::Done
                    } else {
                        Pc::ReadBase
                    };
                }
            }
            Pc::JumpRead => {
                c.jump_base = w.base;
                c.pc = Pc::JumpSet;
            }
            Pc::JumpSet => {
                let target = (w.now_tick << SEQ_BITS) - c.count - 1;
                w.base = c.jump_base.max(target);
                w.lock = None;
                c.pc = if c.tries >= MAX_TRIES {
                    Pc::Done
                } else {
                    Pc::ReadBase
                };
            }
        }
        true
    }

    /// Every reachable end state's issued words: a duplicate, or a caller's words out of
    /// order, is returned as the first counterexample found.
    fn explore(callers: usize, wanted: usize, double_read: bool) -> Result<usize, String> {
        let start = World {
            count: 0,
            base: 0,
            lock: None,
            now_tick: 1,
            clock_moves: CLOCK_MOVES,
            callers: vec![
                Caller {
                    pc: Pc::ReadBase,
                    base: 0,
                    count: 0,
                    jump_base: 0,
                    issued: Vec::new(),
                    tries: 0,
                };
                callers
            ],
        };
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        let mut ends = 0;
        while let Some(w) = stack.pop() {
            if !seen.insert(w.clone()) {
                continue;
            }
            let mut moved = false;
            for who in 0..=w.callers.len() {
                let mut next = w.clone();
                if step(&mut next, who, wanted, double_read) {
                    moved = true;
                    stack.push(next);
                }
            }
            if !moved {
                ends += 1;
                let mut all = HashSet::new();
                for (i, c) in w.callers.iter().enumerate() {
                    if c.issued.windows(2).any(|p| p[0] >= p[1]) {
                        return Err(format!("caller {i} out of order: {w:?}"));
                    }
                    for word in &c.issued {
                        if !all.insert(*word) {
                            return Err(format!("word {word} twice: {w:?}"));
                        }
                    }
                }
            }
        }
        Ok(ends)
    }

    #[test]
    fn no_interleaving_of_draws_jumps_and_clock_repeats_a_word() {
        // Three callers of one ID each (the race below needs three), and two callers of two
        // IDs each (each caller's IDs in order).
        for (callers, wanted) in [(3, 1), (2, 2)] {
            let ends = explore(callers, wanted, true).unwrap();
            assert!(ends > 100, "too few end states explored: {ends}");
        }
    }

    #[test]
    fn reading_the_base_once_after_the_draw_would_repeat_words() {
        // The negative control: the model finds the race the second read closes.
        let err = explore(3, 1, false).unwrap_err();
        assert!(
            err.contains("twice") || err.contains("out of order"),
            "{err}"
        );
    }
}

#[test]
fn the_postgres_fast_path_is_short_and_carries_the_layout() {
    // With blocks: the session's temporary sequence and one comparison, no shared sequence.
    let g = DbGenerator::new(Layout::TWITTER);
    let sql = g.function_sql(Dialect::Postgres, 5).unwrap();
    let fast = &sql[..sql.find("    LOOP").unwrap()];
    assert!(
        fast.contains("v_id := nextval(to_regclass('pg_temp.idgen_"),
        "{fast}"
    );
    // Not at the next block's first word (256 a block), and before the tick's end + 1 s.
    assert!(fast.contains("IF v_id & 255 <> 0"), "{fast}");
    let deadline = Layout::TWITTER.epoch_ms() + 1 + 1000;
    assert!(
        fast.contains(&format!(
            "clock_timestamp() < to_timestamp(((v_id >> 22) + {deadline})::float8 * 0.001::float8)"
        )),
        "{fast}"
    );
    let body = &fast[fast.find("BEGIN").unwrap()..];
    assert!(
        !body.contains("pg_sequence_last_value") && !body.contains("_count"),
        "{body}"
    );
    // The block's first ID is kept in the session's sequence, which steps the sequence field.
    let rest = &sql[sql.find("END LOOP;").unwrap()..];
    assert!(rest.contains("INCREMENT BY 1 CYCLE"), "{rest}");
    assert!(rest.contains("PERFORM setval(v_seq, v_id, true)"), "{rest}");
    // Sonyflake: blocks of 16, the sequence field above the node's (shift 16), 10 ms ticks.
    let sql = DbGenerator::new(Layout::SONYFLAKE)
        .function_sql(Dialect::Postgres, 1)
        .unwrap();
    assert!(
        sql.contains(&format!("IF v_id & {} <> 0", 15 << 16)),
        "{sql}"
    );
    let deadline = Layout::SONYFLAKE.epoch_ms() + 10 + 1000;
    assert!(
        sql.contains(&format!("((v_id >> 24) * 10 + {deadline})::float8")),
        "{sql}"
    );
    assert!(
        sql.contains(&format!("INCREMENT BY {} CYCLE", 1 << 16)),
        "{sql}"
    );

    // Without blocks: read the base, draw, read it again, compare with the clock's tick.
    let g = DbGenerator::new(Layout::TWITTER).session_blocks(false);
    let sql = g.function_sql(Dialect::Postgres, 5).unwrap();
    assert!(!sql.contains("pg_temp."), "{sql}");
    let fast = &sql[..sql.find("    LOOP").unwrap()];
    // The word below the first word past the last tick, in the clock's tick (1 ms: no division).
    let limit = (Layout::TWITTER.max_ticks() + 1) << Layout::TWITTER.sequence_bits();
    assert!(fast.contains(&format!("AND v_word < {limit}")), "{fast}");
    assert!(
        fast.contains("clock_timestamp()) * 1000)::bigint - 1288834974657 AND"),
        "{fast}"
    );
    // The node's bits as one literal, no shift by 0.
    assert!(
        fast.contains(&format!(
            "RETURN ((v_word >> 12) << 22) | (v_word & 4095) | {};",
            5 << 12
        )),
        "{fast}"
    );
    // Read, draw (not while fenced), read again, in that order.
    let read = fast.find("v_base := pg_sequence_last_value").unwrap();
    let draw = fast.find("THEN nextval(").unwrap();
    let again = fast.find("WHEN pg_sequence_last_value").unwrap();
    assert!(read < draw && draw < again);
    // A 10 ms unit divides.
    let sql = DbGenerator::new(Layout::SONYFLAKE)
        .session_blocks(false)
        .function_sql(Dialect::Postgres, 1)
        .unwrap();
    assert!(
        sql.contains(&format!(
            "- {}) / 10 AND v_word <",
            Layout::SONYFLAKE.epoch_ms()
        )),
        "{sql}"
    );
}

#[test]
fn an_install_id_names_the_label_the_fence_triggers_and_the_row_checked() {
    let id = "0123456789abcdef";
    let g = DbGenerator::new(Layout::TWITTER)
        .function("shard_a.idgen_next_id")
        .unwrap()
        .lease_table("public.idgen_worker_lease")
        .unwrap()
        .install_id(id)
        .unwrap();
    let label = format!("database:shard_a.idgen_next_id:{id}");
    assert_eq!(g.holder(), label);
    assert_eq!(DbGenerator::install_id_of(&label).as_deref(), Some(id));
    assert_eq!(DbGenerator::install_id_of("database:idgen_next_id"), None);
    let pg = g.fence_sql(Dialect::Postgres, 3).unwrap().join("\n");
    assert!(pg.contains(&format!(
        "CREATE TRIGGER \"idgen_fence_{id}\" BEFORE UPDATE OR DELETE ON \"public\".\"idgen_worker_lease\""
    )));
    assert!(pg.contains(&format!("OLD.holder = '{label}'")));
    assert!(pg.contains(&format!(
        "CREATE EVENT TRIGGER \"idgen_fence_drop_{id}\" ON sql_drop"
    )));
    let my = g.fence_sql(Dialect::MySql, 3).unwrap().join("\n");
    assert!(my.contains(&format!(
        "CREATE TRIGGER `public`.`idgen_fence_update_{id}` BEFORE UPDATE ON `public`.`idgen_worker_lease`"
    )));
    for dialect in [Dialect::Postgres, Dialect::MySql] {
        let function = g.routine_sql(dialect, 3).unwrap().join("\n");
        assert!(
            function.contains(&format!("node = 3 AND holder = '{label}'")),
            "{dialect}"
        );
        assert!(function.contains("'IDG06'"), "{dialect}");
    }
    for bad in ["", "0123456789abcdef0", "ABC", "x'"] {
        assert!(
            DbGenerator::new(Layout::TWITTER).install_id(bad).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn the_takeover_floor_is_the_claim_time_plus_ttl_and_allowance_or_the_stored_bound() {
    let g = DbGenerator::new(Layout::TWITTER)
        .takeover_wait(Duration::from_secs(2), Duration::from_millis(500));
    assert_eq!(g.takeover_floor_ms(10_000, None), Some(12_500));
    assert_eq!(g.takeover_floor_ms(10_000, Some(11_000)), Some(12_500));
    assert_eq!(g.takeover_floor_ms(10_000, Some(20_000)), Some(20_000));
    let skip = g.skip_takeover_wait_for_tests_and_development(true);
    assert_eq!(skip.takeover_floor_ms(10_000, None), None);
}
