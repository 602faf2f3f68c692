//! [`StoppablePostgres`]: a local PostgreSQL server of one test that the test stops and starts.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sqlx::Postgres;

use super::{LaunchSpec, postgres, prepared_argv, unprivileged, until_ready, watchdog};
use crate::admin;
use crate::error::Error;
use crate::server::Server;
use crate::test_db::TestDb;

const WHAT: &str = "a stoppable local PostgreSQL server";

/// A throwaway local PostgreSQL server (from `initdb` and `postgres`, as
/// [`postgres`](super::postgres) starts one) that belongs to one test, which can
/// [`stop`](StoppablePostgres::stop) it (a fast shutdown: sessions are ended, new connections
/// refused) and [`start`](StoppablePostgres::start) it again on the same data and port, to test
/// what happens when a database server goes away and comes back.
///
/// Each run is under a watchdog, so the server stops when the test process ends, however it
/// ends; dropping the handle stops it and deletes its directory.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// use idgen_testdb::local_server::StoppablePostgres;
///
/// let mut server = StoppablePostgres::launch().await?;
/// let db = server.database().await?;
/// server.stop().await?;                       // connections fail now
/// assert!(sqlx::query("SELECT 1").execute(db.pool()).await.is_err());
/// server.start().await?;                      // the same data, the same port
/// sqlx::query("SELECT 1").execute(db.pool()).await.unwrap();
/// # Ok(()) }
/// ```
pub struct StoppablePostgres {
    /// The server's directory: `data` (kept across runs) and one `run-N` per run (its log).
    dir: PathBuf,
    argv: Vec<String>,
    stop_signal: &'static str,
    admin_url: String,
    runs: u32,
    running: Option<(watchdog::Watchdog, PathBuf)>,
    /// The server as the databases made on it know it (never stopped through this).
    server: std::sync::Arc<Server>,
}

impl StoppablePostgres {
    /// Initialises a data directory and starts the server on a free port of 127.0.0.1.
    pub async fn launch() -> Result<StoppablePostgres, Error> {
        let spec: LaunchSpec = postgres::spec()?;
        let runner = unprivileged::Runner::for_this_process(WHAT)?;
        crate::stale::sweep_once();
        let dir = tempfile::Builder::new()
            .prefix(&crate::stale::dir_prefix("pg-stoppable"))
            .tempdir()
            .map_err(|e| Error::start(WHAT, format!("no temporary directory: {e}")))?
            .keep();
        let (port, argv) = prepared_argv(&spec, &runner, &dir)?;
        let admin_url = (spec.admin_url)(port);
        let mut server = StoppablePostgres {
            dir,
            argv,
            stop_signal: spec.stop_signal,
            server: std::sync::Arc::new(Server::new(spec.kind, admin_url.clone(), None)),
            admin_url,
            runs: 0,
            running: None,
        };
        server.start().await?;
        Ok(server)
    }

    /// A new, empty database on this server (dropped with the [`TestDb`], if the server runs
    /// then).
    pub async fn database(&self) -> Result<TestDb<Postgres>, Error> {
        TestDb::create_on(self.server.clone()).await
    }

    /// The administrator URL, `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> &str {
        &self.admin_url
    }

    /// Whether the server runs (as far as this handle started and stopped it).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// Starts the server again (nothing to do if it runs) and waits until it answers.
    pub async fn start(&mut self) -> Result<(), Error> {
        if self.running.is_some() {
            return Ok(());
        }
        self.runs += 1;
        // The watchdog deletes its directory after a stop: a run directory of its own, so the
        // data directory stays.
        let run_dir = self.dir.join(format!("run-{}", self.runs));
        std::fs::create_dir_all(&run_dir)
            .map_err(|e| Error::start(WHAT, format!("cannot create {}: {e}", run_dir.display())))?;
        let watchdog = watchdog::Watchdog::spawn(&run_dir, self.stop_signal, &self.argv, WHAT)?;
        let ready = until_ready(
            &watchdog,
            &run_dir,
            crate::server::ServerKind::Postgres,
            &self.admin_url,
            WHAT,
        )
        .await;
        if let Err(err) = ready {
            watchdog.stop(&run_dir);
            return Err(err);
        }
        self.running = Some((watchdog, run_dir));
        Ok(())
    }

    /// Stops the server with a fast shutdown (PostgreSQL's SIGINT: open sessions are ended)
    /// and waits until it has exited. Nothing to do if it is stopped.
    pub async fn stop(&mut self) -> Result<(), Error> {
        let Some((watchdog, run_dir)) = self.running.take() else {
            return Ok(());
        };
        // The watchdog signals the server and waits for it; its run directory goes with it.
        tokio::task::spawn_blocking(move || watchdog.stop(&run_dir))
            .await
            .map_err(|e| Error::start(WHAT, format!("the stop did not finish: {e}")))?;
        // The port is closed once the postmaster is gone.
        let deadline = Instant::now() + Duration::from_secs(30);
        while admin::ping(crate::server::ServerKind::Postgres, &self.admin_url)
            .await
            .is_ok()
        {
            if Instant::now() >= deadline {
                return Err(Error::start(WHAT, "still answering 30 s after the stop"));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

impl Drop for StoppablePostgres {
    fn drop(&mut self) {
        if let Some((watchdog, run_dir)) = self.running.take() {
            watchdog.stop(&run_dir);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
