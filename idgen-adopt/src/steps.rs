//! The steps of an adoption, written from what [`facts`](super::facts) read: each a name, a
//! description and its exact SQL.

use idgen_engine::SqlName;
use idgen_sql::{Dialect, QuotedName};

use crate::error::AdoptError;
use crate::facts::{self, Facts, KeySource, SequenceFacts};
use crate::limits::MIN_SEQUENCE_VALUES_LEFT;
use crate::options::{AdoptOptions, Target};
use crate::plan::Step;
use crate::public_id::{self, ColumnState, PublicIdAction};
use crate::transaction::{pg_transaction, progress_table_sql, record_sql};

/// How a step takes its lock, for the descriptions.
const LOCK_NOTE: &str = "each try waits at most 100 ms for its lock (0 on MariaDB), so other sessions never queue behind it for longer, \
                         and tries again until the lock wait (default 10 s) is spent";

/// What [`apply`](super::apply) does for a step beyond running its SQL.
#[derive(Clone, Debug)]
pub(super) enum Action {
    /// Run the SQL, in order (on PostgreSQL one statement text: one transaction); `object`
    /// is what its lock is taken on (named when the lock is not got in time).
    Sql { object: String },
    /// Read `MAX(key)` again and refuse (with this error) unless it is below `smallest`.
    CheckKeys { smallest: i64, refusal: AdoptError },
    /// Install the database-side generator (`db_generator::install`), then run the SQL.
    InstallGenerator,
    /// Like `Sql`, for a step whose try may take long (a rebuild, a scan): its lock wait
    /// counts the pauses between tries, not the tries themselves.
    LongSql { object: String },
    /// Fill the public-ID column in batches, then record the step.
    Backfill(public_id::Backfill),
    /// PostgreSQL: drop an invalid index of this name (after waiting for a build of it still
    /// running), then run the SQL from the second statement on.
    UniqueIndex { index: String },
}

/// The steps for `options` on a table described by `facts`.
pub(super) fn build(
    dialect: Dialect,
    options: &AdoptOptions,
    facts: &Facts,
    sequence: Option<&SequenceFacts>,
    public_column: Option<&ColumnState>,
    now_ms: i64,
    keys_checked: bool,
) -> Result<Vec<(Step, Action)>, AdoptError> {
    let table = &options.table;
    let column = SqlName::parse("key column", &facts.column)?;
    let record = |step: &str| record_sql(dialect, &options.progress_table, table, step);
    let mut steps = vec![(
        Step::new(
            "progress-table",
            format!(
                "create the progress table {} if missing: apply records each finished step there, so a second run skips it",
                options.progress_table
            ),
            vec![progress_table_sql(dialect, &options.progress_table)],
        ),
        Action::Sql {
            object: options.progress_table.as_str().to_owned(),
        },
    )];
    match &options.target {
        Target::Snowflake {
            layout,
            generator,
            clock_allowance,
        } => {
            if facts.int_bytes != 8 {
                return Err(key_type(table, facts, 8));
            }
            let from_ms = now_ms
                .saturating_sub(i64::try_from(clock_allowance.as_millis()).unwrap_or(i64::MAX));
            let smallest = layout
                .compose_at(from_ms.max(layout.epoch_ms()), 0, 0)
                .map_err(idgen_engine::Error::from)?
                .get();
            let from = idgen_engine::SnowflakeId::new(smallest)
                .and_then(|id| layout.decompose(id).ok())
                .map(|d| d.rfc3339())
                .unwrap_or_default();
            let refusal = |max_key| AdoptError::KeysNotAbove {
                table: table.as_str().to_owned(),
                column: facts.column.clone(),
                max_key,
                smallest,
                from: from.clone(),
                layout: idgen_engine::lease::layout_key(layout),
            };
            // Once checked (and the default retired), idgen's own keys are the largest.
            if facts.max_key >= smallest && !keys_checked {
                return Err(refusal(facts.max_key));
            }
            steps.push((
                Step::new(
                    "check-keys",
                    format!(
                        "check that every key idgen will issue is above the existing ones: the largest key is {} now (read again when applied), \
                         the smallest ID the layout can issue from {from} on is {smallest}",
                        facts.max_key
                    ),
                    vec![facts::max_key_sql(dialect, table, &column)],
                ),
                Action::CheckKeys {
                    smallest,
                    refusal: refusal(0),
                },
            ));
            let default = match generator {
                Some(g) => {
                    steps.push((
                        Step::new(
                            "install-generator",
                            format!(
                                "install the database-side generator {}() (idempotent; it leases a node ID from {}), so that inserts without a key get an idgen ID",
                                g.function_name(),
                                g.lease_table_name()
                            ),
                            g.migration_sql(dialect)?,
                        ),
                        Action::InstallGenerator,
                    ));
                    let sql = match (dialect, &facts.source) {
                        (Dialect::MySql, KeySource::AutoIncrement) => {
                            g.auto_increment_trigger_sql(dialect, table.as_str(), column.as_str())?
                        }
                        _ => g.column_default_sql(dialect, table.as_str(), column.as_str())?,
                    };
                    Some(match dialect {
                        Dialect::MySql => sql.replacen(
                            "CREATE TRIGGER ",
                            "SET STATEMENT lock_wait_timeout = 0 FOR CREATE TRIGGER IF NOT EXISTS ",
                            1,
                        ),
                        _ => sql,
                    })
                }
                None => None,
            };
            steps.push((
                retire_step(
                    dialect,
                    table,
                    &column,
                    facts,
                    default,
                    record("retire-default"),
                ),
                Action::Sql {
                    object: table.as_str().to_owned(),
                },
            ));
        }
        Target::HiLo {
            block,
            writers_use_sequence,
            accept_key_capacity,
            ..
        } => {
            if facts.int_bytes == 0 {
                return Err(key_type(table, facts, 4));
            }
            let sequence = sequence.ok_or_else(|| AdoptError::NoSequence {
                reason: format!("no sequence for hi-lo on {table}.{}", facts.column),
            })?;
            if !writers_use_sequence {
                writers_use(table, facts, sequence)?;
            }
            if let (Dialect::Postgres, KeySource::IdentityAlways(_)) = (dialect, &facts.source) {
                let t = table.quoted(dialect);
                let c = column.quoted(dialect);
                steps.push((
                    Step::new(
                        "identity-by-default",
                        format!(
                            "let hi-lo writers write keys: {table}.{} is GENERATED ALWAYS AS IDENTITY, which refuses a given key; \
                             make it GENERATED BY DEFAULT (a catalog change under a brief lock; old writers keep getting values from its sequence)",
                            facts.column
                        ),
                        pg_transaction(
                            &[format!("ALTER TABLE {t} ALTER COLUMN {c} SET GENERATED BY DEFAULT")],
                            record("identity-by-default"),
                        ),
                    ),
                    Action::Sql { object: table.as_str().to_owned() },
                ));
            }
            steps.push((
                hilo_step(
                    dialect,
                    table,
                    &column,
                    facts,
                    sequence,
                    *block,
                    record("hilo-sequence"),
                )
                .and_then(|mut step| {
                    let room = capacity_note(table, facts, sequence, *block, *accept_key_capacity)?;
                    step.description = format!("{}. {room}", step.description);
                    Ok(step)
                })?,
                Action::Sql {
                    object: sequence.name.as_str().to_owned(),
                },
            ));
        }
        Target::KeepKeys => {
            if facts.int_bytes == 0 {
                return Err(key_type(table, facts, 4));
            }
            if options.public_id.is_none() {
                return Err(AdoptError::Unsupported {
                    reason: format!(
                        "nothing to adopt on {table}: its keys are kept and no public-ID column was asked for (AdoptOptions::public_id)"
                    ),
                });
            }
        }
    }
    if let (Some(public), Some(state)) = (&options.public_id, public_column) {
        let record = |step: &str| record(step);
        for (step, action) in public_id::build(dialect, options, public, &column, state, &record)? {
            let object = table.as_str().to_owned();
            let action = match action {
                Some(PublicIdAction::Backfill(b)) => Action::Backfill(b),
                Some(PublicIdAction::UniqueIndex { index }) => Action::UniqueIndex { index },
                None if step.name == "public-id-column" => Action::Sql { object },
                None => Action::LongSql { object },
            };
            steps.push((step, action));
        }
    }
    Ok(steps)
}

fn key_type(table: &SqlName, facts: &Facts, needed: u8) -> AdoptError {
    let reason = if facts.int_bytes == 0 {
        "not an integer: idgen issues 64-bit integer keys, so a UUID or text key cannot be adopted; keep it and give the table a public ID instead".to_owned()
    } else {
        format!(
            "narrower than 64 bits: Snowflake IDs need BIGINT (at least {needed} bytes); widen it first (on PostgreSQL ALTER COLUMN … TYPE bigint rewrites the table), or adopt it with hi-lo"
        )
    };
    AdoptError::UnsupportedKeyType {
        table: table.as_str().to_owned(),
        column: facts.column.clone(),
        data_type: facts.data_type.clone(),
        reason,
    }
}

/// Refuses a sequence that the key column does not take its values from.
fn writers_use(table: &SqlName, facts: &Facts, sequence: &SequenceFacts) -> Result<(), AdoptError> {
    let own = match &facts.source {
        KeySource::IdentityAlways(s)
        | KeySource::IdentityByDefault(s)
        | KeySource::SequenceDefault(s) => Some(s.as_str()),
        _ => None,
    };
    if own.is_some_and(|own| own == sequence.qualified) {
        return Ok(());
    }
    let key_source = match &facts.source {
        KeySource::IdentityAlways(s) | KeySource::IdentityByDefault(s) => {
            format!("its identity's sequence {s}")
        }
        KeySource::SequenceDefault(s) => format!("its default, nextval of {s}"),
        KeySource::AutoIncrement => "AUTO_INCREMENT".to_owned(),
        KeySource::OtherDefault(d) => format!("its default {d}"),
        KeySource::None => "no default: the writers give every key".to_owned(),
    };
    Err(AdoptError::SequenceNotUsed {
        table: table.as_str().to_owned(),
        column: facts.column.clone(),
        sequence: sequence.name.as_str().to_owned(),
        key_source,
    })
}

/// How many more values `sequence` can hand out with `INCREMENT BY block` above `above`
/// before it or the key type runs out, and that limit.
fn capacity(facts: &Facts, sequence: &SequenceFacts, above: i64, block: i64) -> (i64, i64) {
    let limit = match facts.key_max {
        0 => sequence.max_value,
        key => key.min(sequence.max_value),
    };
    (limit.saturating_sub(above).max(0) / block, limit)
}

/// The hi-lo step's capacity (how many more values the sequence hands out before it or the key
/// type runs out), refusing too little unless `accepted`. Called once the step's own checks
/// passed (a block of at least 1, at least two blocks left).
fn capacity_note(
    table: &SqlName,
    facts: &Facts,
    sequence: &SequenceFacts,
    block: u64,
    accepted: bool,
) -> Result<String, AdoptError> {
    let step = i64::try_from(block).unwrap_or(i64::MAX).max(1);
    let above = facts.max_key.max(sequence.position);
    let (values_left, limit) = capacity(facts, sequence, above, step);
    let required = MIN_SEQUENCE_VALUES_LEFT.max(facts.max_key);
    if values_left < required && !accepted {
        return Err(AdoptError::KeyCapacity {
            table: table.as_str().to_owned(),
            column: facts.column.clone(),
            data_type: facts.data_type.clone(),
            type_max: limit,
            block,
            capacity: values_left,
        });
    }
    Ok(format!(
        "Capacity: {} ({}) and the sequence hold keys up to {limit}, so with INCREMENT BY {block} there is room for {values_left} more values \
         above {above}: each old writer's row takes one (a whole block of {block} keys), each hi-lo block one, so {values_left} old-writer rows, \
         or {values_left} hi-lo blocks ({} keys), or any mix of the two{}",
        facts.column,
        facts.data_type,
        i128::from(values_left) * i128::from(step),
        if values_left < required {
            format!(" (fewer than the {required} idgen asks for: accepted by the user)")
        } else {
            String::new()
        }
    ))
}

/// Step 1's change: retire the column's own default, so only idgen writes keys.
fn retire_step(
    dialect: Dialect,
    table: &SqlName,
    column: &SqlName,
    facts: &Facts,
    generator_default: Option<String>,
    record: String,
) -> Step {
    let (t, c) = (table.quoted(dialect), column.quoted(dialect));
    let by = if generator_default.is_some() {
        "; the database-side generator becomes its default in the same step"
    } else {
        "; inserts must then give a key (from idgen)"
    };
    let name = "retire-default";
    match dialect {
        Dialect::MySql
            if generator_default.is_some() && facts.source == KeySource::AutoIncrement =>
        {
            let sql = generator_default.into_iter().chain([record]).collect();
            Step::new(
                name,
                format!(
                    "make the database-side generator the key of {table}.{}: a BEFORE INSERT trigger, and AUTO_INCREMENT stays, so that \
                     LAST_INSERT_ID() and the insert id drivers read give each writer its row's key (the trigger gives a statement's first row \
                     its key as the generated value, SET insert_id, and further rows theirs directly). No ALTER of the table: creating the \
                     trigger needs running transactions on the table to end first ({LOCK_NOTE}). Old keys and child tables' foreign keys are untouched",
                    facts.column
                ),
                sql,
            )
        }
        Dialect::MySql => {
            let mut sql: Vec<String> = generator_default.into_iter().collect();
            let default = if sql.is_empty() { "" } else { " DEFAULT 0" };
            let comment = if facts.comment.is_empty() {
                String::new()
            } else {
                format!(
                    " COMMENT '{}'",
                    facts.comment.replace('\\', "\\\\").replace('\'', "''")
                )
            };
            let what = match facts.source {
                KeySource::AutoIncrement => "remove AUTO_INCREMENT from",
                _ => "restate without a default",
            };
            sql.push(format!(
                "SET STATEMENT lock_wait_timeout = 0 FOR ALTER TABLE {t} MODIFY {c} {} NOT NULL{default}{comment}, ALGORITHM = INPLACE, LOCK = NONE",
                facts.data_type
            ));
            sql.push(record);
            Step::new(
                name,
                format!(
                    "{what} {table}.{}{by}. Online: MariaDB changes only the table's metadata (in place, no lock on rows; it needs running transactions on the table \
                     to end first: {LOCK_NOTE}); a server that would need to copy the table refuses the statement instead of copying, \
                     and then the change needs a maintenance window (ALGORITHM = COPY). Old keys and child tables' foreign keys are untouched",
                    facts.column
                ),
                sql,
            )
        }
        _ => {
            let mut change = match &facts.source {
                KeySource::IdentityAlways(_) | KeySource::IdentityByDefault(_) => vec![format!(
                    "ALTER TABLE {t} ALTER COLUMN {c} DROP IDENTITY IF EXISTS"
                )],
                KeySource::None => Vec::new(),
                _ => vec![format!("ALTER TABLE {t} ALTER COLUMN {c} DROP DEFAULT")],
            };
            let what = match &facts.source {
                KeySource::IdentityAlways(s) | KeySource::IdentityByDefault(s) => format!(
                    "drop the identity of {table}.{} (its sequence {s} goes with it: an identity's sequence cannot outlive it)",
                    facts.column
                ),
                KeySource::SequenceDefault(s) => format!(
                    "drop the default of {table}.{} (nextval of {s}); the sequence is kept: dropping it cannot be undone, \
                     and code or reports may still read it; drop it yourself once nothing does{}",
                    facts.column,
                    if generator_default.is_some() {
                        " (it is no longer owned by the column: pg_get_serial_sequence names the generator's key sequence)"
                    } else {
                        ""
                    }
                ),
                KeySource::OtherDefault(d) => {
                    format!("drop the default {d} of {table}.{}", facts.column)
                }
                KeySource::None | KeySource::AutoIncrement => {
                    format!("{table}.{} has no default to retire", facts.column)
                }
            };
            if let (KeySource::SequenceDefault(s), Some(_)) = (&facts.source, &generator_default) {
                // pg_get_serial_sequence must name the key sequence the new default keeps.
                let s = SqlName::parse("sequence", s)
                    .map(|s| s.quoted(dialect))
                    .unwrap_or_else(|_| s.clone());
                change.push(format!("ALTER SEQUENCE {s} OWNED BY NONE"));
            }
            change.extend(generator_default);
            Step::new(
                name,
                format!(
                    "{what}{by}. One transaction, catalog changes only (no rewrite, no scan), under a brief ACCESS EXCLUSIVE lock: \
                     {LOCK_NOTE}. Old keys and child tables' foreign keys are untouched"
                ),
                pg_transaction(&change, record),
            )
        }
    }
}

/// Step 3: the sequence hands out hi-lo blocks above every existing key.
fn hilo_step(
    dialect: Dialect,
    table: &SqlName,
    column: &SqlName,
    facts: &Facts,
    sequence: &SequenceFacts,
    block: u64,
    record: String,
) -> Result<Step, AdoptError> {
    let name = sequence.name.as_str();
    let unsafe_sequence = |reason: String| AdoptError::UnsafeSequence {
        sequence: name.to_owned(),
        block,
        reason,
    };
    let step = i64::try_from(block)
        .ok()
        .filter(|b| *b >= 1)
        .ok_or_else(|| unsafe_sequence("a block must be between 1 and i64::MAX".into()))?;
    if sequence.increment < 1 {
        return Err(unsafe_sequence(format!(
            "it counts by {} (downwards or not at all); hi-lo needs a sequence that counts upwards",
            sequence.increment
        )));
    }
    if sequence.cycles {
        return Err(unsafe_sequence(
            "it CYCLEs: at its maximum it would start again and hand out old keys; ALTER SEQUENCE … NO CYCLE first".into(),
        ));
    }
    let above = facts.max_key.max(sequence.position);
    let last_needed = above.checked_add(step.saturating_mul(2));
    if last_needed.is_none_or(|last| last > sequence.max_value) {
        return Err(unsafe_sequence(format!(
            "its maximum is {}, and blocks must start above {above} (the largest key or value handed out): not even two blocks fit",
            sequence.max_value
        )));
    }
    let (s, t) = (sequence.name.quoted(dialect), table.quoted(dialect));
    let c = column.quoted(dialect);
    let description = format!(
        "make sequence {name} hand out hi-lo blocks of {block}: INCREMENT BY {block} (now {}), and its value moved up to the largest key of {table}.{} \
         ({} now; read again when applied) if that is above its own ({}). A value v is the block [v, v + {block}): values handed out before \
         are all below the new ones, and every value after the change is on one grid of step {block}, so an old writer's single value and \
         a hi-lo block never meet. {}; {LOCK_NOTE}",
        sequence.increment,
        facts.column,
        facts.max_key,
        sequence.position,
        match dialect {
            Dialect::MySql =>
                "MariaDB: SETVAL (which only ever moves a sequence forwards) runs first, while the increment still keeps hi-lo processes \
                 from starting; the ALTER then continues from the next value not yet cached, once sessions using the sequence have ended their transactions",
            _ =>
                "PostgreSQL: one transaction; ALTER SEQUENCE takes a lock that nextval waits for, so no value is handed out between reading the maximum and setting the value",
        }
    );
    let sql = match dialect {
        // SETVAL first, while the increment still keeps hi-lo processes from starting.
        Dialect::MySql => vec![
            format!("SELECT CAST(COALESCE(MAX({c}), 0) AS SIGNED) INTO @idgen_adopt_max FROM {t}"),
            format!(
                "EXECUTE IMMEDIATE CONCAT('SELECT SETVAL({s}, ', GREATEST(@idgen_adopt_max, 1), ')')"
            ),
            format!(
                "SET STATEMENT lock_wait_timeout = 0 FOR ALTER SEQUENCE {s} INCREMENT BY {block}"
            ),
            record,
        ],
        _ => pg_transaction(
            &[
                format!("ALTER SEQUENCE {s} INCREMENT BY {block}"),
                format!(
                    "SELECT setval('{s}', GREATEST((SELECT COALESCE(MAX({c}), 0)::bigint FROM {t}), (SELECT last_value FROM {s})))"
                ),
            ],
            record,
        ),
    };
    Ok(Step::new("hilo-sequence", description, sql))
}

#[cfg(test)]
mod tests {
    use super::*;
    use idgen_core::Layout;

    fn facts(source: KeySource, data_type: &str, int_bytes: u8, max_key: i64) -> Facts {
        Facts {
            column: "id".into(),
            data_type: data_type.into(),
            int_bytes,
            key_max: crate::facts::key_max(data_type),
            source,
            max_key,
            comment: String::new(),
        }
    }

    const NOW_MS: i64 = 1_800_000_000_000;

    #[test]
    fn snowflake_steps_retire_the_default_in_one_recorded_transaction() {
        let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap();
        let f = facts(
            KeySource::IdentityAlways("public.orders_id_seq".into()),
            "bigint",
            8,
            3000,
        );
        let steps = build(Dialect::Postgres, &options, &f, None, None, NOW_MS, false).unwrap();
        let retire = &steps.last().unwrap().0;
        assert_eq!(retire.name, "retire-default");
        let sql = &retire.sql[0];
        assert!(
            sql.starts_with("BEGIN;\nSET LOCAL lock_timeout = '100ms';\n"),
            "{sql}"
        );
        assert!(sql.contains("ALTER TABLE \"orders\" ALTER COLUMN \"id\" DROP IDENTITY IF EXISTS;\nINSERT INTO \"idgen_adoption\""));
        assert!(sql.ends_with("ON CONFLICT DO NOTHING;\nCOMMIT"), "{sql}");

        let f = facts(KeySource::AutoIncrement, "bigint(20) unsigned", 8, 3000);
        let steps = build(Dialect::MySql, &options, &f, None, None, NOW_MS, false).unwrap();
        let retire = &steps.last().unwrap().0;
        assert_eq!(
            retire.sql[0],
            "SET STATEMENT lock_wait_timeout = 0 FOR ALTER TABLE `orders` MODIFY `id` bigint(20) unsigned NOT NULL, ALGORITHM = INPLACE, LOCK = NONE"
        );
    }

    #[test]
    fn keys_at_or_above_the_smallest_id_are_refused_unless_already_checked() {
        let options = AdoptOptions::snowflake("orders", Layout::TWITTER).unwrap();
        let f = facts(KeySource::None, "bigint", 8, i64::MAX);
        let err = build(Dialect::Postgres, &options, &f, None, None, NOW_MS, false).unwrap_err();
        assert!(
            matches!(
                err,
                AdoptError::KeysNotAbove {
                    max_key: i64::MAX,
                    ..
                }
            ),
            "{err}"
        );
        assert!(build(Dialect::Postgres, &options, &f, None, None, NOW_MS, true).is_ok());
        let narrow = facts(KeySource::None, "integer", 4, 1);
        let err = build(
            Dialect::Postgres,
            &options,
            &narrow,
            None,
            None,
            NOW_MS,
            false,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("Snowflake IDs need BIGINT"),
            "{err}"
        );
    }

    #[test]
    fn hilo_refuses_sequences_that_cannot_take_blocks() {
        let options = AdoptOptions::hilo("lines", 1000).unwrap();
        let f = facts(
            KeySource::SequenceDefault("lines_seq".into()),
            "integer",
            4,
            10,
        );
        let sequence = |increment, max_value, cycles| SequenceFacts {
            name: SqlName::parse("sequence", "lines_seq").unwrap(),
            qualified: "lines_seq".into(),
            increment,
            max_value,
            position: 10,
            cycles,
        };
        let run = |s: SequenceFacts| {
            build(
                Dialect::Postgres,
                &options,
                &f,
                Some(&s),
                None,
                NOW_MS,
                false,
            )
        };
        assert!(run(sequence(1, i64::MAX, false)).is_ok());
        let step = &run(sequence(1, i64::MAX, false)).unwrap()[1].0;
        assert!(
            step.description.contains(
                "room for 2147483 more values above 10: each old writer's row takes one (a whole block of 1000 keys), each hi-lo block one"
            ),
            "{}",
            step.description
        );
        for (s, says) in [
            (sequence(-1, i64::MAX, false), "counts by -1"),
            (sequence(1, i64::MAX, true), "CYCLEs"),
            (sequence(1, 1500, false), "not even two blocks fit"),
        ] {
            let err = run(s).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }

        // Blocks of 10,000 on an integer key leave 214,748 values: refused unless accepted.
        let wide = AdoptOptions::hilo("lines", 10_000).unwrap();
        let s = sequence(1, i64::MAX, false);
        let build_with =
            |o: &AdoptOptions| build(Dialect::Postgres, o, &f, Some(&s), None, NOW_MS, false);
        let err = build_with(&wide).unwrap_err();
        assert!(
            matches!(
                err,
                AdoptError::KeyCapacity {
                    capacity: 214_748,
                    type_max: 2_147_483_647,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("key column lines.id is integer, which holds keys up to 2147483647: with INCREMENT BY 10000"), "{err}");
        let accepted = build_with(&wide.accept_key_capacity()).unwrap();
        assert!(accepted[1].0.description.contains("accepted by the user"));

        // A sequence that is not the column's own is refused unless the user moves the writers.
        let other = SequenceFacts {
            qualified: "public.other_seq".into(),
            ..sequence(1, i64::MAX, false)
        };
        let err = build(
            Dialect::Postgres,
            &options,
            &f,
            Some(&other),
            None,
            NOW_MS,
            false,
        )
        .unwrap_err();
        assert!(matches!(err, AdoptError::SequenceNotUsed { .. }), "{err:?}");
        let moved = options.clone().writers_use_sequence();
        assert!(
            build(
                Dialect::Postgres,
                &moved,
                &f,
                Some(&other),
                None,
                NOW_MS,
                false
            )
            .is_ok()
        );
    }
}
