//! A counter's SQL ([`CounterSql`], from idgen-sql) on its own one-connection pool: what every
//! source of this module runs.

use idgen_sql::CounterSql;
use sqlx::Pool;

use crate::hilo::{BoxError, Increment};
use crate::session::SqlxDatabase;
use idgen_engine::{Error, ErrorKind};

/// The counter `sql` (or why its name was refused) on the pool `allocator`.
pub(crate) struct Counter<DB: SqlxDatabase> {
    pub(crate) allocator: Pool<DB>,
    pub(crate) sql: Result<CounterSql, Error>,
}

impl<DB: SqlxDatabase> Counter<DB> {
    fn sql(&self) -> Result<&CounterSql, Error> {
        self.sql.as_ref().map_err(Clone::clone)
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a migration file.
    pub(crate) fn migration_sql(&self, block: u64) -> Result<String, Error> {
        Ok(self.sql()?.migration_sql(block))
    }

    pub(crate) async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        let sql = self.sql()?;
        let mut session = DB::session(&self.allocator).await?;
        sql.allocate_on(&mut session, size).await
    }

    pub(crate) async fn allocate_blocks(
        &self,
        size: u64,
        count: u64,
    ) -> Result<Vec<i64>, BoxError> {
        let sql = self.sql()?;
        let mut session = DB::session(&self.allocator).await?;
        sql.allocate_blocks_on(&mut session, size, count).await
    }

    pub(crate) async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        let sql = self.sql()?;
        let mut session = DB::session(&self.allocator).await?;
        sql.raise_on(&mut session, floor).await?;
        Ok(true)
    }

    pub(crate) async fn increment(&self) -> Result<Increment, BoxError> {
        let sql = self.sql()?;
        let mut session = DB::session(&self.allocator).await?;
        let step = sql.increment_on(&mut session).await?;
        Ok(step.map_or(Increment::PerCall, Increment::Fixed))
    }

    /// Creates the counter if it is missing; errors are [`ErrorKind::HiLoSource`] naming it.
    pub(crate) async fn create(&self, block: u64) -> Result<(), Error> {
        let sql = self.sql()?;
        let created = async {
            let mut session = DB::session(&self.allocator).await?;
            sql.create_on(&mut session, block).await
        };
        created.await.map_err(|source| {
            ErrorKind::HiLoSource {
                counter: sql.name().to_owned(),
                source: source.into(),
            }
            .into()
        })
    }
}

impl<DB: SqlxDatabase> Clone for Counter<DB> {
    fn clone(&self) -> Self {
        Counter {
            allocator: self.allocator.clone(),
            sql: self.sql.clone(),
        }
    }
}

impl<DB: SqlxDatabase> std::fmt::Debug for Counter<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counter")
            .field("database", &DB::DIALECT)
            .field("sql", &self.sql)
            .finish()
    }
}

/// `HiLoSource` for a source wrapping a [`Counter`] (fields `counter` and `name`, methods
/// `create` and `unchecked`), and `IntoHiLoSource` for its pool (by reference through idgen-engine's `Borrowed`).
/// (PostgreSQL's and SQLite's sources; MySQL's picks its mode at start-up and has its own.)
#[cfg(any(feature = "postgres", feature = "sqlite"))]
macro_rules! counter_source {
    ($(#[$doc:meta])* $source:ident for $pool:ty) => {
        impl $crate::hilo::HiLoSource for $source {
            async fn allocate(&self, size: u64) -> Result<i64, $crate::hilo::BoxError> {
                self.counter.allocate(size).await
            }

            /// Several blocks in one statement on PostgreSQL (`nextval` over
            /// `generate_series`); one block elsewhere.
            async fn allocate_blocks(
                &self,
                size: u64,
                count: u64,
            ) -> Result<Vec<i64>, $crate::hilo::BoxError> {
                self.counter.allocate_blocks(size, count).await
            }

            /// One forward-only statement ([`CounterSql::raise_on`](idgen_sql::CounterSql::raise_on)).
            async fn raise_above(&self, floor: i64) -> Result<bool, $crate::hilo::BoxError> {
                self.counter.raise_above(floor).await
            }

            async fn increment(&self) -> Result<$crate::hilo::Increment, $crate::hilo::BoxError> {
                self.counter.increment().await
            }

            /// [`create`](Self::create).
            async fn create_if_missing(&self, block: u64) -> Result<(), $crate::hilo::BoxError> {
                Ok(self.create(block).await?)
            }

            /// `true`: the counter lives in the database with the rows its IDs key.
            fn create_if_missing_by_default(&self) -> bool {
                true
            }

            /// [`migration_sql`](Self::migration_sql).
            fn migration_sql(&self, block: u64) -> Option<String> {
                Self::migration_sql(self, block).ok()
            }

            fn name(&self) -> &str {
                &self.name
            }
        }

        $(#[$doc])*
        impl $crate::hilo::IntoHiLoSource<$crate::session::SqlxMarker> for $pool {
            type Source = $source;

            fn into_hilo_source(self, counter: &str) -> $source {
                $source::unchecked(&self, counter)
            }
        }
    };
}

#[cfg(any(feature = "postgres", feature = "sqlite"))]
pub(crate) use counter_source;
