//! Public IDs for a table's existing rows, online ([`AdoptOptions::public_id`](super::AdoptOptions::public_id)):
//! the column, its backfill in batches, its unique index and `NOT NULL`. What each step does
//! and why writers keep writing is in the [crate documentation](crate).

use std::time::{Duration, Instant};

use idgen_engine::SqlName;
use idgen_sql::{Dialect, QuotedName, Session, Statement, Value};

use crate::error::AdoptError;
use crate::facts::{self, read_failed};
use crate::limits::LOCK_TRY_MS;
use crate::options::{AdoptOptions, PublicIdOptions};
use crate::plan::Step;
use crate::transaction::{pg_locked, pg_transaction};

/// How long (seconds; MariaDB takes whole seconds) a MariaDB rebuild (the unique index, `NOT
/// NULL`) waits for the transactions using the table at its start and end. Not 0, as the
/// quick steps use: a rebuild that fails at its end for a writer's transaction of a few
/// milliseconds would start again from scratch, and under steady writes never finish.
const MARIADB_REBUILD_LOCK_WAIT_S: u32 = 1;

/// How many times the backfill looks again for rows without a public ID before it gives up
/// ([`AdoptError::PublicIdsKeepMissing`]).
const ROUNDS: u32 = 5;

/// A random version-4 UUID as 16 bytes on MariaDB, from `RANDOM_BYTES` (the server's
/// cryptographic generator), with the version and variant bits of RFC 9562.
const MARIADB_UUID_V4: &str = "CONCAT(RANDOM_BYTES(6), CHAR(0x40 | (ASCII(RANDOM_BYTES(1)) & 15)), RANDOM_BYTES(1), \
                               CHAR(0x80 | (ASCII(RANDOM_BYTES(1)) & 63)), RANDOM_BYTES(7))";

/// What a MariaDB row that was in the table before the column came reads until the backfill
/// gives it a public ID: 16 zero bytes (the nil UUID, never a version-4 one). The column is
/// added `NOT NULL` with it as an instant default, so that `NOT NULL` costs no rebuild of the
/// table later (a rebuild's last moment holds every writer up: 15–19 ms at 200,000 rows).
const MARIADB_NOT_YET: &str = "0x00000000000000000000000000000000";

/// How far a backfill has come, given to the callback of
/// [`apply_with_progress`](super::apply_with_progress) after every batch.
///
/// ```
/// use std::time::Duration;
/// use idgen_adopt::Progress;
///
/// let p = Progress::new("public-id-backfill", 250_000, 1_000_000, Duration::from_secs(5));
/// assert_eq!(p.rows_per_second(), 50_000.0);
/// assert_eq!(p.eta(), Some(Duration::from_secs(15)));
/// assert_eq!(p.to_string(), "public-id-backfill: 250000 of 1000000 rows (25%), 50000 rows/s, about 15 s left");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// The step.
    pub step: &'static str,
    /// Rows done so far in this run.
    pub rows: u64,
    /// Rows to do, as counted when the run began (rows a writer gives a public ID meanwhile
    /// are skipped, so the run may end below it).
    pub rows_expected: u64,
    /// Time since the step began in this run.
    pub elapsed: Duration,
}

impl Progress {
    /// A progress report (for tests of a callback).
    ///
    /// ```
    /// let p = idgen_adopt::Progress::new("public-id-backfill", 0, 10, std::time::Duration::ZERO);
    /// assert_eq!(p.eta(), None);
    /// ```
    pub fn new(step: &'static str, rows: u64, rows_expected: u64, elapsed: Duration) -> Self {
        Progress {
            step,
            rows,
            rows_expected,
            elapsed,
        }
    }

    /// Rows per second so far (0 before the first batch).
    ///
    /// ```
    /// let p = idgen_adopt::Progress::new("public-id-backfill", 10, 10, std::time::Duration::from_secs(2));
    /// assert_eq!(p.rows_per_second(), 5.0);
    /// ```
    pub fn rows_per_second(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.rows as f64 / secs
        } else {
            0.0
        }
    }

    /// The time left at the rate so far; `None` before the first row.
    ///
    /// ```
    /// let p = idgen_adopt::Progress::new("public-id-backfill", 10, 10, std::time::Duration::from_secs(2));
    /// assert_eq!(p.eta(), Some(std::time::Duration::ZERO));
    /// ```
    pub fn eta(&self) -> Option<Duration> {
        let rate = self.rows_per_second();
        (rate > 0.0).then(|| {
            Duration::from_secs_f64(self.rows_expected.saturating_sub(self.rows) as f64 / rate)
        })
    }
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let percent = (self.rows * 100)
            .checked_div(self.rows_expected)
            .unwrap_or(100)
            .min(100);
        write!(
            f,
            "{}: {} of {} rows ({percent}%), {:.0} rows/s",
            self.step,
            self.rows,
            self.rows_expected,
            self.rows_per_second()
        )?;
        match self.eta() {
            Some(eta) => write!(f, ", about {} s left", eta.as_secs()),
            None => Ok(()),
        }
    }
}

/// The public-ID column as it is now.
#[derive(Clone, Debug)]
pub(super) enum ColumnState {
    Missing,
    Present { data_type: String },
}

/// Reads the column `column` of `table`.
pub(super) async fn read_column<S: Session>(
    session: &mut S,
    table: &SqlName,
    column: &SqlName,
) -> Result<ColumnState, AdoptError> {
    let dialect = session.dialect();
    let quoted = table.quoted(dialect);
    let (sql, params) = match dialect {
        Dialect::MySql => {
            let (schema, base) = facts::mariadb_names(session, table).await?;
            return mariadb_column(session, table, column, schema, base).await;
        }
        _ => (
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
             WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped",
            vec![Value::Text(&quoted), Value::Text(column.as_str())],
        ),
    };
    let found = session
        .fetch_text(Statement::new(sql.to_owned(), params))
        .await
        .map_err(read_failed(table, "its public-ID column"))?;
    Ok(state(found))
}

async fn mariadb_column<S: Session>(
    session: &mut S,
    table: &SqlName,
    column: &SqlName,
    schema: String,
    base: String,
) -> Result<ColumnState, AdoptError> {
    let found = session
        .fetch_text(Statement::new(
            "SELECT COLUMN_TYPE FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?"
                .to_owned(),
            vec![
                Value::Text(&schema),
                Value::Text(&base),
                Value::Text(column.as_str()),
            ],
        ))
        .await
        .map_err(read_failed(table, "its public-ID column"))?;
    Ok(state(found))
}

fn state(found: Option<String>) -> ColumnState {
    match found {
        None => ColumnState::Missing,
        Some(data_type) => ColumnState::Present { data_type },
    }
}

/// The type a public-ID column has on `dialect`.
fn column_type(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::MySql => "binary(16)",
        _ => "uuid",
    }
}

/// The random default of a public-ID column.
pub(super) fn random_default(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::MySql => MARIADB_UUID_V4,
        _ => "gen_random_uuid()",
    }
}

/// The unique index's name: `<table>_<column>_key` (PostgreSQL's own naming), at most 64
/// characters.
fn index_name(table: &SqlName, column: &SqlName, suffix: &str) -> String {
    let base = table.as_str().rsplit('.').next().unwrap_or_default();
    let mut name = format!("{base}_{}", column.as_str());
    name.truncate(63 - suffix.len());
    name.push_str(suffix);
    name
}

/// An object in the table's schema: `schema.name` when the table was named with one.
fn in_schema(table: &SqlName, name: &str, dialect: Dialect) -> String {
    let q = dialect.quote();
    match table.as_str().rsplit_once('.') {
        Some((schema, _)) => format!("{q}{schema}{q}.{q}{name}{q}"),
        None => format!("{q}{name}{q}"),
    }
}

/// What [`apply`](super::apply) does for a public-ID step beyond running its SQL.
#[derive(Clone, Debug)]
pub(super) enum PublicIdAction {
    /// Fill the column in batches.
    Backfill(Backfill),
    /// PostgreSQL: drop an invalid index left by a stopped build (after waiting for a build
    /// still running), then build it.
    UniqueIndex {
        /// The index, quoted as SQL names it (`"schema"."name"` or `"name"`), for
        /// `to_regclass`, which folds an unquoted name to lower case.
        index: String,
    },
}

/// The statements of a backfill.
#[derive(Clone, Debug)]
pub(super) struct Backfill {
    /// `count,min,max` of the keys of rows without a public ID (`0` for none).
    pub(super) missing: String,
    /// The largest key of the next batch: binds the first key, the last key, the batch size.
    pub(super) next_batch: String,
    /// Fills the rows of a batch: binds its first and last key.
    pub(super) fill: String,
    pub(super) batch: u32,
    pub(super) pause: Duration,
}

/// The public-ID steps, refusing a column that exists with another type.
pub(super) fn build(
    dialect: Dialect,
    options: &AdoptOptions,
    public: &PublicIdOptions,
    key_column: &SqlName,
    state: &ColumnState,
    record: &dyn Fn(&str) -> String,
) -> Result<Vec<(Step, Option<PublicIdAction>)>, AdoptError> {
    let table = &options.table;
    let column = &public.column;
    let wanted = column_type(dialect);
    if let ColumnState::Present { data_type } = state
        && !data_type.eq_ignore_ascii_case(wanted)
    {
        return Err(AdoptError::PublicIdColumnType {
            table: table.as_str().to_owned(),
            column: column.as_str().to_owned(),
            data_type: data_type.clone(),
            wanted,
        });
    }
    let (t, c, k) = (
        table.quoted(dialect),
        column.quoted(dialect),
        key_column.quoted(dialect),
    );
    let default = random_default(dialect);
    let index = index_name(table, column, "_key");
    let mut steps = Vec::new();

    // 1. The column and its default.
    let (sql, how) = match dialect {
        Dialect::MySql => (
            vec![
                format!(
                    "SET STATEMENT lock_wait_timeout = 0 FOR ALTER TABLE {t} ADD COLUMN IF NOT EXISTS {c} BINARY(16) NOT NULL DEFAULT {MARIADB_NOT_YET}, ALGORITHM = INSTANT"
                ),
                format!(
                    "SET STATEMENT lock_wait_timeout = 0 FOR ALTER TABLE {t} ALTER COLUMN {c} SET DEFAULT ({default}), ALGORITHM = INSTANT"
                ),
                record("public-id-column"),
            ],
            "MariaDB: the column is NOT NULL, and the rows already in the table read 16 zero bytes (the nil UUID) until the backfill \
             reaches them, so that NOT NULL needs no rebuild of the table later: two instant changes of the table's metadata (no row \
             is touched), each tried without waiting for a lock",
        ),
        _ => (
            pg_transaction(
                &[
                    format!("ALTER TABLE {t} ADD COLUMN IF NOT EXISTS {c} uuid"),
                    format!("ALTER TABLE {t} ALTER COLUMN {c} SET DEFAULT {default}"),
                ],
                record("public-id-column"),
            ),
            "PostgreSQL: one transaction of catalog changes (a column without a value and a volatile default set afterwards touch no row), \
             under a lock tried for at most 100 ms at a time",
        ),
    };
    steps.push((
        Step::new(
            "public-id-column",
            format!(
                "add {table}.{} ({wanted}) with a random version-4 default, so that every row inserted from now on has a public ID: \
                 the writer's own or the default. {how}",
                column.as_str()
            ),
            sql,
        ),
        None,
    ));

    // 2. The backfill.
    let (missing, next_batch, fill) = match dialect {
        Dialect::MySql => (
            format!(
                "SELECT CONCAT_WS(',', COUNT(*), MIN({k}), MAX({k})) FROM {t} WHERE ({c} IS NULL OR {c} = {MARIADB_NOT_YET})"
            ),
            format!(
                "SELECT CAST(MAX({k}) AS SIGNED) FROM (SELECT {k} FROM {t} WHERE {k} >= ? AND {k} <= ? ORDER BY {k} LIMIT ?) AS batch"
            ),
            format!(
                "UPDATE {t} SET {c} = {default} WHERE {k} >= ? AND {k} <= ? AND ({c} IS NULL OR {c} = {MARIADB_NOT_YET})"
            ),
        ),
        _ => (
            format!(
                "SELECT concat_ws(',', count(*), min({k}), max({k})) FROM {t} WHERE {c} IS NULL"
            ),
            format!(
                "SELECT max({k})::bigint FROM (SELECT {k} FROM {t} WHERE {k} >= $1 AND {k} <= $2 ORDER BY {k} LIMIT $3) AS batch"
            ),
            format!("UPDATE {t} SET {c} = {default} WHERE {k} >= $1 AND {k} <= $2 AND {c} IS NULL"),
        ),
    };
    steps.push((
        Step::new(
            "public-id-backfill",
            format!(
                "give every row without a public ID one, in batches of {} consecutive keys, each its own short transaction, pausing {} ms between \
                 batches: rows a writer gave a public ID meanwhile are skipped, so no row gets two; it looks again until no row is left without one. \
                 Stopped, it starts again from the first row still without one",
                public.batch,
                public.pause.as_millis()
            ),
            vec![missing.clone(), next_batch.clone(), fill.clone()],
        ),
        Some(PublicIdAction::Backfill(Backfill {
            missing,
            next_batch,
            fill,
            batch: public.batch,
            pause: public.pause,
        })),
    ));

    // 3. The unique index; 4. NOT NULL (and, on PostgreSQL, the constraint).
    match dialect {
        Dialect::MySql => {
            let i = format!("`{index}`");
            let (schema, base) = match table.as_str().split_once('.') {
                Some((schema, base)) => (format!("'{schema}'"), base),
                None => ("DATABASE()".to_owned(), table.as_str()),
            };
            steps.push((
                Step::new(
                    "public-id-unique-index",
                    format!(
                        "index {table}.{} uniquely: MariaDB builds it in place without a lock on rows (writers go on). At its start and end \
                         it needs the transactions using the table to end: it waits at most {MARIADB_REBUILD_LOCK_WAIT_S} s for them (writers \
                         arriving meanwhile queue behind it, for as long as the longest of those transactions has left), then gives up and tries again",
                        column.as_str()
                    ),
                    vec![
                        format!(
                            "SET STATEMENT lock_wait_timeout = {MARIADB_REBUILD_LOCK_WAIT_S} FOR ALTER TABLE {t} ADD UNIQUE INDEX IF NOT EXISTS {i} ({c}), ALGORITHM = INPLACE, LOCK = NONE"
                        ),
                        record("public-id-unique-index"),
                    ],
                ),
                None,
            ));
            steps.push((
                Step::new(
                    "public-id-not-null",
                    format!(
                        "make {table}.{} NOT NULL: skipped when the column is NOT NULL already (as this version adds it; or a run stopped after \
                         the rebuild). A column an earlier version added nullable is rebuilt in place without a lock on rows (writers go on), in \
                         strict mode, so a row still without a public ID fails the step instead of getting zeros. Its locks as the index's",
                        column.as_str()
                    ),
                    vec![
                        format!(
                            "SELECT IS_NULLABLE INTO @idgen_adopt_nullable FROM information_schema.COLUMNS \
                             WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = '{base}' AND COLUMN_NAME = '{}'",
                            column.as_str()
                        ),
                        format!(
                            "EXECUTE IMMEDIATE IF(@idgen_adopt_nullable = 'YES', '{}', 'DO 0')",
                            format!(
                                "SET STATEMENT lock_wait_timeout = {MARIADB_REBUILD_LOCK_WAIT_S}, sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION' \
                                 FOR ALTER TABLE {t} MODIFY {c} BINARY(16) NOT NULL DEFAULT ({default}), ALGORITHM = INPLACE, LOCK = NONE"
                            )
                            .replace('\'', "''")
                        ),
                        record("public-id-not-null"),
                    ],
                ),
                None,
            ));
        }
        _ => {
            // Every name quoted, as the table and columns are: PostgreSQL folds an unquoted
            // one to lower case, and `"Order_publicId_key"` is another index than that.
            let index_sql = in_schema(table, &index, dialect);
            steps.push((
                Step::new(
                    "public-id-unique-index",
                    format!(
                        "index {table}.{} uniquely with CREATE UNIQUE INDEX CONCURRENTLY (writers go on; it waits for transactions that \
                         started before it). An invalid index left by a build that was stopped is dropped (DROP INDEX CONCURRENTLY) and built \
                         again; a build still running in another session is waited for; the step is recorded only once the index is valid",
                        column.as_str()
                    ),
                    vec![
                        format!("DROP INDEX CONCURRENTLY IF EXISTS {index_sql}"),
                        format!("CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS \"{index}\" ON {t} ({c})"),
                        record("public-id-unique-index"),
                    ],
                ),
                Some(PublicIdAction::UniqueIndex { index: index_sql }),
            ));
            let check = index_name(table, column, "_not_null");
            let constraint_missing = |name: &str| {
                format!(
                    "NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '{t}'::regclass AND conname = '{name}')"
                )
            };
            let add_check = format!(
                "DO $idgen$ BEGIN IF {} THEN ALTER TABLE {t} ADD CONSTRAINT \"{check}\" CHECK ({c} IS NOT NULL) NOT VALID; END IF; END $idgen$",
                constraint_missing(&check)
            );
            let validate = format!(
                "DO $idgen$ BEGIN IF NOT {} THEN ALTER TABLE {t} VALIDATE CONSTRAINT \"{check}\"; END IF; END $idgen$",
                constraint_missing(&check)
            );
            let finish = pg_transaction(
                &[
                    format!("ALTER TABLE {t} ALTER COLUMN {c} SET NOT NULL"),
                    format!("ALTER TABLE {t} DROP CONSTRAINT IF EXISTS \"{check}\""),
                    format!(
                        "DO $idgen$ BEGIN IF {} THEN ALTER TABLE {t} ADD CONSTRAINT \"{index}\" UNIQUE USING INDEX \"{index}\"; END IF; END $idgen$",
                        constraint_missing(&index)
                    ),
                ],
                record("public-id-not-null"),
            );
            let mut sql = pg_locked(&[add_check]);
            sql.push(validate);
            sql.extend(finish);
            steps.push((
                Step::new(
                    "public-id-not-null",
                    format!(
                        "make {table}.{} NOT NULL and its index a UNIQUE constraint without blocking writers: a CHECK (… IS NOT NULL) NOT VALID \
                         (a catalog change), validated by a scan that lets writers go on, then SET NOT NULL, which the valid check spares a scan, \
                         and the constraint from the index, in one transaction of catalog changes. Locks are tried for at most {LOCK_TRY_MS} ms at a time",
                        column.as_str()
                    ),
                    sql,
                ),
                None,
            ));
        }
    }
    Ok(steps)
}

/// Runs a backfill: rounds over the keys of the rows without a public ID until none is left.
pub(super) async fn backfill<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &'static str,
    backfill: &Backfill,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<(), AdoptError> {
    let table = &options.table;
    let started = Instant::now();
    let mut rows = 0_u64;
    for _ in 0..ROUNDS {
        let missing = session
            .fetch_text(Statement::new(backfill.missing.clone(), Vec::new()))
            .await
            .map_err(read_failed(table, "the rows without a public ID"))?
            .unwrap_or_default();
        let (count, first, last) = parse_missing(&missing);
        if count == 0 {
            return Ok(());
        }
        // Rows still to do, and those done in earlier rounds.
        let expected = rows + count;
        let (Some(mut from), Some(last)) = (first, last) else {
            return Ok(());
        };
        loop {
            let upper = session
                .fetch_i64(Statement::new(
                    backfill.next_batch.clone(),
                    vec![
                        Value::BigInt(from),
                        Value::BigInt(last),
                        Value::BigInt(i64::from(backfill.batch)),
                    ],
                ))
                .await
                .map_err(read_failed(table, "the keys of the next batch"))?;
            let Some(upper) = upper else { break };
            rows += fill(session, options, step, &backfill.fill, from, upper).await?;
            progress(&Progress::new(step, rows, expected, started.elapsed()));
            match upper.checked_add(1) {
                Some(next) if upper < last => from = next,
                _ => break,
            }
            if !backfill.pause.is_zero() {
                session.pause(backfill.pause).await;
            }
        }
    }
    let missing = session
        .fetch_text(Statement::new(backfill.missing.clone(), Vec::new()))
        .await
        .map_err(read_failed(table, "the rows without a public ID"))?
        .unwrap_or_default();
    match parse_missing(&missing).0 {
        0 => Ok(()),
        rows => Err(AdoptError::PublicIdsKeepMissing {
            table: table.as_str().to_owned(),
            column: options
                .public_id
                .as_ref()
                .map(|p| p.column.as_str().to_owned())
                .unwrap_or_default(),
            rounds: ROUNDS,
            rows,
        }),
    }
}

/// One batch, in a transaction of its own: the rows it filled.
async fn fill<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    step: &'static str,
    sql: &str,
    from: i64,
    to: i64,
) -> Result<u64, AdoptError> {
    let failed = |e| AdoptError::Database {
        table: options.table.as_str().to_owned(),
        operation: format!("run step {step} (keys {from} to {to})"),
        source: std::sync::Arc::new(e),
    };
    let values = vec![Value::BigInt(from), Value::BigInt(to)];
    if session.dialect() != Dialect::MySql {
        // One statement outside a transaction block: its own transaction.
        return session
            .execute(Statement::new(sql.to_owned(), values))
            .await
            .map_err(failed);
    }
    // MariaDB: an explicit transaction, which ends the same way whatever the connection's
    // autocommit.
    session.transaction_open(true);
    session
        .execute(Statement::new("START TRANSACTION".to_owned(), Vec::new()))
        .await
        .map_err(failed)?;
    let filled = session
        .execute(Statement::new(sql.to_owned(), values))
        .await;
    let end = if filled.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = session
        .execute(Statement::new(end.to_owned(), Vec::new()))
        .await;
    if ended.is_ok() {
        session.transaction_open(false);
    }
    let filled = filled.map_err(failed)?;
    ended.map_err(failed)?;
    Ok(filled)
}

/// `count,min,max` as numbers (`0` alone for none).
fn parse_missing(text: &str) -> (u64, Option<i64>, Option<i64>) {
    let mut parts = text.split(',');
    let count = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let first = parts.next().and_then(|c| c.parse().ok());
    let last = parts.next().and_then(|c| c.parse().ok());
    (count, first, last)
}

/// PostgreSQL: whether `index` exists and is valid (`pg_index.indisvalid`): a `CREATE INDEX
/// CONCURRENTLY IF NOT EXISTS` that found an index of its name (another session's build, or
/// one stopped between the check and the build) skips it, valid or not.
pub(super) async fn valid_index<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    index: &str,
) -> Result<bool, AdoptError> {
    let valid = session
        .fetch_i64(Statement::new(
            "SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass($1) AND indisvalid"
                .to_owned(),
            vec![Value::Text(index)],
        ))
        .await
        .map_err(read_failed(&options.table, "the index's state"))?
        .unwrap_or(0);
    Ok(valid > 0)
}

/// PostgreSQL: waits while another session builds `index`, then reports whether an invalid
/// index of that name is left (a stopped build), which the step drops and builds again.
pub(super) async fn invalid_index<S: Session>(
    session: &mut S,
    options: &AdoptOptions,
    index: &str,
) -> Result<bool, AdoptError> {
    let table = &options.table;
    loop {
        let building = session
            .fetch_i64(Statement::new(
                "SELECT count(*) FROM pg_stat_progress_create_index WHERE index_relid = to_regclass($1)".to_owned(),
                vec![Value::Text(index)],
            ))
            .await
            .map_err(read_failed(table, "index builds in progress"))?
            .unwrap_or(0);
        if building == 0 {
            break;
        }
        session.pause(Duration::from_millis(200)).await;
    }
    let invalid = session
        .fetch_i64(Statement::new(
            "SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid"
                .to_owned(),
            vec![Value::Text(index)],
        ))
        .await
        .map_err(read_failed(table, "the index's state"))?
        .unwrap_or(0);
    Ok(invalid > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_rows_parse_from_count_min_max() {
        assert_eq!(parse_missing("0"), (0, None, None));
        assert_eq!(parse_missing("3,-5,9"), (3, Some(-5), Some(9)));
        assert_eq!(parse_missing(""), (0, None, None));
    }

    #[test]
    fn index_names_stay_within_identifier_limits() {
        let table = SqlName::parse("table", "shop.orders").unwrap();
        let column = SqlName::parse("column", "public_id").unwrap();
        assert_eq!(index_name(&table, &column, "_key"), "orders_public_id_key");
        assert_eq!(
            in_schema(&table, "orders_public_id_key", Dialect::Postgres),
            "\"shop\".\"orders_public_id_key\""
        );
        let long = SqlName::parse("table", &"t".repeat(60)).unwrap();
        let name = index_name(&long, &column, "_not_null");
        assert_eq!(name.len(), 63);
        assert!(name.ends_with("_not_null"));
    }

    #[test]
    fn progress_reports_rate_and_time_left() {
        let p = Progress::new("public-id-backfill", 0, 100, Duration::ZERO);
        assert_eq!(p.rows_per_second(), 0.0);
        assert_eq!(p.eta(), None);
        assert!(p.to_string().contains("(0%)"));
        let done = Progress::new("public-id-backfill", 120, 100, Duration::from_secs(1));
        assert!(done.to_string().contains("(100%)"));
        assert_eq!(done.eta(), Some(Duration::ZERO));
    }
}
