//! The calls of a lease store as values that own their arguments ([`Call`]), and
//! [`StepStore`]: a store that says only how a call reaches a [`Session`] (which connection,
//! on which thread or task) gets its whole [`LeaseStore`] from here, the same for every SQL
//! adapter.

use std::future::Future;
use std::time::Duration;

use crate::lease::{BoxError, Claim, ClaimRequest, LeaseStore, RenewRequest};
use crate::sql::{LeaseSql, Session};

/// One call of a lease store over [`Session`]s: its arguments, owned (so that it can move to a
/// thread or a task of its own), and the procedure of [`steps`](super) it runs.
pub trait Call: Send + 'static {
    /// What the call answers.
    type Output: Send + 'static;
    /// The operation, for messages (`"claim"`, `"renew"`, …).
    const OPERATION: &'static str;
    /// Runs the call on `session`, with the lease table's `sql`.
    fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &LeaseSql,
    ) -> impl Future<Output = Result<Self::Output, BoxError>> + Send;
}

/// A SQL lease store, said by how it runs one [`Call`]: every type that implements this is a
/// [`LeaseStore`] whose `claim`, `renew`, `release` and `create_if_missing` run the procedures
/// of [`steps`](super), so the stores of every adapter answer alike.
pub trait StepStore: Send + Sync + Sized + 'static {
    /// Runs `call` on a session of this store, with its table's SQL.
    fn run_call<K: Call>(
        &self,
        call: K,
    ) -> impl Future<Output = Result<K::Output, BoxError>> + Send;
    /// [`LeaseStore::detached`]: the same table, on connections that do not depend on the async
    /// runtime this store was made on; `None` if the store cannot make one.
    fn detach(&self) -> Option<Self>;
}

impl<T: StepStore> LeaseStore for T {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Option<Claim>, BoxError> {
        self.run_call(ClaimCall::from(req)).await
    }

    async fn renew(&self, req: RenewRequest<'_>) -> Result<bool, BoxError> {
        self.run_call(RenewCall::from(req)).await
    }

    async fn release(&self, req: RenewRequest<'_>) -> Result<(), BoxError> {
        self.run_call(ReleaseCall(RenewCall::from(req))).await
    }

    /// Creates the lease table if it does not exist ([`CreateTable`]).
    async fn create_if_missing(&self) -> Result<(), BoxError> {
        self.run_call(CreateTable).await
    }

    fn detached(&self) -> Option<Self> {
        self.detach()
    }
}

/// [`claim`](super::claim), its [`ClaimRequest`] owned.
#[derive(Clone, Debug)]
pub struct ClaimCall {
    namespace: String,
    capacity: u64,
    holder: String,
    ttl: Duration,
}

impl From<ClaimRequest<'_>> for ClaimCall {
    fn from(req: ClaimRequest<'_>) -> Self {
        ClaimCall {
            namespace: req.namespace.to_owned(),
            capacity: req.capacity,
            holder: req.holder.to_owned(),
            ttl: req.ttl,
        }
    }
}

impl Call for ClaimCall {
    type Output = Option<Claim>;
    const OPERATION: &'static str = "claim";

    async fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &LeaseSql,
    ) -> Result<Option<Claim>, BoxError> {
        let req = ClaimRequest {
            namespace: &self.namespace,
            capacity: self.capacity,
            holder: &self.holder,
            ttl: self.ttl,
        };
        super::claim(session, sql, req).await
    }
}

/// [`renew`](super::renew), its [`RenewRequest`] owned.
#[derive(Clone, Debug)]
pub struct RenewCall {
    namespace: String,
    node: u64,
    holder: String,
    ttl: Duration,
    last_timestamp_ms: Option<i64>,
}

impl RenewCall {
    fn request(&self) -> RenewRequest<'_> {
        RenewRequest {
            namespace: &self.namespace,
            node: self.node,
            holder: &self.holder,
            ttl: self.ttl,
            last_timestamp_ms: self.last_timestamp_ms,
        }
    }
}

impl From<RenewRequest<'_>> for RenewCall {
    fn from(req: RenewRequest<'_>) -> Self {
        RenewCall {
            namespace: req.namespace.to_owned(),
            node: req.node,
            holder: req.holder.to_owned(),
            ttl: req.ttl,
            last_timestamp_ms: req.last_timestamp_ms,
        }
    }
}

impl Call for RenewCall {
    type Output = bool;
    const OPERATION: &'static str = "renew";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<bool, BoxError> {
        super::renew(session, sql, self.request()).await
    }
}

/// [`release`](super::release), its [`RenewRequest`] owned.
#[derive(Clone, Debug)]
pub struct ReleaseCall(pub RenewCall);

impl Call for ReleaseCall {
    type Output = ();
    const OPERATION: &'static str = "release";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<(), BoxError> {
        super::release(session, sql, self.0.request()).await
    }
}

/// [`create_table`](super::create_table).
#[derive(Clone, Copy, Debug)]
pub struct CreateTable;

impl Call for CreateTable {
    type Output = ();
    const OPERATION: &'static str = "create";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<(), BoxError> {
        super::create_table(session, sql).await
    }
}
