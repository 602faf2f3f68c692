//! What idgen needs to know of a database server beyond its [`Dialect`]: MySQL or MariaDB, and
//! what its version allows ([`Server`]). Read with one query in one place, so no crate probes
//! `SELECT VERSION()` with a rule of its own.

use crate::dialect::{Dialect, mariadb_has_sequences, mysql_has_skip_locked};
use crate::session::Session;
use crate::statement::Statement;

/// A database server as idgen sees it: its [`Dialect`] and the version it reports, with the
/// capabilities the SQL contract depends on ([`has_sequences`](Self::has_sequences),
/// [`has_skip_locked`](Self::has_skip_locked)) and the name people read
/// ([`describe`](Self::describe)). Made by [`read`](Self::read) on a session, or from a version
/// an adapter read itself ([`new`](Self::new)).
///
/// ```
/// use idgen_sql::{Dialect, Server};
///
/// let mariadb = Server::new(Dialect::MySql, "10.11.6-MariaDB-0+deb12u1");
/// assert!(mariadb.is_mariadb() && mariadb.has_sequences() && mariadb.has_skip_locked());
/// assert_eq!(mariadb.describe(), "MariaDB 10.11.6");
///
/// let mysql = Server::new(Dialect::MySql, "5.7.44-log");
/// assert!(!mysql.has_sequences() && !mysql.has_skip_locked());
/// assert_eq!(mysql.describe(), "MySQL 5.7.44");
///
/// let postgres = Server::new(Dialect::Postgres, "15.18 (Debian 15.18-0+deb12u1)");
/// assert!(postgres.has_sequences() && postgres.has_skip_locked());
/// assert_eq!(postgres.describe(), "PostgreSQL 15.18");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    dialect: Dialect,
    version: String,
}

impl Server {
    /// The server of `dialect` that reports `version` (`SELECT VERSION()` on MySQL/MariaDB,
    /// `current_setting('server_version')` on PostgreSQL, `sqlite_version()` on SQLite).
    ///
    /// ```
    /// let server = idgen_sql::Server::new(idgen_sql::Dialect::Sqlite, "3.40.1");
    /// assert_eq!(server.version(), "3.40.1");
    /// ```
    pub fn new(dialect: Dialect, version: impl Into<String>) -> Server {
        Server {
            dialect,
            version: version.into(),
        }
    }

    /// The query that reads the version on `dialect`, as [`read`](Self::read) sends it.
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert_eq!(Server::version_query(Dialect::MySql).sql, "SELECT VERSION() AS value");
    /// ```
    pub fn version_query(dialect: Dialect) -> Statement<'static> {
        let sql = match dialect {
            Dialect::Postgres => "SELECT current_setting('server_version') AS value",
            Dialect::MySql => "SELECT VERSION() AS value",
            Dialect::Sqlite => "SELECT sqlite_version() AS value",
        };
        Statement::new(sql.to_owned(), Vec::new())
    }

    /// Reads the server of `session` with one query ([`version_query`](Self::version_query)),
    /// in whatever transaction the session is in (it writes nothing).
    ///
    /// # Errors
    ///
    /// The driver's error.
    ///
    /// ```no_run
    /// # async fn demo<S: idgen_sql::Session>(session: &mut S) -> Result<(), S::Error> {
    /// let server = idgen_sql::Server::read(session).await?;
    /// println!("{} (sequences: {})", server.describe(), server.has_sequences());
    /// # Ok(()) }
    /// ```
    pub async fn read<S: Session>(session: &mut S) -> Result<Server, S::Error> {
        let dialect = session.dialect();
        let version = session.fetch_text(Self::version_query(dialect)).await?;
        Ok(Server::new(dialect, version.unwrap_or_default()))
    }

    /// The server's dialect.
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert_eq!(Server::new(Dialect::MySql, "8.0.36").dialect(), Dialect::MySql);
    /// ```
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The version as the server reported it.
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert_eq!(Server::new(Dialect::MySql, "8.0.36").version(), "8.0.36");
    /// ```
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether it is MariaDB (a MySQL-dialect server whose version names MariaDB).
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert!(Server::new(Dialect::MySql, "5.5.5-10.3.39-MariaDB").is_mariadb());
    /// assert!(!Server::new(Dialect::MySql, "8.0.36").is_mariadb());
    /// ```
    pub fn is_mariadb(&self) -> bool {
        self.dialect == Dialect::MySql && self.version.contains("MariaDB")
    }

    /// Whether it has sequences, where a hi-lo counter is kept by default: PostgreSQL, and
    /// MariaDB 10.3 on ([`mariadb_has_sequences`]); MySQL and SQLite have none.
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert!(!Server::new(Dialect::MySql, "10.2.44-MariaDB").has_sequences());
    /// assert!(!Server::new(Dialect::Sqlite, "3.40.1").has_sequences());
    /// ```
    pub fn has_sequences(&self) -> bool {
        match self.dialect {
            Dialect::Postgres => true,
            Dialect::MySql => mariadb_has_sequences(&self.version),
            Dialect::Sqlite => false,
        }
    }

    /// Whether the lease claim may lock rows `FOR UPDATE SKIP LOCKED`: PostgreSQL, MySQL 8.0.1
    /// and MariaDB 10.6 on ([`mysql_has_skip_locked`]); older MySQL-dialect servers get plain
    /// `FOR UPDATE` (slower under contention, as safe). SQLite locks the whole database and
    /// has no row locks to skip: `false`.
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert!(!Server::new(Dialect::MySql, "10.5.23-MariaDB-log").has_skip_locked());
    /// assert!(Server::new(Dialect::MySql, "8.0.36").has_skip_locked());
    /// ```
    pub fn has_skip_locked(&self) -> bool {
        match self.dialect {
            Dialect::Postgres => true,
            Dialect::MySql => mysql_has_skip_locked(&self.version),
            Dialect::Sqlite => false,
        }
    }

    /// The server's name and version, for people: `PostgreSQL 15.18`, `MariaDB 10.11.19`,
    /// `MySQL 8.0.36`, `SQLite 3.40.1` (the build and distribution suffixes left out).
    ///
    /// ```
    /// use idgen_sql::{Dialect, Server};
    /// assert_eq!(Server::new(Dialect::MySql, "5.5.5-10.3.39-MariaDB-log").describe(), "MariaDB 10.3.39");
    /// assert_eq!(Server::new(Dialect::Sqlite, "3.40.1").describe(), "SQLite 3.40.1");
    /// ```
    pub fn describe(&self) -> String {
        let version = self.version.trim();
        match self.dialect {
            Dialect::Postgres => {
                let number = version.split_whitespace().next().unwrap_or_default();
                format!("PostgreSQL {number}")
            }
            Dialect::MySql => {
                let bare = version.strip_prefix("5.5.5-").unwrap_or(version);
                let number = bare.split('-').next().unwrap_or_default();
                let name = if self.is_mariadb() {
                    "MariaDB"
                } else {
                    "MySQL"
                };
                format!("{name} {number}")
            }
            Dialect::Sqlite => format!("SQLite {version}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_version_allows_nothing_optional_and_is_still_named() {
        let unknown = Server::new(Dialect::MySql, "");
        assert!(!unknown.is_mariadb() && !unknown.has_sequences() && !unknown.has_skip_locked());
        assert_eq!(unknown.describe(), "MySQL ");
        assert_eq!(Server::new(Dialect::Postgres, "").describe(), "PostgreSQL ");
    }
}
