//! [`sql_suites!`](crate::sql_suites): every suite an SQL adapter runs, on every database.

/// The lease, hi-lo and start-up suites on PostgreSQL, MariaDB/MySQL and SQLite, for an SQL
/// adapter's subject on each database: the modules `postgres_lease`, `mysql_lease`,
/// `sqlite_lease`, `postgres_hilo`, `mysql_hilo`, `sqlite_hilo`, `postgres_startup`,
/// `mysql_startup` and `sqlite_startup`, as [`lease_suite!`](crate::lease_suite),
/// [`hilo_suite!`](crate::hilo_suite) and [`startup_suite!`](crate::startup_suite) make them
/// (the MySQL ones with the cases of a server without autocommit). A new suite added here
/// reaches every SQL adapter.
///
/// ```
/// # // A stand-in subject (an adapter's test file opens a pool to `url` instead).
/// # use idgen_testkit::conformance::MemorySubject as Memory;
/// # type OnPostgres = Memory;
/// # type OnMySql = Memory;
/// # type OnSqlite = Memory;
/// // An adapter's test file names its subject on each database (each one implementing both
/// // `LeaseSubject` and `HiLoSubject`); tests postgres_lease::…, mysql_hilo::…, sqlite_startup::…
/// idgen_testkit::sql_suites!(postgres: OnPostgres, mysql: OnMySql, sqlite: OnSqlite);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! sql_suites {
    (postgres: $postgres:ty, mysql: $mysql:ty, sqlite: $sqlite:ty $(,)?) => {
        $crate::lease_suite!(postgres_lease, $postgres);
        $crate::lease_suite!(mysql_lease, $mysql, mysql);
        $crate::lease_suite!(sqlite_lease, $sqlite);

        $crate::hilo_suite!(postgres_hilo, $postgres);
        $crate::hilo_suite!(mysql_hilo, $mysql, mysql);
        $crate::hilo_suite!(sqlite_hilo, $sqlite);

        $crate::startup_suite!(postgres_startup, $postgres, $postgres);
        $crate::startup_suite!(mysql_startup, $mysql, $mysql);
        $crate::startup_suite!(sqlite_startup, $sqlite, $sqlite);
    };
}
