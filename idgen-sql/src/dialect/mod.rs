//! [`Dialect`]: the database a statement is written for, its server-version checks and how its
//! errors are classified. What the lease table's and the hi-lo counters' statements write
//! differently on each database is named once in [`DialectSql`] and [`CounterDialect`], with
//! one file per database: `postgres.rs`, `mysql.rs`, `sqlite.rs` (the statements in
//! `lease/sql.rs` and `counter/sql.rs` are written once over them).

mod mysql;
mod postgres;
mod sqlite;

use std::ops::Range;

use idgen_engine::{Error, ErrorKind, SqlName};

use crate::statement::{Statement, Value};

/// The SQL that differs between databases in the lease table's statements, each difference
/// named: one implementation per [`Dialect`] (`postgres.rs`, `mysql.rs`, `sqlite.rs`),
/// reached with [`Dialect::sql`]. A new database implements it once; the lease statements
/// (`lease/sql.rs`) need no new arm.
pub(crate) trait DialectSql: Sync {
    /// The lease table's column types and the text after its closing parenthesis.
    fn lease_columns(&self) -> LeaseColumns;

    /// What must precede DDL that processes starting together may run at once (PostgreSQL's
    /// [`PG_DDL_LOCK`](crate::PG_DDL_LOCK)), if anything.
    fn ddl_lock(&self) -> Option<&'static str> {
        None
    }

    /// The database's clock in the form a lease's `expires_at` is stored in.
    fn now(&self) -> &'static str;

    /// `now` plus a number of milliseconds bound as `param`, and the value to bind for
    /// `ttl_ms` (the database may take it in another unit or type).
    fn plus_ms(&self, now: &str, param: &str, ttl_ms: i64) -> (String, Value<'static>);

    /// A stored `expires_at` value (a column or [`now`](Self::now)) as Unix ms, a 64-bit
    /// integer.
    fn epoch_ms(&self, timestamp: &str) -> String;

    /// The smaller of two timestamps (`LEAST`; SQLite's two-argument `MIN`).
    fn least(&self) -> &'static str {
        "LEAST"
    }

    /// The larger of `column` and a value bound at the placeholders from number `first` on,
    /// ignoring whichever is NULL; and how many times the value is bound.
    fn greatest_not_null(&self, column: &str, first: usize) -> (String, usize);

    /// The node ID after the highest of a namespace, 0 when it has none, as a signed 64-bit
    /// integer.
    fn next_node(&self) -> &'static str {
        "COALESCE(MAX(node) + 1, 0)"
    }

    /// The row lock the claim's subquery takes of the row it picks, in the one statement of a
    /// claim (PostgreSQL's `FOR UPDATE SKIP LOCKED`; SQLite's `UPDATE` holds the write lock
    /// already, MySQL claims in two statements).
    fn claim_lock(&self) -> &'static str {
        ""
    }

    /// An insert that leaves an existing row alone: the statement's first word(s) and its tail.
    fn insert_or_ignore(&self) -> (&'static str, &'static str);

    /// Inserts the free rows `nodes` of namespace `ns` into `table` (no holder, `expires_at`
    /// = `now`), leaving existing rows as they are.
    fn insert_free_rows<'a>(&self, table: &str, ns: &'a str, nodes: Range<u64>) -> Statement<'a>;

    /// Why this database keeps no hi-lo counter of `kind`, if it does not.
    fn refuses_counter(&self, kind: CounterKind) -> Option<&'static str> {
        let _ = kind;
        None
    }

    /// A hi-lo counter kept in a sequence (SQLite has none: its table row).
    fn sequence_counter(&self) -> &'static dyn CounterDialect;

    /// A hi-lo counter kept in a row of a counter table (PostgreSQL keeps every counter in a
    /// sequence: its sequence).
    fn table_counter(&self) -> &'static dyn CounterDialect;
}

/// Where a counter lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// A `SEQUENCE` named after the counter (PostgreSQL, MariaDB ≥ 10.3): one fixed step.
    Sequence,
    /// A row named after the counter in a counter table (MySQL, MariaDB, SQLite): any step
    /// per call.
    Table,
}

/// A hi-lo counter's statements on one database and in one kind of place (a sequence, or a
/// row of a counter table): one implementation each in the dialect files. `name` and `table`
/// are checked names; statements that return a value name its column `value`.
pub(crate) trait CounterDialect: Sync {
    /// The idempotent DDL that creates the counter for blocks of `block`, one statement per
    /// element (a table counter's row starts at 1, written with the dialect's insert-or-ignore).
    fn create(&self, name: &str, table: &str, block: u64) -> Vec<String>;

    /// Takes one block of `size` IDs.
    ///
    /// # Errors
    ///
    /// A `size` a table counter cannot bind (above `i64::MAX`).
    fn take<'a>(&self, name: &'a str, table: &str, size: u64) -> Result<Statement<'a>, Error>;

    /// Whether [`take`](Self::take) returns no value and the block's end is read with
    /// `LAST_INSERT_ID()` on the same connection (a MySQL/MariaDB table counter).
    fn start_from_last_insert_id(&self) -> bool {
        false
    }

    /// Takes `count` blocks in one statement, as one text of comma-separated starts, where the
    /// database can (a PostgreSQL sequence).
    fn take_many(&self, name: &str, count: i64) -> Option<Statement<'static>> {
        let _ = (name, count);
        None
    }

    /// Moves the counter so that its next block starts above `floor`, in one statement that
    /// never moves it back, where one statement can.
    fn raise_above<'a>(&self, name: &'a str, table: &str, floor: i64) -> Option<Statement<'a>>;

    /// A sequence's increment, or (a table counter, which takes any step) its current value,
    /// only to see that it exists.
    fn increment<'a>(&self, name: &'a str, table: &str) -> Statement<'a> {
        Statement::new(
            format!("SELECT next_val AS value FROM {table} WHERE name = ?"),
            vec![Value::Text(name)],
        )
    }

    /// Where the counter's next block starts (a table counter's `next_val`).
    fn next_value<'a>(&self, name: &'a str, table: &str) -> Statement<'a> {
        self.increment(name, table)
    }
}

/// The value a counter table's row is raised to so that its next block starts above `floor`
/// (at least 1).
pub(crate) fn above(floor: i64) -> i64 {
    floor.max(0).saturating_add(1)
}

/// A block size as the `BIGINT` a table counter binds.
pub(crate) fn block_i64(size: u64) -> Result<i64, Error> {
    i64::try_from(size).map_err(|_| {
        ErrorKind::HiLoInvalidOption {
            option: "block",
            value: size.to_string(),
            reason: "a block must fit in i64",
        }
        .into()
    })
}

/// The lease table's columns, in the order a new row lists them.
pub(crate) const LEASE_COLUMNS: &str = "(namespace, node, holder, expires_at, last_timestamp)";

/// The lease table's column types on one database ([`DialectSql::lease_columns`]).
pub(crate) struct LeaseColumns {
    /// A text column (`namespace`, `holder`).
    pub(crate) text: &'static str,
    /// `expires_at`, with its `NOT NULL,` (and a comment where it is not a timestamp).
    pub(crate) timestamp: &'static str,
    /// A 64-bit integer column (`node`, `last_timestamp`), padded to line up.
    pub(crate) integer: &'static str,
    /// After the closing parenthesis (MySQL's `ENGINE = InnoDB`).
    pub(crate) suffix: &'static str,
}

/// A node ID as the `BIGINT` it is stored in (node IDs are far below `i64::MAX`: at most 2^22
/// of them).
pub(crate) fn node_i64(node: u64) -> i64 {
    i64::try_from(node).unwrap_or(i64::MAX)
}

/// The SQL database a statement is written for.
///
/// ```
/// use idgen_sql::Dialect;
/// assert_eq!(Dialect::MySql.quote(), '`');
/// assert_eq!(Dialect::Postgres.to_string(), "PostgreSQL");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB (the server version decides sequences and `SKIP LOCKED`).
    MySql,
    /// SQLite.
    Sqlite,
}

/// Quoting a checked [`SqlName`] for a [`Dialect`].
///
/// ```
/// use idgen_sql::{Dialect, QuotedName, SqlName};
///
/// let t = SqlName::parse("lease table", "ops.worker_lease")?;
/// assert_eq!(t.quoted(Dialect::Postgres), r#""ops"."worker_lease""#);
/// assert_eq!(t.quoted(Dialect::MySql), "`ops`.`worker_lease`");
/// # Ok::<(), idgen_engine::Error>(())
/// ```
pub trait QuotedName {
    /// Each part quoted for `dialect`: `"schema"."table"` (PostgreSQL, SQLite), `` `table` ``
    /// (MySQL/MariaDB).
    fn quoted(&self, dialect: Dialect) -> String;
}

impl QuotedName for SqlName {
    fn quoted(&self, dialect: Dialect) -> String {
        self.quoted_with(dialect.quote())
    }
}

/// What an error of the database means to idgen's retry and hint logic, from
/// [`Dialect::classify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// A deadlock, lock time-out, serialization failure or busy database: worth another try.
    Transient,
    /// The table (or sequence) named in the statement does not exist.
    MissingRelation,
    /// An object that a create-if-missing statement creates already exists (a concurrent
    /// creator won): the statement is run once more and then finds it.
    AlreadyExists,
    /// Anything else.
    Other,
}

impl Dialect {
    /// What this database writes differently in the lease table's statements.
    pub(crate) fn sql(self) -> &'static dyn DialectSql {
        match self {
            Dialect::Postgres => &postgres::Postgres,
            Dialect::MySql => &mysql::MySql,
            Dialect::Sqlite => &sqlite::Sqlite,
        }
    }

    /// The identifier quote: `"` on PostgreSQL and SQLite, `` ` `` on MySQL/MariaDB.
    pub const fn quote(self) -> char {
        match self {
            Dialect::MySql => '`',
            Dialect::Postgres | Dialect::Sqlite => '"',
        }
    }

    /// Placeholder `n` (1-based): `$n` on PostgreSQL, `?n` on SQLite, `?` on MySQL (where the
    /// parameters are bound in the order they appear).
    ///
    /// ```
    /// use idgen_sql::Dialect;
    /// assert_eq!(Dialect::Postgres.param(2), "$2");
    /// assert_eq!(Dialect::Sqlite.param(2), "?2");
    /// assert_eq!(Dialect::MySql.param(2), "?");
    /// ```
    pub fn param(self, n: usize) -> String {
        match self {
            Dialect::Postgres => format!("${n}"),
            Dialect::Sqlite => format!("?{n}"),
            Dialect::MySql => "?".to_owned(),
        }
    }

    /// Classifies an error of this database from its SQLSTATE or error code (as the driver
    /// reports it, if it does) and its message.
    ///
    /// ```
    /// use idgen_sql::{Dialect, ErrorClass};
    /// assert_eq!(Dialect::Postgres.classify(Some("40P01"), "deadlock detected"), ErrorClass::Transient);
    /// assert_eq!(Dialect::Sqlite.classify(None, "no such table: x"), ErrorClass::MissingRelation);
    /// assert_eq!(
    ///     Dialect::MySql.classify(None, "Lock wait timeout exceeded; try restarting transaction"),
    ///     ErrorClass::Transient
    /// );
    /// assert_eq!(Dialect::MySql.classify(Some("23000"), "Duplicate entry"), ErrorClass::Other);
    /// ```
    pub fn classify(self, code: Option<&str>, message: &str) -> ErrorClass {
        let has = |needles: &[&str]| needles.iter().any(|n| message.contains(n));
        match self {
            Dialect::Postgres => match code {
                Some("40001" | "40P01" | "55P03") => ErrorClass::Transient,
                Some("42P01") => ErrorClass::MissingRelation,
                Some("23505" | "42P07" | "42710") => ErrorClass::AlreadyExists,
                Some(_) => ErrorClass::Other,
                None if has(&[
                    "deadlock detected",
                    "could not obtain lock",
                    "could not serialize access",
                ]) =>
                {
                    ErrorClass::Transient
                }
                None if message.starts_with("relation") && message.contains("does not exist") => {
                    ErrorClass::MissingRelation
                }
                None if has(&["already exists", "duplicate key value"]) => {
                    ErrorClass::AlreadyExists
                }
                None => ErrorClass::Other,
            },
            Dialect::MySql => {
                if matches!(code, Some("40001")) || has(&["Deadlock found", "Lock wait timeout"]) {
                    ErrorClass::Transient
                } else if matches!(code, Some("42S02")) || has(&["doesn't exist"]) {
                    ErrorClass::MissingRelation
                } else {
                    ErrorClass::Other
                }
            }
            Dialect::Sqlite => {
                let busy = code
                    .and_then(|c| c.parse::<i32>().ok())
                    .is_some_and(|c| matches!(c & 0xff, 5 | 6));
                if busy || has(&["database is locked", "database table is locked"]) {
                    ErrorClass::Transient
                } else if has(&["no such table"]) {
                    ErrorClass::MissingRelation
                } else {
                    ErrorClass::Other
                }
            }
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dialect::Postgres => "PostgreSQL",
            Dialect::MySql => "MySQL/MariaDB",
            Dialect::Sqlite => "SQLite",
        })
    }
}

/// The first three numbers of a version string (`10.11.6-MariaDB` → `(10, 11, 6)`), after the
/// replication-compatibility prefix `5.5.5-` some MariaDB servers and proxies report.
fn version_numbers(version: &str) -> (u32, u32, u32) {
    let version = version.strip_prefix("5.5.5-").unwrap_or(version);
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let mut next = || numbers.next().unwrap_or(0);
    (next(), next(), next())
}

/// Whether a server reporting `version` (`SELECT VERSION()`) is MariaDB 10.3 or newer, the
/// first with sequences; MySQL has none.
///
/// ```
/// use idgen_sql::mariadb_has_sequences;
/// assert!(mariadb_has_sequences("10.11.6-MariaDB-0+deb12u1"));
/// assert!(mariadb_has_sequences("5.5.5-10.3.39-MariaDB")); // replication prefix
/// assert!(!mariadb_has_sequences("10.2.44-MariaDB"));
/// assert!(!mariadb_has_sequences("8.0.36"));
/// ```
pub fn mariadb_has_sequences(version: &str) -> bool {
    version.contains("MariaDB") && version_numbers(version) >= (10, 3, 0)
}

/// Whether a server reporting `version` knows `FOR UPDATE SKIP LOCKED`: MySQL 8.0.1 and
/// MariaDB 10.6 on (older ones get plain `FOR UPDATE`, slower under contention but as safe).
///
/// ```
/// use idgen_sql::mysql_has_skip_locked;
/// assert!(mysql_has_skip_locked("10.11.19-MariaDB-0+deb12u1"));
/// assert!(!mysql_has_skip_locked("10.5.23-MariaDB-log"));
/// assert!(mysql_has_skip_locked("8.0.36"));
/// assert!(!mysql_has_skip_locked("8.0.0-dmr"));
/// assert!(!mysql_has_skip_locked("5.7.44-log"));
/// ```
pub fn mysql_has_skip_locked(version: &str) -> bool {
    let v = version_numbers(version);
    if version.contains("MariaDB") {
        v >= (10, 6, 0)
    } else {
        v >= (8, 0, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_checks_follow_the_release_notes() {
        assert!(mariadb_has_sequences("10.3.0-MariaDB"));
        assert!(mariadb_has_sequences("11.4.2-MariaDB-ubu2404"));
        assert!(mysql_has_skip_locked("10.6.0-MariaDB"));
        assert!(mysql_has_skip_locked("8.4.0-commercial"));
        assert!(mysql_has_skip_locked("5.5.5-10.6.1-MariaDB"));
        assert!(!mysql_has_skip_locked(""));
        assert!(!mariadb_has_sequences("MariaDB"));
    }

    #[test]
    fn errors_are_classified_by_code_first_then_by_message() {
        use ErrorClass::*;
        let pg = Dialect::Postgres;
        assert_eq!(pg.classify(Some("42P01"), "x"), MissingRelation);
        assert_eq!(pg.classify(Some("23505"), "x"), AlreadyExists);
        assert_eq!(pg.classify(Some("23502"), "deadlock detected"), Other);
        assert_eq!(
            pg.classify(None, "relation \"t\" does not exist"),
            MissingRelation
        );
        assert_eq!(pg.classify(None, "could not obtain lock on row"), Transient);
        let my = Dialect::MySql;
        assert_eq!(my.classify(Some("40001"), "x"), Transient);
        assert_eq!(
            my.classify(None, "Table 'a.b' doesn't exist"),
            MissingRelation
        );
        let lite = Dialect::Sqlite;
        assert_eq!(lite.classify(Some("517"), "x"), Transient); // SQLITE_BUSY_SNAPSHOT
        assert_eq!(lite.classify(Some("1"), "syntax error"), Other);
    }
}
