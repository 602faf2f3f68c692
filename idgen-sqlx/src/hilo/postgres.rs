//! PostgreSQL: a `SEQUENCE` with `INCREMENT BY block`, one `nextval` per block.

use idgen_sql::{CounterSql, Dialect};
use sqlx::PgPool;

use super::counter::Counter;
use super::pool;
use idgen_engine::Error;

/// A PostgreSQL sequence as a hi-lo counter: `SELECT nextval('name')` returns the first ID of
/// a block of `INCREMENT BY` IDs; the increment is read from the catalog (`pg_sequence`, the
/// table behind the `pg_sequences` view) at start-up.
///
/// Allocations run on a connection of their own (a one-connection pool with the same connect
/// options as `pool`), in autocommit; see [the module docs](crate::hilo).
///
/// ```no_run
/// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::hilo::{HiLo, PgSequence};
///
/// let orders = PgSequence::new(&pool, "orders_id_seq")?;
/// orders.create(1000).await?; // CREATE SEQUENCE IF NOT EXISTS … INCREMENT BY 1000
/// let ids = HiLo::new(orders, 1000).await?;
/// let id: i64 = ids.next_id().await?;
/// # let _ = id; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PgSequence {
    counter: Counter<sqlx::Postgres>,
    name: String,
}

impl PgSequence {
    /// The sequence `name` (`name` or `schema.name`, resolved with the connection's
    /// `search_path`; unquoted, so PostgreSQL folds it to lower case) over `pool`'s database.
    /// Fails with [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) when `name` is not a plain identifier.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use idgen_sqlx::hilo::PgSequence;
    ///
    /// let pool = sqlx::PgPool::connect_lazy("postgres://localhost/app").unwrap();
    /// assert!(PgSequence::new(&pool, "orders_id_seq").is_ok());
    /// assert!(PgSequence::new(&pool, "orders'); DROP TABLE orders; --").is_err());
    /// # }
    /// ```
    pub fn new(pool: &PgPool, name: &str) -> Result<PgSequence, Error> {
        CounterSql::sequence(Dialect::Postgres, name)?;
        Ok(PgSequence::unchecked(pool, name))
    }

    /// Validation is deferred to `increment()` (start-up), where an error can be returned.
    fn unchecked(pool: &PgPool, name: &str) -> PgSequence {
        PgSequence {
            counter: Counter {
                allocator: pool::dedicated(pool),
                sql: CounterSql::sequence(Dialect::Postgres, name),
            },
            name: name.to_owned(),
        }
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a migration file.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # use idgen_sqlx::hilo::PgSequence;
    /// # let pool = sqlx::PgPool::connect_lazy("postgres://localhost/app").unwrap();
    /// let sql = PgSequence::new(&pool, "orders_id_seq").unwrap().migration_sql(1000).unwrap();
    /// assert_eq!(
    ///     sql,
    ///     "CREATE SEQUENCE IF NOT EXISTS orders_id_seq AS BIGINT INCREMENT BY 1000 MINVALUE 1 START WITH 1 CACHE 1 NO CYCLE"
    /// );
    /// # }
    /// ```
    pub fn migration_sql(&self, block: u64) -> Result<String, Error> {
        self.counter.migration_sql(block)
    }

    /// Creates the sequence with `INCREMENT BY block` if it does not exist (an existing one is
    /// left as it is; start-up then checks its increment).
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
    /// # use idgen_sqlx::hilo::PgSequence;
    /// PgSequence::new(&pool, "orders_id_seq")?.create(1000).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, block: u64) -> Result<(), Error> {
        self.counter.create(block).await
    }
}

super::counter::counter_source!(
    #[doc = "`HiLo::new(pg_pool, block)`: the sequence named by `HiLoBuilder::counter` (default `hilo`)."]
    PgSequence for PgPool
);
