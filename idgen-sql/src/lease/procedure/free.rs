//! An operator's free of a node ID ([`free`]): the rule `idgen leases free` and the web
//! operator view share. An expired lease is freed; a live one only with `force`, because its
//! holder may still be issuing. Neither makes the next claim exact: an expired lease's holder
//! is replaced with the tombstone [`FREED_HOLDER`] (its renewals fail; the next claim is a
//! takeover), a forced one keeps its holder's name.

use crate::lease::sql::LeaseSql;
use crate::session::{LeaseRow, Session, check_outside_transaction, in_own_transaction};
use idgen_engine::lease::{BoxError, FREED_HOLDER};
pub use idgen_engine::lease::{FreeRequest, Freed, NotFreed};

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
    // Freed already: the tombstone is nobody's lease (and freeing it again would say so).
    if holder == FREED_HOLDER {
        return Ok(Err(NotFreed::NotHeld { node }));
    }
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
        Some(actual) if actual == FREED_HOLDER => Ok(Err(NotFreed::NotHeld { node })),
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
