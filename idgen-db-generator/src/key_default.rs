//! The per-table key default that calls the generator, written so that writers keep reading
//! their new row's key back by the means they already use.
//!
//! **PostgreSQL.** `RETURNING` sees any default. `lastval()` reads the value of the sequence
//! the session last called `nextval` on, `currval(s)` the session's last value of `s`, and
//! `pg_get_serial_sequence(t, c)` names the sequence owned by the column. The generator's own
//! `nextval` is on its count sequence, so a plain `DEFAULT idgen_next_id()` leaves `lastval()`
//! on that count (a valid-looking old key) and no sequence for `pg_get_serial_sequence`. The
//! default here keeps a sequence per column, `<table>_<column>_idgen_seq`, owned by the column,
//! and records each key in it:
//!
//! ```text
//! setval(seq, idgen_next_id() + 0 * nextval(seq), true)
//! ```
//!
//! Arguments and operands are evaluated left to right: the generator runs first (its own
//! `nextval`), then `nextval(seq)` makes `seq` the session's last-used sequence (PostgreSQL's
//! `sequence.c`: `nextval_internal` sets `last_used_seq`), then `setval(seq, id, true)`
//! (`do_setval`) sets the session's value of `seq` (`elm->last`, what `currval` and `lastval`
//! return) to the key, and returns it. The sequence only records keys: it increments by
//! `i64::MAX` and cycles from `i64::MIN`, so code that calls `nextval` on it itself gets only
//! `i64::MIN`, `-1` or `i64::MAX - 1`, never a key idgen issues, and fails on a duplicate key
//! instead of taking someone's ID. The default names the generator itself, so `uninstall` is
//! still refused while a column uses it.
//!
//! **MariaDB.** `LAST_INSERT_ID()` and the OK packet's insert id (what drivers return as the
//! insert's key) come from `AUTO_INCREMENT`: `handler::update_auto_increment` records the
//! first value it *generates* in a statement; a value a trigger stores is not generated, and
//! `LAST_INSERT_ID(expr)` inside a trigger is restored when the trigger ends. But a generated
//! value is taken from `SET insert_id` when set (`THD::auto_inc_intervals_forced`), and a
//! trigger may set it. So for a column that keeps `AUTO_INCREMENT`, the trigger of
//! [`DbGenerator::auto_increment_trigger_sql`] gives the first row of each statement its key
//! through `insert_id` (it becomes the statement's generated value: `LAST_INSERT_ID()` and the
//! insert id report it), and every further row of the statement its key directly: a forced
//! value only starts a run of consecutive values, which the generator does not issue, and a
//! value forced again later in the statement is not taken (the run goes on). A row is the
//! statement's first unless the session's last forced key for this table was forced at this
//! statement's `NOW(6)` and has not become `LAST_INSERT_ID()` yet; both hold only inside the
//! statement that forced it, so a later row never takes a run's next value.
//!
//! A forced key is taken by the first row the statement really inserts, not by the first row
//! it tries: when that row is skipped (`INSERT IGNORE` of a duplicate) or becomes an update
//! (`ON DUPLICATE KEY UPDATE`), the server hands the forced value back and the next inserted
//! row takes it, as a plain `AUTO_INCREMENT` statement reports its first *inserted* row. So a
//! later row whose statement's forced key is still pending (`@@insert_id` still holds it: it
//! is reset at every statement's end and changed by no one but a trigger) and is not in the
//! table yet (one primary-key lookup per statement, remembered in a session variable once the
//! key has landed) is left without a key, and takes the forced one. The session variables
//! are per table (named `idgen_key_forced.<table>` and so on), so that an application trigger inserting
//! into a second adopted table while the first's statement runs neither takes nor disturbs
//! the first table's forced key: a row whose statement's `@@insert_id` another table's
//! trigger changed gets its key directly.
use idgen_engine::{Error, ErrorKind, SqlName};

use super::DbGenerator;

/// The table (quoted), its schema prefix (quoted, with the dot, or empty), its bare name.
fn names(table: &str, q: char) -> Result<(String, String, String), Error> {
    let t = SqlName::parse("table", table)?;
    let base = table.rsplit('.').next().unwrap_or(table).to_owned();
    let schema = table
        .rsplit_once('.')
        .map(|(s, _)| format!("{q}{s}{q}."))
        .unwrap_or_default();
    Ok((t.quoted_with(q), schema, base))
}

fn column_name(column: &str) -> Result<SqlName, Error> {
    let c = SqlName::parse("column", column)?;
    if column.contains('.') {
        return Err(ErrorKind::InvalidOptions {
            reason: format!("column name {column:?} must not contain '.'"),
        }
        .into());
    }
    Ok(c)
}

/// The name of the sequence that records `table.column`'s keys on PostgreSQL, quoted, with
/// the table's schema if it was given one.
pub(super) fn key_sequence(table: &str, column: &str) -> Result<String, Error> {
    let (_, schema, base) = names(table, '"')?;
    let c = column_name(column)?;
    Ok(format!("{schema}\"{base}_{}_idgen_seq\"", c.as_str()))
}

/// PostgreSQL: the key sequence (if missing) and the column default that records each key in it.
pub(super) fn postgres(g: &DbGenerator, table: &str, column: &str) -> Result<String, Error> {
    let (tq, _, _) = names(table, '"')?;
    let cq = column_name(column)?.quoted_with('"');
    let seq = key_sequence(table, column)?;
    let f = g.function.quoted_with('"');
    Ok(format!(
        "CREATE SEQUENCE IF NOT EXISTS {seq} AS bigint MINVALUE {min} MAXVALUE {max} INCREMENT BY {max} CACHE 1 CYCLE OWNED BY {tq}.{cq};\n\
         ALTER TABLE {tq} ALTER COLUMN {cq} SET DEFAULT setval('{seq}'::regclass, {f}() + 0 * nextval('{seq}'::regclass), true)",
        min = i64::MIN,
        max = i64::MAX,
    ))
}

/// MariaDB: the trigger for a column without `AUTO_INCREMENT` (it sets the key directly).
pub(super) fn mariadb(g: &DbGenerator, table: &str, column: &str) -> Result<String, Error> {
    let (tq, schema, base) = names(table, '`')?;
    let c = column_name(column)?;
    let cq = c.quoted_with('`');
    let f = g.function.quoted_with('`');
    Ok(format!(
        "CREATE TRIGGER {schema}`{base}_{}_idgen` BEFORE INSERT ON {tq} FOR EACH ROW \
         BEGIN IF NEW.{cq} IS NULL OR NEW.{cq} = 0 THEN SET NEW.{cq} = {f}(); END IF; END",
        c.as_str()
    ))
}

/// MariaDB: the trigger for a column that keeps `AUTO_INCREMENT` (see the crate documentation).
pub(super) fn mariadb_auto_increment(
    g: &DbGenerator,
    table: &str,
    column: &str,
) -> Result<String, Error> {
    let (tq, schema, base) = names(table, '`')?;
    let c = column_name(column)?;
    let cq = c.quoted_with('`');
    let f = g.function.quoted_with('`');
    // Per-table session variables (the name is checked: letters, digits, '_' and '.').
    let var = |what: &str| format!("@`idgen_key_{what}.{table}`");
    let (at, forced, landed) = (var("at"), var("forced"), var("landed"));
    Ok(format!(
        "CREATE TRIGGER {schema}`{base}_{}_idgen` BEFORE INSERT ON {tq} FOR EACH ROW \
         BEGIN IF NEW.{cq} IS NULL OR NEW.{cq} = 0 THEN \
         IF NOT ({at} <=> NOW(6)) OR LAST_INSERT_ID() <=> {forced} THEN \
         SET {forced} = {f}(); SET @@insert_id = {forced}; SET {at} = NOW(6); \
         ELSEIF @@insert_id <=> {forced} AND NOT ({landed} <=> {forced}) THEN \
         IF EXISTS (SELECT 1 FROM {tq} WHERE {cq} = {forced}) THEN SET {landed} = {forced}; SET NEW.{cq} = {f}(); END IF; \
         ELSE SET NEW.{cq} = {f}(); \
         END IF; END IF; END",
        c.as_str()
    ))
}
