//! [`SqlLeaseStore`]: the one lease store of every SQL adapter, over the adapter's
//! [`SqlPool`].
//!
//! The adapter says only how a [`Call`] reaches a [`Session`](crate::session::Session) on one of its
//! pool's connections (on which thread or task, with which connection, given back how); the
//! table's name rule, the statements, the procedure, the errors and the store's methods are
//! written here once.

use std::marker::PhantomData;
use std::sync::Arc;

use idgen_engine::Error;
use idgen_engine::lease::{
    BoxError, Claim, ClaimRequest, DEFAULT_LEASE_TABLE, FreeRequest, Freed, HeldLease,
    LeaseOperator, LeaseStore, NotFreed, RenewRequest,
};

use super::procedure::{
    ClaimCall, CreateTable, FreeCall, NowCall, RecordLayoutCall, ReleaseCall, RenewCall, RowsCall,
};
use super::sql::LeaseSql;
use crate::pool::{Call, SqlPool};
use crate::session::LeaseRow;

/// The lease store of every SQL adapter: a lease table (named by the one [`SqlName`](crate::SqlName)
/// rule) over an adapter's pool `P`. The adapters name it (`idgen_sqlx::lease::SqlxLeaseStore`,
/// `idgen_diesel::lease::DieselLeaseStore`, …); an application usually passes its pool to
/// `WorkerLease::acquire` and never names it.
pub struct SqlLeaseStore<M, P: SqlPool<M>> {
    pool: P,
    turn: P::Turn,
    sql: Result<Arc<LeaseSql>, Error>,
    marker: PhantomData<fn() -> M>,
}

impl<M, P: SqlPool<M>> SqlLeaseStore<M, P> {
    /// A store on `pool` with the default table (`idgen_worker_lease`).
    pub fn new(pool: P) -> Self {
        Self::named(pool, DEFAULT_LEASE_TABLE)
    }

    /// A store on `pool` with the lease table `table` (`name` or `schema.name`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) when `table` breaks the name rule.
    pub fn with_table(pool: P, table: &str) -> Result<Self, Error> {
        let store = Self::named(pool, table);
        store.sql()?;
        Ok(store)
    }

    /// A store on `pool` with the lease table `table`; a name that breaks the rule is kept as
    /// its error, returned by every call (what `IntoLeaseStore` needs: it cannot fail).
    pub fn named(pool: P, table: &str) -> Self {
        let sql = LeaseSql::new(pool.dialect(), table).map(Arc::new);
        SqlLeaseStore {
            pool,
            turn: P::Turn::default(),
            sql,
            marker: PhantomData,
        }
    }

    /// The lease table's name as written into the SQL (quoted for the dialect), or `None` if
    /// it was refused.
    pub fn table(&self) -> Option<&str> {
        self.sql.as_ref().ok().map(|sql| sql.table())
    }

    /// The pool the store borrows connections from.
    pub fn pool(&self) -> &P {
        &self.pool
    }

    /// The `CREATE TABLE IF NOT EXISTS` statement of the lease table, for a migration tool.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) when the table's name was refused.
    pub fn migration_sql(&self) -> Result<String, Error> {
        Ok(self.sql()?.create_table())
    }

    /// Creates the lease table if it does not exist (idempotent; safe when many processes
    /// start at once).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) when the database refuses or cannot be reached;
    /// [`ErrorKind::InvalidSqlName`](idgen_engine::ErrorKind::InvalidSqlName) when the table's name was refused.
    pub async fn create_table(&self) -> Result<(), Error> {
        self.call(CreateTable)
            .await
            .map_err(|e| Error::lease_store("create", e))
    }

    /// The rows of `namespace`, by node ID: who holds which node ID until when.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LeaseStore`](idgen_engine::ErrorKind::LeaseStore) when the database refuses or cannot be reached.
    pub async fn rows(&self, namespace: &str) -> Result<Vec<LeaseRow>, Error> {
        self.call(RowsCall(namespace.to_owned()))
            .await
            .map_err(|e| Error::lease_store("read rows", e))
    }

    fn sql(&self) -> Result<&Arc<LeaseSql>, Error> {
        self.sql.as_ref().map_err(Clone::clone)
    }

    async fn call<K: Call<Sql = LeaseSql>>(&self, call: K) -> Result<K::Output, BoxError> {
        let sql = Arc::clone(self.sql()?);
        self.pool.run(&self.turn, sql, call).await
    }
}

/// The operator's view (`idgen leases`, `idgen web`): the database's clock, the rows with a
/// holder, and [`procedure::free`](crate::procedure::free) in a transaction of its own.
impl<M: 'static, P: SqlPool<M>> LeaseOperator for SqlLeaseStore<M, P> {
    fn clock_name(&self) -> &'static str {
        "database clock"
    }

    async fn now_ms(&self) -> Result<i64, Error> {
        self.call(NowCall)
            .await
            .map_err(|e| Error::lease_store("read the clock", e))
    }

    async fn held_leases(&self, namespace: &str) -> Result<Vec<HeldLease>, Error> {
        let rows = self.rows(namespace).await?;
        Ok(rows.into_iter().filter_map(LeaseRow::held).collect())
    }

    async fn free(&self, req: FreeRequest<'_>) -> Result<Result<Freed, NotFreed>, Error> {
        self.call(FreeCall::from(req))
            .await
            .map_err(|e| Error::lease_store("free", e))
    }
}

impl<M: 'static, P: SqlPool<M>> LeaseStore for SqlLeaseStore<M, P> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.call(ClaimCall::from(req)).await
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.call(RenewCall::from(req)).await
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.call(ReleaseCall(RenewCall::from(req))).await
    }

    /// The lease table, looked for first and created only when missing, safely.
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        self.call(CreateTable).await
    }

    /// In a row of its own ([`LeaseSql::layout_namespace`]), inserted unless it exists.
    async fn record_layout(
        &self,
        namespace: &str,
        layout: &str,
    ) -> Result<Option<String>, BoxError> {
        self.call(RecordLayoutCall(namespace.to_owned(), layout.to_owned()))
            .await
    }

    /// The database's clock ([`LeaseSql::now_ms`]): PostgreSQL `now()`, MariaDB/MySQL
    /// `UTC_TIMESTAMP(6)`, SQLite `julianday('now')`. SQLite is embedded, so its clock is the
    /// host's: the check then compares the clock the lease issues from (anchored once per
    /// process, or a clock an application passes) with the host's clock now.
    async fn clock_ms(&self) -> Result<Option<i64>, BoxError> {
        self.call(NowCall).await.map(Some)
    }

    fn detached(&self) -> Option<Self> {
        let (pool, turn) = self.pool.detach(&self.turn)?;
        Some(SqlLeaseStore {
            pool,
            turn,
            sql: self.sql.clone(),
            marker: PhantomData,
        })
    }
}

impl<M, P: SqlPool<M>> Clone for SqlLeaseStore<M, P> {
    fn clone(&self) -> Self {
        SqlLeaseStore {
            pool: self.pool.clone(),
            turn: self.turn.clone(),
            sql: self.sql.clone(),
            marker: PhantomData,
        }
    }
}

impl<M, P: SqlPool<M>> std::fmt::Debug for SqlLeaseStore<M, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlLeaseStore")
            .field("database", &self.pool.dialect())
            .field("pool", &std::any::type_name::<P>())
            .field("table", &self.table())
            .finish()
    }
}
