//! Path 2: PostgreSQL and MySQL/MariaDB in containers, through `testcontainers` (feature
//! `docker`).
//!
//! Used when no URL is set and a Docker engine answers (`DOCKER_HOST`, or a socket at
//! `/var/run/docker.sock` or `~/.docker/run/docker.sock`). One container per database kind is
//! started by the first test that needs it and shared by every test of the process; each test
//! still gets its own database in it. Which image:
//!
//! | kind | the engine has the local image (`scripts/test-images`) | otherwise (pulled from a registry) |
//! |---|---|---|
//! | PostgreSQL | `idgen-test/postgres:15` (Debian's PostgreSQL 15) | `postgres:15-alpine` |
//! | MySQL/MariaDB | `idgen-test/mariadb:10.11` (Debian's MariaDB 10.11) | `mysql:8.1` |
//!
//! Both kinds of image are started the same way (the local ones are built to behave like the
//! official ones): PostgreSQL with `POSTGRES_PASSWORD=postgres`, `POSTGRES_INITDB_ARGS=--no-sync`
//! and `fsync=off`, ready once "database system is ready to accept connections" was logged by
//! the init server (stdout) and the real one (stderr); MariaDB with
//! `MARIADB_ALLOW_EMPTY_ROOT_PASSWORD`, ready at "mariadbd: ready for connections." and
//! "port: 3306" (stderr); MySQL with `MYSQL_ALLOW_EMPTY_PASSWORD`, ready at "X Plugin ready for
//! connections. Bind-address" and "/usr/sbin/mysqld: ready for connections." (stderr). The
//! data directory is a tmpfs, and 300 connections are allowed. A local image is never pulled;
//! an official one is pulled if missing.
//!
//! The container is removed when the process ends, however it ends (even on SIGKILL): a
//! watchdog shell waits for the end of a pipe only this process holds, then runs `docker rm -f`
//! (when the `docker` command is installed; otherwise remove leftover containers, labelled
//! `org.idgen.testkit.pid`, yourself).
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
use std::time::Duration;

use sqlx::{MySql, Postgres};
use testcontainers_modules::testcontainers::core::Mount;
use testcontainers_modules::testcontainers::core::client::docker_client_instance;
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{ContainerAsync, ContainerRequest, Image, ImageExt};
use testcontainers_modules::{mariadb::Mariadb, mysql::Mysql, postgres::Postgres as PostgresImage};

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

/// A new, empty database in this process's MySQL/MariaDB container (started on first use).
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
    CONTAINERS
        .get_or_start(kind, || Box::pin(start(kind)))
        .await
}

/// The local PostgreSQL image made by `scripts/test-images`.
pub(crate) const LOCAL_POSTGRES: (&str, &str) = ("idgen-test/postgres", "15");
/// The local MariaDB image made by `scripts/test-images`.
pub(crate) const LOCAL_MARIADB: (&str, &str) = ("idgen-test/mariadb", "10.11");
/// The official PostgreSQL image, used when the local one is missing.
pub(crate) const OFFICIAL_POSTGRES: (&str, &str) = ("postgres", "15-alpine");
/// The official MySQL image, used when the local MariaDB image is missing.
pub(crate) const OFFICIAL_MYSQL: (&str, &str) = ("mysql", "8.1");

/// How long a container may take to be ready (a pull of an official image included).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(300);

async fn start(kind: Kind) -> Result<Server, Error> {
    let what = format!("a {} container", kind.name());
    if !docker_reachable() {
        return Err(Error::start(
            what,
            "no Docker engine answers (DOCKER_HOST is unset and no socket at /var/run/docker.sock or ~/.docker/run/docker.sock)",
        ));
    }
    let local = match kind {
        Kind::Postgres => LOCAL_POSTGRES,
        Kind::MySql => LOCAL_MARIADB,
    };
    let has_local = image_present(local, &what).await?;
    match (kind, has_local) {
        (Kind::Postgres, local_image) => {
            let (name, tag) = if local_image {
                LOCAL_POSTGRES
            } else {
                OFFICIAL_POSTGRES
            };
            let request = common(PostgresImage::default().with_name(name).with_tag(tag))
                .with_env_var("POSTGRES_INITDB_ARGS", "--no-sync")
                .with_cmd(["-c", "fsync=off", "-c", "max_connections=300"])
                .with_mount(Mount::tmpfs_mount("/var/lib/postgresql/data"));
            let url = |host: &str, port: u16| {
                format!("postgres://postgres:postgres@{host}:{port}/postgres")
            };
            finish(
                kind,
                run(request, &what).await?,
                5432,
                url,
                image_note(name, tag, local_image),
                &what,
            )
            .await
        }
        (Kind::MySql, true) => {
            let (name, tag) = LOCAL_MARIADB;
            let request = common(Mariadb::default().with_name(name).with_tag(tag))
                .with_cmd(["mariadbd", "--max-connections=300"])
                .with_mount(Mount::tmpfs_mount("/var/lib/mysql"));
            let url = |host: &str, port: u16| format!("mysql://root@{host}:{port}/test");
            finish(
                kind,
                run(request, &what).await?,
                3306,
                url,
                image_note(name, tag, true),
                &what,
            )
            .await
        }
        (Kind::MySql, false) => {
            let (name, tag) = OFFICIAL_MYSQL;
            let request = common(Mysql::default().with_name(name).with_tag(tag))
                .with_cmd(["mysqld", "--max-connections=300"])
                .with_mount(Mount::tmpfs_mount("/var/lib/mysql"));
            let url = |host: &str, port: u16| format!("mysql://root@{host}:{port}/test");
            finish(
                kind,
                run(request, &what).await?,
                3306,
                url,
                image_note(name, tag, false),
                &what,
            )
            .await
        }
    }
}

/// What every container of the kit gets: a label naming this process, and a start-up bound.
fn common<I: Image>(request: ContainerRequest<I>) -> ContainerRequest<I> {
    request
        .with_label("org.idgen.testkit.pid", std::process::id().to_string())
        .with_startup_timeout(STARTUP_TIMEOUT)
}

fn image_note(name: &str, tag: &str, local: bool) -> String {
    if local {
        format!("{name}:{tag} (local image from scripts/test-images)")
    } else {
        format!(
            "{name}:{tag} (official image; the local one is missing: run scripts/test-images to build it)"
        )
    }
}

/// Whether the engine has `image` (the engine answering "no such image" is `false`).
async fn image_present((name, tag): (&str, &str), what: &str) -> Result<bool, Error> {
    let docker = docker_client_instance()
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    match docker.inspect_image(&format!("{name}:{tag}")).await {
        Ok(_) => Ok(true),
        Err(testcontainers_modules::testcontainers::bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }) => Ok(false),
        Err(err) => Err(Error::start(what, err.to_string())),
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
    image: String,
    what: &str,
) -> Result<Server, Error> {
    // Removed when this process ends, even if the steps below fail.
    let remover = Remover::spawn(container.id());
    let host = container
        .get_host()
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    let port = container
        .get_host_port_ipv4(internal_port)
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    // MySQL's C client (diesel) takes `localhost` for its Unix socket, not TCP.
    let host = match host.to_string() {
        local if local == "localhost" => "127.0.0.1".to_owned(),
        other => other,
    };
    let admin_url = url(&host, port);
    admin::ping(kind, &admin_url).await?;
    let id = container.id().chars().take(12).collect::<String>();
    Ok(
        Server::new(kind, admin_url, Some(Box::new((container, remover)))).described(format!(
            "containers: {image}, container {id} at {host}:{port}"
        )),
    )
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
