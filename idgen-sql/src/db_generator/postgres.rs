//! The function in PL/pgSQL.

use super::{Constants, DbGenerator, SqlDialect};

/// `CREATE OR REPLACE FUNCTION … RETURNS bigint`: see the module documentation for what it does.
pub(super) fn function_sql(generator: &DbGenerator) -> String {
    let q = SqlDialect::Postgres.quote();
    let function = generator.function.quoted_with(q);
    let state = generator.state_table.quoted_with(q);
    let lease = generator.lease_table.quoted_with(q);
    let Constants {
        epoch_ms,
        unit_ms,
        last_ms,
        max_ticks,
        seq_bits,
        seq_mask,
        time_shift,
        node_shift,
        seq_shift,
        tolerance_ms,
        policy,
        borrow,
        key,
    } = generator.constants();
    let refused = format!(
        "RAISE EXCEPTION USING ERRCODE = 'IDG01', MESSAGE = format(\
         'idgen: the clock moved backwards by %s ms (policy {policy} allows {tolerance_ms} ms); no ID was issued', \
         v_last_ms - v_now_ms);"
    );
    // The clock is behind the last tick, by at most the policy's tolerance.
    let behind = if borrow {
        format!(
            "IF (v_word & {seq_mask}) <> {seq_mask} THEN
                v_next := v_word + 1;
            ELSIF v_last_tick + 1 > {max_ticks} THEN
                RAISE EXCEPTION USING ERRCODE = 'IDG04', MESSAGE = format(\
                'idgen: %s ms is after the last instant of the layout', {epoch_ms} + (v_last_tick + 1) * {unit_ms});
            ELSIF {epoch_ms} + (v_last_tick + 1) * {unit_ms} - v_now_ms > {tolerance_ms} THEN
                v_wait_ms := {epoch_ms} + (v_last_tick + 1) * {unit_ms} - {tolerance_ms} - v_now_ms;
            ELSE
                v_next := (v_last_tick + 1) << {seq_bits};
            END IF;"
        )
    } else {
        "v_wait_ms := v_last_ms - v_now_ms;".to_owned()
    };
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $idgen$
DECLARE
    v_node bigint;
    v_word bigint;
    v_next bigint;
    v_now_ms bigint;
    v_now_tick bigint;
    v_last_tick bigint;
    v_last_ms bigint;
    v_wait_ms bigint;
BEGIN
    -- The state row, locked until the transaction ends; only while the lease row still names
    -- this function's holder.
    SELECT g.node, g.last_word INTO v_node, v_word
      FROM {state} g
      JOIN {lease} l ON l.namespace = g.namespace AND l.node = g.node AND l.holder = g.holder
     WHERE g.name = '{key}'
       FOR UPDATE OF g;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'IDG02', MESSAGE =
            'idgen: {key} holds no node ID lease (no state row in {state}, or its lease row in {lease} names another holder): install it again';
    END IF;
    LOOP
        v_now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
        IF v_now_ms < {epoch_ms} THEN
            RAISE EXCEPTION USING ERRCODE = 'IDG03', MESSAGE = format(
                'idgen: the clock reads %s ms, before the layout''s epoch', v_now_ms);
        END IF;
        IF v_now_ms > {last_ms} THEN
            RAISE EXCEPTION USING ERRCODE = 'IDG04', MESSAGE = format(
                'idgen: %s ms is after the last instant of the layout', v_now_ms);
        END IF;
        v_now_tick := (v_now_ms - {epoch_ms}) / {unit_ms};
        v_last_tick := v_word >> {seq_bits};
        v_next := NULL;
        IF v_now_tick > v_last_tick THEN
            v_next := v_now_tick << {seq_bits};
        ELSIF v_now_tick = v_last_tick THEN
            IF (v_word & {seq_mask}) = {seq_mask} THEN
                -- The tick's sequence is used up: wait for the next tick (never wrap).
                v_wait_ms := {epoch_ms} + (v_last_tick + 1) * {unit_ms} - v_now_ms;
            ELSE
                v_next := v_word + 1;
            END IF;
        ELSE
            v_last_ms := {epoch_ms} + v_last_tick * {unit_ms};
            IF v_last_ms - v_now_ms > {tolerance_ms} THEN
                {refused}
            END IF;
            {behind}
        END IF;
        EXIT WHEN v_next IS NOT NULL;
        PERFORM pg_sleep(v_wait_ms / 1000.0);
    END LOOP;
    UPDATE {state} SET last_word = v_next WHERE name = '{key}';
    RETURN ((v_next >> {seq_bits}) << {time_shift})
         | (v_node << {node_shift})
         | ((v_next & {seq_mask}) << {seq_shift});
END
$idgen$"
    )
}
