//! [`TestDb`]: one test's own database, dropped afterwards.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::pool::PoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{Database, Pool, Sqlite};

use crate::error::Error;
use crate::server::Server;
use crate::{admin, url};

/// A fresh, empty database that belongs to one test, with its URL and a connection pool.
///
/// On a server (PostgreSQL, MySQL/MariaDB) it is a database with a random name, created for this
/// test and dropped when the `TestDb` is dropped (or by [`cleanup`](Self::cleanup)). For SQLite it
/// is a file in a temporary directory, deleted with it.
///
/// The URL stays valid while the `TestDb` lives, so a test can hand it to child processes.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let db = idgen_testdb::postgres().await?;
/// sqlx::query("CREATE TABLE t (id BIGINT PRIMARY KEY)").execute(db.pool()).await?;
/// let child = std::process::Command::new("psql").arg(db.url()).arg("-c").arg("SELECT 1").status()?;
/// db.cleanup().await?;
/// # Ok(()) }
/// ```
pub struct TestDb<DB: Database> {
    url: String,
    name: String,
    pool: Pool<DB>,
    cleanup: Cleanup,
}

/// What has to happen when the test is done.
enum Cleanup {
    DropDatabase { server: Arc<Server> },
    DeleteDirectory(#[allow(dead_code)] tempfile::TempDir),
    Done,
}

/// The most connections a test's pool opens.
const POOL_SIZE: u32 = 8;
/// How long a test waits for a free connection of its pool.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(120);

impl<DB: Database> TestDb<DB> {
    /// The database's URL, e.g. `postgres://postgres@127.0.0.1:5432/idgen_test_81_3f2a…`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), idgen_testdb::Error> {
    /// let db = idgen_testdb::mysql().await?;
    /// assert!(db.url().ends_with(db.name()));
    /// # Ok(()) }
    /// ```
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name (for SQLite: the file's path).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), idgen_testdb::Error> {
    /// let db = idgen_testdb::postgres().await?;
    /// assert!(db.name().starts_with("idgen_test_"));
    /// # Ok(()) }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A connection pool to the database (at most 8 connections).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = idgen_testdb::sqlite().await?;
    /// let one: i64 = sqlx::query_scalar("SELECT 1").fetch_one(db.pool()).await?;
    /// assert_eq!(one, 1);
    /// # Ok(()) }
    /// ```
    pub fn pool(&self) -> &Pool<DB> {
        &self.pool
    }

    /// A new pool of its own to the database, of at most `max_connections` connections, opened
    /// with [`pool`](Self::pool)'s options (for SQLite: WAL mode and the busy timeout). For a
    /// test that needs more connections than the shared pool's 8, or fewer, or a pool it can
    /// close.
    ///
    /// # Errors
    /// [`Error`] naming the URL when the first connection cannot be opened.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_testdb::Error> {
    /// let db = idgen_testdb::sqlite().await?;
    /// let pool = db.pool_of(2).await?;
    /// assert_eq!(pool.options().get_max_connections(), 2);
    /// # Ok(()) }
    /// ```
    pub async fn pool_of(&self, max_connections: u32) -> Result<Pool<DB>, Error> {
        let options = (*self.pool.connect_options()).clone();
        PoolOptions::<DB>::new()
            .max_connections(max_connections)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|err| Error::database("connect", &self.url, err))
    }

    /// Closes the pool and drops the database now, reporting a failure (dropping the `TestDb`
    /// does the same, but can only print a failure).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), idgen_testdb::Error> {
    /// let db = idgen_testdb::sqlite().await?;
    /// let path = std::path::PathBuf::from(db.name());
    /// db.cleanup().await?;
    /// assert!(!path.exists());
    /// # Ok(()) }
    /// ```
    pub async fn cleanup(mut self) -> Result<(), Error> {
        self.pool.close().await;
        match std::mem::replace(&mut self.cleanup, Cleanup::Done) {
            Cleanup::DropDatabase { server } => {
                let sql = admin::drop_database_sql(server.kind, &self.name);
                admin::execute(server.kind, &server.admin_url, sql).await
            }
            Cleanup::DeleteDirectory(dir) => {
                let path = dir.path().display().to_string();
                dir.close()
                    .map_err(|err| Error::database("delete the directory", &path, err))
            }
            Cleanup::Done => Ok(()),
        }
    }

    /// Creates a database with a fresh name on `server`, and a pool to it.
    pub(crate) async fn create_on(server: Arc<Server>) -> Result<Self, Error> {
        let name = fresh_name()?;
        let create = admin::create_database_sql(server.kind, &name);
        if let Err(refusal) = admin::execute(server.kind, &server.admin_url, create).await {
            match admin::create_database_fallback_sql(server.kind, &name, &refusal) {
                Some(plain) => admin::execute(server.kind, &server.admin_url, plain).await?,
                None => return Err(refusal),
            }
        }
        let url = url::with_database(&server.admin_url, &name);
        let pool = PoolOptions::<DB>::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect(&url)
            .await;
        // Built before checking the pool, so the database is dropped if connecting failed.
        let cleanup = Cleanup::DropDatabase { server };
        match pool {
            Ok(pool) => Ok(TestDb {
                url,
                name,
                pool,
                cleanup,
            }),
            Err(err) => {
                if let Cleanup::DropDatabase { server } = cleanup {
                    let sql = admin::drop_database_sql(server.kind, &name);
                    let _ = admin::execute(server.kind, &server.admin_url, sql).await;
                }
                Err(Error::database("connect", &url, err))
            }
        }
    }
}

impl TestDb<Sqlite> {
    /// A new SQLite database file in a temporary directory (WAL mode, 30 s busy timeout).
    pub(crate) async fn create_sqlite() -> Result<Self, Error> {
        crate::stale::sweep_once();
        let dir = tempfile::Builder::new()
            .prefix(&crate::stale::dir_prefix("sqlite"))
            .tempdir()
            .map_err(|err| Error::database("create a temporary directory", "sqlite", err))?;
        let path = dir.path().join("test.db");
        let name = path
            .to_str()
            .ok_or_else(|| {
                Error::database("use the temporary path", "sqlite", "the path is not UTF-8")
            })?
            .to_owned();
        let url = format!("sqlite://{name}?mode=rwc");
        let options = SqliteConnectOptions::from_str(&url)
            .map_err(|err| Error::database("parse the URL", &url, err))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|err| Error::database("open", &url, err))?;
        Ok(TestDb {
            url,
            name,
            pool,
            cleanup: Cleanup::DeleteDirectory(dir),
        })
    }
}

impl<DB: Database> Drop for TestDb<DB> {
    fn drop(&mut self) {
        let Cleanup::DropDatabase { server } = std::mem::replace(&mut self.cleanup, Cleanup::Done)
        else {
            return; // a temporary directory deletes itself
        };
        // Drop cannot await, and may run inside a runtime: use a thread with its own runtime.
        let sql = admin::drop_database_sql(server.kind, &self.name);
        let name = self.name.clone();
        let outcome = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(rt) => rt.block_on(admin::execute(server.kind, &server.admin_url, sql)),
                Err(err) => Err(Error::database("start a runtime", &server.admin_url, err)),
            }
        })
        .join();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(err)) => eprintln!("idgen-testkit: could not drop test database {name}: {err}"),
            Err(_) => {
                eprintln!("idgen-testkit: could not drop test database {name}: the thread panicked")
            }
        }
    }
}

/// `idgen_test_<pid>_<16 random hex digits>`: unique across parallel tests and processes.
fn fresh_name() -> Result<String, Error> {
    let random = getrandom::u64().map_err(|err| Error::database("draw a random name", "-", err))?;
    Ok(format!("idgen_test_{}_{random:016x}", std::process::id()))
}
