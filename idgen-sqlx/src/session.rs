//! [`SqlxDatabase`]: the databases idgen keeps its tables in over sqlx, and the
//! [`Session`](idgen_sql::Session) on one pooled connection that idgen-sql's shared
//! lease and hi-lo procedures run on. This is all the database code of idgen-sqlx: binding the
//! values of idgen-sql's statements and decoding their rows.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use idgen_core::BoxError;
use idgen_engine::CallError;
use idgen_sql::{Call, CallTarget};
use idgen_sql::{Dialect, ErrorClass, LeaseRow, SqlPool, Statement, Value};
use sqlx::pool::{PoolConnection, PoolOptions};
use sqlx::{Arguments, AssertSqlSafe, Database, Executor, Pool, Row};

/// Marks idgen's implementations for sqlx pools (`IntoLeaseStore`, `IntoHiLoSource`), so
/// that `WorkerLease::acquire(&pool, &layout)` and `HiLo::new(&pool, block)` take a `PgPool`,
/// `MySqlPool` or `SqlitePool`. Never named by callers (idgen-diesel's is `R2d2Marker`,
/// idgen-seaorm's `SeaOrmMarker`).
///
/// ```
/// # #[cfg(feature = "sqlite")]
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use idgen_sqlx::lease::{create_lease_table, WorkerLease};
/// use idgen_sqlx::Layout;
///
/// let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
/// create_lease_table(&pool).await?;
/// let by_reference = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(&pool, &Layout::TWITTER).await?;
/// let by_value = WorkerLease::options().skip_takeover_wait_for_tests_and_development(true).acquire(pool.clone(), &Layout::TWITTER).await?;
/// assert_ne!(by_reference.node(), by_value.node());
/// # Ok(()) }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[derive(Clone, Copy, Debug)]
pub enum SqlxMarker {}

/// The former name of [`SqlxMarker`].
#[deprecated(note = "renamed `SqlxMarker`: each adapter's marker is named `…Marker`")]
pub type SqlxPool = SqlxMarker;

/// A future of [`SqlxDatabase::session`].
#[doc(hidden)]
pub type SessionFuture<'a, S> = Pin<Box<dyn Future<Output = Result<S, sqlx::Error>> + Send + 'a>>;

mod sealed {
    /// Implemented by `sqlx_database!` for each database, with its `SqlxDatabase`.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// A database idgen keeps lease tables and hi-lo counters in: `sqlx::Postgres`, `sqlx::MySql`
/// (MariaDB too) and `sqlx::Sqlite`, with the crate features of the same names. Sealed.
///
/// ```
/// fn takes_an_idgen_pool<DB: idgen_sqlx::SqlxDatabase>(_pool: &sqlx::Pool<DB>) {}
/// # #[cfg(feature = "sqlite")]
/// # let _ = takes_an_idgen_pool::<sqlx::Sqlite>;
/// ```
pub trait SqlxDatabase: Database + sealed::Sealed {
    /// The SQL dialect.
    const DIALECT: Dialect;
    #[doc(hidden)]
    type Session: idgen_sql::Session<Error = sqlx::Error>;
    /// A session on a connection of `pool`, as the pool lends it: idgen changes none of its
    /// settings (on MySQL/MariaDB each unit of work runs in an explicit transaction of its own,
    /// which commits whatever the connection's autocommit setting).
    #[doc(hidden)]
    fn session(pool: &Pool<Self>) -> SessionFuture<'_, Self::Session>;
}

/// One pooled connection as an idgen-sql [`Session`](idgen_sql::Session). A connection
/// whose statement failed is closed rather than given back (the failure may be a broken
/// connection; the next session reconnects).
///
/// Dropped while a statement has not answered or while idgen's own transaction is open (the
/// call was cancelled: the store's time-out, the caller's, a dropped future, a runtime shutting
/// down), it closes the connection instead of giving it back to the pool: sqlx would give it
/// back after a ping, with the transaction still open (sqlx does not track a `START
/// TRANSACTION` sent as a statement), to the application's next user of the connection. The
/// server rolls back what the closed connection left open.
#[doc(hidden)]
pub struct SqlxSession<DB: Database> {
    conn: PoolConnection<DB>,
    /// A statement has been sent and not answered yet.
    in_flight: bool,
    /// idgen's own transaction is open ([`Session::transaction_open`](idgen_sql::Session::transaction_open)).
    in_transaction: bool,
}

impl<DB: Database> SqlxSession<DB> {
    pub(crate) fn new(conn: PoolConnection<DB>) -> Self {
        SqlxSession {
            conn,
            in_flight: false,
            in_transaction: false,
        }
    }

    fn closing<T>(&mut self, result: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        self.in_flight = false;
        if result
            .as_ref()
            .is_err_and(|e| !matches!(e, sqlx::Error::Database(_)))
        {
            self.conn.close_on_drop();
        }
        result
    }
}

impl<DB: Database> Drop for SqlxSession<DB> {
    fn drop(&mut self) {
        if self.in_flight || self.in_transaction {
            self.conn.close_on_drop();
        }
    }
}

/// The driver's code and message, classified for `dialect`.
pub(crate) fn classify(dialect: Dialect, err: &sqlx::Error) -> ErrorClass {
    match err.as_database_error() {
        Some(e) => dialect.classify(e.code().as_deref(), e.message()),
        None => ErrorClass::Other,
    }
}

/// `sqlx::Error` for a row idgen never writes.
fn negative_node(node: i64) -> sqlx::Error {
    sqlx::Error::Protocol(format!("negative node ID {node} in the lease table"))
}

macro_rules! sqlx_database {
    ($feature:literal, $db:ty, $dialect:expr) => {
        #[cfg(feature = $feature)]
        impl sealed::Sealed for $db {}

        #[cfg(feature = $feature)]
        impl SqlxDatabase for $db {
            const DIALECT: Dialect = $dialect;
            type Session = SqlxSession<$db>;

            fn session(pool: &Pool<Self>) -> SessionFuture<'_, SqlxSession<$db>> {
                Box::pin(async move { Ok(SqlxSession::new(pool.acquire().await?)) })
            }
        }

        #[cfg(feature = $feature)]
        impl SqlxSession<$db> {
            fn arguments(
                params: &[Value<'_>],
            ) -> Result<<$db as Database>::Arguments, sqlx::Error> {
                let mut args = <$db as Database>::Arguments::default();
                for param in params {
                    match *param {
                        Value::Text(v) => args.add(v),
                        Value::BigInt(v) => args.add(v),
                        Value::NullableBigInt(v) => args.add(v),
                        Value::Double(v) => args.add(v),
                    }
                    .map_err(sqlx::Error::Encode)?;
                }
                Ok(args)
            }

            async fn fetch(
                &mut self,
                st: Statement<'_>,
            ) -> Result<Vec<<$db as Database>::Row>, sqlx::Error> {
                let args = Self::arguments(&st.params)?;
                self.in_flight = true;
                let rows = sqlx::query_with(AssertSqlSafe(st.sql), args)
                    .fetch_all(&mut *self.conn)
                    .await;
                self.closing(rows)
            }
        }

        #[cfg(feature = $feature)]
        impl idgen_sql::Session for SqlxSession<$db> {
            type Error = sqlx::Error;

            fn dialect(&self) -> Dialect {
                $dialect
            }

            fn classify(&self, err: &sqlx::Error) -> ErrorClass {
                classify($dialect, err)
            }

            async fn execute(&mut self, st: Statement<'_>) -> Result<u64, sqlx::Error> {
                let args = if st.params.is_empty() {
                    None
                } else {
                    Some(Self::arguments(&st.params)?)
                };
                self.in_flight = true;
                let done = if let Some(args) = args {
                    sqlx::query_with(AssertSqlSafe(st.sql), args)
                        .execute(&mut *self.conn)
                        .await
                } else {
                    // One simple query: it may hold several statements.
                    (&mut *self.conn).execute(AssertSqlSafe(st.sql)).await
                };
                self.closing(done).map(|done| done.rows_affected())
            }

            async fn fetch_i64(&mut self, st: Statement<'_>) -> Result<Option<i64>, sqlx::Error> {
                let rows = self.fetch(st).await?;
                rows.first().map(|row| row.try_get(0)).transpose()
            }

            async fn fetch_text(
                &mut self,
                st: Statement<'_>,
            ) -> Result<Option<String>, sqlx::Error> {
                let rows = self.fetch(st).await?;
                rows.first().map(|row| row.try_get(0)).transpose()
            }

            async fn fetch_claim(
                &mut self,
                st: Statement<'_>,
            ) -> Result<Option<(i64, Option<i64>)>, sqlx::Error> {
                let rows = self.fetch(st).await?;
                rows.first()
                    .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
                    .transpose()
            }

            async fn fetch_lease_rows(
                &mut self,
                st: Statement<'_>,
            ) -> Result<Vec<LeaseRow>, sqlx::Error> {
                let rows = self.fetch(st).await?;
                rows.iter()
                    .map(|row| {
                        let node: i64 = row.try_get(0)?;
                        LeaseRow::new(node, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?)
                            .ok_or_else(|| negative_node(node))
                    })
                    .collect()
            }

            async fn pause(&mut self, pause: Duration) {
                tokio::time::sleep(pause).await;
            }

            fn transaction_open(&mut self, open: bool) {
                self.in_transaction = open;
            }
        }
    };
}

sqlx_database!("postgres", sqlx::Postgres, Dialect::Postgres);
sqlx_database!("mysql", sqlx::MySql, Dialect::MySql);
sqlx_database!("sqlite", sqlx::Sqlite, Dialect::Sqlite);

/// How long a [`detached`](idgen_engine::lease::LeaseStore::detached) copy waits for its one
/// connection.
const DETACHED_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// How idgen-sql's lease store and hi-lo counter reach a sqlx pool's connections: each call on a
/// connection of its own, given back as found (see [`SqlxDatabase::session`]).
impl<DB: SqlxDatabase> SqlPool<SqlxMarker> for Pool<DB> {
    type Turn = ();

    fn dialect(&self) -> Dialect {
        DB::DIALECT
    }

    async fn run<K: Call>(&self, _: &(), sql: Arc<K::Sql>, call: K) -> Result<K::Output, BoxError> {
        let mut session = DB::session(self).await.map_err(|e| {
            let message = format!("no connection for {}: {e}", sql.describe());
            CallError::new(message, e)
        })?;
        call.run(&mut session, &sql).await
    }

    /// A pool of its own with one connection made on demand (the same options), so a release
    /// after the application closed its pool still reaches the database.
    fn detach(&self, _: &()) -> Option<(Self, ())> {
        let pool = PoolOptions::<DB>::new()
            .max_connections(1)
            .min_connections(0)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(DETACHED_ACQUIRE_TIMEOUT)
            .connect_lazy_with((*self.connect_options()).clone());
        Some((pool, ()))
    }
}
