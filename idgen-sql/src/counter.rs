//! The hi-lo counter contract: a counter's DDL, statements and procedures ([`CounterSql`]) and
//! the one counter of every SQL adapter ([`SqlCounter`]).

pub(crate) mod sql;
mod store;

pub use crate::dialect::CounterKind;
pub use sql::{CounterSql, detect_mysql_kind, read_next_value};
pub use store::{CounterMode, CounterPool, CounterSpec, SqlCounter};
