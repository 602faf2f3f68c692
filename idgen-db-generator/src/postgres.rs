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
            "CREATE SEQUENCE IF NOT EXISTS {} AS bigint MINVALUE 1 START 1 CACHE 1 NO CYCLE",
            n.count
        ),
        format!(
            "CREATE SEQUENCE IF NOT EXISTS {} AS bigint MINVALUE {} MAXVALUE {FENCED} START {FENCED} CACHE 1 NO CYCLE",
            n.base,
            i64::MIN
        ),
    ]
}

/// Sets the base so that the next word drawn is `word` or above, and above every word drawn
/// so far, under the jump lock (held to the end of its transaction, so never kept).
pub(super) fn start_at_sql(g: &DbGenerator, word: i64) -> String {
    let n = names(g);
    let c = g.constants();
    format!(
        "DO $idgen$
DECLARE
    v_base bigint;
    v_count bigint;
    v_word bigint := {word};
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {key});
    v_base := pg_sequence_last_value({base});
    v_count := coalesce(pg_sequence_last_value({count}), 0);
    IF v_base IS NOT NULL AND v_base <> {FENCED} THEN
        v_word := greatest(v_word, v_base + v_count + 1);
    END IF;
    PERFORM setval({base}, v_word - v_count - 1, true);
END
$idgen$",
        base = n.base_class,
        count = n.count_class,
        key = c.lock_key,
    )
}

/// The last word drawn; no row when never set or fenced.
pub(super) fn last_word_sql(g: &DbGenerator) -> String {
    let n = names(g);
    // No row rather than a NULL: a session reads numbers, not nullable ones.
    format!(
        "SELECT b + coalesce(pg_sequence_last_value({}), 0) \
         FROM (SELECT pg_sequence_last_value({}) AS b) s WHERE b <> {FENCED}",
        n.count_class, n.base_class
    )
}

/// `CREATE OR REPLACE FUNCTION … RETURNS bigint`: see the crate documentation for what it
/// does.
pub(super) fn function_sql(g: &DbGenerator, node: u64) -> String {
    let n = names(g);
    let c = g.constants();
    let (epoch_ms, unit_ms, last_ms, max_ticks) = c.time();
    let (seq_bits, seq_mask, time_shift, node_shift, seq_shift) = c.fields();
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
    v_alive boolean;
BEGIN
    -- The fast path: four short expressions and the RETURN. PL/pgSQL sets every expression
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
    -- past the layout) goes on below with this draw; later rounds draw again.
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
            RETURN ((v_word >> {seq_bits}) << {time_shift})
                 | ({node}::bigint << {node_shift})
                 | ((v_word & {seq_mask}) << {seq_shift});
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
                    IF v_base IS NOT NULL AND v_base <> {FENCED}
                       AND v_base < (v_now_tick << {seq_bits}) - v_count - 1 THEN
                        -- Once per jump: is the lease row still ours?
                        {check_in_jump}
                        PERFORM setval({base}, (v_now_tick << {seq_bits}) - v_count - 1, true);
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
    RETURN ((v_word >> {seq_bits}) << {time_shift})
         | ({node}::bigint << {node_shift})
         | ((v_word & {seq_mask}) << {seq_shift});
END
$idgen$",
        function = n.function,
        key = g.function.as_str(),
        lease_text = g.lease_table.as_str(),
        below_limit = below_limit(g),
        now_tick = now_tick(epoch_ms, unit_ms),
        fast_compose = fast_compose(g, node),
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
