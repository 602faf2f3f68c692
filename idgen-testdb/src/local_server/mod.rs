//! Path 3: a throwaway server started from locally installed binaries.
//!
//! The first test that needs one starts it: a fresh data directory in a temporary directory, a
//! free port on 127.0.0.1, no password (trust / empty root password). Every later test of the
//! same process reuses it. When the process ends, however it ends, a small watchdog process
//! stops the server and deletes the directory (it waits for the end of a pipe that only this
//! process holds open).
//!
//! PostgreSQL refuses to run as root, so when the tests run as root the servers run as the
//! unprivileged user `nobody` (or `$IDGEN_TESTKIT_USER`), through `setpriv` or `runuser`.
//!
//! The functions here skip the discovery order and always use this path, e.g. to test it on a
//! machine where `IDGEN_POSTGRES_URL` is set:
//!
//! ```no_run
//! # async fn demo() -> Result<(), idgen_testdb::Error> {
//! let db = idgen_testdb::local_server::postgres().await?;
//! sqlx::query("SELECT 1").execute(db.pool()).await.unwrap();
//! # Ok(()) }
//! ```

mod binaries;
#[cfg(feature = "etcd")]
pub(crate) mod etcd;
#[cfg(feature = "etcd")]
pub mod etcd_cluster;
mod mariadb;
mod postgres;
#[cfg(feature = "redis")]
mod redis;
mod stoppable;
mod unprivileged;
mod watchdog;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sqlx::{MySql, Postgres};

pub use stoppable::StoppablePostgres;

use crate::admin;
use crate::error::Error;
use crate::server::{Server, ServerKind, SharedServers};
use crate::test_db::TestDb;

/// A new, empty database on this process's throwaway local PostgreSQL server (started on first
/// use from `initdb` and `postgres`).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::local_server::postgres().await?;
/// assert!(db.url().starts_with("postgres://postgres@127.0.0.1:"));
/// # Ok(()) }
/// ```
pub async fn postgres() -> Result<TestDb<Postgres>, Error> {
    TestDb::create_on(shared(ServerKind::Postgres).await?).await
}

/// A new, empty database on this process's throwaway local MariaDB server (started on first use
/// from `mariadb-install-db` and `mariadbd`).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::local_server::mysql().await?;
/// assert!(db.url().starts_with("mysql://root@127.0.0.1:"));
/// # Ok(()) }
/// ```
pub async fn mysql() -> Result<TestDb<MySql>, Error> {
    TestDb::create_on(shared(ServerKind::MySql).await?).await
}

/// A new, empty database on a throwaway local MariaDB server of its own, started (on first use)
/// with `--autocommit=0`: every session begins with autocommit off, as on a server configured
/// that way. For tests of code that must not rely on autocommit; the server is never one other
/// tests share, and it ignores `IDGEN_MYSQL_URL` and Docker.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::local_server::mysql_autocommit_off().await?;
/// let on: i64 = sqlx::query_scalar("SELECT @@autocommit").fetch_one(db.pool()).await.unwrap();
/// assert_eq!(on, 0);
/// # Ok(()) }
/// ```
pub async fn mysql_autocommit_off() -> Result<TestDb<MySql>, Error> {
    static SERVER: tokio::sync::OnceCell<Result<Arc<Server>, Error>> =
        tokio::sync::OnceCell::const_new();
    let server = SERVER
        .get_or_init(|| async { mariadb::start(&["--autocommit=0"]).await.map(Arc::new) })
        .await
        .clone()?;
    TestDb::create_on(server).await
}

/// The process's local server of `kind`, started on first use.
pub(crate) async fn shared(kind: ServerKind) -> Result<Arc<Server>, Error> {
    static LOCAL: SharedServers = SharedServers::new();
    LOCAL
        .get_or_start(kind, || async move {
            match kind {
                ServerKind::Postgres => postgres::start().await,
                ServerKind::MySql => mariadb::start(&[]).await,
                #[cfg(feature = "etcd")]
                ServerKind::Etcd => etcd::start().await,
                #[cfg(feature = "redis")]
                ServerKind::Redis => redis::start().await,
                #[allow(unreachable_patterns)]
                other => Err(Error::start(
                    format!("a local {} server", other.name()),
                    format!(
                        "idgen-testkit was built without its `{}` feature",
                        other.name().to_lowercase()
                    ),
                )),
            }
        })
        .await
}

/// A port on 127.0.0.1 that was free a moment ago.
pub(crate) fn free_port() -> Result<u16, Error> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|err| {
            Error::start(
                "a local server",
                format!("no free port on 127.0.0.1: {err}"),
            )
        })
}

/// How many times a server start is tried (another process may take the port in between).
const START_ATTEMPTS: usize = 3;
/// How long a started server may take to accept connections.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How to initialise and run one kind of local server.
struct LaunchSpec {
    kind: ServerKind,
    /// For messages, e.g. `a local PostgreSQL server`.
    what: &'static str,
    /// For the temporary directory's name, e.g. `pg`.
    dir_tag: &'static str,
    /// The program that creates a data directory (none: the server makes its own), and its
    /// arguments for a working directory.
    init: Option<PathBuf>,
    init_args: fn(&Path) -> Vec<String>,
    /// The server program, its arguments for a working directory and port, and its stop signal.
    server: PathBuf,
    server_args: fn(&Path, u16) -> Vec<String>,
    /// More server arguments (settings of one server), after `server_args`.
    extra_server_args: Vec<String>,
    stop_signal: &'static str,
    /// The administrator URL for a port.
    admin_url: fn(u16) -> String,
}

impl LaunchSpec {
    /// The server `server` of `kind`, which makes its own data directory, takes no more
    /// arguments than `server_args` and stops on SIGTERM; the methods below change that.
    fn new(
        kind: ServerKind,
        what: &'static str,
        dir_tag: &'static str,
        server: PathBuf,
        server_args: fn(&Path, u16) -> Vec<String>,
        admin_url: fn(u16) -> String,
    ) -> Self {
        LaunchSpec {
            kind,
            what,
            dir_tag,
            init: None,
            init_args: |_| Vec::new(),
            server,
            server_args,
            extra_server_args: Vec::new(),
            stop_signal: "TERM",
            admin_url,
        }
    }

    /// The data directory is made first by `init` with `init_args`.
    fn with_init(mut self, init: PathBuf, init_args: fn(&Path) -> Vec<String>) -> Self {
        self.init = Some(init);
        self.init_args = init_args;
        self
    }

    /// `extra` after the server's usual arguments.
    fn with_extra_server_args(mut self, extra: &[&str]) -> Self {
        self.extra_server_args = extra.iter().map(|a| (*a).to_owned()).collect();
        self
    }

    /// The server stops on `signal` (a `kill -s` name) instead of SIGTERM.
    fn stopped_by(mut self, signal: &'static str) -> Self {
        self.stop_signal = signal;
        self
    }
}

/// Starts the server of `spec`, retrying with a new directory and port a few times.
async fn launch(spec: LaunchSpec) -> Result<Server, Error> {
    let runner = unprivileged::Runner::for_this_process(spec.what)?;
    let mut last_error = None;
    for _ in 0..START_ATTEMPTS {
        match launch_once(&spec, &runner).await {
            Ok(server) => return Ok(server),
            Err(err) => last_error = Some(err),
        }
    }
    Err(last_error.unwrap_or_else(|| Error::start(spec.what, "no attempt was made")))
}

async fn launch_once(spec: &LaunchSpec, runner: &unprivileged::Runner) -> Result<Server, Error> {
    let what = spec.what;
    crate::stale::sweep_once();
    let dir = tempfile::Builder::new()
        .prefix(&crate::stale::dir_prefix(spec.dir_tag))
        .tempdir()
        .map_err(|err| Error::start(what, format!("cannot create a temporary directory: {err}")))?
        .keep();
    let (port, argv) = prepared_argv(spec, runner, &dir)?;
    let watchdog = watchdog::Watchdog::spawn(&dir, spec.stop_signal, &argv, what)?;
    let admin_url = (spec.admin_url)(port);

    if let Err(err) = until_ready(&watchdog, &dir, spec.kind, &admin_url, what).await {
        watchdog.stop(&dir);
        return Err(err);
    }
    let description = format!(
        "local binaries: {} at 127.0.0.1:{port}, data in {}",
        spec.server.display(),
        dir.display()
    );
    Ok(Server::new(spec.kind, admin_url, Some(Box::new(watchdog))).described(description))
}

/// Prepares `dir` ([`prepare`]; deleted if that fails) and picks a free port: the port and the
/// server's command line for them.
fn prepared_argv(
    spec: &LaunchSpec,
    runner: &unprivileged::Runner,
    dir: &Path,
) -> Result<(u16, Vec<String>), Error> {
    if let Err(err) = prepare(spec, runner, dir) {
        let _ = std::fs::remove_dir_all(dir);
        return Err(err);
    }
    let port = free_port()?;
    let mut argv = runner.argv(&spec.server);
    argv.extend((spec.server_args)(dir, port));
    argv.extend(spec.extra_server_args.iter().cloned());
    Ok((port, argv))
}

/// Waits until the server under `watchdog` (its log in `log_dir`) answers at `admin_url`:
/// an error with the log's last lines if it exits or does not answer within [`READY_TIMEOUT`].
/// The caller stops the watchdog on an error.
async fn until_ready(
    watchdog: &watchdog::Watchdog,
    log_dir: &Path,
    kind: ServerKind,
    admin_url: &str,
    what: &str,
) -> Result<(), Error> {
    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
    loop {
        if watchdog.server_exited() {
            let log = watchdog::log_tail(log_dir);
            return Err(Error::start(
                what,
                format!("the server exited at once; its log ends: {log}"),
            ));
        }
        match admin::ping(kind, admin_url).await {
            Ok(()) => return Ok(()),
            Err(err) if tokio::time::Instant::now() >= deadline => {
                let log = watchdog::log_tail(log_dir);
                return Err(Error::start(
                    what,
                    format!("no answer within {READY_TIMEOUT:?} ({err}); its log ends: {log}"),
                ));
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
}

/// Gives `dir` to the server's user and creates the data directory in it.
fn prepare(spec: &LaunchSpec, runner: &unprivileged::Runner, dir: &Path) -> Result<(), Error> {
    let what = spec.what;
    runner.give(dir, what)?;
    let Some(init) = &spec.init else {
        return Ok(());
    };
    let log_path = dir.join("init.log");
    let log = std::fs::File::create(&log_path)
        .and_then(|f| Ok((f.try_clone()?, f)))
        .map_err(|err| {
            Error::start(what, format!("cannot create {}: {err}", log_path.display()))
        })?;
    let status = runner
        .command(init)
        .args((spec.init_args)(dir))
        .stdin(std::process::Stdio::null())
        .stdout(log.0)
        .stderr(log.1)
        .status()
        .map_err(|err| Error::start(what, format!("cannot run {}: {err}", init.display())))?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(8)..].join(" | ");
    Err(Error::start(
        what,
        format!("{} failed ({status}): {tail}", init.display()),
    ))
}
