//! Path 2: PostgreSQL and MySQL in containers, through `testcontainers` (feature `docker`).
//!
//! Used when no URL is set and a Docker engine answers (`DOCKER_HOST`, or a socket at
//! `/var/run/docker.sock` or `~/.docker/run/docker.sock`). One container per database kind is
//! started by the first test that needs it (`postgres:15-alpine`, `mysql:8.1`) and shared by
//! every test of the process; each test still gets its own database in it. The container is
//! removed when the process ends by a watchdog that runs `docker rm -f` (when the `docker`
//! command is installed; otherwise remove leftover containers yourself).
//!
//! The functions here skip the discovery order and always use this path:
//!
//! ```no_run
//! # async fn demo() -> Result<(), idgen_testkit::Error> {
//! let db = idgen_testkit::containers::postgres().await?;
//! sqlx::query("SELECT 1").execute(db.pool()).await.unwrap();
//! # Ok(()) }
//! ```

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use sqlx::{MySql, Postgres};
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{ContainerAsync, Image, ImageExt};
use testcontainers_modules::{mysql::Mysql, postgres::Postgres as PostgresImage};

use crate::server::{Kind, Server, SharedServers};
use crate::{Error, TestDb, admin};

/// A new, empty database in this process's PostgreSQL container (started on first use).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testkit::Error> {
/// let db = idgen_testkit::containers::postgres().await?;
/// assert!(db.url().starts_with("postgres://"));
/// # Ok(()) }
/// ```
pub async fn postgres() -> Result<TestDb<Postgres>, Error> {
    TestDb::create_on(shared(Kind::Postgres).await?).await
}

/// A new, empty database in this process's MySQL container (started on first use).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testkit::Error> {
/// let db = idgen_testkit::containers::mysql().await?;
/// assert!(db.url().starts_with("mysql://"));
/// # Ok(()) }
/// ```
pub async fn mysql() -> Result<TestDb<MySql>, Error> {
    TestDb::create_on(shared(Kind::MySql).await?).await
}

/// The process's container of `kind`, started on first use.
pub(crate) async fn shared(kind: Kind) -> Result<Arc<Server>, Error> {
    static CONTAINERS: SharedServers = SharedServers::new();
    CONTAINERS.get_or_start(kind, || start(kind)).await
}

async fn start(kind: Kind) -> Result<Server, Error> {
    let what = format!("a {} container", kind.name());
    if !docker_reachable() {
        return Err(Error::start(
            what,
            "no Docker engine answers (DOCKER_HOST is unset and no socket at /var/run/docker.sock or ~/.docker/run/docker.sock)",
        ));
    }
    match kind {
        Kind::Postgres => {
            let container = run(PostgresImage::default().with_tag("15-alpine"), &what).await?;
            let url = |host: &str, port: u16| {
                format!("postgres://postgres:postgres@{host}:{port}/postgres")
            };
            finish(kind, container, 5432, url, &what).await
        }
        Kind::MySql => {
            let container = run(Mysql::default(), &what).await?;
            let url = |host: &str, port: u16| format!("mysql://root@{host}:{port}/test");
            finish(kind, container, 3306, url, &what).await
        }
    }
}

async fn run<I: Image>(image: impl AsyncRunner<I>, what: &str) -> Result<ContainerAsync<I>, Error> {
    image
        .start()
        .await
        .map_err(|err| Error::start(what, err.to_string()))
}

async fn finish<I: Image + 'static>(
    kind: Kind,
    container: ContainerAsync<I>,
    internal_port: u16,
    url: impl Fn(&str, u16) -> String,
    what: &str,
) -> Result<Server, Error> {
    let host = container
        .get_host()
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    let port = container
        .get_host_port_ipv4(internal_port)
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    let admin_url = url(&host.to_string(), port);
    admin::ping(kind, &admin_url).await?;
    let remover = Remover::spawn(container.id());
    Ok(Server::new(
        kind,
        admin_url,
        Some(Box::new((container, remover))),
    ))
}

/// Whether a Docker engine is likely to answer: `DOCKER_HOST` is set or a socket accepts.
fn docker_reachable() -> bool {
    if std::env::var_os("DOCKER_HOST").is_some_and(|h| !h.is_empty()) {
        return true;
    }
    let mut sockets = vec![PathBuf::from("/var/run/docker.sock")];
    if let Some(home) = std::env::var_os("HOME") {
        sockets.push(PathBuf::from(home).join(".docker/run/docker.sock"));
    }
    sockets
        .iter()
        .any(|s| std::os::unix::net::UnixStream::connect(s).is_ok())
}

/// Runs `docker rm -f <id>` when this process ends (the shell waits for its stdin pipe to close).
struct Remover(#[allow(dead_code)] Option<Mutex<Child>>);

impl Remover {
    fn spawn(id: &str) -> Self {
        let child = Command::new("sh")
            .arg("-c")
            .arg(r#"cat >/dev/null; docker rm -f -v "$1""#)
            .arg("idgen-testkit-remover")
            .arg(id)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();
        Remover(child.map(Mutex::new))
    }
}
