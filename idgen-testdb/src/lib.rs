//! # idgen-testdb
//!
//! A real, empty, isolated database for each test: PostgreSQL, MySQL/MariaDB or SQLite; and a
//! key prefix of its own on a real etcd or Redis server (features `etcd`, `redis`).
//! (Not published; a dev-dependency of the idgen crates, through `idgen-testkit`, which
//! re-exports it. It depends on no idgen crate.)
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let db = idgen_testdb::postgres().await?;          // or mysql(), sqlite()
//! sqlx::query("CREATE TABLE t (id BIGINT PRIMARY KEY)").execute(db.pool()).await?;
//! let url: &str = db.url();                           // for child processes
//! # let _ = url;
//! # Ok(()) }
//! ```
//!
//! ## Where the server comes from
//!
//! [`postgres`] and [`mysql`] find a server once per test binary, in this order:
//!
//! 1. **A URL**: `IDGEN_POSTGRES_URL` / `IDGEN_MYSQL_URL`, e.g.
//!    `postgres://postgres@127.0.0.1:5432/postgres`, `mysql://root@127.0.0.1:3306/mysql`. The
//!    user must be allowed to create and drop databases.
//! 2. **Docker**: if a Docker engine answers, a container started with `testcontainers` and
//!    shared by the tests of the binary (see [`containers`]; feature `docker`, on by default).
//! 3. **Local binaries**: if `initdb`/`postgres` or `mariadb-install-db`/`mariadbd` are
//!    installed, a throwaway server in a temporary directory on a free port of 127.0.0.1,
//!    stopped and deleted when the binary ends (see [`local_server`]). As root, the server runs
//!    as `nobody`.
//! 4. Otherwise [`Error::NoServer`], whose message names the three ways.
//!
//! The first call for each kind prints to stderr which route was taken and why the others were
//! not. `IDGEN_TESTKIT_ROUTE=url|containers|local` allows only that route (CI: `containers`).
//!
//! Environment knobs for path 3: `IDGEN_PG_BIN_DIR` (where `initdb` and `postgres` are, if not on
//! `PATH` or under `/usr/lib/postgresql/<version>/bin`) and `IDGEN_TESTKIT_USER` (the user the
//! servers run as when the tests run as root; default `nobody`).
//!
//! Each call then creates a database with a fresh random name on that server and drops it when
//! the [`TestDb`] is dropped, so tests run in parallel without seeing each other's rows and a
//! second run starts clean. [`sqlite`] needs no server: a file in a temporary directory.

mod admin;
#[cfg(feature = "docker")]
pub mod containers;
mod discovery;
mod error;
pub mod key_value;
pub mod local_server;
mod proxy;
mod server;
mod stale;
mod test_db;
mod url;

pub use error::Error;
pub use key_value::KeyPrefix;
pub use proxy::TcpProxy;
pub use server::ServerKind;
pub use test_db::TestDb;

use sqlx::{MySql, Postgres, Sqlite};

/// A new, empty PostgreSQL database for one test, from the first server the discovery order finds.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::postgres().await?;
/// assert!(db.url().starts_with("postgres://"));
/// # Ok(()) }
/// ```
pub async fn postgres() -> Result<TestDb<Postgres>, Error> {
    TestDb::create_on(discovery::discovered(ServerKind::Postgres).await?).await
}

/// A new, empty MySQL/MariaDB database for one test, from the first server the discovery order
/// finds.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::mysql().await?;
/// assert!(db.url().starts_with("mysql://"));
/// # Ok(()) }
/// ```
pub async fn mysql() -> Result<TestDb<MySql>, Error> {
    TestDb::create_on(discovery::discovered(ServerKind::MySql).await?).await
}

/// A new, empty SQLite database for one test: a file in a temporary directory.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::sqlite().await?;
/// assert!(db.url().starts_with("sqlite://"));
/// # Ok(()) }
/// ```
pub async fn sqlite() -> Result<TestDb<Sqlite>, Error> {
    TestDb::create_sqlite().await
}

/// A key prefix of its own on an etcd server, from the discovery order (`IDGEN_ETCD_ENDPOINTS`:
/// comma-separated endpoints; a container; a local `etcd`). Feature `etcd`.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let keys = idgen_testdb::etcd().await?;
/// assert!(keys.url().starts_with("http://"));
/// # Ok(()) }
/// ```
#[cfg(feature = "etcd")]
pub async fn etcd() -> Result<KeyPrefix, Error> {
    KeyPrefix::create_on(discovery::discovered(ServerKind::Etcd).await?).await
}

/// A key prefix of its own on a Redis server, from the discovery order (`IDGEN_REDIS_URL`; a
/// container; a local `redis-server`). Feature `redis`.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let keys = idgen_testdb::redis().await?;
/// assert!(keys.url().starts_with("redis://"));
/// # Ok(()) }
/// ```
#[cfg(feature = "redis")]
pub async fn redis() -> Result<KeyPrefix, Error> {
    KeyPrefix::create_on(discovery::discovered(ServerKind::Redis).await?).await
}
