//! The calls of a lease store as values that own their arguments ([`Call`]), so that an
//! adapter's [`SqlPool`](crate::SqlPool) can move one to the thread or task that holds a
//! connection.

use std::time::Duration;

use crate::lease::sql::LeaseSql;
use crate::pool::Call;
use crate::session::Session;
use idgen_engine::lease::{BoxError, Claim, ClaimRequest, RenewRequest};

/// [`claim`](super::claim), its [`ClaimRequest`] owned.
#[derive(Clone, Debug)]
pub(crate) struct ClaimCall {
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
    type Sql = LeaseSql;
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
pub(crate) struct RenewCall {
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
    type Sql = LeaseSql;
    const OPERATION: &'static str = "renew";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<bool, BoxError> {
        super::renew(session, sql, self.request()).await
    }
}

/// [`release`](super::release), its [`RenewRequest`] owned.
#[derive(Clone, Debug)]
pub(crate) struct ReleaseCall(pub(crate) RenewCall);

impl Call for ReleaseCall {
    type Output = ();
    type Sql = LeaseSql;
    const OPERATION: &'static str = "release";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<(), BoxError> {
        super::release(session, sql, self.0.request()).await
    }
}

/// [`create_table`](super::create_table).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CreateTable;

impl Call for CreateTable {
    type Output = ();
    type Sql = LeaseSql;
    const OPERATION: &'static str = "create";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<(), BoxError> {
        super::create_table(session, sql).await
    }
}

/// [`record_layout`](super::record_layout): a namespace and a layout key.
#[derive(Clone, Debug)]
pub(crate) struct RecordLayoutCall(pub(crate) String, pub(crate) String);

impl Call for RecordLayoutCall {
    type Output = Option<String>;
    type Sql = LeaseSql;
    const OPERATION: &'static str = "record the layout";

    async fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &LeaseSql,
    ) -> Result<Option<String>, BoxError> {
        super::record_layout(session, sql, &self.0, &self.1).await
    }
}

/// [`rows`](super::rows) of one namespace.
#[derive(Clone, Debug)]
pub(crate) struct RowsCall(pub(crate) String);

impl Call for RowsCall {
    type Output = Vec<crate::session::LeaseRow>;
    type Sql = LeaseSql;
    const OPERATION: &'static str = "read rows";

    async fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &LeaseSql,
    ) -> Result<Vec<crate::session::LeaseRow>, BoxError> {
        super::rows(session, sql, &self.0).await
    }
}

/// [`free`](super::free), its [`FreeRequest`](super::FreeRequest) owned.
#[derive(Clone, Debug)]
pub(crate) struct FreeCall {
    namespace: String,
    node: u64,
    holder: Option<String>,
    force: bool,
}

impl From<super::FreeRequest<'_>> for FreeCall {
    fn from(req: super::FreeRequest<'_>) -> Self {
        FreeCall {
            namespace: req.namespace.to_owned(),
            node: req.node,
            holder: req.holder.map(str::to_owned),
            force: req.force,
        }
    }
}

impl Call for FreeCall {
    type Output = Result<super::Freed, super::NotFreed>;
    type Sql = LeaseSql;
    const OPERATION: &'static str = "free";

    async fn run<S: Session>(
        &self,
        session: &mut S,
        sql: &LeaseSql,
    ) -> Result<Self::Output, BoxError> {
        let req = super::FreeRequest {
            namespace: &self.namespace,
            node: self.node,
            holder: self.holder.as_deref(),
            force: self.force,
        };
        super::free(session, sql, req).await
    }
}

/// [`now_ms`](super::now_ms): the database's clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NowCall;

impl Call for NowCall {
    type Output = i64;
    type Sql = LeaseSql;
    const OPERATION: &'static str = "read the clock";

    async fn run<S: Session>(&self, session: &mut S, sql: &LeaseSql) -> Result<i64, BoxError> {
        super::now_ms(session, sql).await
    }
}
