//! idgen-testkit's conformance suites on idgen-diesel's lease stores and hi-lo counters
//! (PostgreSQL, MariaDB/MySQL, SQLite), and diesel processes sharing one lease table and one
//! counter with an idgen-sqlx process.

#[path = "conformance/blocking.rs"]
mod blocking;
/// idgen-sqlx's store and source on the same databases: the other adapter of the
/// cross-adapter cases (diesel children, an sqlx process). The subjects idgen-sqlx's own
/// conformance tests run, from its test directory.
#[path = "../../idgen-sqlx/tests/conformance/subjects.rs"]
#[allow(dead_code)] // the MySQL table-mode subject has no cross-adapter case
mod sqlx_subjects;

use blocking::{BlockingMySql, BlockingPostgres, BlockingSqlite};
use sqlx_subjects::{SqlxMySql, SqlxPostgres, SqlxSqlite};

idgen_testkit::sql_suites!(postgres: BlockingPostgres, mysql: BlockingMySql, sqlite: BlockingSqlite);

idgen_testkit::cross_adapter_suite!(postgres_with_sqlx,
    lease: BlockingPostgres, SqlxPostgres; hilo: BlockingPostgres, SqlxPostgres);
idgen_testkit::cross_adapter_suite!(mysql_with_sqlx,
    lease: BlockingMySql, SqlxMySql; hilo: BlockingMySql, SqlxMySql);
idgen_testkit::cross_adapter_suite!(sqlite_with_sqlx,
    lease: BlockingSqlite, SqlxSqlite; hilo: BlockingSqlite, SqlxSqlite);

// The operator's view (`rows`, `now_ms`, `free`: `idgen leases list|free`) of idgen-sql's
// `SqlLeaseStore` under r2d2's pool.
idgen_testkit::operator_suite!(postgres_operator, BlockingPostgres);
idgen_testkit::operator_suite!(mysql_operator, BlockingMySql);
idgen_testkit::operator_suite!(sqlite_operator, BlockingSqlite);
