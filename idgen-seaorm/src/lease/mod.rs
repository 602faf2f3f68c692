//! Node IDs leased over a sea-orm [`DatabaseConnection`] (feature `lease`, on by default).
//!
//! The engine is idgen-core's [`WorkerLease`] (re-exported here with everything of
//! `idgen_core::lease`): each process claims a free node ID from a table of the application's
//! database, renews it in the background and stops its generator before a claim it could not
//! renew expires. [`SeaOrmLeaseStore`] keeps the leases in the **same table, with the same
//! statements** as idgen-sqlx's lease stores, so sea-orm and sqlx processes can lease node IDs
//! from one table and never share one.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use idgen_seaorm::lease::{create_lease_table, WorkerLease};
//! use idgen_seaorm::{Layout, Snowflake};
//!
//! let db = sea_orm::Database::connect("sqlite::memory:").await?;
//! create_lease_table(&db).await?; // once, or the migration (feature `migration`)
//!
//! let lease = WorkerLease::acquire(&db, &Layout::TWITTER).await?;
//! let handle = lease.handle();
//! let ids = Snowflake::builder().layout(Layout::TWITTER).lease(lease).build()?;
//! assert_eq!(Layout::TWITTER.decompose(ids.next_id()?)?.node, handle.node());
//!
//! handle.release().await?; // at shutdown: the node ID is free again at once
//! # Ok(()) }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! # How it works
//!
//! - One row per node ID and namespace, created on the namespace's first claim (in chunks of
//!   1024 node IDs, as needed), idempotently.
//! - **Claim** takes the lowest node ID whose `expires_at` has passed on the **database's**
//!   clock, atomically: PostgreSQL `UPDATE … WHERE node = (SELECT … FOR UPDATE SKIP LOCKED)
//!   RETURNING`; MySQL/MariaDB a short `READ COMMITTED` transaction of its own with `SELECT …
//!   FOR UPDATE SKIP LOCKED` (plain `FOR UPDATE` before MySQL 8.0.1 / MariaDB 10.6) then
//!   `UPDATE`; SQLite one `UPDATE … RETURNING`.
//! - **Renew** succeeds while this holder still holds the row and keeps the larger last
//!   timestamp; **release** expires the row now and stores the exact last timestamp.
//! - Every statement runs on a connection of its own from the `DatabaseConnection`'s pool, in
//!   autocommit, never inside a transaction of the caller (the store takes the connection, not a
//!   `DatabaseTransaction`). Deadlocks, lock time-outs and busy errors are retried briefly.
//!
//! # The table
//!
//! `idgen_worker_lease` by default ([`LeaseOptions::table`], [`SeaOrmLeaseStore::with_table`]
//! for another `name` or `schema.name` of ASCII letters, digits and `_`). Columns: `namespace`,
//! `node`, `holder`, `expires_at` (database clock; `TIMESTAMPTZ`, `DATETIME(6)` in UTC, or Unix
//! ms on SQLite), `last_timestamp` (Unix ms). [`create_lease_table`],
//! [`SeaOrmLeaseStore::create_table`] or the sea-orm-migration `Migration` (feature
//! `migration`) create it; [`SeaOrmLeaseStore::migration_sql`] shows the statement.

pub(crate) mod sql;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr};

pub use idgen_core::lease::*;

use crate::Error;

/// The lease table's default name (the same as idgen-sqlx's).
pub const DEFAULT_TABLE: &str = "idgen_worker_lease";

/// Rows of a namespace are created in chunks of this many node IDs, as they are needed.
const CHUNK: u64 = 1024;

/// Attempts of a claim that found expired rows, all locked by other sessions for the moment.
const LOCKED_ROUNDS: u64 = 100;

/// Attempts of one step that failed on a deadlock, lock time-out or busy database.
const TRANSIENT_ATTEMPTS: u32 = 8;

/// The longest identifier part accepted: PostgreSQL truncates names past 63 bytes.
const MAX_PART_LEN: usize = 63;

/// Node-ID leases kept in a table of the database behind a sea-orm [`DatabaseConnection`]
/// (PostgreSQL, MySQL/MariaDB or SQLite): the [`LeaseStore`] behind
/// `WorkerLease::acquire(&db, &layout)`.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::lease::{SeaOrmLeaseStore, WorkerLease};
/// use idgen_seaorm::Layout;
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// let store = SeaOrmLeaseStore::with_table(db.clone(), "my_leases")?;
/// store.create_table().await?;
/// let a = WorkerLease::acquire(store.clone(), &Layout::TWITTER).await?;
/// let b = WorkerLease::acquire(store, &Layout::TWITTER).await?;
/// assert_ne!(a.node(), b.node());
///
/// let err = SeaOrmLeaseStore::with_table(db, "x; DROP TABLE y").unwrap_err();
/// assert!(err.to_string().contains("may contain only ASCII letters, digits and '_'"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone)]
pub struct SeaOrmLeaseStore {
    db: DatabaseConnection,
    /// The quoted table name, or why the given name was refused.
    table: Result<Arc<str>, idgen_core::Error>,
}

/// Marks the [`IntoLeaseStore`] implementations for `DatabaseConnection`, so that
/// `WorkerLease::acquire(&db, &layout)` takes one. Never named by callers.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::lease::{create_lease_table, WorkerLease};
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// create_lease_table(&db).await?;
/// let by_reference = WorkerLease::acquire(&db, &idgen_seaorm::Layout::TWITTER).await?;
/// let by_value = WorkerLease::acquire(db.clone(), &idgen_seaorm::Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SeaOrmConnection;

/// Creates the lease table with its default name (`idgen_worker_lease`) if it does not exist.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), sea_orm::DbErr> {
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?;
/// idgen_seaorm::lease::create_lease_table(&db).await?; // idempotent
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub async fn create_lease_table(db: &DatabaseConnection) -> Result<(), DbErr> {
    SeaOrmLeaseStore::new(db.clone()).create_table().await
}

impl SeaOrmLeaseStore {
    /// A store using the table `idgen_worker_lease`.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let store = idgen_seaorm::lease::SeaOrmLeaseStore::new(db);
    /// assert_eq!(store.table(), Some("\"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(db: DatabaseConnection) -> Self {
        Self::named(db, DEFAULT_TABLE)
    }

    /// A store using the table `table` (`name` or `schema.name`, ASCII letters, digits and `_`,
    /// not starting with a digit: the name is written into the SQL, so nothing else is accepted).
    ///
    /// Errors: [`Error::Id`] wrapping `idgen_core::Error::InvalidOptions`, naming the name.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use idgen_seaorm::lease::SeaOrmLeaseStore;
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// assert_eq!(SeaOrmLeaseStore::with_table(db.clone(), "main.leases")?.table(), Some("\"main\".\"leases\""));
    /// assert!(SeaOrmLeaseStore::with_table(db, "leases--").is_err());
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(db: DatabaseConnection, table: &str) -> Result<Self, Error> {
        let store = Self::named(db, table);
        match &store.table {
            Ok(_) => Ok(store),
            Err(e) => Err(Error::Id(e.clone())),
        }
    }

    /// A store whose name may be invalid: its calls then fail naming it (for `IntoLeaseStore`).
    fn named(db: DatabaseConnection, table: &str) -> Self {
        let quote = match db.get_database_backend() {
            DbBackend::MySql => '`',
            _ => '"',
        };
        let table = quoted_table_name(table, quote).map(Arc::from);
        SeaOrmLeaseStore { db, table }
    }

    /// The table name as written into the SQL (quoted), `None` if the name was refused.
    pub fn table(&self) -> Option<&str> {
        self.table.as_deref().ok()
    }

    /// The `CREATE TABLE IF NOT EXISTS` statement for this store's table and database (the one
    /// idgen-sqlx uses too), for a migration file.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// let sql = idgen_seaorm::lease::SeaOrmLeaseStore::new(db).migration_sql();
    /// assert!(sql.starts_with("CREATE TABLE IF NOT EXISTS \"idgen_worker_lease\""));
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self) -> String {
        match &self.table {
            Ok(table) => sql::migration_sql(self.db.get_database_backend(), table),
            Err(e) => format!("-- {e}"),
        }
    }

    /// Creates the table if it does not exist (idempotent).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), sea_orm::DbErr> {
    /// let db = sea_orm::Database::connect("sqlite::memory:").await?;
    /// idgen_seaorm::lease::SeaOrmLeaseStore::new(db).create_table().await?;
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub async fn create_table(&self) -> Result<(), DbErr> {
        self.quoted_table()?;
        self.db
            .execute_unprepared(&self.migration_sql())
            .await
            .map(drop)
    }

    fn quoted_table(&self) -> Result<&str, DbErr> {
        match &self.table {
            Ok(t) => Ok(t),
            Err(e) => Err(DbErr::Custom(e.to_string())),
        }
    }

    fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }

    /// A store error naming the table, with a hint when the table is missing.
    fn context(&self, operation: &str, err: DbErr) -> BoxError {
        let table = self.table().unwrap_or("?");
        let hint = if sql::is_missing_table(self.backend(), &err) {
            " (create it with idgen_seaorm::lease::create_lease_table or the lease table migration)"
        } else {
            ""
        };
        format!("{operation} on lease table {table}: {err}{hint}").into()
    }

    async fn claim_once(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, DbErr> {
        let table = self.quoted_table()?;
        // Each round claims, finds the node space full, creates missing rows, or waits for rows
        // that were locked for a moment (by another claim's scan, or on MySQL by a concurrent
        // insert of the same rows) and so were skipped.
        let rounds = req.capacity.div_ceil(CHUNK) + 2 + LOCKED_ROUNDS;
        let mut locked_rounds = 0;
        for _ in 0..rounds {
            // Rows are never deleted, so every row counted here is seen by the claim after it.
            let next = sql::next_missing(&self.db, table, req.namespace, req.capacity).await?;
            if let Some(claim) = sql::take_expired(&self.db, table, req).await? {
                return Ok(Some(claim));
            }
            if next < req.capacity {
                let end = req.capacity.min(next + CHUNK);
                sql::insert_rows(&self.db, table, req.namespace, next..end).await?;
                continue;
            }
            // Every row exists and none could be locked: full, unless some were only locked.
            let expired = sql::count_expired(&self.db, table, req.namespace, req.capacity).await?;
            if expired == 0 {
                return Ok(None);
            }
            locked_rounds += 1;
            tokio::time::sleep(Duration::from_millis(5 * locked_rounds.min(20))).await;
        }
        Err(DbErr::Custom(format!(
            "expired rows stayed locked by other sessions through {LOCKED_ROUNDS} attempts"
        )))
    }

    /// Runs `step` again (after a short pause) while it fails with a transient error.
    async fn retry_transient<T, F, Fut>(&self, mut step: F) -> Result<T, DbErr>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, DbErr>>,
    {
        let mut attempt = 0;
        loop {
            match step().await {
                Err(e)
                    if sql::is_transient(self.backend(), &e)
                        && attempt + 1 < TRANSIENT_ATTEMPTS =>
                {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(5 << attempt)).await;
                }
                outcome => return outcome,
            }
        }
    }
}

impl LeaseStore for SeaOrmLeaseStore {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.retry_transient(|| self.claim_once(req))
            .await
            .map_err(|e| self.context("claim", e))
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.retry_transient(|| async { sql::renew(&self.db, self.quoted_table()?, req).await })
            .await
            .map_err(|e| self.context("renew", e))
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.retry_transient(|| async { sql::release(&self.db, self.quoted_table()?, req).await })
            .await
            .map_err(|e| self.context("release", e))
    }
}

impl IntoLeaseStore<SeaOrmConnection> for DatabaseConnection {
    type Store = SeaOrmLeaseStore;
    /// The store on this connection; a refused table name fails the first claim, naming it.
    fn into_lease_store(self, table: &str) -> SeaOrmLeaseStore {
        SeaOrmLeaseStore::named(self, table)
    }
}

impl IntoLeaseStore<SeaOrmConnection> for &DatabaseConnection {
    type Store = SeaOrmLeaseStore;
    /// The store on a clone of this connection (the same pool); a refused table name fails the
    /// first claim, naming it.
    fn into_lease_store(self, table: &str) -> SeaOrmLeaseStore {
        SeaOrmLeaseStore::named(self.clone(), table)
    }
}

impl std::fmt::Debug for SeaOrmLeaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeaOrmLeaseStore")
            .field("backend", &self.backend())
            .field("table", &self.table())
            .finish()
    }
}

/// `table` or `schema.table`, each part `[A-Za-z_][A-Za-z0-9_]*`, quoted with `quote`; anything
/// else is refused, since the name is written into the SQL.
pub(crate) fn quoted_table_name(name: &str, quote: char) -> Result<String, idgen_core::Error> {
    let invalid = |why: String| {
        Err(idgen_core::Error::InvalidOptions {
            reason: format!("lease table name {name:?} {why}"),
        })
    };
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 2 {
        return invalid(format!(
            "has {} dot-separated parts; at most 2 (schema.table) are allowed",
            parts.len()
        ));
    }
    for part in &parts {
        let mut chars = part.chars();
        match chars.next() {
            None => return invalid("has an empty part".to_owned()),
            Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
                return invalid(format!(
                    "must start each part with an ASCII letter or '_', not {c:?}"
                ));
            }
            _ => {}
        }
        if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
            return invalid(format!(
                "may contain only ASCII letters, digits and '_', not {c:?}"
            ));
        }
        if part.len() > MAX_PART_LEN {
            return invalid(format!(
                "has a part of {} characters; the limit is {MAX_PART_LEN}",
                part.len()
            ));
        }
    }
    Ok(parts
        .iter()
        .map(|p| format!("{quote}{p}{quote}"))
        .collect::<Vec<_>>()
        .join("."))
}

#[cfg(test)]
mod tests {
    use super::quoted_table_name;

    #[test]
    fn plain_and_schema_qualified_names_are_quoted() {
        assert_eq!(
            quoted_table_name("idgen_worker_lease", '"').unwrap(),
            "\"idgen_worker_lease\""
        );
        assert_eq!(
            quoted_table_name("ops.Leases_2", '`').unwrap(),
            "`ops`.`Leases_2`"
        );
    }

    #[test]
    fn anything_that_could_escape_the_identifier_is_refused() {
        for (name, needle) in [
            ("", "empty part"),
            ("a.b.c", "3 dot-separated parts"),
            ("1abc", "start each part"),
            ("lease; DROP TABLE users", "not ';'"),
            ("lease\"", "not '\"'"),
            ("lease`", "not '`'"),
        ] {
            let err = quoted_table_name(name, '"').unwrap_err().to_string();
            assert!(err.contains(needle), "{name:?}: {err}");
            assert!(err.contains(&format!("{name:?}")), "{err}");
        }
        let err = quoted_table_name(&"a".repeat(64), '"')
            .unwrap_err()
            .to_string();
        assert!(err.contains("64 characters; the limit is 63"), "{err}");
    }
}
