//! The lease contract: the lease table's DDL and statements ([`LeaseSql`]), the procedure of
//! every SQL lease store over a `Session` ([`procedure`]), and the one lease store
//! ([`SqlLeaseStore`]).

pub mod procedure;
pub(crate) mod sql;
mod store;

pub use sql::LeaseSql;
pub use store::SqlLeaseStore;
