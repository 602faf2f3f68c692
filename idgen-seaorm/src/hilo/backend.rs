//! The counter's own one-connection sqlx pool, and the statements of each database (those of
//! idgen-sqlx's hi-lo sources).
// Without a database feature no `Dedicated` can exist, and its methods are unreachable.
#![cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(unreachable_code, unused_variables, dead_code)
)]

#[cfg(feature = "mysql")]
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sea_orm::sqlx::pool::PoolOptions;
use sea_orm::sqlx::{self, AssertSqlSafe, Database, Pool};
use sea_orm::{DatabaseConnection, DbBackend};

use crate::Error;
use crate::hilo::Increment;

/// Which counter a name means on this database (each variant is made only with its database's
/// feature, or by the migrations).
#[cfg_attr(
    not(all(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(dead_code)
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    PgSequence,
    MariaDbSequence,
    MySqlTable,
    SqliteTable,
}

/// A one-connection pool on the caller's database, for the counter alone.
#[derive(Clone)]
pub(crate) enum Dedicated {
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
    #[cfg(feature = "mysql")]
    MySql(sqlx::MySqlPool, Arc<OnceLock<Kind>>),
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    /// Never made: keeps the enum inhabited-looking when no database feature is on.
    #[allow(dead_code)]
    Unavailable(std::convert::Infallible),
}

/// A lazily connected one-connection pool with `pool`'s connect options.
#[cfg_attr(
    not(any(feature = "postgres", feature = "mysql", feature = "sqlite")),
    allow(dead_code)
)]
fn dedicated<DB: Database>(pool: &Pool<DB>) -> Pool<DB> {
    PoolOptions::<DB>::new()
        .max_connections(1)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .test_before_acquire(false)
        .idle_timeout(Duration::from_secs(600))
        .connect_lazy_with((*pool.connect_options()).clone())
}

fn database_error(counter: &str, err: sqlx::Error) -> Error {
    Error::CounterDatabase {
        counter: counter.to_owned(),
        message: err.to_string(),
    }
}

/// "relation does not exist" (PostgreSQL 42P01), "table doesn't exist" (MySQL/MariaDB 42S02),
/// "no such table" (SQLite).
fn is_missing_relation(err: &sqlx::Error) -> bool {
    err.as_database_error().is_some_and(|db| {
        matches!(db.code().as_deref(), Some("42P01" | "42S02"))
            || db.message().contains("no such table")
    })
}

fn positive_step(counter: &str, step: i64) -> Result<u64, Error> {
    u64::try_from(step).ok().filter(|&s| s > 0).ok_or_else(|| {
        Error::Id(idgen_core::Error::HiLoInvalidOption {
            option: "database increment",
            value: format!("{step} (counter {counter})"),
            reason: "a hi-lo sequence must count upwards: INCREMENT BY the block size, >= 1",
        })
    })
}

/// MariaDB 10.3 and newer have sequences.
#[cfg_attr(not(any(feature = "mysql", feature = "migration")), allow(dead_code))]
pub(crate) fn mariadb_with_sequences(version: &str) -> bool {
    if !version.contains("MariaDB") {
        return false;
    }
    let version = version.strip_prefix("5.5.5-").unwrap_or(version);
    let mut numbers = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (10, 3)
}

impl Dedicated {
    /// The counter pool for `db`, or why `db` cannot have one.
    pub(crate) fn of(db: &DatabaseConnection) -> Result<Dedicated, Error> {
        #[allow(unused_imports)]
        use sea_orm::DatabaseConnectionType as Type;
        match &db.inner {
            #[cfg(feature = "postgres")]
            Type::SqlxPostgresPoolConnection(_) => Ok(Dedicated::Postgres(dedicated(
                db.get_postgres_connection_pool(),
            ))),
            #[cfg(feature = "mysql")]
            Type::SqlxMySqlPoolConnection(_) => Ok(Dedicated::MySql(
                dedicated(db.get_mysql_connection_pool()),
                Arc::new(OnceLock::new()),
            )),
            #[cfg(feature = "sqlite")]
            Type::SqlxSqlitePoolConnection(_) => Ok(Dedicated::Sqlite(dedicated(
                db.get_sqlite_connection_pool(),
            ))),
            #[allow(unreachable_patterns)]
            _ => Err(Error::UnsupportedConnection {
                backend: format!("{:?}", db.get_database_backend()),
            }),
        }
    }

    pub(crate) fn backend(&self) -> DbBackend {
        match *self {
            #[cfg(feature = "postgres")]
            Dedicated::Postgres(_) => DbBackend::Postgres,
            #[cfg(feature = "mysql")]
            Dedicated::MySql(..) => DbBackend::MySql,
            #[cfg(feature = "sqlite")]
            Dedicated::Sqlite(_) => DbBackend::Sqlite,
            Dedicated::Unavailable(never) => match never {},
        }
    }

    /// A sequence or a table, asking a MySQL/MariaDB server its version once.
    pub(crate) async fn kind(&self, counter: &str) -> Result<Kind, Error> {
        let _ = counter;
        match self {
            #[cfg(feature = "postgres")]
            Dedicated::Postgres(_) => Ok(Kind::PgSequence),
            #[cfg(feature = "mysql")]
            Dedicated::MySql(pool, kind) => {
                if let Some(kind) = kind.get() {
                    return Ok(*kind);
                }
                let version: String = sqlx::query_scalar("SELECT VERSION()")
                    .fetch_one(pool)
                    .await
                    .map_err(|e| database_error(counter, e))?;
                let found = if mariadb_with_sequences(&version) {
                    Kind::MariaDbSequence
                } else {
                    Kind::MySqlTable
                };
                Ok(*kind.get_or_init(|| found))
            }
            #[cfg(feature = "sqlite")]
            Dedicated::Sqlite(_) => Ok(Kind::SqliteTable),
            Dedicated::Unavailable(never) => match *never {},
        }
    }

    /// Runs one DDL statement.
    pub(crate) async fn execute(&self, counter: &str, sql: &str) -> Result<(), Error> {
        let sql = AssertSqlSafe(sql.to_owned());
        let done: Result<(), sqlx::Error> = match self {
            #[cfg(feature = "postgres")]
            Dedicated::Postgres(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
            #[cfg(feature = "mysql")]
            Dedicated::MySql(pool, _) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
            #[cfg(feature = "sqlite")]
            Dedicated::Sqlite(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
            Dedicated::Unavailable(never) => match *never {},
        };
        done.map_err(|e| database_error(counter, e))
    }

    /// One autocommit statement: the start of a new block of `size`.
    pub(crate) async fn allocate(
        &self,
        counter: &str,
        table: &str,
        size: u64,
    ) -> Result<i64, Error> {
        let step = i64::try_from(size).map_err(|_| {
            Error::Id(idgen_core::Error::HiLoInvalidOption {
                option: "block",
                value: size.to_string(),
                reason: "a block must fit in an i64",
            })
        })?;
        let missing_row = || Error::CounterMissing {
            counter: counter.to_owned(),
            missing: format!("no row '{counter}' in table {table}"),
        };
        let _ = (step, &missing_row);
        match self {
            #[cfg(feature = "postgres")]
            Dedicated::Postgres(pool) => {
                let sql = format!("SELECT nextval('{counter}')");
                sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
                    .fetch_one(pool)
                    .await
                    .map_err(|e| database_error(counter, e))
            }
            #[cfg(feature = "mysql")]
            Dedicated::MySql(pool, _) => match self.kind(counter).await? {
                Kind::MariaDbSequence => {
                    let sql = format!("SELECT NEXTVAL({counter})");
                    sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
                        .fetch_one(pool)
                        .await
                        .map_err(|e| database_error(counter, e))
                }
                _ => {
                    let sql = format!(
                        "UPDATE {table} SET next_val = LAST_INSERT_ID(next_val + ?) WHERE name = ?"
                    );
                    let done = sqlx::query(AssertSqlSafe(sql))
                        .bind(step)
                        .bind(counter)
                        .execute(pool)
                        .await
                        .map_err(|e| database_error(counter, e))?;
                    if done.rows_affected() != 1 {
                        return Err(missing_row());
                    }
                    // LAST_INSERT_ID(expr) comes back in this statement's own OK packet: the
                    // counter after the update, so the block starts `step` below it.
                    let after = i64::try_from(done.last_insert_id()).map_err(|_| {
                        Error::CounterDatabase {
                            counter: counter.to_owned(),
                            message: format!(
                                "counter value {} above i64::MAX",
                                done.last_insert_id()
                            ),
                        }
                    })?;
                    Ok(after - step)
                }
            },
            #[cfg(feature = "sqlite")]
            Dedicated::Sqlite(pool) => {
                let sql = format!(
                    "UPDATE {table} SET next_val = next_val + ?1 WHERE name = ?2 RETURNING next_val - ?1"
                );
                sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
                    .bind(step)
                    .bind(counter)
                    .fetch_optional(pool)
                    .await
                    .map_err(|e| database_error(counter, e))?
                    .ok_or_else(missing_row)
            }
            Dedicated::Unavailable(never) => match *never {},
        }
    }

    /// The counter's increment as the database is configured.
    pub(crate) async fn increment(&self, counter: &str, table: &str) -> Result<Increment, Error> {
        let missing = |what: String| Error::CounterMissing {
            counter: counter.to_owned(),
            missing: what,
        };
        let no_sequence = || missing(format!("no sequence named {counter}"));
        let no_row = || missing(format!("no row '{counter}' in table {table}"));
        let _ = (&no_sequence, &no_row);
        match self {
            #[cfg(feature = "postgres")]
            Dedicated::Postgres(pool) => {
                let sql = format!(
                    "SELECT seqincrement FROM pg_catalog.pg_sequence WHERE seqrelid = '{counter}'::regclass"
                );
                match sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
                    .fetch_optional(pool)
                    .await
                {
                    Ok(Some(step)) => Ok(Increment::Fixed(positive_step(counter, step)?)),
                    Ok(None) => Err(no_sequence()),
                    Err(e) if is_missing_relation(&e) => Err(no_sequence()),
                    Err(e) => Err(database_error(counter, e)),
                }
            }
            #[cfg(feature = "mysql")]
            Dedicated::MySql(pool, _) => {
                let kind = self.kind(counter).await?;
                let found = if kind == Kind::MariaDbSequence {
                    sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
                        "SELECT increment FROM {counter}"
                    )))
                    .fetch_optional(pool)
                    .await
                } else {
                    sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
                        "SELECT next_val FROM {table} WHERE name = ?"
                    )))
                    .bind(counter)
                    .fetch_optional(pool)
                    .await
                };
                let absent = || {
                    if kind == Kind::MariaDbSequence {
                        no_sequence()
                    } else {
                        no_row()
                    }
                };
                match found {
                    Ok(Some(step)) if kind == Kind::MariaDbSequence => {
                        Ok(Increment::Fixed(positive_step(counter, step)?))
                    }
                    Ok(Some(_)) => Ok(Increment::PerCall),
                    Ok(None) => Err(absent()),
                    Err(e) if is_missing_relation(&e) => Err(absent()),
                    Err(e) => Err(database_error(counter, e)),
                }
            }
            #[cfg(feature = "sqlite")]
            Dedicated::Sqlite(pool) => {
                match sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
                    "SELECT next_val FROM {table} WHERE name = ?"
                )))
                .bind(counter)
                .fetch_optional(pool)
                .await
                {
                    Ok(Some(_)) => Ok(Increment::PerCall),
                    Ok(None) => Err(no_row()),
                    Err(e) if is_missing_relation(&e) => Err(no_row()),
                    Err(e) => Err(database_error(counter, e)),
                }
            }
            Dedicated::Unavailable(never) => match *never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mariadb_with_sequences;

    #[test]
    fn mariadb_10_3_and_newer_use_sequences() {
        assert!(mariadb_with_sequences("10.11.19-MariaDB-0+deb12u1"));
        assert!(mariadb_with_sequences("5.5.5-10.3.39-MariaDB"));
        assert!(!mariadb_with_sequences("10.2.44-MariaDB"));
        assert!(!mariadb_with_sequences("8.0.36"));
    }
}
