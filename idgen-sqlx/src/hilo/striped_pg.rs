//! [`PgStripe`]: a PostgreSQL sequence as one counter of a [`StripedHiLo`](crate::hilo::StripedHiLo).

use sqlx::{AssertSqlSafe, PgPool};

use crate::hilo::{
    BoxError, CounterStart, HiLoSource, Increment, MissingCounter, PgSequence, pool, validate_name,
};
use crate::session::SqlxDatabase;
use idgen_engine::{Error, ErrorKind};

/// A PostgreSQL sequence that is counter `index` of `count` in a
/// [`StripedHiLo`](crate::hilo::StripedHiLo): [`PgSequence`] plus its `START WITH`, read from
/// the catalog at start-up so that overlapping settings are refused.
///
/// ```no_run
/// # async fn demo(server_a: sqlx::PgPool, server_b: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
/// use idgen_sqlx::hilo::{PgStripe, StripedHiLo};
///
/// // Two servers; blocks of 1000: server A hands out 1..=1000, 2001..=3000, …, B the others.
/// let a = PgStripe::new(&server_a, "ticket_seq")?;
/// let b = PgStripe::new(&server_b, "ticket_seq")?;
/// a.create(1000, 2, 0).await?; // INCREMENT BY 2000 START WITH 1
/// b.create(1000, 2, 1).await?; // INCREMENT BY 2000 START WITH 1001
/// let ids = StripedHiLo::new(vec![a, b], 1000).await?;
/// let id = ids.next_id().await?; // from whichever server answers
/// # let _ = id; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PgStripe {
    sequence: PgSequence,
    catalog: PgPool,
    name: String,
}

impl PgStripe {
    /// The sequence `name` on `pool`'s database (the rules of [`PgSequence::new`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = sqlx::PgPool::connect_lazy("postgres://localhost/app").unwrap();
    /// assert!(idgen_sqlx::hilo::PgStripe::new(&pool, "ticket_seq").is_ok());
    /// assert!(idgen_sqlx::hilo::PgStripe::new(&pool, "x; --").is_err());
    /// # }
    /// ```
    pub fn new(pool: &PgPool, name: &str) -> Result<PgStripe, Error> {
        Ok(PgStripe {
            sequence: PgSequence::new(pool, name)?,
            catalog: pool::dedicated(pool),
            name: name.to_owned(),
        })
    }

    /// `CREATE SEQUENCE IF NOT EXISTS` for counter `index` of `count` with blocks of `block`:
    /// `INCREMENT BY count × block START WITH 1 + index × block`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::HiLoInvalidOption`] when `index` is not below `count` or the numbers
    /// do not fit an `i64`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_sqlx::Error> {
    /// let pool = sqlx::PgPool::connect_lazy("postgres://localhost/app").unwrap();
    /// let b = idgen_sqlx::hilo::PgStripe::new(&pool, "ticket_seq")?;
    /// assert_eq!(
    ///     b.migration_sql(1000, 2, 1)?,
    ///     "CREATE SEQUENCE IF NOT EXISTS ticket_seq AS BIGINT INCREMENT BY 2000 MINVALUE 1 START WITH 1001 CACHE 1 NO CYCLE"
    /// );
    /// assert!(b.migration_sql(1000, 2, 2).is_err());
    /// # Ok(()) }
    /// ```
    pub fn migration_sql(&self, block: u64, count: u64, index: u64) -> Result<String, Error> {
        let invalid = |reason| -> Error {
            ErrorKind::HiLoInvalidOption {
                option: "stripe index",
                value: format!("{index} of {count} with blocks of {block}"),
                reason,
            }
            .into()
        };
        if index >= count {
            return Err(invalid("the index is below the number of counters"));
        }
        let step = count
            .checked_mul(block)
            .filter(|s| i64::try_from(*s).is_ok())
            .ok_or_else(|| invalid("count × block fits an i64"))?;
        let start = index
            .checked_mul(block)
            .and_then(|s| s.checked_add(1))
            .filter(|s| i64::try_from(*s).is_ok())
            .ok_or_else(|| invalid("1 + index × block fits an i64"))?;
        Ok(format!(
            "CREATE SEQUENCE IF NOT EXISTS {} AS BIGINT INCREMENT BY {step} MINVALUE 1 START WITH {start} CACHE 1 NO CYCLE",
            self.name
        ))
    }

    /// Creates the sequence of [`migration_sql`](PgStripe::migration_sql) if it does not
    /// exist (an existing one is left as it is; start-up then checks it).
    ///
    /// ```no_run
    /// # async fn demo(pool: sqlx::PgPool) -> Result<(), idgen_sqlx::Error> {
    /// idgen_sqlx::hilo::PgStripe::new(&pool, "ticket_seq")?.create(1000, 2, 0).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, block: u64, count: u64, index: u64) -> Result<(), Error> {
        let sql = self.migration_sql(block, count, index)?;
        let ddl = format!("{};\n{sql}", idgen_sql::PG_DDL_LOCK);
        let created = async {
            let mut session = sqlx::Postgres::session(&self.catalog).await?;
            idgen_sql::create_if_missing(&mut session, &ddl).await
        };
        created.await.map_err(|e: sqlx::Error| {
            ErrorKind::HiLoSource {
                counter: self.name.clone(),
                source: std::sync::Arc::new(e),
            }
            .into()
        })
    }
}

impl HiLoSource for PgStripe {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.sequence.allocate(size).await
    }

    async fn allocate_blocks(&self, size: u64, count: u64) -> Result<Vec<i64>, BoxError> {
        self.sequence.allocate_blocks(size, count).await
    }

    async fn raise_above(&self, floor: i64) -> Result<bool, BoxError> {
        self.sequence.raise_above(floor).await
    }

    async fn increment(&self) -> Result<Result<Increment, MissingCounter>, BoxError> {
        self.sequence.increment().await
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl CounterStart for PgStripe {
    /// `host:port/database` of the pool's server (the same sequence name is typical on every
    /// server of a striped hi-lo).
    fn location(&self) -> Option<String> {
        let options = self.catalog.connect_options();
        let database = options.get_database().unwrap_or("(default database)");
        Some(format!(
            "{}:{}/{database}",
            options.get_host(),
            options.get_port()
        ))
    }

    async fn start(&self) -> Result<i64, BoxError> {
        validate_name(&self.name)?;
        let sql = format!(
            "SELECT seqstart FROM pg_catalog.pg_sequence WHERE seqrelid = '{}'::regclass",
            self.name
        );
        Ok(sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql))
            .fetch_one(&self.catalog)
            .await?)
    }
}
