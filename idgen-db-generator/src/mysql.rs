//! The function, its sequences, its fence and its helpers as MariaDB stored routines.
//!
//! MariaDB's `SETVAL` takes only literals, so inside the function the base can only move with
//! `NEXTVAL`: it is the sum of three sequences that step by 1, 2^14 and 2^28 ticks
//! ([`LEVEL_BITS`]), and a fence sequence that is 0 until the trigger sets it.

use super::DbGenerator;

/// Each base sequence steps by 2^(LEVEL_BITS × its level) ticks.
const LEVEL_BITS: u32 = 14;

/// The named lock a jump takes (with the function's name and the lock's generation, see
/// [`function_sql`]), and how long a jump waits for it.
const LOCK_PREFIX: &str = "idgen_jump:";
const LOCK_WAIT_MS: u32 = 10_000;

/// How often (ms) a session waiting for the jump lock looks whether its holder is idle.
const STALE_CHECK_MS: u32 = 20;

/// The names the SQL of one generator writes, quoted.
struct Names {
    function: String,
    /// The refill routine the function calls when its session's block is used up.
    refill: String,
    count: String,
    bases: [String; 3],
    fence: String,
    /// The jump lock's generation: recovery from a lock a killed jump kept moves it on.
    jump_generation: String,
    update_trigger: String,
    delete_trigger: String,
    lease: String,
    lock: String,
}

fn names(g: &DbGenerator) -> Names {
    let q = |suffix: &str| g.sibling(suffix).quoted_with('`');
    // A trigger lives in its table's schema: named there, after the install's identity, so
    // that installs sharing the lease table keep theirs.
    let lease_schema = g
        .lease_table
        .as_str()
        .rsplit_once('.')
        .map(|(schema, _)| format!("`{schema}`."))
        .unwrap_or_default();
    let trigger = |kind: &str| match &g.install_id {
        Some(id) => format!("{lease_schema}`idgen_fence_{kind}_{id}`"),
        None => q(&format!("_fence_{kind}")),
    };
    Names {
        function: g.function.quoted_with('`'),
        refill: q("_refill"),
        count: q("_count"),
        bases: [q("_base_0"), q("_base_1"), q("_base_2")],
        fence: q("_fence"),
        jump_generation: q("_jump"),
        update_trigger: trigger("update"),
        delete_trigger: trigger("delete"),
        lease: g.lease_table.quoted_with('`'),
        lock: format!("{LOCK_PREFIX}{}", g.function.as_str()),
    }
}

/// The sequences, fenced (the fence sequence starts at 1) until an install recreates them.
pub(super) fn sequences_sql(g: &DbGenerator) -> Vec<String> {
    create_sequences(g, "CREATE SEQUENCE IF NOT EXISTS", 0, 1)
}

/// Fences the function (the first step of [`start_at_sql`]): calls stop issuing.
pub(super) fn fence_now_sql(g: &DbGenerator) -> String {
    format!("SELECT SETVAL({}, 1)", names(g).fence)
}

/// An upper bound of every word drawn so far (read after [`fence_now_sql`]).
pub(super) fn bound_sql(g: &DbGenerator) -> String {
    let n = names(g);
    let (sum, from) = base_sum(&n);
    format!(
        "SELECT {sum} + c.next_not_cached_value FROM {from}, {} c",
        n.count
    )
}

/// The sequences, recreated so that the next word drawn is `word` or above, and the fence
/// down.
pub(super) fn start_at_sql(g: &DbGenerator, word: i64) -> Vec<String> {
    create_sequences(g, "CREATE OR REPLACE SEQUENCE", word.saturating_sub(1), 0)
}

fn create_sequences(g: &DbGenerator, create: &str, base: i64, fence: i64) -> Vec<String> {
    let n = names(g);
    let min = i64::MIN + 1;
    let block = g.block_len();
    let mut sql = vec![format!(
        "{create} {} START WITH 1 MINVALUE 1 INCREMENT BY {block} CACHE {} NOCYCLE",
        n.count,
        count_cache(block)
    )];
    for (level, name) in n.bases.iter().enumerate() {
        let step = base_step(g) << (LEVEL_BITS * level as u32);
        let (start, floor) = if level == 0 { (base, min) } else { (0, 0) };
        sql.push(format!(
            "{create} {name} START WITH {start} MINVALUE {floor} INCREMENT BY {step} NOCACHE NOCYCLE"
        ));
    }
    sql.push(format!(
        "{create} {} START WITH {fence} MINVALUE 0 INCREMENT BY 1 NOCACHE NOCYCLE",
        n.fence
    ));
    // Kept across installs: a lock a killed jump kept stays stale under its generation.
    sql.push(format!(
        "CREATE SEQUENCE IF NOT EXISTS {} START WITH 0 MINVALUE 0 INCREMENT BY 1 NOCACHE NOCYCLE",
        n.jump_generation
    ));
    sql
}

/// The count sequence's cache: about 1,000 counts (one block per `NEXTVAL`), so that the bound
/// an uninstall or a fence reads (which counts the cached values as drawn) stays within a tick
/// or so of the last ID.
fn count_cache(block: i64) -> i64 {
    (1000 / block).max(1)
}

/// How many ticks behind the clock a drawn word may be and still be taken without a jump: 0
/// without blocks, else [`JUMP_LAG_MS`] in ticks (at least one).
fn lag_ticks(g: &DbGenerator) -> i64 {
    if g.block_len() > 1 {
        (JUMP_LAG_MS / i64::from(g.layout().unit_ms())).max(1)
    } else {
        0
    }
}

/// The words the lowest base sequence steps by: one tick, or with a lag the largest power of
/// two of ticks within it (a jump then rounds down, leaving the word less than a step behind
/// the clock, and the base moves by one `NEXTVAL` per step instead of per tick).
fn base_step(g: &DbGenerator) -> i64 {
    let lag = lag_ticks(g).max(1);
    let ticks = 1i64 << (63 - lag.leading_zeros());
    ticks << g.layout().sequence_bits()
}

/// The increments of the count and the base sequences, for an install that keeps sequences made
/// before blocks (which step by 1 and by whole ticks): a statement that reads them as one text,
/// the text they should read, and the statements that set them. The function they were made
/// for works with any increments (each draw reads the sum).
pub(super) fn increments_sql(g: &DbGenerator) -> (String, String, Vec<String>) {
    let n = names(g);
    let block = g.block_len();
    let steps: Vec<i64> = (0..3)
        .map(|level| base_step(g) << (LEVEL_BITS * level))
        .collect();
    let read = format!(
        "SELECT CONCAT_WS(',', c.increment, b0.increment, b1.increment, b2.increment) \
         FROM {} c, {} b0, {} b1, {} b2",
        n.count, n.bases[0], n.bases[1], n.bases[2]
    );
    let expected = format!("{block},{},{},{}", steps[0], steps[1], steps[2]);
    let mut alter = vec![format!(
        "ALTER SEQUENCE {} INCREMENT BY {block} CACHE {}",
        n.count,
        count_cache(block)
    )];
    for (name, step) in n.bases.iter().zip(&steps) {
        alter.push(format!("ALTER SEQUENCE {name} INCREMENT BY {step}"));
    }
    (read, expected, alter)
}

/// The base: the sum of the three level sequences' next values, from tables aliased b0–b2.
fn base_sum(n: &Names) -> (String, String) {
    let sum = "b0.next_not_cached_value + b1.next_not_cached_value + b2.next_not_cached_value";
    let from = format!("{} b0, {} b1, {} b2", n.bases[0], n.bases[1], n.bases[2]);
    (sum.to_owned(), from)
}

/// The last word drawn (an upper bound: the count's reserved values); no row when fenced.
pub(super) fn last_word_sql(g: &DbGenerator) -> String {
    let n = names(g);
    let (sum, from) = base_sum(&n);
    format!(
        "SELECT {sum} + c.next_not_cached_value - 1 \
         FROM {from}, {} f, {} c WHERE f.next_not_cached_value = 0",
        n.fence, n.count
    )
}

/// The statements that check the function's lease row, run once per jump (before the jump
/// lock) and per call ahead of the clock: when the row is missing (the lease table truncated,
/// recreated or restored) or carries another holder, the function fences itself and signals
/// `IDG06`. (A dropped table fails the calling statement before the function runs: MariaDB
/// opens every table a function reads when the statement starts.)
fn liveness_check(g: &DbGenerator, node: u64) -> String {
    let n = names(g);
    let holder = g.holder();
    let namespace = super::literal::text_literal(super::Host::MariaDb, g.lease_namespace());
    format!(
        "SELECT COUNT(*) INTO v_n FROM {lease} WHERE namespace = {namespace} AND node = {node} AND holder = '{holder}';
                IF v_n = 0 THEN
                    SELECT SETVAL({fence}, 1) INTO v_n;
                    SIGNAL SQLSTATE 'IDG06' SET MESSAGE_TEXT = 'idgen: the generator''s lease row is missing or held by another (table truncated, recreated or restored): install it again';
                END IF;",
        lease = n.lease,
        fence = n.fence,
    )
}

/// The server's time in Unix ms, whatever the session's time zone: the 100 ns intervals since
/// 1582-10-15 inside a version-1 `UUID()` (the wall clock at server start-up plus the
/// monotonic clock since; see the crate documentation).
const NOW_MS: &str = "(CAST(CONV(CONCAT(SUBSTR(v_uuid, 16, 3), SUBSTR(v_uuid, 10, 4), SUBSTR(v_uuid, 1, 8)), 16, 10) AS SIGNED) - 122192928000000000) DIV 10000";

/// `CREATE OR REPLACE FUNCTION … RETURNS BIGINT`: the next ID of the session's block, else
/// the refill routine's ([`refill_sql`], created first). It declares no variable: a stored
/// function sets up every variable it declares (in any block) on every call, which cost the
/// fast path more than the rest of it.
pub(super) fn function_sql(g: &DbGenerator, node: u64) -> String {
    let [v_next, v_last, v_from, v_until] = session_variables(g, node);
    let inc = 1u64 << g.constants().seq_shift;
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS BIGINT
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    -- The fast path: the next ID of this session's block, while the session's clock is within
    -- the block's time (no table read, no sequence call; module documentation, \"A block per
    -- session\"). SYSDATE(6) is the wall clock in the session's zone: a zone change or a step
    -- of the clock out of the window (daylight saving's hour back too) ends the block.
    IF {v_next} < {v_last} AND SYSDATE(6) + 0 BETWEEN {v_from} AND {v_until} THEN
        RETURN ({v_next} := {v_next} + {inc});
    END IF;
    RETURN {refill}();
END",
        function = g.function.quoted_with('`'),
        refill = names(g).refill,
    )
}

/// The refill routine: draws a word (jumping to the current tick when the clock moved on,
/// checking the fence and the lease row as the crate documentation says), returns its ID and
/// makes the rest of its block the session's.
pub(super) fn refill_sql(g: &DbGenerator, node: u64) -> String {
    let n = names(g);
    let (sum, from) = base_sum(&n);
    let c = g.constants();
    let (epoch_ms, unit_ms, last_ms, max_ticks) = c.time();
    let (seq_bits, seq_mask, time_shift, node_shift, seq_shift) = c.fields();
    let (tolerance_ms, policy) = c.policy();
    let (count, fence, lock, generation) = (&n.count, &n.fence, &n.lock, &n.jump_generation);
    let [b0, b1, b2] = &n.bases;
    let level_mask = (1u64 << LEVEL_BITS) - 1;
    let (shift1, shift2) = (LEVEL_BITS, 2 * LEVEL_BITS);
    let sleep_when = c.sleep_when();
    let [v_next, v_last, v_from, v_until] = session_variables(g, node);
    let block = g.block_len();
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS BIGINT
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE v_base BIGINT;
    DECLARE v_fence BIGINT;
    DECLARE v_count BIGINT;
    DECLARE v_word BIGINT;
    DECLARE v_now_ms BIGINT;
    DECLARE v_now_tick BIGINT;
    DECLARE v_tick BIGINT;
    DECLARE v_ahead_ms BIGINT;
    DECLARE v_need BIGINT;
    DECLARE v_n BIGINT;
    DECLARE v_uuid CHAR(36);
    DECLARE v_message VARCHAR(128);
    DECLARE v_waited_since BIGINT;
    DECLARE v_checked_ms BIGINT;
    DECLARE v_jumped BOOLEAN DEFAULT FALSE;
    DECLARE v_generation BIGINT;
    DECLARE v_lock VARCHAR(128);
    DECLARE v_next_lock VARCHAR(128);
    DECLARE v_holder BIGINT;
    DECLARE v_idle BIGINT;
    DECLARE v_id BIGINT;
    DECLARE v_rest BIGINT;
    DECLARE v_sysdate DATETIME(6);
    idgen_draw: LOOP
        -- The draw is four statements: a stored function pays for each. After a jump
        -- the base is known (only the jump lock's holder moves it) and is not read again.
        IF NOT v_jumped THEN
            SELECT {sum} INTO v_base FROM {from};
        END IF;
        SET v_jumped = FALSE;
        SET v_count = NEXTVAL({count});
        -- The base must be the same after the draw as before it, and the fence still down:
        -- every ID returned was drawn before a fence went up. The time is read here too.
        SELECT IF({sum} = v_base AND f.next_not_cached_value = 0, v_count + v_base, NULL),
               f.next_not_cached_value, UUID()
          INTO v_word, v_fence, v_uuid FROM {from}, {fence} f;
        SET v_now_ms = {NOW_MS};
        SET v_now_tick = (v_now_ms - {epoch_ms}) DIV {unit_ms};
        -- A word up to {lag_ticks} tick(s) behind the clock is taken as it is (with blocks: its
        -- block is then held that much less, see below); further behind, the base jumps.
        SET v_tick = CAST(v_word >> {seq_bits} AS SIGNED);
        IF v_tick BETWEEN v_now_tick - {lag_ticks} AND v_now_tick AND v_now_ms BETWEEN {epoch_ms} AND {last_ms} THEN
            LEAVE idgen_draw;
        END IF;
        IF v_fence <> 0 THEN
            -- MESSAGE_TEXT holds at most 128 characters: the function's name is left out.
            SIGNAL SQLSTATE 'IDG02' SET MESSAGE_TEXT = 'idgen: the generator function holds no node ID lease (freed, taken or never installed): install it again';
        END IF;
        IF v_word IS NOT NULL THEN
            IF v_now_ms < {epoch_ms} THEN
                SET v_message = CONCAT('idgen: the clock reads ', v_now_ms, ' ms, before the layout''s epoch');
                SIGNAL SQLSTATE 'IDG03' SET MESSAGE_TEXT = v_message;
            END IF;
            IF v_now_ms > {last_ms} THEN
                SET v_message = CONCAT('idgen: ', v_now_ms, ' ms is after the last instant of the layout');
                SIGNAL SQLSTATE 'IDG04' SET MESSAGE_TEXT = v_message;
            END IF;
            SET v_tick = CAST(v_word >> {seq_bits} AS SIGNED);
            IF v_tick = v_now_tick THEN
                LEAVE idgen_draw;
            ELSEIF v_tick < v_now_tick THEN
                -- Once per jump: is the lease row still ours?
                {check}
                -- The clock moved on: raise the base, in whole ticks, so that the next counts
                -- land in the current tick. Only the holder of the jump lock moves the base, so
                -- it knows the base it leaves and draws next with that one read saved. Never
                -- queue for the lock (a queue handing it on one by one outlasts the tick).
                --
                -- The lock is a named lock, which a statement killed mid-jump (KILL QUERY,
                -- max_statement_time, a client's time-out) keeps on its idle connection: its
                -- name carries a generation, and a waiter that finds the holder idle moves the
                -- generation on (see below). A jump goes ahead only under the lock of the
                -- generation it reads after taking the lock.
                SELECT next_not_cached_value INTO v_generation FROM {generation};
                SET v_lock = CONCAT('{lock}:', v_generation);
                -- A lock this connection kept: a kill or a statement time-out cut its jump short.
                WHILE IS_USED_LOCK(v_lock) = CONNECTION_ID() DO SET v_n = RELEASE_LOCK(v_lock); END WHILE;
                IF GET_LOCK(v_lock, 0) = 1 THEN
                    SELECT {sum}, g.next_not_cached_value INTO v_base, v_n FROM {from}, {generation} g;
                    IF v_n = v_generation THEN
                        SET v_need = (CAST(v_now_tick << {seq_bits} AS SIGNED) - v_count - 1 - v_base{round_up}) DIV {ticks_word};
                        IF v_need > 0 THEN
                            SET v_n = v_need >> {shift2};
                            WHILE v_n > 0 DO SET v_n = v_n - 1 + 0 * NEXTVAL({b2}); END WHILE;
                            SET v_n = (v_need >> {shift1}) & {level_mask};
                            WHILE v_n > 0 DO SET v_n = v_n - 1 + 0 * NEXTVAL({b1}); END WHILE;
                            SET v_n = v_need & {level_mask};
                            WHILE v_n > 0 DO SET v_n = v_n - 1 + 0 * NEXTVAL({b0}); END WHILE;
                            SET v_base = v_base + v_need * {ticks_word};
                        END IF;
                        SET v_jumped = TRUE;
                    END IF;
                    WHILE RELEASE_LOCK(v_lock) = 1 DO SET v_n = 0; END WHILE;
                    SET v_waited_since = NULL;
                ELSE
                    -- Another session is jumping. Wait for it without reading the base
                    -- sequences: the jump's NEXTVAL writes one of them, and a steady stream of
                    -- readers there (every waiter drawing again and again) can keep it from
                    -- writing for seconds.
                    IF v_waited_since IS NULL THEN
                        SET v_waited_since = v_now_ms;
                    END IF;
                    SET v_checked_ms = v_now_ms;
                    idgen_wait: WHILE IS_USED_LOCK(v_lock) IS NOT NULL DO
                        SET v_uuid = UUID();
                        SET v_now_ms = {NOW_MS};
                        IF v_now_ms - v_waited_since > {LOCK_WAIT_MS} THEN
                            SET v_message = CONCAT('idgen: connection ', COALESCE(IS_USED_LOCK(v_lock), 0), ' held the generator''s jump lock for over 10 s');
                            SIGNAL SQLSTATE 'IDG05' SET MESSAGE_TEXT = v_message;
                        END IF;
                        IF v_now_ms - v_checked_ms >= {STALE_CHECK_MS} THEN
                            SET v_checked_ms = v_now_ms;
                            -- A jump holds the lock only inside a statement: a holder that is
                            -- idle (Sleep) kept it from a killed jump. Move the generation on,
                            -- under the next generation's lock (so that one session does it),
                            -- if the generation and the idle holder are still those seen.
                            SET v_holder = IS_USED_LOCK(v_lock);
                            SELECT COUNT(*) INTO v_idle FROM information_schema.PROCESSLIST
                             WHERE ID = v_holder AND COMMAND = 'Sleep';
                            IF v_idle = 1 THEN
                                SET v_next_lock = CONCAT('{lock}:', v_generation + 1);
                                IF GET_LOCK(v_next_lock, 0) = 1 THEN
                                    SELECT next_not_cached_value INTO v_n FROM {generation};
                                    SELECT COUNT(*) INTO v_idle FROM information_schema.PROCESSLIST
                                     WHERE ID = v_holder AND COMMAND = 'Sleep' AND IS_USED_LOCK(v_lock) = v_holder;
                                    IF v_n = v_generation AND v_idle = 1 THEN
                                        SET v_n = NEXTVAL({generation});
                                        -- A session that took the old lock and read the old
                                        -- generation just before may be jumping: no jump
                                        -- under the new one (whose lock is held here) until
                                        -- the old lock is free or idle again.
                                        WHILE IS_USED_LOCK(v_lock) IS NOT NULL AND NOT EXISTS (
                                            SELECT 1 FROM information_schema.PROCESSLIST
                                             WHERE ID = IS_USED_LOCK(v_lock) AND COMMAND = 'Sleep') DO
                                            SET v_uuid = UUID();
                                            IF {NOW_MS} - v_waited_since > {LOCK_WAIT_MS} THEN
                                                WHILE RELEASE_LOCK(v_next_lock) = 1 DO SET v_n = 0; END WHILE;
                                                SIGNAL SQLSTATE 'IDG05' SET MESSAGE_TEXT = 'idgen: a jump under the generator''s old jump lock lasted over 10 s';
                                            END IF;
                                            SET v_n = SLEEP(0.0001);
                                        END WHILE;
                                    END IF;
                                    WHILE RELEASE_LOCK(v_next_lock) = 1 DO SET v_n = 0; END WHILE;
                                END IF;
                                LEAVE idgen_wait;
                            END IF;
                        END IF;
                        SET v_n = SLEEP(0.0001);
                    END WHILE idgen_wait;
                END IF;
            ELSE
                {check}
                IF v_tick > {max_ticks} THEN
                    SET v_message = CONCAT('idgen: ', {epoch_ms} + v_tick * {unit_ms}, ' ms is after the last instant of the layout');
                    SIGNAL SQLSTATE 'IDG04' SET MESSAGE_TEXT = v_message;
                END IF;
                SET v_ahead_ms = {epoch_ms} + v_tick * {unit_ms} - v_now_ms;
                IF v_tick > v_now_tick + 1 AND v_ahead_ms > {tolerance_ms} THEN
                    SET v_message = CONCAT('idgen: the clock moved backwards by ', v_ahead_ms,
                        ' ms (policy {policy} allows {tolerance_ms} ms); no ID was issued');
                    SIGNAL SQLSTATE 'IDG01' SET MESSAGE_TEXT = v_message;
                END IF;
                IF {sleep_when} THEN
                    SET v_n = SLEEP(v_ahead_ms / 1000);
                    SET v_uuid = UUID();
                    SET v_now_ms = {NOW_MS};
                END IF;
                LEAVE idgen_draw;
            END IF;
        END IF;
    END LOOP idgen_draw;
    -- Once per block: is the lease row still ours? (A fence the trigger set was seen above.)
    {check}
    -- The draw reserved the words v_word .. v_word + {block_less_one} (one NEXTVAL of the count moves
    -- it by {block}): this ID, and the session's block, the rest of them in v_tick. The block is
    -- held while the session's SYSDATE is before v_tick's next tick's start + {HOLD_MS} ms, measured
    -- from now on the function's clock, and only when SYSDATE reads that clock (not
    -- --sysdate-is-now with a frozen session timestamp, nor a zone's repeated hour). A block
    -- left unused (every refill) is dropped: the session's IDs keep increasing.
    SET v_id = CAST((v_tick << {time_shift}) | ({node} << {node_shift}) | ((v_word & {seq_mask}) << {seq_shift}) AS SIGNED);
    SET v_rest = LEAST({block_less_one}, {seq_mask} - (v_word & {seq_mask}));
    SET v_sysdate = SYSDATE(6);
    IF v_rest > 0 AND ABS(UNIX_TIMESTAMP(v_sysdate) * 1000 - v_now_ms) <= {SYSDATE_SLACK_MS} THEN
        SET {v_next} = v_id, {v_last} = v_id + (v_rest << {seq_shift}), {v_from} = v_sysdate + 0,
            {v_until} = (v_sysdate + INTERVAL ({epoch_ms} + (v_tick + 1) * {unit_ms} + {HOLD_MS} - v_now_ms) * 1000 MICROSECOND) + 0;
    ELSE
        SET {v_last} = NULL;
    END IF;
    RETURN v_id;
END",
        block_less_one = block - 1,
        lag_ticks = lag_ticks(g),
        function = n.refill,
        ticks_word = base_step(g),
        // One tick per step: up to the current tick's start. Several: down, within the lag.
        round_up = if base_step(g) == (seq_mask + 1) as i64 { format!(" + {seq_mask}") } else { String::new() },
        check = liveness_check(g, node),
    )
}

/// How long a session holds a block past the end of its tick (ms): the time field of an ID
/// trails its insert by at most one tick plus this.
const HOLD_MS: i64 = 1000;

/// How far behind the clock a drawn word may be and still be taken without a jump, when the
/// layout has blocks (ms, at least one tick): words advance by a block per draw, the clock by a
/// tick per tick, so without it nearly every refill would jump. Its block is held until its
/// tick's end + [`HOLD_MS`] all the same.
const JUMP_LAG_MS: i64 = 100;

/// How far the session's `SYSDATE()` may be from the function's clock for a block to be held.
const SYSDATE_SLACK_MS: i64 = 1000;

/// The session's block, in four user variables (which no rollback undoes, unlike a local
/// variable's or a table's state): the last ID handed out, the block's last ID, and the
/// window of `SYSDATE(6) + 0` in which it may be used. Named after the install (its holder
/// label) and node, so that a block never outlives its install in the function that follows.
fn session_variables(g: &DbGenerator, node: u64) -> [String; 4] {
    let key = super::fnv64(&format!("{}:{node}", g.holder()));
    ["n", "e", "s", "x"].map(|part| format!("@idgen_{key:016x}_{part}"))
}

/// The triggers that fence the function when its lease row is freed, taken or deleted (crate
/// documentation, "The database's node ID"). MariaDB has no `TRUNCATE` trigger.
pub(super) fn fence_sql(g: &DbGenerator, node: u64) -> Vec<String> {
    let n = names(g);
    let c = g.constants();
    let (sum, from) = base_sum(&n);
    let holder = g.holder();
    let namespace = super::literal::text_literal(super::Host::MariaDb, g.lease_namespace());
    let ours =
        format!("OLD.holder = '{holder}' AND OLD.namespace = {namespace} AND OLD.node = {node}");
    let fence_body = |record: &str| {
        format!(
            "BEGIN
    DECLARE v_base BIGINT;
    DECLARE v_count BIGINT;
    DECLARE v_set BIGINT;
    IF {ours}{changed} THEN
        SELECT SETVAL({fence}, 1) INTO v_set;
        -- Read after the fence: every ID a call returned was drawn before it.
        SELECT {sum} INTO v_base FROM {from};
        SELECT next_not_cached_value INTO v_count FROM {count};
        {record}
    END IF;
END",
            changed = if record.is_empty() {
                String::new()
            } else {
                " AND NOT (NEW.holder <=> OLD.holder AND NEW.node = OLD.node AND NEW.namespace = OLD.namespace)"
                    .to_owned()
            },
            fence = n.fence,
            count = n.count,
        )
    };
    let record = format!(
        "SET NEW.last_timestamp = GREATEST(COALESCE(NEW.last_timestamp, 0), {} + CAST((v_base + v_count) >> {} AS SIGNED) * {});",
        c.epoch_ms, c.seq_bits, c.unit_ms
    );
    vec![
        format!("DROP TRIGGER IF EXISTS {}", n.update_trigger),
        format!(
            "CREATE TRIGGER {} BEFORE UPDATE ON {} FOR EACH ROW {}",
            n.update_trigger,
            n.lease,
            fence_body(&record)
        ),
        format!("DROP TRIGGER IF EXISTS {}", n.delete_trigger),
        format!(
            "CREATE TRIGGER {} BEFORE DELETE ON {} FOR EACH ROW {}",
            n.delete_trigger,
            n.lease,
            fence_body("")
        ),
    ]
}

/// Drops the fence triggers (by name: those of this install only).
pub(super) fn fence_drop_sql(g: &DbGenerator) -> Vec<String> {
    let n = names(g);
    [n.update_trigger, n.delete_trigger]
        .map(|t| format!("DROP TRIGGER IF EXISTS {t}"))
        .into()
}

/// `decode(id)` (a JSON object), `min_id_at(unix_ms)`, `max_id_at(unix_ms)`.
pub(super) fn helpers_sql(g: &DbGenerator) -> Vec<String> {
    let q = |i| g.helper(i).quoted_with('`');
    let c = g.constants();
    let (epoch_ms, unit_ms, last_ms, max_ticks) = c.time();
    let (_, seq_mask, time_shift, node_shift, seq_shift) = c.fields();
    let l = g.layout();
    let node_mask = l.node_capacity() - 1;
    let low_bits = (1u64 << (l.node_bits() + l.sequence_bits())) - 1;
    let outside = format!("unix_ms < {epoch_ms} OR unix_ms > {last_ms}");
    let tick = format!("((unix_ms - {epoch_ms}) DIV {unit_ms})");
    vec![
        format!(
            "CREATE OR REPLACE FUNCTION {}(id BIGINT) RETURNS LONGTEXT DETERMINISTIC NO SQL \
             RETURN IF(id < 0, NULL, JSON_OBJECT('unix_ms', {epoch_ms} + CAST((id >> {time_shift}) & {max_ticks} AS SIGNED) * {unit_ms}, \
             'node', (id >> {node_shift}) & {node_mask}, 'sequence', (id >> {seq_shift}) & {seq_mask}))",
            q(0)
        ),
        format!(
            "CREATE OR REPLACE FUNCTION {}(unix_ms BIGINT) RETURNS BIGINT DETERMINISTIC NO SQL \
             RETURN IF({outside}, NULL, CAST({tick} << {time_shift} AS SIGNED))",
            q(1)
        ),
        format!(
            "CREATE OR REPLACE FUNCTION {}(unix_ms BIGINT) RETURNS BIGINT DETERMINISTIC NO SQL \
             RETURN IF({outside}, NULL, CAST(({tick} << {time_shift}) | {low_bits} AS SIGNED))",
            q(2)
        ),
    ]
}

/// Drops the function, its fence triggers, its helpers and its sequences.
pub(super) fn drop_sql(g: &DbGenerator) -> Vec<String> {
    let n = names(g);
    let functions = [n.function.clone(), n.refill.clone()]
        .into_iter()
        .chain((0..3).map(|i| g.helper(i).quoted_with('`')))
        .map(|f| format!("DROP FUNCTION IF EXISTS {f}"));
    let triggers =
        [&n.update_trigger, &n.delete_trigger].map(|t| format!("DROP TRIGGER IF EXISTS {t}"));
    let sequences = [
        &n.count,
        &n.bases[0],
        &n.bases[1],
        &n.bases[2],
        &n.fence,
        &n.jump_generation,
    ]
    .map(|q| q.as_str())
    .join(", ");
    functions
        .chain(triggers)
        .chain([format!("DROP SEQUENCE IF EXISTS {sequences}")])
        .collect()
}
