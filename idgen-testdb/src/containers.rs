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
//! an official one is pulled if missing. These facts (and those of the etcd and Redis images)
//! are one table, a row per image, that a single start-up function reads.
//!
//! The container is removed when the process ends, however it ends (even on SIGKILL): a
//! watchdog shell waits for the end of a pipe only this process holds, then runs `docker rm -f`
//! (when the `docker` command is installed; otherwise remove leftover containers, labelled
//! `org.idgen.testkit.pid`, yourself).
//!
//! The functions here skip the discovery order and always use this path:
//!
//! ```no_run
//! # async fn demo() -> Result<(), idgen_testdb::Error> {
//! let db = idgen_testdb::containers::postgres().await?;
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
use testcontainers_modules::testcontainers::core::{IntoContainerPort, WaitFor};
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{
    ContainerAsync, ContainerRequest, GenericImage, Image, ImageExt,
};

use crate::admin;
use crate::error::Error;
use crate::server::{Server, ServerKind, SharedServers};
use crate::test_db::TestDb;

/// A new, empty database in this process's PostgreSQL container (started on first use).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::containers::postgres().await?;
/// assert!(db.url().starts_with("postgres://"));
/// # Ok(()) }
/// ```
pub async fn postgres() -> Result<TestDb<Postgres>, Error> {
    TestDb::create_on(shared(ServerKind::Postgres).await?).await
}

/// A new, empty database in this process's MySQL/MariaDB container (started on first use).
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let db = idgen_testdb::containers::mysql().await?;
/// assert!(db.url().starts_with("mysql://"));
/// # Ok(()) }
/// ```
pub async fn mysql() -> Result<TestDb<MySql>, Error> {
    TestDb::create_on(shared(ServerKind::MySql).await?).await
}

/// The process's container of `kind`, started on first use.
pub(crate) async fn shared(kind: ServerKind) -> Result<Arc<Server>, Error> {
    static CONTAINERS: SharedServers = SharedServers::new();
    CONTAINERS
        .get_or_start(kind, || Box::pin(start(kind)))
        .await
}

/// How long a container may take to be ready (a pull of an official image included).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(300);

/// Where a container logs a line the kit waits for.
#[derive(Clone, Copy)]
enum Log {
    Stdout,
    Stderr,
    Either,
}

impl Log {
    fn wait_for(self, line: &str) -> WaitFor {
        match self {
            Log::Stdout => WaitFor::message_on_stdout(line),
            Log::Stderr => WaitFor::message_on_stderr(line),
            Log::Either => WaitFor::message_on_either_std(line),
        }
    }
}

/// One image the kit starts, with everything that differs between images: the one function
/// [`start`] reads these facts.
struct ImageSpec {
    /// Name and tag.
    image: (&'static str, &'static str),
    /// The port the server listens on inside the container.
    port: u16,
    env: &'static [(&'static str, &'static str)],
    cmd: &'static [&'static str],
    /// The lines that say the server is ready, each on its stream.
    ready: &'static [(Log, &'static str)],
    /// The data directory, mounted as a tmpfs (none: the server keeps no files).
    tmpfs: Option<&'static str>,
    /// The administrator URL for a host and the mapped port.
    url: fn(&str, u16) -> String,
}

/// The local PostgreSQL image made by `scripts/test-images`, run like the official one.
const LOCAL_POSTGRES: ImageSpec = ImageSpec {
    image: ("idgen-test/postgres", "15"),
    port: 5432,
    env: &[
        ("POSTGRES_DB", "postgres"),
        ("POSTGRES_USER", "postgres"),
        ("POSTGRES_PASSWORD", "postgres"),
        ("POSTGRES_INITDB_ARGS", "--no-sync"),
    ],
    cmd: &["-c", "fsync=off", "-c", "max_connections=300"],
    // The init server logs it on stdout, the real one on stderr.
    ready: &[
        (
            Log::Stderr,
            "database system is ready to accept connections",
        ),
        (
            Log::Stdout,
            "database system is ready to accept connections",
        ),
    ],
    tmpfs: Some("/var/lib/postgresql/data"),
    url: |host, port| format!("postgres://postgres:postgres@{host}:{port}/postgres"),
};
/// The official PostgreSQL image, used when the local one is missing.
const OFFICIAL_POSTGRES: ImageSpec = ImageSpec {
    image: ("postgres", "15-alpine"),
    ..LOCAL_POSTGRES
};

/// The local MariaDB image made by `scripts/test-images`, run like the official one.
const LOCAL_MARIADB: ImageSpec = ImageSpec {
    image: ("idgen-test/mariadb", "10.11"),
    port: 3306,
    env: &[
        ("MARIADB_DATABASE", "test"),
        ("MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "1"),
    ],
    cmd: &["mariadbd", "--max-connections=300"],
    ready: &[
        (Log::Stderr, "mariadbd: ready for connections."),
        (Log::Stderr, "port: 3306"),
    ],
    tmpfs: Some("/var/lib/mysql"),
    url: |host, port| format!("mysql://root@{host}:{port}/test"),
};
/// The official MySQL image, used when the local MariaDB image is missing.
const OFFICIAL_MYSQL: ImageSpec = ImageSpec {
    image: ("mysql", "8.1"),
    env: &[
        ("MYSQL_DATABASE", "test"),
        ("MYSQL_ALLOW_EMPTY_PASSWORD", "yes"),
    ],
    cmd: &["mysqld", "--max-connections=300"],
    ready: &[
        (Log::Stderr, "X Plugin ready for connections. Bind-address"),
        (Log::Stderr, "/usr/sbin/mysqld: ready for connections."),
    ],
    ..LOCAL_MARIADB
};

/// The local etcd image made by `scripts/test-images` (Debian's etcd-server).
const LOCAL_ETCD: ImageSpec = ImageSpec {
    image: ("idgen-test/etcd", "3.4"),
    port: 2379,
    env: &[],
    cmd: &[
        "etcd",
        "--name=idgen",
        "--data-dir=/var/lib/etcd/data",
        "--listen-client-urls=http://0.0.0.0:2379",
        "--advertise-client-urls=http://127.0.0.1:2379",
        "--listen-peer-urls=http://127.0.0.1:2380",
        "--initial-advertise-peer-urls=http://127.0.0.1:2380",
        "--initial-cluster=idgen=http://127.0.0.1:2380",
    ],
    ready: &[(Log::Either, "ready to serve client requests")],
    tmpfs: Some("/var/lib/etcd"),
    url: |host, port| format!("http://{host}:{port}"),
};
/// The official etcd image, used when the local one is missing.
const OFFICIAL_ETCD: ImageSpec = ImageSpec {
    image: ("quay.io/coreos/etcd", "v3.5.17"),
    ..LOCAL_ETCD
};

/// The local Redis image made by `scripts/test-images` (Debian's redis-server).
const LOCAL_REDIS: ImageSpec = ImageSpec {
    image: ("idgen-test/redis", "7.0"),
    port: 6379,
    env: &[],
    cmd: &[
        "redis-server",
        "--bind",
        "0.0.0.0",
        "--protected-mode",
        "no",
        "--save",
        "",
        "--appendonly",
        "no",
    ],
    ready: &[(Log::Stdout, "Ready to accept connections")],
    tmpfs: None,
    url: |host, port| format!("redis://{host}:{port}/"),
};
/// The official Redis image, used when the local one is missing.
const OFFICIAL_REDIS: ImageSpec = ImageSpec {
    image: ("redis", "7-alpine"),
    ..LOCAL_REDIS
};

/// The local image of `kind` and the official one used in its place when it is missing.
fn images(kind: ServerKind) -> (&'static ImageSpec, &'static ImageSpec) {
    match kind {
        ServerKind::Postgres => (&LOCAL_POSTGRES, &OFFICIAL_POSTGRES),
        ServerKind::MySql => (&LOCAL_MARIADB, &OFFICIAL_MYSQL),
        ServerKind::Etcd => (&LOCAL_ETCD, &OFFICIAL_ETCD),
        ServerKind::Redis => (&LOCAL_REDIS, &OFFICIAL_REDIS),
    }
}

async fn start(kind: ServerKind) -> Result<Server, Error> {
    let what = format!("a {} container", kind.name());
    if !docker_reachable() {
        return Err(Error::start(
            what,
            "no Docker engine answers (DOCKER_HOST is unset and no socket at /var/run/docker.sock or ~/.docker/run/docker.sock)",
        ));
    }
    let (local, official) = images(kind);
    let has_local = image_present(local.image, &what).await?;
    let spec = if has_local { local } else { official };
    let (name, tag) = spec.image;
    let mut image = GenericImage::new(name, tag).with_exposed_port(spec.port.tcp());
    for &(log, line) in spec.ready {
        image = image.with_wait_for(log.wait_for(line));
    }
    let mut request = common(image.into()).with_cmd(spec.cmd.iter().copied());
    for &(var, value) in spec.env {
        request = request.with_env_var(var, value);
    }
    if let Some(dir) = spec.tmpfs {
        request = request.with_mount(Mount::tmpfs_mount(dir));
    }
    let container = run(request, &what).await?;
    finish(
        kind,
        container,
        spec,
        image_note(name, tag, has_local),
        &what,
    )
    .await
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
    kind: ServerKind,
    container: ContainerAsync<I>,
    spec: &ImageSpec,
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
        .get_host_port_ipv4(spec.port)
        .await
        .map_err(|err| Error::start(what, err.to_string()))?;
    // MySQL's C client (diesel) takes `localhost` for its Unix socket, not TCP.
    let host = match host.to_string() {
        local if local == "localhost" => "127.0.0.1".to_owned(),
        other => other,
    };
    let admin_url = (spec.url)(&host, port);
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
