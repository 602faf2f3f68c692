//! An operator's free of a node ID ([`free`]): the rule `idgen leases free` and the web
//! operator view share. An expired lease is freed; a live one only with `force`, because its
//! holder may still be issuing.

use std::fmt;

use crate::lease::LeaseSql;
use crate::session::{LeaseRow, Session, check_outside_transaction, in_own_transaction};
use idgen_engine::lease::BoxError;

/// What to free.
#[derive(Clone, Copy, Debug)]
pub struct FreeRequest<'a> {
    /// The namespace of the lease.
    pub namespace: &'a str,
    /// The node ID.
    pub node: u64,
    /// The holder the operator saw (freed only if it still holds the node ID); `None`: whoever
    /// holds it now.
    pub holder: Option<&'a str>,
    /// Free a live lease too.
    pub force: bool,
}

/// A node ID that was freed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freed {
    /// Its lease had expired: the holder is cleared, the last timestamp its last renewal
    /// stored is kept, and the next claim takes the node ID at once, above that timestamp.
    Expired {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
    },
    /// Its lease was live and was ended now (`force`). The row keeps the holder's name, so the
    /// next claim waits one TTL plus its clock allowance before it issues, and the old
    /// holder's renewals fail once another process holds the node ID (if it renews before
    /// anyone claims it, the lease is its own again).
    Forced {
        /// The node ID.
        node: u64,
        /// Who held it.
        holder: String,
        /// How long the lease still had, in ms (on the database's clock).
        remaining_ms: i64,
    },
}

impl fmt::Display for Freed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Freed::Expired { node, holder } => write!(
                f,
                "node {node} freed: the lease of {holder} had expired; the next claim takes it at once"
            ),
            Freed::Forced {
                node,
                holder,
                remaining_ms,
            } => write!(
                f,
                "node {node} freed by force: the lease of {holder} had {} left; the next claim \
                 waits one TTL plus its clock allowance before it issues",
                seconds(*remaining_ms)
            ),
        }
    }
}

/// Why a node ID was not freed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFreed {
    /// The namespace has no row for the node ID: it was never claimed.
    NoRow {
        /// The node ID.
        node: u64,
    },
    /// No one holds it (it was released, or freed already).
    NotHeld {
        /// The node ID.
        node: u64,
    },
    /// Another holder than the one asked for holds it now.
    OtherHolder {
        /// The node ID.
        node: u64,
        /// The holder asked for.
        expected: String,
        /// The holder now.
        actual: String,
    },
    /// Its lease is live, and `force` was not given.
    Live {
        /// The node ID.
        node: u64,
        /// Who holds it.
        holder: String,
        /// How long the lease still has, in ms (on the database's clock).
        remaining_ms: i64,
    },
}

impl fmt::Display for NotFreed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFreed::NoRow { node } => {
                write!(f, "node {node} has no lease row: it was never claimed")
            }
            NotFreed::NotHeld { node } => {
                write!(f, "node {node} is not held by anyone: it is free already")
            }
            NotFreed::OtherHolder {
                node,
                expected,
                actual,
            } => write!(
                f,
                "node {node} is held by {actual} now, not {expected}: nothing was freed"
            ),
            NotFreed::Live {
                node,
                holder,
                remaining_ms,
            } => write!(
                f,
                "node {node} is leased by {holder} for another {}: that process may still be \
                 issuing IDs, so it was not freed. Forcing lets two processes issue with the same \
                 node ID until the old holder's fence deadline (it stops when its next renewal \
                 fails); a new holder waits one TTL plus its clock allowance first, which keeps \
                 them apart only if both use the same TTL and their clocks agree within that \
                 allowance",
                seconds(*remaining_ms)
            ),
        }
    }
}

impl std::error::Error for NotFreed {}

/// `12.3 s`.
fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The database's clock in Unix ms.
pub async fn now_ms<S: Session>(session: &mut S, sql: &LeaseSql) -> Result<i64, BoxError> {
    let now = session
        .fetch_i64(sql.now_ms())
        .await
        .map_err(|e| super::describe(session, sql, "read the clock", e))?;
    now.ok_or_else(|| "the database returned no clock reading".into())
}

async fn row<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    namespace: &str,
    node: u64,
) -> Result<Option<LeaseRow>, BoxError> {
    let rows = in_own_transaction!(session, session.fetch_lease_rows(sql.row(namespace, node)))
        .await
        .map_err(|e| super::describe(session, sql, "read row", e))?;
    Ok(rows.into_iter().next())
}

/// Frees a node ID for an operator: an expired lease at once; a live one only with
/// `req.force`. Only the holder asked for (or, without one, the holder read first) is
/// freed, so a node ID claimed again in between is left alone.
///
/// # Errors
///
/// The database's error, naming the operation and the table.
pub async fn free<S: Session>(
    session: &mut S,
    sql: &LeaseSql,
    req: FreeRequest<'_>,
) -> Result<Result<Freed, NotFreed>, BoxError> {
    check_outside_transaction(session).await?;
    let node = req.node;
    let holder = match req.holder {
        Some(h) => h.to_owned(),
        None => match row(session, sql, req.namespace, node).await? {
            None => return Ok(Err(NotFreed::NoRow { node })),
            Some(LeaseRow { holder: None, .. }) => return Ok(Err(NotFreed::NotHeld { node })),
            Some(LeaseRow {
                holder: Some(h), ..
            }) => h,
        },
    };
    let freed = in_own_transaction!(
        session,
        session.execute(sql.free_expired(req.namespace, node, &holder))
    )
    .await
    .map_err(|e| super::describe(session, sql, "free", e))?;
    if freed > 0 {
        return Ok(Ok(Freed::Expired { node, holder }));
    }
    // Not freed: say why (and, with force, end a live lease).
    let now = now_ms(session, sql).await?;
    let Some(current) = row(session, sql, req.namespace, node).await? else {
        return Ok(Err(NotFreed::NoRow { node }));
    };
    match current.holder {
        None => Ok(Err(NotFreed::NotHeld { node })),
        Some(actual) if actual != holder => Ok(Err(NotFreed::OtherHolder {
            node,
            expected: holder,
            actual,
        })),
        Some(_) => {
            let remaining_ms = current.expires_at_ms.saturating_sub(now);
            if !req.force {
                return Ok(Err(NotFreed::Live {
                    node,
                    holder,
                    remaining_ms,
                }));
            }
            let ended = in_own_transaction!(
                session,
                session.execute(sql.expire_now(req.namespace, node, &holder))
            )
            .await
            .map_err(|e| super::describe(session, sql, "free", e))?;
            if ended > 0 {
                Ok(Ok(Freed::Forced {
                    node,
                    holder,
                    remaining_ms,
                }))
            } else {
                Ok(Err(NotFreed::NotHeld { node }))
            }
        }
    }
}
