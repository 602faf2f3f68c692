//! [`apply`] and [`apply_first`]: the steps of a plan, run and recorded one by one.

use std::collections::HashSet;
use std::sync::Arc;

use idgen_engine::SqlName;
use idgen_sql::{Dialect, ErrorClass, QuotedName, Session, Statement, Value};

use crate::error::AdoptError;
use crate::facts::{self, KeySource};
use crate::options::{AdoptOptions, Target};
use crate::plan::{AdoptionPlan, Step};
use crate::public_id::{self, Progress};
use crate::readback;
use crate::steps::{self, Action};
use crate::transaction;

/// Runs every unfinished step of the adoption `options` describes, in order, recording each
/// in the progress table; returns the plan as it stands afterwards (every step done).
/// Idempotent: run again after an interruption it finishes the job; run after it finished it
/// changes nothing. The plan is read afresh first, so every refusal of [`plan`](super::plan)
/// applies.
///
/// # Errors
///
/// A refusal of [`plan`](super::plan) (nothing changed); [`AdoptError::KeysNotAbove`] when
/// the keys grew past the layout's smallest ID since the plan; [`AdoptError::Busy`] when a
/// step did not get its lock within the lock wait (that step did not make its change; run
/// again);
/// [`AdoptError::Database`] with the database's error.
///
/// # Examples
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{apply, AdoptOptions};
/// let options = AdoptOptions::snowflake("orders", idgen_core::Layout::TWITTER)?;
/// let plan = apply(session, &options).await?;
/// assert!(plan.finished());
/// apply(session, &options).await?; // changes nothing
/// # Ok(()) }
/// ```
pub async fn apply<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
) -> Result<AdoptionPlan, AdoptError> {
    apply_first(session, options, usize::MAX).await
}

/// Like [`apply`], but runs at most `steps` unfinished steps, then stops: for a migration
/// spread over several deployments, or to see that a stopped apply resumes. Returns the plan
/// as it stands afterwards.
///
/// # Errors
///
/// As [`apply`].
///
/// # Examples
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{apply, apply_first, AdoptOptions};
/// let options = AdoptOptions::hilo("order_lines", 1000)?;
/// let partly = apply_first(session, &options, 1).await?;
/// assert_eq!(partly.steps.iter().filter(|s| s.done).count(), 1);
/// assert!(apply(session, &options).await?.finished());
/// # Ok(()) }
/// ```
pub async fn apply_first<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    steps: usize,
) -> Result<AdoptionPlan, AdoptError> {
    run_first(session, options, steps, &mut |_| {}).await
}

/// Like [`apply`], calling `progress` after every batch of a backfill (with the rows done,
/// the rows expected, the rate and the time left): for a progress bar.
///
/// # Errors
///
/// As [`apply`].
///
/// # Examples
///
/// ```no_run
/// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), idgen_adopt::AdoptError> {
/// use idgen_adopt::{apply_with_progress, AdoptOptions};
/// let options = AdoptOptions::keep_keys("customers")?.public_id("public_id")?;
/// apply_with_progress(session, &options, |p| eprintln!("{p}")).await?;
/// # Ok(()) }
/// ```
pub async fn apply_with_progress<S, F>(
    session: &mut S,
    options: &AdoptOptions,
    mut progress: F,
) -> Result<AdoptionPlan, AdoptError>
where
    S: Session,
    F: FnMut(&Progress) + Send,
{
    run_first(session, options, usize::MAX, &mut progress).await
}

async fn run_first<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    steps: usize,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<AdoptionPlan, AdoptError> {
    let (mut plan, actions) = plan_steps(session, options).await?;
    let switched = plan
        .steps
        .iter()
        .any(|s| s.name == "retire-default" && s.done);
    let lost = plan.lost_key_readback();
    if !lost.is_empty() && !switched && !options.accept_lost_key_readback {
        return Err(AdoptError::KeyReadbackLost {
            table: plan.table.clone(),
            server: plan.server.clone(),
            means: lost.iter().map(|r| r.means.clone()).collect(),
        });
    }
    let mut left = steps;
    for (step, action) in plan.steps.iter_mut().zip(actions) {
        if step.done {
            continue;
        }
        if left == 0 {
            break;
        }
        run_step(session, options, step, action, progress).await?;
        step.done = true;
        left -= 1;
    }
    Ok(plan)
}

/// The plan and what each step does beyond its SQL.
pub(super) async fn plan_steps<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
) -> Result<(AdoptionPlan, Vec<Action>), AdoptError> {
    let dialect = session.dialect();
    let table = &options.table;
    let facts = facts::read(session, table).await?;
    let done = done_steps(session, options).await?;
    let public_column = match &options.public_id {
        Some(public) => Some(public_id::read_column(session, table, &public.column).await?),
        None => None,
    };
    let sequence = match &options.target {
        Target::Snowflake { .. } | Target::KeepKeys => None,
        Target::HiLo { sequence, .. } => {
            let name = match (sequence, &facts.source) {
                // Named or not: AUTO_INCREMENT would go on writing keys inside the blocks.
                (_, KeySource::AutoIncrement) => {
                    return Err(AdoptError::Unsupported {
                        reason: format!(
                            "{table}.{} is AUTO_INCREMENT, which is not a sequence: hi-lo needs one. Adopt the table with Snowflake keys, \
                             or give the column a sequence default first (CREATE SEQUENCE, then MODIFY … DEFAULT NEXTVAL(seq) in a maintenance window)",
                            facts.column
                        ),
                    });
                }
                (Some(name), _) => name.clone(),
                (
                    None,
                    KeySource::IdentityAlways(s)
                    | KeySource::IdentityByDefault(s)
                    | KeySource::SequenceDefault(s),
                ) => SqlName::parse("sequence", s)?,
                (None, _) => {
                    return Err(AdoptError::NoSequence {
                        reason: format!(
                            "{table}.{} takes its values from no sequence (no identity, no DEFAULT nextval): name the sequence the writers use",
                            facts.column
                        ),
                    });
                }
            };
            Some(facts::read_sequence(session, table, &name).await?)
        }
    };
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let built = steps::build(
        dialect,
        options,
        &facts,
        sequence.as_ref(),
        public_column.as_ref(),
        now_ms,
        done.contains("check-keys"),
    )?;
    let (mut steps, actions): (Vec<Step>, Vec<Action>) = built.into_iter().unzip();
    for step in &mut steps {
        step.done = done.contains(step.name);
    }
    let key_source = match &facts.source {
        KeySource::IdentityAlways(s) => format!("identity (always) on {s}"),
        KeySource::IdentityByDefault(s) => format!("identity (by default) on {s}"),
        KeySource::SequenceDefault(s) => format!("nextval of {s}"),
        KeySource::AutoIncrement => "AUTO_INCREMENT".to_owned(),
        KeySource::OtherDefault(d) => format!("default {d}"),
        KeySource::None => "no default".to_owned(),
    };
    let server = readback::server(session).await?;
    let plan = AdoptionPlan {
        dialect,
        table: table.as_str().to_owned(),
        column: facts.column.clone(),
        data_type: facts.data_type.clone(),
        key_source,
        max_key: facts.max_key,
        server,
        key_readback: readback::analyse(dialect, options, &facts.source, &facts.column),
        steps,
    };
    Ok((plan, actions))
}

/// The steps the progress table records as finished for this table.
async fn done_steps<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
) -> Result<HashSet<String>, AdoptError> {
    let dialect = session.dialect();
    let t = options.progress_table.quoted(dialect);
    let sql = match dialect {
        Dialect::MySql => format!(
            "SELECT GROUP_CONCAT(step SEPARATOR ',') FROM {t} WHERE table_name = ? HAVING COUNT(*) > 0"
        ),
        _ => format!(
            "SELECT string_agg(step, ',') FROM {t} WHERE table_name = $1 HAVING count(*) > 0"
        ),
    };
    let read = session
        .fetch_text(Statement::new(
            sql,
            vec![Value::Text(options.table.as_str())],
        ))
        .await;
    match read {
        Ok(text) => Ok(text
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()),
        Err(e) if session.classify(&e) == ErrorClass::MissingRelation => Ok(HashSet::new()),
        Err(e) => Err(facts::read_failed(
            &options.progress_table,
            "the progress table",
        )(e)),
    }
}

async fn run_step<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &Step,
    action: Action,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<(), AdoptError> {
    let dialect = session.dialect();
    let record =
        transaction::record_sql(dialect, &options.progress_table, &options.table, step.name);
    match action {
        Action::CheckKeys { smallest, refusal } => {
            let max_key = session
                .fetch_i64(Statement::new(step.sql[0].clone(), Vec::new()))
                .await
                .map_err(failed(options, step))?
                .unwrap_or_default();
            if max_key >= smallest {
                return Err(match refusal {
                    AdoptError::KeysNotAbove {
                        table,
                        column,
                        smallest,
                        from,
                        layout,
                        ..
                    } => AdoptError::KeysNotAbove {
                        table,
                        column,
                        max_key,
                        smallest,
                        from,
                        layout,
                    },
                    other => other,
                });
            }
            execute(session, options, step, record).await
        }
        Action::InstallGenerator => {
            if let Target::Snowflake {
                generator: Some(g), ..
            } = &options.target
            {
                idgen_db_generator::install(session, g).await?;
            }
            execute(session, options, step, record).await
        }
        Action::Sql { .. } if step.name == "progress-table" => {
            idgen_sql::create_if_missing(session, &step.sql[0])
                .await
                .map_err(failed(options, step))?;
            execute(session, options, step, record).await
        }
        Action::Backfill(backfill) => {
            public_id::backfill(session, options, step.name, &backfill, progress).await?;
            execute(session, options, step, record).await
        }
        Action::UniqueIndex { index } => {
            // Recorded only once valid: an invalid index is dropped and built again.
            let mut tries = 0;
            while !public_id::valid_index(session, options, &index).await? {
                if tries == UNIQUE_INDEX_BUILDS {
                    return Err(AdoptError::InvalidIndex {
                        table: options.table.as_str().to_owned(),
                        index,
                        tries,
                    });
                }
                tries += 1;
                if public_id::invalid_index(session, options, &index).await? {
                    execute(session, options, step, step.sql[0].clone()).await?;
                }
                execute(session, options, step, step.sql[1].clone()).await?;
            }
            execute(session, options, step, step.sql[2].clone()).await
        }
        Action::Sql { object } => retried(session, options, step, object, false).await,
        Action::LongSql { object } => retried(session, options, step, object, true).await,
    }
}

/// Runs a step's statements in short tries, so that other sessions never queue long behind a
/// waiting `ALTER`, until the lock wait is spent: the time since the first try, or for a
/// `long` step (whose try may take long) the pauses between tries.
async fn retried<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &Step,
    object: String,
    long: bool,
) -> Result<(), AdoptError> {
    let started = std::time::Instant::now();
    let pause = retry_pause(session.dialect(), long);
    let mut tries = 0_u32;
    loop {
        tries += 1;
        match run_statements(session, options, step, &object).await {
            Err(AdoptError::Busy { source, .. }) => {
                let waited = if long {
                    pause * tries
                } else {
                    started.elapsed()
                };
                if waited + pause > options.lock_wait {
                    return Err(AdoptError::Busy {
                        step: step.name,
                        object,
                        tries,
                        waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                        source,
                    });
                }
                session.pause(pause).await;
            }
            outcome => return outcome,
        }
    }
}

/// How many times the public ID's unique index is built before the step gives up, when each
/// build ends with an invalid index (another session's build stopped meanwhile).
const UNIQUE_INDEX_BUILDS: u32 = 3;

/// The pause between two tries of a step that did not get its lock.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(200);

/// The pause between two tries of a MariaDB step that does not wait for its lock
/// (`lock_wait_timeout = 0`). Such a try gets the lock only at an instant when no statement on
/// the table is running, and nobody queues behind it, so it tries often: on a table that
/// writers keep busy (4 sessions inserting without a pause, the inserts running the
/// database-side generator's trigger), 49 tries 200 ms apart all missed in 2 of 4 runs.
const ZERO_WAIT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// The pause between tries of a step on `dialect`; `long`: a step whose try waits.
fn retry_pause(dialect: Dialect, long: bool) -> std::time::Duration {
    match dialect {
        Dialect::MySql if !long => ZERO_WAIT_RETRY_PAUSE,
        _ => RETRY_PAUSE,
    }
}

/// The step's statements, in order (each idempotent, so a step stopped midway runs again).
async fn run_statements<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &Step,
    object: &str,
) -> Result<(), AdoptError> {
    for sql in &step.sql {
        execute_on(session, options, step, object, sql.clone()).await?;
    }
    Ok(())
}

/// Runs `sql`; on PostgreSQL a text that opens a transaction is tracked as one (so an adapter
/// closes the connection if the call is cancelled inside it) and rolled back after an error.
async fn execute<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &Step,
    sql: String,
) -> Result<(), AdoptError> {
    execute_on(session, options, step, options.table.as_str(), sql).await
}

/// [`execute`], naming `object` when the lock is not got in time.
async fn execute_on<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &Step,
    object: &str,
    sql: String,
) -> Result<(), AdoptError> {
    let transaction = sql.starts_with("BEGIN");
    if transaction {
        session.transaction_open(true);
    }
    let outcome = session.execute(Statement::new(sql, Vec::new())).await;
    if transaction {
        let ended = match outcome {
            Ok(_) => true,
            Err(_) => session
                .execute(Statement::new("ROLLBACK".to_owned(), Vec::new()))
                .await
                .is_ok(),
        };
        if ended {
            session.transaction_open(false);
        }
    }
    match outcome {
        Ok(_) => Ok(()),
        Err(e) if session.classify(&e) == ErrorClass::Transient => Err(AdoptError::Busy {
            step: step.name,
            object: object.to_owned(),
            tries: 1,
            waited_ms: 0,
            source: Arc::new(e),
        }),
        Err(e) => Err(failed(options, step)(e)),
    }
}

fn failed<E: std::error::Error + Send + Sync + 'static>(
    options: &AdoptOptions,
    step: &Step,
) -> impl FnOnce(E) -> AdoptError {
    let table = options.table.as_str().to_owned();
    let operation = format!("run step {}", step.name);
    move |e| AdoptError::Database {
        table,
        operation,
        source: Arc::new(e),
    }
}
