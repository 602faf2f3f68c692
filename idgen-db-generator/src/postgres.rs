//! The function, its sequences, its fence and its helpers in PL/pgSQL.

use super::DbGenerator;

/// The base's value while the function is fenced (or not installed yet): no call issues.
pub(super) const FENCED: i64 = i64::MAX;

/// The first key of every generator's jump lock (`"idgJ"` in ASCII); the second is the
/// function's [`lock_key`](super::lock_key).
const LOCK_CLASS: i32 = 0x6964_674a;

/// The names the SQL of one generator writes, quoted.
struct Names {
    function: String,
    count: String,
    base: String,
    /// The sequences as `regclass` literals.
    count_class: String,
    base_class: String,
    fence_function: String,
    /// The `sql_drop` event trigger's function.
    drop_fence_function: String,
    fence_trigger: String,
    truncate_trigger: String,
    lease: String,
}

fn names(g: &DbGenerator) -> Names {
    let q = |n: &idgen_engine::SqlName| n.quoted_with('"');
    let count = q(&g.sibling("_count"));
    let base = q(&g.sibling("_base"));
    Names {
        function: q(&g.function),
        count_class: format!("'{count}'::regclass"),
        base_class: format!("'{base}'::regclass"),
        count,
        base,
        fence_function: q(&g.sibling("_fence")),
        drop_fence_function: q(&g.sibling("_fence_drop")),
        // Trigger names are not schema-qualified: they live in their table's schema. Named
        // after the install's identity, so that installs sharing the lease table keep theirs.
        fence_trigger: match &g.install_id {
            Some(id) => format!("\"idgen_fence_{id}\""),
            None => format!("\"{}_fence\"", last_part(g)),
        },
        truncate_trigger: match &g.install_id {
            Some(id) => format!("\"idgen_fence_truncate_{id}\""),
            None => format!("\"{}_fence_truncate\"", last_part(g)),
        },
        lease: q(&g.lease_table),
    }
}

/// The statements that check the function's lease row, run once per jump (and per call ahead
/// of the clock): when the row is missing (the lease table truncated with its trigger
/// bypassed, dropped, recreated or restored) or carries another holder, the function fences
/// itself (`set_fenced`) and raises `IDG06`.
fn liveness_check(g: &DbGenerator, node: u64, set_fenced: &str) -> String {
    let n = names(g);
    let holder = g.holder();
    // Names and labels hold only letters, digits, '_', '.' and ':': safe in string literals.
    // The namespace may hold any text: written so that no setting changes how it reads.
    let namespace = super::literal::text_literal(super::Host::Postgres, g.lease_namespace());
    format!(
        "IF to_regclass('{lease}') IS NULL THEN
                v_alive := false;
            ELSE
                v_alive := EXISTS (SELECT 1 FROM {lease} WHERE namespace = {namespace} AND node = {node} AND holder = '{holder}');
            END IF;
            IF NOT v_alive THEN
                {set_fenced}
                RAISE EXCEPTION USING ERRCODE = 'IDG06', MESSAGE =
                    'idgen: {key} stopped: its lease row (namespace ' || {namespace} || ', node {node}, holder {holder}) in {lease_text} is missing or held by another (the table was truncated, dropped, recreated or restored): install it again';
            END IF;",
        lease = n.lease,
        key = g.function.as_str(),
        lease_text = g.lease_table.as_str(),
    )
}

fn last_part(g: &DbGenerator) -> &str {
    let name = g.function.as_str();
    name.rsplit('.').next().unwrap_or(name)
}

/// The count (one per ID drawn) and the base, fenced until an install sets it.
pub(super) fn sequences_sql(g: &DbGenerator) -> Vec<String> {
    let n = names(g);
    vec![
        format!(
            "CREATE SEQUENCE IF NOT EXISTS {} AS bigint MINVALUE 1 START 1 INCREMENT BY {} CACHE 1 NO CYCLE",
            n.count,
            g.block_len()
        ),
        format!(
            "CREATE SEQUENCE IF NOT EXISTS {} AS bigint MINVALUE {} MAXVALUE {FENCED} START {FENCED} CACHE 1 NO CYCLE",
            n.base,
            i64::MIN
        ),
    ]
}

/// Sets the base so that the next word drawn is `word` or above (rounded up to a whole block),
/// and above every word reserved so far, under the jump lock (held to the end of its
/// transaction, so never kept). The count steps by a block ([`increment_sql`] set it first).
pub(super) fn start_at_sql(g: &DbGenerator, word: i64) -> String {
    let n = names(g);
    let c = g.constants();
    let block = g.block_len();
    format!(
        "DO $idgen$
DECLARE
    v_base bigint;
    v_count bigint;
    v_word bigint := {word};
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {key});
    v_base := pg_sequence_last_value({base});
    v_count := pg_sequence_last_value({count});
    IF v_base IS NOT NULL AND v_base <> {FENCED} THEN
        -- Above the last block reserved (its last word is base + count + block - 1).
        v_word := greatest(v_word, v_base + coalesce(v_count, 0) + {block});
    END IF;
    -- Blocks start at multiples of the block's length: a block never crosses a tick.
    v_word := (v_word + {block_less_one}) / {block} * {block};
    -- The next count is the last one plus the increment, or 1 (its start) if none was drawn.
    PERFORM setval({base}, v_word - coalesce(v_count + {block}, 1), true);
END
$idgen$",
        base = n.base_class,
        count = n.count_class,
        key = c.lock_key,
        block_less_one = block - 1,
    )
}

/// The count sequence's increment as text, the text it should read (one block), and the
/// statement that sets it: installs made before blocks stepped by 1.
pub(super) fn increment_sql(g: &DbGenerator) -> (String, String, String) {
    let n = names(g);
    let block = g.block_len();
    (
        format!(
            "SELECT seqincrement::text FROM pg_catalog.pg_sequence WHERE seqrelid = {}",
            n.count_class
        ),
        block.to_string(),
        format!("ALTER SEQUENCE {} INCREMENT BY {block}", n.count),
    )
}

/// The last word reserved (the end of the last block drawn); no row when never set or fenced.
pub(super) fn last_word_sql(g: &DbGenerator) -> String {
    let n = names(g);
    // No row rather than a NULL: a session reads numbers, not nullable ones.
    format!(
        "SELECT b + coalesce(pg_sequence_last_value({}) + {}, 0) \
         FROM (SELECT pg_sequence_last_value({}) AS b) s WHERE b <> {FENCED}",
        n.count_class,
        g.block_len() - 1,
        n.base_class
    )
}

/// `CREATE OR REPLACE FUNCTION … RETURNS bigint`: see the crate documentation for what it
/// does.
pub(super) fn function_sql(g: &DbGenerator, node: u64) -> String {
    let n = names(g);
    let c = g.constants();
    let (epoch_ms, unit_ms, last_ms, max_ticks) = c.time();
    let (seq_bits, _, _, _, _) = c.fields();
    let (tolerance_ms, policy) = c.policy();
    let lock_key = c.lock_key;
    let (count, base) = (&n.count_class, &n.base_class);
    // Ahead of the clock by more than one tick and within the policy: Borrow issues at once,
    // Wait sleeps until the word's tick (a used-up tick, one ahead, always waits).
    let sleep_when = c.sleep_when();
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $idgen$
DECLARE
    v_base bigint;
    v_count bigint;
    v_word bigint;
    v_now_ms bigint;
    v_now_tick bigint;
    v_tick bigint;
    v_ahead_ms bigint;
    v_locked boolean;
    v_redraw boolean;
    v_waited_since bigint;
    v_alive boolean;{block_variables}
BEGIN
{fast_path}
    LOOP
        IF v_redraw THEN
            v_base := pg_sequence_last_value({base});
            v_count := nextval({count});
            -- The base must be the same after the draw as before it, and not fenced: a jump
            -- or a fence in between means draw again (a fence is then reported below).
            v_word := CASE WHEN pg_sequence_last_value({base}) = v_base AND v_base <> {FENCED}
                           THEN v_count + v_base END;
        END IF;
        v_redraw := true;
        v_now_tick := (floor(date_part('epoch', clock_timestamp()) * 1000)::bigint - {epoch_ms}) / {unit_ms};
        IF v_word >> {seq_bits} = v_now_tick AND v_now_tick BETWEEN 0 AND {max_ticks} THEN
            EXIT;
        END IF;
        IF v_word IS NULL THEN
            v_base := pg_sequence_last_value({base});
            IF v_base IS NULL OR v_base = {FENCED} THEN
                RAISE EXCEPTION USING ERRCODE = 'IDG02', MESSAGE =
                    'idgen: {key} holds no node ID lease (its lease row in {lease_text} was freed or taken, or it was never installed): install it again';
            END IF;
            CONTINUE;
        END IF;
        v_now_ms := floor(date_part('epoch', clock_timestamp()) * 1000);
        IF v_now_ms < {epoch_ms} THEN
            RAISE EXCEPTION USING ERRCODE = 'IDG03', MESSAGE = format(
                'idgen: the clock reads %s ms, before the layout''s epoch', v_now_ms);
        END IF;
        IF v_now_ms > {last_ms} THEN
            RAISE EXCEPTION USING ERRCODE = 'IDG04', MESSAGE = format(
                'idgen: %s ms is after the last instant of the layout', v_now_ms);
        END IF;
        v_now_tick := (v_now_ms - {epoch_ms}) / {unit_ms};
        v_tick := v_word >> {seq_bits};
        IF v_tick = v_now_tick THEN
            EXIT;
        ELSIF v_tick < v_now_tick THEN
            -- The clock moved on: raise the base so that the next counts start the current tick.
            -- Only jumps take this lock, for a few statements; the exception block gives it back
            -- whatever error or cancel arrives.
            -- Sessions that drew in the same stale tick all get here: only those that still
            -- see the base they drew with take the lock, and only a base below the target is
            -- written (no convoy of writes at every tick).
            CONTINUE WHEN pg_sequence_last_value({base}) IS DISTINCT FROM v_base;
            -- Never queue for the lock: a queue of sessions handing it on one by one outlasts
            -- the tick, and the next tick queues again. A session that does not get it lets
            -- the holder finish and draws again.
            BEGIN
                v_locked := pg_try_advisory_lock({LOCK_CLASS}, {lock_key});
                IF v_locked THEN
                    v_base := pg_sequence_last_value({base});
                    -- The next count (v_count + {block}, or more) lands at the tick's start:
                    -- blocks stay whole multiples of {block} words.
                    IF v_base IS NOT NULL AND v_base <> {FENCED}
                       AND v_base < (v_now_tick << {seq_bits}) - v_count - {block} THEN
                        -- Once per jump: is the lease row still ours?
                        {check_in_jump}
                        PERFORM setval({base}, (v_now_tick << {seq_bits}) - v_count - {block}, true);
                    END IF;
                    PERFORM pg_advisory_unlock({LOCK_CLASS}, {lock_key});
                    v_locked := false;
                    v_waited_since := NULL;
                ELSIF v_waited_since IS NULL THEN
                    v_waited_since := v_now_ms;
                ELSIF v_now_ms - v_waited_since > 10000 THEN
                    RAISE EXCEPTION USING ERRCODE = 'IDG05', MESSAGE = format(
                        'idgen: another session held the generator''s jump lock for over 10 s (PostgreSQL backend %s)',
                        (SELECT string_agg(pid::text, ', ') FROM pg_locks
                          WHERE locktype = 'advisory' AND classid = {LOCK_CLASS} AND objid = {lock_key} AND granted));
                ELSE
                    PERFORM pg_sleep(0.0001);
                END IF;
            EXCEPTION WHEN query_canceled OR others THEN
                IF v_locked THEN
                    PERFORM pg_advisory_unlock({LOCK_CLASS}, {lock_key});
                END IF;
                RAISE;
            END;
        ELSE
            IF v_tick > {max_ticks} THEN
                RAISE EXCEPTION USING ERRCODE = 'IDG04', MESSAGE = format(
                    'idgen: %s ms is after the last instant of the layout', {epoch_ms} + v_tick * {unit_ms});
            END IF;
            {check_ahead}
            v_ahead_ms := {epoch_ms} + v_tick * {unit_ms} - v_now_ms;
            IF v_tick > v_now_tick + 1 AND v_ahead_ms > {tolerance_ms} THEN
                RAISE EXCEPTION USING ERRCODE = 'IDG01', MESSAGE = format(
                    'idgen: the clock moved backwards by %s ms (policy {policy} allows {tolerance_ms} ms); no ID was issued',
                    v_ahead_ms);
            END IF;
            IF {sleep_when} THEN
                PERFORM pg_sleep(v_ahead_ms / 1000.0);
            END IF;
            EXIT;
        END IF;
    END LOOP;
{finish}
END
$idgen$",
        function = n.function,
        block = g.block_len(),
        block_variables = if g.block_len() > 1 {
            "\n    v_id bigint;\n    v_seq regclass;"
        } else {
            ""
        },
        fast_path = fast_path(g, node),
        finish = finish(g, node),
        key = g.function.as_str(),
        lease_text = g.lease_table.as_str(),
        check_in_jump = liveness_check(g, node, &format!("PERFORM setval({base}, {FENCED}, true);")),
        check_ahead = liveness_check(
            g,
            node,
            &format!(
                "PERFORM pg_advisory_lock({LOCK_CLASS}, {lock_key});
                PERFORM setval({base}, {FENCED}, true);
                PERFORM pg_advisory_unlock({LOCK_CLASS}, {lock_key});"
            )
        ),
    )
}

/// How long a session holds a block past the end of its tick (ms): the time field of an ID
/// trails its insert by at most one tick plus this (crate documentation, "A block per
/// session").
pub(super) const HOLD_MS: i64 = 1000;

/// The session's block: a temporary sequence (`pg_temp.idgen_<hash>`) holding the last ID
/// handed out, named after the install (its holder label), the node and the layout, so that a
/// block never outlives them. A temporary sequence is the one per-session state PL/pgSQL has
/// that no rollback undoes: `nextval` and `setval` are not transactional, and a sequence
/// created in a transaction that is rolled back is gone with its block.
fn block_sequence(g: &DbGenerator, node: u64) -> String {
    let key = super::fnv64(&format!("{}:{node}:{}", g.holder(), g.layout_key()));
    format!("idgen_{key:016x}")
}

/// The statements before the loop. With blocks: the next ID of the session's block, if it has
/// one, it is not used up and its time has not run out (one `nextval` of a temporary sequence
/// and one comparison with the clock; PL/pgSQL sets every expression up again in each
/// transaction, so these two are all a call pays). Without blocks (a layout with fewer than 32
/// sequence numbers a tick): the draw itself, reading the base before and after it.
fn fast_path(g: &DbGenerator, node: u64) -> String {
    let n = names(g);
    let c = g.constants();
    let (epoch_ms, unit_ms, ..) = c.time();
    let (seq_bits, _, time_shift, ..) = c.fields();
    let block = g.block_len();
    if block == 1 {
        return format!(
            "    -- The fast path: four short expressions and the RETURN. PL/pgSQL sets every expression
    -- up again in each transaction, and most callers take one ID per transaction, so every
    -- operator here costs every caller (module documentation, section Speed).
    -- The base is read before the draw and again after it, in that order (separate
    -- statements): equal reads mean no jump or fence came in between. No draw while fenced.
    v_base := pg_sequence_last_value({base});
    v_count := CASE WHEN v_base <> {FENCED} THEN nextval({count}) END;
    v_word := CASE WHEN pg_sequence_last_value({base}) = v_base THEN v_count + v_base END;
    -- Words are never negative (installs and jumps set the base so that the next count lands
    -- at or above a tick of the clock), so a word below the limit has a tick the layout holds.
    IF v_word >> {seq_bits} = {now_tick}{below_limit} THEN
        RETURN {fast_compose};
    END IF;
    -- Anything else (a jump or fence in between, another tick, the clock before the epoch or
    -- past the layout) goes on below with this draw; later rounds draw again.",
            base = n.base_class,
            count = n.count_class,
            now_tick = now_tick(epoch_ms, unit_ms),
            below_limit = below_limit(g),
            fast_compose = fast_compose(g, node),
        );
    }
    let l = g.layout();
    // The ID's tick: the bits above the time field's shift, masked when another field is
    // above it.
    let tick = if u32::from(l.timestamp_bits()) + time_shift >= 63 {
        format!("(v_id >> {time_shift})")
    } else {
        format!("((v_id >> {time_shift}) & {})", c.max_ticks)
    };
    let ms = if unit_ms == 1 {
        tick
    } else {
        format!("{tick} * {unit_ms}")
    };
    format!(
        "    -- The fast path: the next ID of this session's block (module documentation, \"A block
    -- per session\"), while it is not used up (its sequence field not at the next block's
    -- start) and the clock is before the end of its tick plus {HOLD_MS} ms. No table is read and
    -- no shared sequence drawn: the fence and the lease row are checked once per block.
    -- No block yet (or after DISCARD TEMP): to_regclass gives NULL, and so does nextval.
    v_id := nextval(to_regclass('pg_temp.{temp}'));
    IF v_id & {block_bits} <> 0
       AND clock_timestamp() < to_timestamp(({ms} + {offset})::float8 * 0.001::float8) THEN
        RETURN v_id;
    END IF;
    -- A block is used up or its time ran out, or the session has none: draw a block.
    v_redraw := true;",
        temp = block_sequence(g, node),
        block_bits = (block - 1) << c.seq_shift,
        offset = epoch_ms + i64::from(unit_ms) + HOLD_MS,
    )
}

/// The statements after the loop, which leaves `v_word` drawn: its ID, and with blocks the
/// rest of its block kept for the session.
fn finish(g: &DbGenerator, node: u64) -> String {
    let c = g.constants();
    let (_, seq_mask, time_shift, node_shift, seq_shift) = c.fields();
    let seq_bits = c.seq_bits;
    let compose = format!(
        "((v_word >> {seq_bits}) << {time_shift})
         | ({node}::bigint << {node_shift})
         | ((v_word & {seq_mask}) << {seq_shift})"
    );
    let block = g.block_len();
    if block == 1 {
        return format!("    RETURN {compose};");
    }
    let temp = block_sequence(g, node);
    format!(
        "    v_id := {compose};
    -- The rest of the block (up to the next multiple of {block} words) is the session's: its
    -- temporary sequence holds this ID, and its next values step the sequence field. Created
    -- once per session; where the session may not create temporary objects (no TEMPORARY
    -- privilege, a security-restricted operation) it keeps no block and every call draws.
    v_seq := to_regclass('pg_temp.{temp}');
    IF v_seq IS NULL AND v_word & {block_less_one} <> {block_less_one} THEN
        BEGIN
            CREATE TEMPORARY SEQUENCE IF NOT EXISTS {temp} AS bigint
                MINVALUE 0 MAXVALUE {max} INCREMENT BY {increment} CYCLE;
            v_seq := to_regclass('pg_temp.{temp}');
        EXCEPTION WHEN insufficient_privilege OR read_only_sql_transaction OR feature_not_supported THEN
            v_seq := NULL;
        END;
    END IF;
    -- Always set, also to a block's last ID: the last block must not outlive this draw.
    PERFORM setval(v_seq, v_id, true);
    RETURN v_id;",
        block_less_one = block - 1,
        max = i64::MAX,
        increment = 1i64 << seq_shift,
    )
}

/// ` AND v_word < <first word past the layout's last tick>`, or nothing when that word is past
/// `i64::MAX` (every non-negative word is then in range).
fn below_limit(g: &DbGenerator) -> String {
    let c = g.constants();
    let limit = (u128::from(c.max_ticks) + 1) << c.seq_bits;
    match i64::try_from(limit) {
        Ok(limit) => format!(" AND v_word < {limit}"),
        Err(_) => String::new(),
    }
}

/// The clock's tick as one expression (no division for a 1 ms unit).
fn now_tick(epoch_ms: i64, unit_ms: u32) -> String {
    let ms = format!("floor(date_part('epoch', clock_timestamp()) * 1000)::bigint - {epoch_ms}");
    if unit_ms == 1 {
        ms
    } else {
        format!("({ms}) / {unit_ms}")
    }
}

/// The ID of `v_word` with the node's bits as one literal and no shift by 0.
fn fast_compose(g: &DbGenerator, node: u64) -> String {
    let c = g.constants();
    let shifted = |field: String, shift: u32| {
        if shift == 0 {
            field
        } else {
            format!("({field} << {shift})")
        }
    };
    let time = shifted(format!("(v_word >> {})", c.seq_bits), c.time_shift);
    let seq = shifted(format!("(v_word & {})", c.seq_mask), c.seq_shift);
    let node_bits = node << c.node_shift;
    if node_bits == 0 {
        format!("{time} | {seq}")
    } else {
        format!("{time} | {seq} | {node_bits}")
    }
}

/// The trigger that fences the function when its lease row is freed, taken or deleted, or the
/// lease table truncated (crate documentation, "The database's node ID").
pub(super) fn fence_sql(g: &DbGenerator, node: u64) -> Vec<String> {
    let n = names(g);
    let c = g.constants();
    let (count, base) = (&n.count_class, &n.base_class);
    let holder = g.holder();
    // Names and labels hold only letters, digits, '_', '.' and ':': safe in string literals;
    // the namespace may be any text.
    let namespace = super::literal::text_literal(super::Host::Postgres, g.lease_namespace());
    vec![
        format!(
            "CREATE OR REPLACE FUNCTION {fence}() RETURNS trigger
LANGUAGE plpgsql AS $idgen$
DECLARE
    v_base bigint;
    v_tick bigint;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.holder IS NOT DISTINCT FROM OLD.holder
       AND NEW.node = OLD.node AND NEW.namespace = OLD.namespace THEN
        RETURN NEW;
    END IF;
    -- Held until this transaction ends: no jump moves the base while it is read and fenced.
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {lock_key});
    v_base := pg_sequence_last_value({base});
    IF v_base IS NOT NULL AND v_base <> {FENCED} THEN
        PERFORM setval({base}, {FENCED}, true);
        -- Read after the fence: every word a call returned was drawn before it.
        v_tick := (v_base + coalesce(pg_sequence_last_value({count}), 0)) >> {seq_bits};
        IF TG_OP = 'UPDATE' AND v_tick >= 0 THEN
            NEW.last_timestamp := greatest(coalesce(NEW.last_timestamp, 0), {epoch_ms} + v_tick * {unit_ms});
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    ELSIF TG_OP = 'TRUNCATE' THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$idgen$",
            fence = n.fence_function,
            lock_key = c.lock_key,
            seq_bits = c.seq_bits,
            epoch_ms = c.epoch_ms,
            unit_ms = c.unit_ms,
        ),
        format!("DROP TRIGGER IF EXISTS {} ON {}", n.fence_trigger, n.lease),
        format!(
            "CREATE TRIGGER {} BEFORE UPDATE OR DELETE ON {} FOR EACH ROW \
             WHEN (OLD.holder = '{holder}' AND OLD.namespace = {namespace} AND OLD.node = {node}) \
             EXECUTE FUNCTION {}()",
            n.fence_trigger, n.lease, n.fence_function
        ),
        format!("DROP TRIGGER IF EXISTS {} ON {}", n.truncate_trigger, n.lease),
        format!(
            "CREATE TRIGGER {} BEFORE TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION {}()",
            n.truncate_trigger, n.lease, n.fence_function
        ),
    ]
    .into_iter()
    .chain(drop_fence_sql(g))
    .collect()
}

/// With an install ID: an `sql_drop` event trigger that fences the function in the statement
/// that drops its lease table (the liveness check would stop it at its next jump). Creating an
/// event trigger needs a superuser: without the privilege the install goes on without it.
fn drop_fence_sql(g: &DbGenerator) -> Vec<String> {
    let Some(id) = &g.install_id else {
        return Vec::new();
    };
    let n = names(g);
    let c = g.constants();
    let (schema, table) = g
        .lease_table
        .as_str()
        .rsplit_once('.')
        .unwrap_or(("", g.lease_table.as_str()));
    let schema_test = if schema.is_empty() {
        String::new()
    } else {
        format!(" AND schema_name = '{schema}'")
    };
    vec![
        format!(
            "CREATE OR REPLACE FUNCTION {fence}() RETURNS event_trigger
LANGUAGE plpgsql AS $idgen$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects()
                WHERE object_type = 'table' AND object_name = '{table}'{schema_test}) THEN
        PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {lock_key});
        PERFORM setval({base}, {FENCED}, true);
    END IF;
END
$idgen$",
            fence = n.drop_fence_function,
            lock_key = c.lock_key,
            base = n.base_class,
        ),
        format!(
            "DO $idgen$
BEGIN
    DROP EVENT TRIGGER IF EXISTS \"idgen_fence_drop_{id}\";
    CREATE EVENT TRIGGER \"idgen_fence_drop_{id}\" ON sql_drop EXECUTE FUNCTION {}();
EXCEPTION WHEN insufficient_privilege THEN
    NULL;
END
$idgen$",
            n.drop_fence_function
        ),
    ]
}

/// Drops the fence triggers (by name: those of this install only).
pub(super) fn fence_drop_sql(g: &DbGenerator) -> Vec<String> {
    let n = names(g);
    [n.fence_trigger, n.truncate_trigger]
        .map(|t| format!("DROP TRIGGER IF EXISTS {t} ON {}", n.lease))
        .into()
}

/// `decode(id)`, `min_id_at(t)`, `max_id_at(t)` for the layout (crate documentation).
pub(super) fn helpers_sql(g: &DbGenerator) -> Vec<String> {
    let q = |i| g.helper(i).quoted_with('"');
    let c = g.constants();
    let l = g.layout();
    let node_mask = l.node_capacity() - 1;
    let low_bits = (1u64 << (l.node_bits() + l.sequence_bits())) - 1;
    let (epoch_ms, unit_ms, last_ms, max_ticks) = c.time();
    let (_, seq_mask, time_shift, node_shift, seq_shift) = c.fields();
    // The first instant of the tick holding `t`, as ticks; NULL outside the layout.
    let tick_of = format!(
        "(SELECT CASE WHEN ms < {epoch_ms} OR ms > {last_ms} THEN NULL ELSE (ms - {epoch_ms}) / {unit_ms} END \
         FROM (SELECT floor(extract(epoch FROM t) * 1000)::bigint AS ms) s)"
    );
    vec![
        format!(
            "CREATE OR REPLACE FUNCTION {}(id bigint, OUT unix_ms bigint, OUT at timestamptz, OUT node bigint, OUT sequence bigint)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $idgen$
SELECT ms, to_timestamp(ms / 1000.0), (id >> {node_shift}) & {node_mask}, (id >> {seq_shift}) & {seq_mask}
  FROM (SELECT CASE WHEN id < 0 THEN NULL ELSE {epoch_ms} + ((id >> {time_shift}) & {max_ticks}) * {unit_ms} END AS ms) s
$idgen$",
            q(0)
        ),
        format!(
            "CREATE OR REPLACE FUNCTION {}(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $idgen$
SELECT {tick_of} << {time_shift}
$idgen$",
            q(1)
        ),
        format!(
            "CREATE OR REPLACE FUNCTION {}(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $idgen$
SELECT ({tick_of} << {time_shift}) | {low_bits}
$idgen$",
            q(2)
        ),
    ]
}

/// Drops the function, its fence (and with it the triggers), its helpers and its sequences.
pub(super) fn drop_sql(g: &DbGenerator) -> Vec<String> {
    let n = names(g);
    let signatures = ["(bigint)", "(timestamptz)", "(timestamptz)"];
    let helpers = (0..3).map(|i| (g.helper(i).quoted_with('"'), signatures[i]));
    [
        (n.function, "()"),
        (n.fence_function, "() CASCADE"),
        (n.drop_fence_function, "() CASCADE"),
    ]
    .into_iter()
    .chain(helpers)
    .map(|(f, rest)| format!("DROP FUNCTION IF EXISTS {f}{rest}"))
    .chain([format!("DROP SEQUENCE IF EXISTS {}, {}", n.count, n.base)])
    .collect()
}
