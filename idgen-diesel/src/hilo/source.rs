//! [`DieselCounter`]: a hi-lo counter (sequence or counter table) over an r2d2 pool of diesel
//! connections, on a connection of its own.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use diesel::r2d2::{ConnectionManager, PooledConnection, R2D2Connection};

use crate::DieselError;
use crate::DieselPool;
use crate::hilo::name;
use crate::hilo::{BoxError, HiLoSource, Increment, IntoHiLoSource};

/// The counter table's default name (MySQL table mode, SQLite), as in idgen-sqlx.
pub const DEFAULT_TABLE: &str = "idgen_hilo";

/// The longest an allocation waits for its connection (the engine retries after that).
const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// What a counter is, for the SQL of each database (used by the sealed [`HiLoConnection`]).
#[doc(hidden)]
#[derive(Debug)]
pub struct Spec {
    pub(crate) name: String,
    pub(crate) table: String,
    /// MySQL/MariaDB: whether the counter is a sequence (MariaDB ≥ 10.3) or a table row,
    /// decided once from `SELECT VERSION()`.
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) sequence: OnceLock<bool>,
}

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    #[cfg(feature = "postgres")]
    impl Sealed for diesel::PgConnection {}
    #[cfg(feature = "mysql")]
    impl Sealed for diesel::MysqlConnection {}
    #[cfg(feature = "sqlite")]
    impl Sealed for diesel::SqliteConnection {}
}

/// A diesel connection that can hold a hi-lo counter: `PgConnection` (a `SEQUENCE`),
/// `MysqlConnection` (a MariaDB ≥ 10.3 `SEQUENCE`, else a row of `idgen_hilo`) and
/// `SqliteConnection` (a row of `idgen_hilo`). Sealed.
///
/// ```
/// fn takes_a_counter_connection<C: idgen_diesel::hilo::HiLoConnection>() {}
/// # #[cfg(feature = "sqlite")]
/// # takes_a_counter_connection::<diesel::SqliteConnection>();
/// ```
pub trait HiLoConnection: R2D2Connection + sealed::Sealed + 'static {
    /// Readies a connection the counter has just taken from the pool for its allocations.
    #[doc(hidden)]
    fn prepare(&mut self) -> Result<(), DieselError> {
        Ok(())
    }
    #[doc(hidden)]
    fn allocate(&mut self, spec: &Spec, size: u64) -> Result<i64, DieselError>;
    #[doc(hidden)]
    fn increment(&mut self, spec: &Spec) -> Result<Increment, DieselError>;
    #[doc(hidden)]
    fn migration_sql(&mut self, spec: &Spec, block: u64) -> Result<Vec<String>, DieselError>;
    /// Runs the idempotent `ddl`, safely when other processes run it at the same moment.
    #[doc(hidden)]
    fn create_if_missing(&mut self, ddl: &str) -> Result<(), DieselError> {
        Ok(self.batch_execute(ddl)?)
    }
}

/// A hi-lo counter over an r2d2 pool of diesel connections: the [`HiLoSource`] behind
/// `HiLo::new(&pool, 1000)`, with idgen-sqlx's SQL and semantics (pooled-lo; the increment
/// read from the catalog at start-up; one autocommit statement per block).
///
/// Allocations run on tokio's blocking threads, on a connection the counter takes from the
/// pool once and keeps (taken again after a failure): never a connection in a caller's
/// transaction, and never waiting behind the callers for a pool slot once it holds one. This
/// costs one connection of the pool per counter (clones share it).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::hilo::{DieselCounter, HiLo};
///
/// # let dir = tempfile::tempdir()?;
/// # let database_url = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
/// DieselCounter::new(&pool, "hilo")?.create(1000)?; // once, or a migration
///
/// let ids = HiLo::new(&pool, 1000).await?; // the counter "hilo"
/// assert_eq!(ids.next_id().await?, 1);
/// assert_eq!(ids.next_id().await?, 2);
///
/// let orders = HiLo::builder(&pool).counter("orders").block(1000).build().await;
/// assert!(orders.unwrap_err().to_string().contains("no row 'orders' in table idgen_hilo"));
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
pub struct DieselCounter<C: R2D2Connection + 'static> {
    pool: DieselPool<C>,
    spec: Arc<Spec>,
    /// The counter's own connection, taken from the pool on first use.
    conn: Arc<Mutex<Option<PooledConnection<ConnectionManager<C>>>>>,
}

impl<C: HiLoConnection> DieselCounter<C> {
    /// The counter `name` (a sequence on PostgreSQL and MariaDB ≥ 10.3, else the row `name` of
    /// the table `idgen_hilo`). Fails with [`Error::HiLoInvalidCounterName`](crate::Error::HiLoInvalidCounterName) when `name` is not
    /// a plain identifier (wrapped in [`DieselError::Core`]).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// assert!(DieselCounter::new(&pool, "orders_id_seq").is_ok());
    /// assert!(DieselCounter::new(&pool, "orders'); DROP TABLE orders; --").is_err());
    /// # }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn new(pool: &DieselPool<C>, name: &str) -> Result<Self, DieselError> {
        name::validate(name)?;
        Ok(Self::unchecked(pool, name))
    }

    /// The same counter kept in the table `table` instead of `idgen_hilo` (table counters only).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), idgen_diesel::DieselError> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// let counter = DieselCounter::new(&pool, "orders")?.with_table("counters")?;
    /// assert_eq!(counter.table(), "counters");
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn with_table(self, table: &str) -> Result<Self, DieselError> {
        name::validate(table)?;
        let spec = Spec {
            name: self.spec.name.clone(),
            table: table.to_owned(),
            sequence: OnceLock::new(),
        };
        Ok(DieselCounter {
            pool: self.pool,
            spec: Arc::new(spec),
            conn: Arc::new(Mutex::new(None)),
        })
    }

    fn unchecked(pool: &DieselPool<C>, name: &str) -> Self {
        DieselCounter {
            pool: pool.clone(),
            spec: Arc::new(Spec {
                name: name.to_owned(),
                table: DEFAULT_TABLE.to_owned(),
                sequence: OnceLock::new(),
            }),
            conn: Arc::new(Mutex::new(None)),
        }
    }

    /// The counter table's name (used by table counters).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), idgen_diesel::DieselError> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// let pool = Pool::builder().build_unchecked(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"));
    /// assert_eq!(idgen_diesel::hilo::DieselCounter::new(&pool, "orders")?.table(), "idgen_hilo");
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn table(&self) -> &str {
        &self.spec.table
    }

    /// The idempotent DDL that [`create`](Self::create) runs, for a diesel migration's `up.sql`
    /// (blocking: on MySQL/MariaDB it asks the server whether it has sequences).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(":memory:"))?;
    /// let sql = DieselCounter::new(&pool, "orders")?.migration_sql(1000)?;
    /// assert_eq!(sql[1], "INSERT OR IGNORE INTO idgen_hilo (name, next_val) VALUES ('orders', 1)");
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn migration_sql(&self, block: u64) -> Result<Vec<String>, DieselError> {
        self.with_connection(|conn, spec| conn.migration_sql(spec, block))
    }

    /// Creates the sequence (`INCREMENT BY block`) or the table and row if they do not exist
    /// (an existing sequence is left as it is; start-up then checks its increment). Blocking.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use diesel::r2d2::{ConnectionManager, Pool};
    /// use idgen_diesel::hilo::DieselCounter;
    /// # let dir = tempfile::tempdir()?;
    /// # let database_url = dir.path().join("app.db").display().to_string();
    /// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
    /// let orders = DieselCounter::new(&pool, "orders")?;
    /// orders.create(1000)?;
    /// orders.create(1000)?; // idempotent
    /// # Ok(()) }
    /// # #[cfg(not(feature = "sqlite"))]
    /// # fn main() {}
    /// ```
    pub fn create(&self, block: u64) -> Result<(), DieselError> {
        self.with_connection(|conn, spec| {
            for sql in conn.migration_sql(spec, block)? {
                conn.create_if_missing(&sql)?;
            }
            Ok(())
        })
    }

    /// Runs `op` on the counter's own connection (taken from the pool if it has none yet, and
    /// given back to the pool after a failure).
    fn with_connection<T>(
        &self,
        op: impl FnOnce(&mut C, &Spec) -> Result<T, DieselError>,
    ) -> Result<T, DieselError> {
        name::validate(&self.spec.name)?;
        let mut slot = self
            .conn
            .lock()
            .map_err(|_| DieselError::Task("a hi-lo allocation panicked".to_owned()))?;
        if slot.is_none() {
            let wait = self.pool.connection_timeout().min(CONNECTION_WAIT);
            let mut conn = self.pool.get_timeout(wait)?;
            conn.prepare()?;
            *slot = Some(conn);
        }
        let conn = slot.as_mut().map(|c| &mut **c);
        let Some(conn) = conn else {
            return Err(DieselError::Task("no connection".to_owned()));
        };
        let outcome = op(conn, &self.spec);
        if outcome.is_err() {
            *slot = None;
        }
        outcome
    }

    async fn blocking<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut C, &Spec) -> Result<T, DieselError> + Send + 'static,
    ) -> Result<T, BoxError> {
        let me = self.clone();
        tokio::task::spawn_blocking(move || me.with_connection(op))
            .await
            .unwrap_or_else(|e| Err(DieselError::Task(e.to_string())))
            .map_err(Into::into)
    }
}

impl<C: HiLoConnection> HiLoSource for DieselCounter<C> {
    async fn allocate(&self, size: u64) -> Result<i64, BoxError> {
        self.blocking(move |conn, spec| conn.allocate(spec, size))
            .await
    }

    async fn increment(&self) -> Result<Increment, BoxError> {
        self.blocking(|conn, spec| conn.increment(spec)).await
    }

    fn name(&self) -> &str {
        &self.spec.name
    }
}

/// Marks the [`IntoHiLoSource`] implementations for r2d2 pools, so that
/// `HiLo::new(&pool, 1000)` takes one (the counter named by `HiLoBuilder::counter`, default
/// `hilo`). Never named by callers.
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use idgen_diesel::hilo::{DieselCounter, HiLo};
/// # let dir = tempfile::tempdir()?;
/// # let database_url = dir.path().join("app.db").display().to_string();
/// let pool = Pool::new(ConnectionManager::<diesel::SqliteConnection>::new(database_url))?;
/// DieselCounter::new(&pool, "orders")?.create(100)?;
/// let by_reference = HiLo::builder(&pool).counter("orders").block(100).build().await?;
/// let by_value = HiLo::builder(pool.clone()).counter("orders").block(100).build().await?;
/// assert_ne!(by_reference.next_id().await?, by_value.next_id().await?);
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub struct R2d2Counter;

impl<C: HiLoConnection> IntoHiLoSource<R2d2Counter> for DieselPool<C> {
    type Source = DieselCounter<C>;
    /// The counter `counter` on this pool; a refused name fails at start-up, naming it.
    fn into_hilo_source(self, counter: &str) -> DieselCounter<C> {
        DieselCounter::unchecked(&self, counter)
    }
}

impl<C: HiLoConnection> IntoHiLoSource<R2d2Counter> for &DieselPool<C> {
    type Source = DieselCounter<C>;
    /// The counter `counter` on a clone of this pool; a refused name fails at start-up.
    fn into_hilo_source(self, counter: &str) -> DieselCounter<C> {
        DieselCounter::unchecked(self, counter)
    }
}

impl<C: R2D2Connection + 'static> Clone for DieselCounter<C> {
    fn clone(&self) -> Self {
        DieselCounter {
            pool: self.pool.clone(),
            spec: Arc::clone(&self.spec),
            conn: Arc::clone(&self.conn),
        }
    }
}

impl<C: R2D2Connection + 'static> std::fmt::Debug for DieselCounter<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselCounter")
            .field("connection", &std::any::type_name::<C>())
            .field("name", &self.spec.name)
            .field("table", &self.spec.table)
            .finish()
    }
}

/// A sequence's increment as a block size, or the refusal of a non-positive one.
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
pub(crate) fn positive_step(counter: &str, step: i64) -> Result<u64, DieselError> {
    u64::try_from(step).ok().filter(|&s| s > 0).ok_or_else(|| {
        DieselError::Core(idgen_core::Error::HiLoInvalidOption {
            option: "database increment",
            value: format!("{step} (counter {counter})"),
            reason: "a hi-lo sequence must count upwards: INCREMENT BY the block size, >= 1",
        })
    })
}

/// The error for a missing table row.
#[cfg_attr(not(any(feature = "sqlite", feature = "mysql")), allow(dead_code))]
pub(crate) fn missing_row(spec: &Spec) -> DieselError {
    DieselError::Core(idgen_core::Error::HiLoCounterMissing {
        counter: spec.name.clone(),
        missing: format!("no row '{}' in table {}", spec.name, spec.table),
    })
}

/// The error for a missing sequence.
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
pub(crate) fn missing_sequence(spec: &Spec) -> DieselError {
    DieselError::Core(idgen_core::Error::HiLoCounterMissing {
        counter: spec.name.clone(),
        missing: format!("no sequence named {}", spec.name),
    })
}

/// The database said the relation does not exist.
pub(crate) fn is_missing_relation(err: &diesel::result::Error) -> bool {
    let diesel::result::Error::DatabaseError(_, info) = err else {
        return false;
    };
    let message = info.message();
    (message.starts_with("relation") && message.contains("does not exist"))
        || (message.starts_with("Table") && message.contains("doesn't exist"))
        || message.contains("no such table")
}
