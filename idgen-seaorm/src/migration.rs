//! sea-orm-migration `Migration`s for idgen's tables (feature `migration`).
//!
//! Add them to your `Migrator` before the migrations of the tables that use the IDs:
//!
//! ```
//! use idgen_seaorm::migration::LeaseTableMigration;
//! use sea_orm_migration::{MigrationTrait, MigratorTrait};
//!
//! pub struct Migrator;
//!
//! impl MigratorTrait for Migrator {
//!     fn migrations() -> Vec<Box<dyn MigrationTrait>> {
//!         vec![
//!             Box::new(LeaseTableMigration::new()),
//!             // Box::new(m20260101_000001_create_orders::Migration), …
//!         ]
//!     }
//! }
//! assert_eq!(Migrator::migrations().len(), 1);
//! ```

use sea_orm::{ConnectionTrait, DbErr};
use sea_orm_migration::{MigrationName, MigrationTrait, SchemaManager};

use idgen_sql::{CounterSql, Dialect, LeaseSql, SqlName};

use crate::error::Error;
use crate::lease::DEFAULT_TABLE;

/// Creates the node-ID lease table (`idgen_worker_lease`, or another name) with idgen-sqlx's
/// statement (the one [`SeaOrmLeaseStore`](crate::lease::SeaOrmLeaseStore) runs), on the
/// migration's own connection; `down` drops it.
/// Idempotent (`CREATE TABLE IF NOT EXISTS`), so it can be added to a database whose table was
/// created by `create_lease_table`.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::migration::LeaseTableMigration;
/// use sea_orm_migration::{MigrationName, MigrationTrait, MigratorTrait};
///
/// struct Migrator;
/// impl MigratorTrait for Migrator {
///     fn migrations() -> Vec<Box<dyn MigrationTrait>> {
///         vec![Box::new(LeaseTableMigration::new())]
///     }
/// }
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// Migrator::up(&db, None).await?;
/// let lease = idgen_seaorm::lease::WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&db, &idgen_seaorm::Layout::TWITTER).await?;
/// assert_eq!(lease.node(), 0);
/// assert_eq!(LeaseTableMigration::new().name(), "m20260101_000001_idgen_worker_lease");
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Debug)]
pub struct LeaseTableMigration {
    table: String,
    name: String,
}

impl LeaseTableMigration {
    /// The migration of the default table, `idgen_worker_lease`.
    ///
    /// ```
    /// use sea_orm_migration::MigrationName;
    /// let m = idgen_seaorm::migration::LeaseTableMigration::new();
    /// assert_eq!(m.name(), "m20260101_000001_idgen_worker_lease");
    /// ```
    pub fn new() -> Self {
        LeaseTableMigration {
            table: DEFAULT_TABLE.to_owned(),
            name: format!("m20260101_000001_{DEFAULT_TABLE}"),
        }
    }

    /// The migration of the lease table `table` (`name` or `schema.name`); its migration name
    /// is `m20260101_000001_<table>`. A name that could not be written into SQL is refused.
    ///
    /// ```
    /// use idgen_seaorm::migration::LeaseTableMigration;
    /// use sea_orm_migration::MigrationName;
    ///
    /// let m = LeaseTableMigration::with_table("ops.leases")?;
    /// assert_eq!(m.name(), "m20260101_000001_ops.leases");
    /// assert!(LeaseTableMigration::with_table("leases; --").is_err());
    /// # Ok::<(), idgen_seaorm::Error>(())
    /// ```
    pub fn with_table(table: &str) -> Result<Self, Error> {
        SqlName::parse("lease table", table)?;
        Ok(LeaseTableMigration {
            table: table.to_owned(),
            name: format!("m20260101_000001_{table}"),
        })
    }

    /// The quoted table name and idgen-sql's `CREATE TABLE` statement for the migration's
    /// database.
    fn statements(&self, manager: &SchemaManager) -> Result<(String, String), DbErr> {
        let sql = LeaseSql::new(dialect(manager)?, &self.table)
            .map_err(|e| DbErr::Migration(e.to_string()))?;
        Ok((sql.table().to_owned(), sql.create_table()))
    }
}

/// The SQL dialect of the migration's database.
fn dialect(manager: &SchemaManager<'_>) -> Result<Dialect, DbErr> {
    match manager.get_database_backend() {
        sea_orm::DbBackend::Postgres => Ok(Dialect::Postgres),
        sea_orm::DbBackend::MySql => Ok(Dialect::MySql),
        sea_orm::DbBackend::Sqlite => Ok(Dialect::Sqlite),
        #[allow(unreachable_patterns)]
        other => Err(DbErr::Migration(format!(
            "idgen's migrations know PostgreSQL, MySQL/MariaDB and SQLite, not {other:?}"
        ))),
    }
}

impl Default for LeaseTableMigration {
    fn default() -> Self {
        Self::new()
    }
}

impl MigrationName for LeaseTableMigration {
    fn name(&self) -> &str {
        &self.name
    }
}

#[sea_orm_migration::async_trait::async_trait]
impl MigrationTrait for LeaseTableMigration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (_, sql) = self.statements(manager)?;
        create_if_missing(manager, &sql).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (quoted, _) = self.statements(manager)?;
        let sql = format!("DROP TABLE IF EXISTS {quoted}");
        manager
            .get_connection()
            .execute_unprepared(&sql)
            .await
            .map(drop)
    }
}

/// Runs the idempotent `ddl` on the migration's connection, safely when other processes run it
/// at the same moment: on PostgreSQL after idgen's DDL advisory lock, in one simple-query message
/// (one transaction, or the migration's own), so concurrent `IF NOT EXISTS` statements wait for
/// each other instead of failing on a catalog index.
async fn create_if_missing(manager: &SchemaManager<'_>, ddl: &str) -> Result<(), DbErr> {
    let sql = match manager.get_database_backend() {
        #[cfg(feature = "postgres")]
        sea_orm::DbBackend::Postgres => format!("{};\n{ddl}", idgen_sql::PG_DDL_LOCK),
        _ => ddl.to_owned(),
    };
    manager
        .get_connection()
        .execute_unprepared(&sql)
        .await
        .map(drop)
}

/// Creates a hi-lo counter (feature `hilo`): the sequence (PostgreSQL, MariaDB ≥ 10.3) or the
/// counter table `idgen_hilo` and the counter's row (MySQL, older MariaDB, SQLite), with
/// idgen-sqlx's statements (those `SeaOrmCounter::create` runs), on the migration's own
/// connection; idempotent. `down` drops the sequence
/// or deletes the row. Migration name: `m20260101_000002_hilo_<counter>`.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_seaorm::migration::HiLoCounterMigration;
/// use sea_orm_migration::{MigrationName, MigrationTrait, MigratorTrait};
///
/// struct Migrator;
/// impl MigratorTrait for Migrator {
///     fn migrations() -> Vec<Box<dyn MigrationTrait>> {
///         vec![Box::new(HiLoCounterMigration::new("orders", 1000).unwrap())]
///     }
/// }
///
/// let db = sea_orm::Database::connect("sqlite::memory:").await?;
/// Migrator::up(&db, None).await?;
/// let ids = idgen_seaorm::hilo::HiLo::builder(&db).counter("orders").block(1000).build().await?;
/// assert_eq!(ids.next_id().await?, 1);
/// assert!(HiLoCounterMigration::new("orders; --", 1000).is_err());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[cfg(feature = "hilo")]
#[derive(Clone, Debug)]
pub struct HiLoCounterMigration {
    counter: String,
    block: u64,
    name: String,
}

#[cfg(feature = "hilo")]
impl HiLoCounterMigration {
    /// The migration of counter `counter` with increment (block size) `block`.
    ///
    /// ```
    /// use sea_orm_migration::MigrationName;
    /// let m = idgen_seaorm::migration::HiLoCounterMigration::new("hilo", 1000)?;
    /// assert_eq!(m.name(), "m20260101_000002_hilo_hilo");
    /// # Ok::<(), idgen_seaorm::Error>(())
    /// ```
    pub fn new(counter: &str, block: u64) -> Result<Self, Error> {
        SqlName::parse("hi-lo counter", counter)?;
        Ok(HiLoCounterMigration {
            counter: counter.to_owned(),
            block,
            name: format!("m20260101_000002_hilo_{counter}"),
        })
    }

    /// Whether the counter is a sequence on the migration's database (PostgreSQL, MariaDB ≥
    /// 10.3) or a row of the counter table.
    async fn is_sequence(manager: &SchemaManager<'_>) -> Result<bool, DbErr> {
        Ok(match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => true,
            sea_orm::DbBackend::MySql => {
                let query = idgen_sql::Server::version_query(idgen_sql::Dialect::MySql).sql;
                let row = manager
                    .get_connection()
                    .query_one_raw(sea_orm::Statement::from_string(
                        sea_orm::DbBackend::MySql,
                        query.as_str(),
                    ))
                    .await?
                    .ok_or_else(|| DbErr::Migration(format!("{query} returned no row")))?;
                let version: String = row.try_get_by_index(0)?;
                idgen_sql::Server::new(idgen_sql::Dialect::MySql, version).has_sequences()
            }
            _ => false,
        })
    }

    /// idgen-sql's statements creating the counter (those every adapter's `create` runs), one
    /// by one, run on the migration's own connection (in its transaction).
    async fn create_statements(&self, manager: &SchemaManager<'_>) -> Result<Vec<String>, DbErr> {
        let dialect = dialect(manager)?;
        let table = crate::hilo::DEFAULT_TABLE;
        let sql = if Self::is_sequence(manager).await? {
            CounterSql::sequence(dialect, &self.counter)
        } else {
            CounterSql::table(dialect, &self.counter, table)
        };
        let sql = sql.map_err(|e| DbErr::Migration(e.to_string()))?;
        Ok(sql.create(self.block))
    }
}

#[cfg(feature = "hilo")]
impl MigrationName for HiLoCounterMigration {
    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(feature = "hilo")]
#[sea_orm_migration::async_trait::async_trait]
impl MigrationTrait for HiLoCounterMigration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for sql in self.create_statements(manager).await? {
            create_if_missing(manager, &sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let counter = &self.counter;
        let table = crate::hilo::DEFAULT_TABLE;
        let sql = if Self::is_sequence(manager).await? {
            format!("DROP SEQUENCE IF EXISTS {counter}")
        } else {
            format!("DELETE FROM {table} WHERE name = '{counter}'")
        };
        manager
            .get_connection()
            .execute_unprepared(&sql)
            .await
            .map(drop)
    }
}
