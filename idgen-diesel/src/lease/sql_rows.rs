//! The rows the lease statements return, read by column name.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Nullable, Text};

use crate::lease::Claim;
use crate::lease::store::{LeaseRow, node_u64};

/// `RETURNING node, last_timestamp` / `SELECT node, last_timestamp`.
#[derive(QueryableByName)]
pub(crate) struct ClaimRow {
    #[diesel(sql_type = BigInt)]
    node: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_timestamp: Option<i64>,
}

impl ClaimRow {
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) fn node(&self) -> i64 {
        self.node
    }

    pub(crate) fn claim(&self) -> diesel::QueryResult<Claim> {
        Ok(Claim {
            node: node_u64(self.node)?,
            last_timestamp_ms: self.last_timestamp,
        })
    }
}

/// `SELECT … AS next`.
#[derive(QueryableByName)]
pub(crate) struct NextRow {
    #[diesel(sql_type = BigInt)]
    pub(crate) next: i64,
}

/// `SELECT node, holder, … AS expires_at_ms, last_timestamp`.
#[derive(QueryableByName)]
pub(crate) struct TableRow {
    #[diesel(sql_type = BigInt)]
    node: i64,
    #[diesel(sql_type = Nullable<Text>)]
    holder: Option<String>,
    #[diesel(sql_type = BigInt)]
    expires_at_ms: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    last_timestamp: Option<i64>,
}

impl TableRow {
    pub(crate) fn into_lease_row(self) -> diesel::QueryResult<LeaseRow> {
        Ok(LeaseRow {
            node: node_u64(self.node)?,
            holder: self.holder,
            expires_at_ms: self.expires_at_ms,
            last_timestamp_ms: self.last_timestamp,
        })
    }
}
