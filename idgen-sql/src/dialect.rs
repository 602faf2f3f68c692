//! [`Dialect`]: the database a statement is written for, its server-version checks and how its
//! errors are classified.

use idgen_engine::SqlName;

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
