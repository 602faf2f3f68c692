//! idgen-testkit's conformance suites on idgen-sqlx's lease stores (with their operator's
//! view) and hi-lo sources: PostgreSQL, MariaDB/MySQL (the detected counter, and a counter
//! table by choice) and SQLite;
//! and what only idgen-sqlx's sources do (`hilo_pools`).

#[path = "conformance/hilo_pools.rs"]
mod hilo_pools;
#[path = "conformance/subjects.rs"]
mod subjects;

use subjects::{SqlxMySql, SqlxMySqlTable, SqlxPostgres, SqlxSqlite};

idgen_testkit::sql_suites!(postgres: SqlxPostgres, mysql: SqlxMySql, sqlite: SqlxSqlite);
idgen_testkit::hilo_suite!(mysql_table_hilo, SqlxMySqlTable, mysql);

// The operator's view (`rows`, `now_ms`, `free`: `idgen leases list|free`) is that of idgen-sql's
// `SqlLeaseStore`, the same for every adapter built on it; idgen-seaorm's store offers none.
idgen_testkit::operator_suite!(postgres_operator, SqlxPostgres);
idgen_testkit::operator_suite!(mysql_operator, SqlxMySql);
idgen_testkit::operator_suite!(sqlite_operator, SqlxSqlite);
