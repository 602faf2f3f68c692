//! [`CounterSql`]: a hi-lo counter's DDL and statements on each database.
//!
//! pooled-lo: a counter value `v` is the block `[v, v + block)`. PostgreSQL and MariaDB ≥ 10.3
//! keep the counter in a `SEQUENCE` whose `INCREMENT BY` is the block size; MySQL (and MariaDB
//! by choice) and SQLite in a row of a counter table, which takes any step per call.

use crate::DEFAULT_COUNTER_TABLE;
use crate::dialect::{CounterDialect, CounterKind, Dialect, ErrorClass};
use crate::server::Server;
use crate::session::in_own_transaction;
use crate::session::{Session, check_outside_transaction};
use crate::statement::Statement;
use idgen_core::BoxError;
use idgen_engine::hilo::MissingCounter;
use idgen_engine::{Error, ErrorKind, SqlName};

/// A hi-lo counter's SQL for one database: what every adapter's counter sends, so counters of
/// different adapters share one sequence or row. Names are checked by [`SqlName`] and written
/// unquoted (PostgreSQL folds them to lower case, consistently everywhere).
///
/// Statements that return a value name its column `value`.
///
/// ```
/// use idgen_sql::{CounterSql, Dialect, Value};
///
/// let orders = CounterSql::sequence(Dialect::Postgres, "orders")?;
/// assert_eq!(
///     orders.create(1000),
///     ["CREATE SEQUENCE IF NOT EXISTS orders AS BIGINT INCREMENT BY 1000 MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE"]
/// );
/// assert_eq!(orders.allocate(1000)?.sql, "SELECT nextval('orders') AS value");
///
/// let lite = CounterSql::table(Dialect::Sqlite, "orders", "idgen_hilo")?;
/// let next = lite.allocate(50)?;
/// assert_eq!(next.params, [Value::BigInt(50), Value::Text("orders")]);
/// assert!(CounterSql::table(Dialect::Sqlite, "orders'--", "idgen_hilo").is_err());
/// # Ok::<(), idgen_engine::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSql {
    dialect: Dialect,
    kind: CounterKind,
    name: SqlName,
    table: SqlName,
}

impl CounterSql {
    /// The counter `name` as a sequence (PostgreSQL; MariaDB ≥ 10.3 as [`Dialect::MySql`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] for a refused name; [`ErrorKind::InvalidOptions`] on SQLite,
    /// which has no sequences.
    pub fn sequence(dialect: Dialect, name: &str) -> Result<CounterSql, Error> {
        CounterSql::new(dialect, CounterKind::Sequence, name, DEFAULT_COUNTER_TABLE)
    }

    /// The counter `name` as a row of the counter table `table` (MySQL/MariaDB, SQLite).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`] for a refused name; [`ErrorKind::InvalidOptions`] on
    /// PostgreSQL, where idgen keeps counters in sequences.
    pub fn table(dialect: Dialect, name: &str, table: &str) -> Result<CounterSql, Error> {
        CounterSql::new(dialect, CounterKind::Table, name, table)
    }

    fn new(dialect: Dialect, kind: CounterKind, name: &str, table: &str) -> Result<Self, Error> {
        if let Some(refusal) = dialect.sql().refuses_counter(kind) {
            return Err(ErrorKind::InvalidOptions {
                reason: format!("hi-lo counter {name}: {refusal}"),
            }
            .into());
        }
        Ok(CounterSql {
            dialect,
            kind,
            name: SqlName::parse("hi-lo counter", name)?,
            table: SqlName::parse("hi-lo counter table", table)?,
        })
    }

    /// The database.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Sequence or table row.
    pub fn kind(&self) -> CounterKind {
        self.kind
    }

    /// The counter's name.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The idempotent DDL that creates the counter (a sequence with `INCREMENT BY block`, or
    /// the table and the counter's row starting at 1), one statement per element. Existing
    /// ones are left as they are.
    ///
    /// ```
    /// use idgen_sql::{CounterSql, Dialect};
    /// let sql = CounterSql::table(Dialect::MySql, "orders", "idgen_hilo")?.create(1000);
    /// assert_eq!(sql[1], "INSERT IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)");
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn create(&self, block: u64) -> Vec<String> {
        self.statements()
            .create(self.name.as_str(), self.table.as_str(), block)
    }

    /// [`create`](Self::create) as one text, for a migration file.
    ///
    /// ```
    /// use idgen_sql::{CounterSql, Dialect};
    /// let sql = CounterSql::table(Dialect::Sqlite, "orders", "idgen_hilo")?.migration_sql(1000);
    /// assert!(sql.ends_with(";\nINSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn migration_sql(&self, block: u64) -> String {
        self.create(block).join(";\n")
    }

    /// [`create`](Self::create) as the text to send, safe for processes that start together:
    /// on PostgreSQL after [`PG_DDL_LOCK`](crate::PG_DDL_LOCK) in one simple-query batch (one transaction).
    /// Statements of other databases are sent one by one ([`create`](Self::create)).
    pub fn create_guarded(&self, block: u64) -> Vec<String> {
        match self.dialect.sql().ddl_lock() {
            Some(lock) => vec![format!("{lock};\n{}", self.migration_sql(block))],
            None => self.create(block),
        }
    }

    /// Takes one block of `size` IDs. Returns its first ID as column `value`, except for a
    /// MySQL/MariaDB table counter: there the `UPDATE` sets `LAST_INSERT_ID(next_val + size)`,
    /// read from the statement's own result (or [`LAST_INSERT_ID`](Self::LAST_INSERT_ID) on the
    /// same connection), and the block starts `size` below it. No row affected: the row is
    /// missing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoInvalidOption`] for a `size` above `i64::MAX`.
    pub fn allocate(&self, size: u64) -> Result<Statement<'_>, Error> {
        self.statements()
            .take(self.name.as_str(), self.table.as_str(), size)
    }

    /// The most blocks [`allocate_blocks`](Self::allocate_blocks) takes in one statement.
    pub(crate) const MAX_BLOCKS_PER_CALL: u64 = 1024;

    /// Takes up to `count` blocks of a PostgreSQL sequence in **one statement**, their first
    /// IDs as one text column `value` (decimal numbers separated by commas, in the order the
    /// sequence gave them). `None` for the other counters: the engine then takes one block per
    /// round trip (or runs several fetches at once). `count` is capped at 1024 and raised
    /// to 1.
    ///
    /// ```
    /// use idgen_sql::{CounterSql, Dialect};
    /// let pg = CounterSql::sequence(Dialect::Postgres, "orders")?;
    /// let statement = pg.allocate_blocks(4).unwrap();
    /// assert_eq!(
    ///     statement.sql,
    ///     "SELECT string_agg(nextval('orders')::text, ',') AS value FROM generate_series(1, $1)"
    /// );
    /// assert!(CounterSql::sequence(Dialect::MySql, "orders")?.allocate_blocks(4).is_none());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn allocate_blocks(&self, count: u64) -> Option<Statement<'_>> {
        let count = count.clamp(1, Self::MAX_BLOCKS_PER_CALL);
        self.statements()
            .take_many(self.name.as_str(), i64::try_from(count).unwrap_or(1))
    }

    /// Moves the counter so that its next block starts above `floor`, in one statement that
    /// never moves it back (`None` for a MariaDB sequence, whose `SETVAL` takes only a
    /// literal: [`raise_on`](Self::raise_on) reads it first). `floor` is written into the SQL
    /// as a number where the statement cannot take a parameter.
    ///
    /// * a PostgreSQL sequence: one `DO` block, whose `ALTER SEQUENCE` (to the increment it
    ///   has) takes the lock that `nextval` and `setval` wait for, so the value it reads cannot
    ///   change before its `setval` to the first value above `floor` on the sequence's grid;
    ///   needs the right to alter the sequence (its owner);
    /// * a counter table: `UPDATE … SET next_val = GREATEST(next_val, floor + 1)` (`MAX` on
    ///   SQLite), atomic in the row.
    ///
    /// ```
    /// use idgen_sql::{CounterSql, Dialect, Value};
    /// let pg = CounterSql::sequence(Dialect::Postgres, "orders")?;
    /// let sql = pg.raise_above(5000).unwrap().sql;
    /// assert!(sql.contains("EXECUTE format('ALTER SEQUENCE orders INCREMENT BY %s', inc)"));
    /// assert!(sql.contains("IF nxt <= 5000 THEN"));
    /// let lite = CounterSql::table(Dialect::Sqlite, "orders", "idgen_hilo")?;
    /// let raise = lite.raise_above(5000).unwrap();
    /// assert_eq!(raise.sql, "UPDATE idgen_hilo SET next_val = MAX(next_val, ?1) WHERE name = ?2");
    /// assert_eq!(raise.params, [Value::BigInt(5001), Value::Text("orders")]);
    /// assert!(CounterSql::sequence(Dialect::MySql, "orders")?.raise_above(5000).is_none());
    /// # Ok::<(), idgen_engine::Error>(())
    /// ```
    pub fn raise_above(&self, floor: i64) -> Option<Statement<'_>> {
        self.statements()
            .raise_above(self.name.as_str(), self.table.as_str(), floor)
    }

    /// MySQL/MariaDB: the value the last `LAST_INSERT_ID(expr)` of this connection set, as
    /// column `value`.
    pub const LAST_INSERT_ID: &'static str = "SELECT CAST(LAST_INSERT_ID() AS SIGNED) AS value";

    /// Reads, as column `value`, a sequence's increment (PostgreSQL from `pg_catalog.pg_sequence`,
    /// MariaDB from the sequence itself), or a table counter's current value (only to see that
    /// the row exists: a table counter takes any step). No row, or a missing relation: the
    /// counter is missing ([`HiLoCounterMissing`](ErrorKind::HiLoCounterMissing)).
    pub fn increment(&self) -> Statement<'_> {
        self.statements()
            .increment(self.name.as_str(), self.table.as_str())
    }

    /// Reads, as column `value`, where the counter's next block starts (what an operator
    /// sees as its current value): a PostgreSQL sequence's `last_value` plus its increment once
    /// it has been called, a MariaDB sequence's `next_not_cached_value`, a table counter's
    /// `next_val`.
    pub(crate) fn next_value(&self) -> Statement<'_> {
        self.statements()
            .next_value(self.name.as_str(), self.table.as_str())
    }

    /// This counter's statements on its database, as its dialect file writes them.
    fn statements(&self) -> &'static dyn CounterDialect {
        match self.kind {
            CounterKind::Sequence => self.dialect.sql().sequence_counter(),
            CounterKind::Table => self.dialect.sql().table_counter(),
        }
    }

    /// A sequence's increment as the block size, or the refusal of a non-positive one.
    pub(crate) fn step(&self, increment: i64) -> Result<u64, Error> {
        u64::try_from(increment)
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| {
                ErrorKind::HiLoInvalidOption {
                option: "database increment",
                value: format!("{increment} (counter {})", self.name),
                reason: "a hi-lo sequence must count upwards: INCREMENT BY the block size, >= 1",
            }
            .into()
            })
    }

    /// What is missing of a counter whose sequence, table or row does not exist.
    fn missing_counter(&self) -> MissingCounter {
        MissingCounter::new(match self.kind {
            CounterKind::Sequence => format!("no sequence named {}", self.name),
            CounterKind::Table => format!("no row '{}' in table {}", self.name, self.table),
        })
    }

    /// The error for a counter whose sequence, table or row does not exist.
    pub(crate) fn missing(&self) -> Error {
        ErrorKind::HiLoCounterMissing {
            counter: self.name.as_str().to_owned(),
            missing: self.missing_counter().into_string(),
        }
        .into()
    }
}

/// The procedures of every SQL hi-lo counter, over an adapter's [`Session`]: each a unit of
/// work of its own, on MySQL/MariaDB in a transaction of its own (see [`Session`]), so it
/// commits whatever the connection's autocommit setting, which idgen never changes.
impl CounterSql {
    /// Takes one block of `size` IDs and returns its first ID. A missing sequence, table or
    /// row is [`HiLoCounterMissing`](ErrorKind::HiLoCounterMissing); other errors are the driver's.
    pub async fn allocate_on<S: Session>(
        &self,
        session: &mut S,
        size: u64,
    ) -> Result<i64, BoxError> {
        let statement = self.allocate(size)?;
        check_outside_transaction(session).await?;
        if self.statements().start_from_last_insert_id() {
            let step = i64::try_from(size)?;
            // LAST_INSERT_ID() is per connection, read on the connection of the update: the
            // counter after the update, so the block starts `step` below it.
            let updated = in_own_transaction!(session, async {
                let rows = session.execute(statement).await?;
                let after = session.fetch_i64(raw(Self::LAST_INSERT_ID)).await?;
                Ok::<_, S::Error>((rows, after))
            })
            .await;
            return match updated {
                Ok((1, Some(after))) => Ok(after - step),
                Ok(_) => Err(self.missing().into()),
                Err(e) => Err(self.or_missing(session, e)),
            };
        }
        match in_own_transaction!(session, session.fetch_i64(statement)).await {
            Ok(Some(start)) => Ok(start),
            Ok(None) => Err(self.missing().into()),
            Err(e) => Err(self.or_missing(session, e)),
        }
    }

    /// Takes up to `count` blocks of `size` IDs in one round trip where the counter can
    /// ([`allocate_blocks`](Self::allocate_blocks): a PostgreSQL sequence), else one block
    /// ([`allocate_on`](Self::allocate_on)); returns their first IDs, at least one. A missing
    /// sequence is [`HiLoCounterMissing`](ErrorKind::HiLoCounterMissing); a value that is not a number is an error naming it.
    pub async fn allocate_blocks_on<S: Session>(
        &self,
        session: &mut S,
        size: u64,
        count: u64,
    ) -> Result<Vec<i64>, BoxError> {
        let Some(statement) = self.allocate_blocks(count) else {
            return Ok(vec![self.allocate_on(session, size).await?]);
        };
        check_outside_transaction(session).await?;
        match in_own_transaction!(session, session.fetch_text(statement)).await {
            Ok(Some(text)) => parse_starts(&text, self.name()),
            Ok(None) => Err(self.missing().into()),
            Err(e) => Err(self.or_missing(session, e)),
        }
    }

    /// Moves the counter above `floor` in one forward-only step
    /// ([`raise_above`](Self::raise_above)); on a MariaDB sequence, reads its increment and next
    /// value, then `SELECT SETVAL(s, target, 0)` to the first value above `floor` on its grid,
    /// which MariaDB ignores when the sequence is already past it (never backwards). A missing
    /// counter is [`HiLoCounterMissing`](ErrorKind::HiLoCounterMissing); other errors are the driver's (a user without
    /// the right to alter a PostgreSQL sequence among them).
    pub async fn raise_on<S: Session>(&self, session: &mut S, floor: i64) -> Result<(), BoxError> {
        check_outside_transaction(session).await?;
        if let Some(statement) = self.raise_above(floor) {
            let table = self.kind == CounterKind::Table;
            return match in_own_transaction!(session, session.execute(statement)).await {
                Ok(0) if table => Err(self.missing().into()),
                Ok(_) => Ok(()),
                Err(e) => Err(self.or_missing(session, e)),
            };
        }
        // A MariaDB sequence.
        let read = in_own_transaction!(session, async {
            let increment = session.fetch_i64(self.increment()).await?;
            let next = session.fetch_i64(self.next_value()).await?;
            Ok::<_, S::Error>((increment, next))
        })
        .await;
        let (increment, next) = match read {
            Ok((Some(increment), Some(next))) => (self.step(increment)?, next),
            Ok(_) => return Err(self.missing().into()),
            Err(e) => return Err(self.or_missing(session, e)),
        };
        if next > floor {
            return Ok(());
        }
        let step = i128::from(increment);
        let k = (i128::from(floor) - i128::from(next)).div_euclid(step) + 1;
        let target = i64::try_from(i128::from(next) + k * step).map_err(|_| {
            BoxError::from(format!(
                "counter {} at {next} cannot move above the floor {floor} within i64",
                self.name
            ))
        })?;
        // NULL when MariaDB ignored it (the sequence is past the target): not read.
        let setval = raw(&format!("SELECT SETVAL({}, {target}, 0)", self.name));
        match in_own_transaction!(session, session.execute(setval)).await {
            Ok(_) => Ok(()),
            Err(e) => Err(self.or_missing(session, e)),
        }
    }

    /// The counter's fixed step (a sequence's increment, which must be at least 1), or
    /// `None` for a table counter, which takes any step per call; [`MissingCounter`] when
    /// the sequence, table or row does not exist. Other errors are the driver's.
    pub async fn increment_on<S: Session>(
        &self,
        session: &mut S,
    ) -> Result<Result<Option<u64>, MissingCounter>, BoxError> {
        check_outside_transaction(session).await?;
        match in_own_transaction!(session, session.fetch_i64(self.increment())).await {
            Ok(Some(increment)) => Ok(Ok(match self.kind {
                CounterKind::Sequence => Some(self.step(increment)?),
                CounterKind::Table => None,
            })),
            Ok(None) => Ok(Err(self.missing_counter())),
            Err(e) if session.classify(&e) == ErrorClass::MissingRelation => {
                Ok(Err(self.missing_counter()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Creates the counter if it is missing ([`create_guarded`](Self::create_guarded)),
    /// idempotently and safely when other processes do the same at the same moment; a creator
    /// that took no lock (a migration tool) can still collide: then it runs once more.
    pub async fn create_on<S: Session>(&self, session: &mut S, block: u64) -> Result<(), BoxError> {
        check_outside_transaction(session).await?;
        for sql in self.create_guarded(block) {
            in_own_transaction!(session, crate::session::create_if_missing(session, &sql)).await?;
        }
        Ok(())
    }

    fn or_missing<S: Session>(&self, session: &S, err: S::Error) -> BoxError {
        if session.classify(&err) == ErrorClass::MissingRelation {
            self.missing().into()
        } else {
            err.into()
        }
    }
}

/// How a MySQL/MariaDB server keeps counters by default: MariaDB 10.3 or newer in sequences,
/// anything else in a table ([`Server::has_sequences`] of the server `SELECT VERSION()`
/// reports).
pub async fn detect_mysql_kind<S: Session>(session: &mut S) -> Result<CounterKind, S::Error> {
    Ok(if Server::read(session).await?.has_sequences() {
        CounterKind::Sequence
    } else {
        CounterKind::Table
    })
}

/// Where the counter's next block starts (a PostgreSQL sequence's `last_value` plus its
/// increment once called, a MariaDB sequence's `next_not_cached_value`, a table counter's
/// `next_val`), or `None` when the counter is missing (no sequence, table or row).
///
/// # Errors
///
/// The driver's error, other than a missing relation.
pub async fn read_next_value<S: Session>(
    session: &mut S,
    sql: &CounterSql,
) -> Result<Option<i64>, S::Error> {
    match session.fetch_i64(sql.next_value()).await {
        Err(e) if session.classify(&e) == ErrorClass::MissingRelation => Ok(None),
        other => other,
    }
}

fn raw(sql: &str) -> Statement<'static> {
    Statement::new(sql.to_owned(), Vec::new())
}

/// The block starts of [`CounterSql::allocate_blocks`]'s one text: decimal numbers separated by
/// commas, at least one.
fn parse_starts(text: &str, counter: &str) -> Result<Vec<i64>, BoxError> {
    let starts = text
        .split(',')
        .map(|v| {
            v.trim().parse::<i64>().map_err(|_| {
                BoxError::from(format!(
                    "counter {counter} gave {v:?} as the start of a block: not a number"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(starts)
}

#[cfg(test)]
mod allocate_blocks_tests {
    use super::*;
    use crate::statement::Value;

    #[test]
    fn block_starts_are_read_from_one_text_and_anything_else_is_refused() {
        assert_eq!(
            parse_starts("1,1001,2001", "orders").unwrap(),
            [1, 1001, 2001]
        );
        assert_eq!(parse_starts("42", "orders").unwrap(), [42]);
        let err = parse_starts("1,x", "orders").unwrap_err().to_string();
        assert!(err.contains("counter orders gave \"x\""), "{err}");
        assert!(parse_starts("", "orders").is_err());
    }

    #[test]
    fn the_count_is_bounded_and_bound_as_a_parameter() {
        let pg = CounterSql::sequence(Dialect::Postgres, "s").unwrap();
        for (asked, bound) in [(0, 1), (3, 3), (u64::MAX, CounterSql::MAX_BLOCKS_PER_CALL)] {
            let statement = pg.allocate_blocks(asked).unwrap();
            assert!(
                matches!(statement.params[..], [Value::BigInt(n)] if n == bound as i64),
                "{asked}: {:?}",
                statement.params
            );
        }
        let lite = CounterSql::table(Dialect::Sqlite, "s", "idgen_hilo").unwrap();
        assert!(lite.allocate_blocks(3).is_none());
    }

    #[test]
    fn the_next_value_statement_reads_where_the_next_block_starts() {
        let pg = CounterSql::sequence(Dialect::Postgres, "orders").unwrap();
        assert!(
            pg.next_value()
                .sql
                .contains("WHEN is_called THEN last_value +")
        );
        let lite = CounterSql::table(Dialect::Sqlite, "orders", "idgen_hilo").unwrap();
        assert_eq!(
            lite.next_value().sql,
            "SELECT next_val AS value FROM idgen_hilo WHERE name = ?"
        );
    }

    #[test]
    fn a_step_must_count_upwards_and_a_missing_counter_is_named() {
        let orders = CounterSql::sequence(Dialect::Postgres, "orders").unwrap();
        assert_eq!(orders.step(1000).unwrap(), 1000);
        let err = orders.step(-1).unwrap_err().to_string();
        assert!(err.contains("must count upwards"), "{err}");
        assert!(orders.step(0).is_err());
        let err = CounterSql::table(Dialect::Sqlite, "orders", "idgen_hilo")
            .unwrap()
            .missing()
            .to_string();
        assert!(err.contains("no row 'orders' in table idgen_hilo"), "{err}");
    }
}
