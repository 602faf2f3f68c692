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

use crate::Error;
#[cfg(feature = "hilo")]
use crate::hilo::{Kind, counter_statements, mariadb_with_sequences};
use crate::lease::{DEFAULT_TABLE, quoted_table_name, sql};

/// Creates the node-ID lease table (`idgen_worker_lease`, or another name) with the statement
/// idgen-sqlx and [`SeaOrmLeaseStore`](crate::lease::SeaOrmLeaseStore) use; `down` drops it.
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
/// let lease = idgen_seaorm::lease::WorkerLease::acquire(&db, &idgen_seaorm::Layout::TWITTER).await?;
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
        quoted_table_name(table, '"')?;
        Ok(LeaseTableMigration {
            table: table.to_owned(),
            name: format!("m20260101_000001_{table}"),
        })
    }

    fn quoted(&self, manager: &SchemaManager) -> Result<String, DbErr> {
        let quote = match manager.get_database_backend() {
            sea_orm::DbBackend::MySql => '`',
            _ => '"',
        };
        quoted_table_name(&self.table, quote).map_err(|e| DbErr::Migration(e.to_string()))
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
        let sql = sql::migration_sql(manager.get_database_backend(), &self.quoted(manager)?);
        manager
            .get_connection()
            .execute_unprepared(&sql)
            .await
            .map(drop)
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let sql = format!("DROP TABLE IF EXISTS {}", self.quoted(manager)?);
        manager
            .get_connection()
            .execute_unprepared(&sql)
            .await
            .map(drop)
    }
}

/// Creates a hi-lo counter (feature `hilo`): the sequence (PostgreSQL, MariaDB ≥ 10.3) or the
/// counter table `idgen_hilo` and the counter's row (MySQL, older MariaDB, SQLite), with the
/// statements `SeaOrmCounter::create` and idgen-sqlx use; idempotent. `down` drops the sequence
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
        crate::hilo::validate(counter)?;
        Ok(HiLoCounterMigration {
            counter: counter.to_owned(),
            block,
            name: format!("m20260101_000002_hilo_{counter}"),
        })
    }

    async fn kind(manager: &SchemaManager<'_>) -> Result<Kind, DbErr> {
        Ok(match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => Kind::PgSequence,
            sea_orm::DbBackend::MySql => {
                let row = manager
                    .get_connection()
                    .query_one_raw(sea_orm::Statement::from_string(
                        sea_orm::DbBackend::MySql,
                        "SELECT VERSION()",
                    ))
                    .await?
                    .ok_or_else(|| DbErr::Migration("SELECT VERSION() returned no row".into()))?;
                let version: String = row.try_get_by_index(0)?;
                if mariadb_with_sequences(&version) {
                    Kind::MariaDbSequence
                } else {
                    Kind::MySqlTable
                }
            }
            _ => Kind::SqliteTable,
        })
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
        let kind = Self::kind(manager).await?;
        let table = crate::hilo::DEFAULT_TABLE;
        for sql in counter_statements(kind, &self.counter, table, self.block) {
            manager.get_connection().execute_unprepared(&sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let counter = &self.counter;
        let table = crate::hilo::DEFAULT_TABLE;
        let sql = match Self::kind(manager).await? {
            Kind::PgSequence | Kind::MariaDbSequence => {
                format!("DROP SEQUENCE IF EXISTS {counter}")
            }
            Kind::MySqlTable | Kind::SqliteTable => {
                format!("DELETE FROM {table} WHERE name = '{counter}'")
            }
        };
        manager
            .get_connection()
            .execute_unprepared(&sql)
            .await
            .map(drop)
    }
}
