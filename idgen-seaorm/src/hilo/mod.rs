//! Hi-lo over a sea-orm [`DatabaseConnection`] (feature `hilo`, on by default): blocks of IDs
//! from one central database counter, handed out from memory by idgen-core's [`HiLo`] engine
//! (re-exported here with everything of `idgen_core::hilo`).
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
//!
//! let db = sea_orm::Database::connect("sqlite::memory:").await?;
//! SeaOrmCounter::new(&db, "hilo")?.create(1000).await?; // once, or the migration
//!
//! let ids = HiLo::new(&db, 1000).await?; // the counter "hilo"
//! assert_eq!(ids.next_id().await?, 1);
//! assert_eq!(ids.next_id().await?, 2);
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! # The same counters as idgen-sqlx
//!
//! Semantics are **pooled-lo** (a counter value `v` is the block `[v, v + block)`, starting at
//! 1), with the counters, statements and checks of idgen-sqlx's hi-lo sources, so sqlx and
//! sea-orm processes can share one counter:
//!
//! | database | counter | one allocation | increment read from |
//! |---|---|---|---|
//! | PostgreSQL | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT nextval('name')` | `pg_catalog.pg_sequence` |
//! | MariaDB ≥ 10.3 | `SEQUENCE` *name* `INCREMENT BY` block | `SELECT NEXTVAL(name)` | `SELECT increment FROM name` |
//! | MySQL, older MariaDB | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?` | any step per call |
//! | SQLite | row *name* of table `idgen_hilo` | `UPDATE idgen_hilo SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1` | any step per call |
//!
//! At start-up a sequence whose increment differs from the block size is refused
//! ([`CoreError::HiLoIncrementMismatch`](crate::CoreError::HiLoIncrementMismatch), naming both
//! numbers). Counter tables advance by any step per call, so there is nothing to mismatch.
//!
//! # Its own connection, autocommit
//!
//! Each counter owns a **one-connection pool** made from the connect options of the
//! `DatabaseConnection`'s sqlx pool (connected lazily, reconnected after a failure); every
//! allocation is one autocommit statement there: never inside a caller's transaction (a
//! rolled-back transaction cannot un-allocate a block already handed out) and never waiting for
//! a slot of the caller's pool (no deadlock when every connection waits for an ID).
//!
//! # Names
//!
//! Counter and table names are written into SQL, so only `name` or `schema.name` of ASCII
//! letters, digits and `_` (not starting with a digit, parts of at most 63 characters) pass.

mod backend;

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbBackend};

pub use idgen_core::hilo::*;

use crate::Error;
use backend::Dedicated;
pub(crate) use backend::Kind;
#[cfg(feature = "migration")]
pub(crate) use backend::mariadb_with_sequences;

/// The counter table's default name (MySQL without sequences, SQLite).
pub const DEFAULT_TABLE: &str = "idgen_hilo";

/// A hi-lo counter in the database behind a [`DatabaseConnection`]: a sequence (PostgreSQL,
/// MariaDB ≥ 10.3) or a row of the counter table (MySQL, older MariaDB, SQLite), on a
/// connection of its own. What `HiLo::new(&db, block)` makes.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::hilo::{HiLo, SeaOrmCounter};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let orders = SeaOrmCounter::new(&db, "orders")?;
/// orders.create(500).await?;
/// let ids = HiLo::new(orders, 500).await?;
/// assert_eq!(ids.reserve(10).await?, 1..11);
///
/// assert!(SeaOrmCounter::new(&db, "orders; DROP TABLE x").is_err());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct SeaOrmCounter {
    name: String,
    table: String,
    dedicated: Arc<Result<Dedicated, Error>>,
}

/// The `Marker` of [`IntoHiLoSource`] for `DatabaseConnection`: it lets
/// `HiLo::new(&db, block)` accept one. Never named by callers.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), sea_orm::DbErr> {
/// use idgen_seaorm::hilo::{HiLoSource, IntoHiLoSource, SeaOrmConnection};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let source = IntoHiLoSource::<SeaOrmConnection>::into_hilo_source(&db, "orders");
/// assert_eq!(source.name(), "orders");
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Debug)]
pub enum SeaOrmConnection {}

impl SeaOrmCounter {
    /// The counter `name` (a sequence, or a row of `idgen_hilo`) in the database behind `db`.
    ///
    /// Errors: [`Error::InvalidCounterName`] naming the name.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let err = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "9lives").unwrap_err();
    /// assert!(err.to_string().contains("\"9lives\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(db: &DatabaseConnection, name: &str) -> Result<SeaOrmCounter, Error> {
        validate(name)?;
        Ok(SeaOrmCounter::unchecked(db, name))
    }

    /// Uses the counter table `table` instead of `idgen_hilo` (where a table is used).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_seaorm::hilo::SeaOrmCounter;
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = SeaOrmCounter::new(&db, "orders")?.with_table("counters")?;
    /// assert!(counter.migration_sql(1000).await?.contains("counters"));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(mut self, table: &str) -> Result<SeaOrmCounter, Error> {
        validate(table)?;
        table.clone_into(&mut self.table);
        Ok(self)
    }

    fn unchecked(db: &DatabaseConnection, name: &str) -> SeaOrmCounter {
        SeaOrmCounter {
            name: name.to_owned(),
            table: DEFAULT_TABLE.to_owned(),
            dedicated: Arc::new(Dedicated::of(db)),
        }
    }

    fn dedicated(&self) -> Result<&Dedicated, Error> {
        validate(&self.name)?;
        self.dedicated.as_ref().as_ref().map_err(Clone::clone)
    }

    /// The statements that create this counter with increment `block` (for a migration file):
    /// a sequence on PostgreSQL and MariaDB ≥ 10.3 (asks the server which it is), else the
    /// counter table and this counter's row. Idempotent.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let sql = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "orders")?.migration_sql(1000).await?;
    /// assert!(sql.contains("INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)"));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn migration_sql(&self, block: u64) -> Result<String, Error> {
        Ok(self.statements(block).await?.join(";\n"))
    }

    async fn statements(&self, block: u64) -> Result<Vec<String>, Error> {
        let kind = self.dedicated()?.kind(&self.name).await?;
        Ok(counter_statements(kind, &self.name, &self.table, block))
    }

    /// Creates the counter with increment `block` if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "hilo")?;
    /// counter.create(1000).await?;
    /// counter.create(1000).await?;
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        let dedicated = self.dedicated()?;
        for sql in self.statements(block).await? {
            dedicated.execute(&self.name, &sql).await?;
        }
        Ok(())
    }

    /// The database this counter is in.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let counter = idgen_seaorm::hilo::SeaOrmCounter::new(&db, "hilo")?;
    /// assert_eq!(counter.backend(), Some(sea_orm::DbBackend::Sqlite));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn backend(&self) -> Option<DbBackend> {
        self.dedicated
            .as_ref()
            .as_ref()
            .ok()
            .map(Dedicated::backend)
    }
}

impl HiLoSource for SeaOrmCounter {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let dedicated = self.dedicated()?;
        Ok(dedicated.allocate(&self.name, &self.table, size).await?)
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        let dedicated = self.dedicated()?;
        Ok(dedicated.increment(&self.name, &self.table).await?)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl IntoHiLoSource<SeaOrmConnection> for DatabaseConnection {
    type Source = SeaOrmCounter;

    fn into_hilo_source(self, counter: &str) -> SeaOrmCounter {
        SeaOrmCounter::unchecked(&self, counter)
    }
}

impl IntoHiLoSource<SeaOrmConnection> for &DatabaseConnection {
    type Source = SeaOrmCounter;

    fn into_hilo_source(self, counter: &str) -> SeaOrmCounter {
        SeaOrmCounter::unchecked(self, counter)
    }
}

impl std::fmt::Debug for SeaOrmCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeaOrmCounter")
            .field("name", &self.name)
            .field("table", &self.table)
            .field("backend", &self.backend())
            .finish()
    }
}

/// The idempotent DDL of a counter: what idgen-sqlx's `migration_sql` writes.
pub(crate) fn counter_statements(kind: Kind, name: &str, table: &str, block: u64) -> Vec<String> {
    match kind {
        Kind::PgSequence => vec![format!(
            "CREATE SEQUENCE IF NOT EXISTS {name} AS BIGINT INCREMENT BY {block} MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE"
        )],
        Kind::MariaDbSequence => vec![format!(
            "CREATE SEQUENCE IF NOT EXISTS {name} START WITH 1 MINVALUE 1 INCREMENT BY {block} NOCACHE NOCYCLE"
        )],
        Kind::MySqlTable => vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {table} (\n    name     VARCHAR(255) NOT NULL PRIMARY KEY,\n    next_val BIGINT       NOT NULL\n) ENGINE = InnoDB"
            ),
            format!("INSERT IGNORE INTO {table} (name, next_val) VALUES ('{name}', 1)"),
        ],
        Kind::SqliteTable => vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {table} (\n    name     TEXT    NOT NULL PRIMARY KEY,\n    next_val INTEGER NOT NULL\n)"
            ),
            format!("INSERT OR IGNORE INTO {table} (name, next_val) VALUES ('{name}', 1)"),
        ],
    }
}

/// `name` or `schema.name` of ASCII letters, digits and `_`, parts not starting with a digit and
/// at most 63 characters long.
pub(crate) fn validate(name: &str) -> Result<(), Error> {
    let invalid = |reason: &'static str| Error::InvalidCounterName {
        name: name.to_owned(),
        reason,
    };
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 2 {
        return Err(invalid("more than one `.`"));
    }
    for part in parts {
        if part.is_empty() {
            return Err(invalid("an empty part"));
        }
        if part.len() > 63 {
            return Err(invalid("a part longer than 63 characters"));
        }
        if part.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(invalid("a part starts with a digit"));
        }
        if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(invalid(
                "a character other than ASCII letters, digits, `_` and one `.`",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn names_that_could_escape_the_sql_are_refused_naming_them() {
        for name in ["hilo", "app.orders", "_x9", &"a".repeat(63)] {
            assert!(validate(name).is_ok(), "{name}");
        }
        for name in [
            "",
            "a.b.c",
            ".a",
            "9lives",
            "o'rders",
            "x; DROP TABLE y",
            &"a".repeat(64),
        ] {
            let err = validate(name).unwrap_err().to_string();
            assert!(err.contains(&format!("{name:?}")), "{err}");
        }
    }
}
