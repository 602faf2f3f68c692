//! The function as a MariaDB/MySQL stored function.

use super::{Constants, DbGenerator, SqlDialect};

/// `CREATE FUNCTION … RETURNS BIGINT`: see the module documentation for what it does.
///
/// The time is `SYSDATE(6)` (read afresh; `NOW()` is fixed for a whole statement, so a
/// multi-row insert would never see the next tick) in the session's time zone, turned into UTC
/// with the zone's offset at the statement's start, `NOW() - UTC_TIMESTAMP()`: exact also in a
/// daylight-saving hour that repeats, where `UNIX_TIMESTAMP(SYSDATE(6))` would guess.
pub(super) fn function_sql(generator: &DbGenerator) -> String {
    let q = SqlDialect::MySql.quote();
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
        "SET v_message = CONCAT('idgen: the clock moved backwards by ', v_last_ms - v_now_ms, \
         ' ms (policy {policy} allows {tolerance_ms} ms); no ID was issued');
                SIGNAL SQLSTATE 'IDG01' SET MESSAGE_TEXT = v_message;"
    );
    let behind = if borrow {
        format!(
            "IF (v_word & {seq_mask}) <> {seq_mask} THEN
                    SET v_next = v_word + 1;
                ELSEIF v_last_tick + 1 > {max_ticks} THEN
                    SET v_message = CONCAT('idgen: ', {epoch_ms} + (v_last_tick + 1) * {unit_ms}, ' ms is after the last instant of the layout');
                    SIGNAL SQLSTATE 'IDG04' SET MESSAGE_TEXT = v_message;
                ELSEIF {epoch_ms} + (v_last_tick + 1) * {unit_ms} - v_now_ms > {tolerance_ms} THEN
                    SET v_wait_ms = {epoch_ms} + (v_last_tick + 1) * {unit_ms} - {tolerance_ms} - v_now_ms;
                ELSE
                    SET v_next = (v_last_tick + 1) << {seq_bits};
                END IF;"
        )
    } else {
        "SET v_wait_ms = v_last_ms - v_now_ms;".to_owned()
    };
    format!(
        "CREATE FUNCTION {function}() RETURNS BIGINT
    NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
    DECLARE v_found INT DEFAULT 1;
    DECLARE v_held BIGINT;
    DECLARE v_namespace VARCHAR(255);
    DECLARE v_holder VARCHAR(255);
    DECLARE v_node BIGINT;
    DECLARE v_word BIGINT;
    DECLARE v_next BIGINT;
    DECLARE v_now_ms BIGINT;
    DECLARE v_now_tick BIGINT;
    DECLARE v_last_tick BIGINT;
    DECLARE v_last_ms BIGINT;
    DECLARE v_wait_ms BIGINT;
    DECLARE v_slept INT;
    DECLARE v_offset_ms BIGINT DEFAULT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()) * 1000;
    DECLARE v_message VARCHAR(128);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
    -- The state row, locked until the transaction ends.
    SELECT namespace, node, holder, last_word INTO v_namespace, v_node, v_holder, v_word
      FROM {state} WHERE name = '{key}' FOR UPDATE;
    -- Only while the lease row still names this function's holder.
    SELECT COUNT(*) INTO v_held FROM {lease}
     WHERE namespace = v_namespace AND node = v_node AND holder = v_holder;
    IF v_found = 0 OR v_held = 0 THEN
        -- MESSAGE_TEXT holds at most 128 characters: the function's name is left out.
        SIGNAL SQLSTATE 'IDG02' SET MESSAGE_TEXT = 'idgen: the generator function holds no node ID lease: install it again';
    END IF;
    LOOP
        SET v_now_ms = TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', SYSDATE(6)) DIV 1000 - v_offset_ms;
        IF v_now_ms < {epoch_ms} THEN
            SET v_message = CONCAT('idgen: the clock reads ', v_now_ms, ' ms, before the layout''s epoch');
            SIGNAL SQLSTATE 'IDG03' SET MESSAGE_TEXT = v_message;
        END IF;
        IF v_now_ms > {last_ms} THEN
            SET v_message = CONCAT('idgen: ', v_now_ms, ' ms is after the last instant of the layout');
            SIGNAL SQLSTATE 'IDG04' SET MESSAGE_TEXT = v_message;
        END IF;
        SET v_now_tick = (v_now_ms - {epoch_ms}) DIV {unit_ms};
        SET v_last_tick = v_word >> {seq_bits};
        SET v_next = NULL;
        IF v_now_tick > v_last_tick THEN
            SET v_next = v_now_tick << {seq_bits};
        ELSEIF v_now_tick = v_last_tick THEN
            IF (v_word & {seq_mask}) = {seq_mask} THEN
                -- The tick's sequence is used up: wait for the next tick (never wrap).
                SET v_wait_ms = {epoch_ms} + (v_last_tick + 1) * {unit_ms} - v_now_ms;
            ELSE
                SET v_next = v_word + 1;
            END IF;
        ELSE
            SET v_last_ms = {epoch_ms} + v_last_tick * {unit_ms};
            IF v_last_ms - v_now_ms > {tolerance_ms} THEN
                {refused}
            END IF;
            {behind}
        END IF;
        IF v_next IS NOT NULL THEN
            UPDATE {state} SET last_word = v_next WHERE name = '{key}';
            RETURN CAST(((v_next >> {seq_bits}) << {time_shift})
                 | (v_node << {node_shift})
                 | ((v_next & {seq_mask}) << {seq_shift}) AS SIGNED);
        END IF;
        SET v_slept = SLEEP(v_wait_ms / 1000);
    END LOOP;
END"
    )
}
