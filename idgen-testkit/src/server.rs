//! A database server the tests of one binary share, and the discovery order that finds it.

use std::any::Any;
use std::io::Write;
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::Error;

/// The server databases a test can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Postgres,
    MySql,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "PostgreSQL",
            Kind::MySql => "MySQL/MariaDB",
        }
    }

    pub(crate) fn env_var(self) -> &'static str {
        match self {
            Kind::Postgres => "IDGEN_POSTGRES_URL",
            Kind::MySql => "IDGEN_MYSQL_URL",
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Postgres => 0,
            Kind::MySql => 1,
        }
    }
}

/// A running server and an administrator URL for it.
pub(crate) struct Server {
    pub(crate) kind: Kind,
    pub(crate) admin_url: String,
    /// Where it runs, for the route line, e.g. `containers: idgen-test/postgres:15 (…) at …`.
    pub(crate) description: String,
    /// Keeps a container or a local server's watchdog alive as long as the process runs.
    _guard: Option<Box<dyn Any + Send + Sync>>,
}

impl Server {
    pub(crate) fn new(
        kind: Kind,
        admin_url: String,
        guard: Option<Box<dyn Any + Send + Sync>>,
    ) -> Self {
        Server {
            kind,
            description: admin_url.clone(),
            admin_url,
            _guard: guard,
        }
    }

    /// The same server, also keeping `guard` alive.
    pub(crate) fn guarded(mut self, guard: impl Any + Send + Sync) -> Self {
        self._guard = Some(Box::new(guard));
        self
    }

    /// The same server, described for the route line.
    pub(crate) fn described(mut self, description: String) -> Self {
        self.description = description;
        self
    }
}

/// One lazily started server per kind, shared by every test of the process.
pub(crate) struct SharedServers([OnceCell<Result<Arc<Server>, Error>>; 2]);

impl SharedServers {
    pub(crate) const fn new() -> Self {
        SharedServers([OnceCell::const_new(), OnceCell::const_new()])
    }

    pub(crate) async fn get_or_start<F, Fut>(
        &'static self,
        kind: Kind,
        start: F,
    ) -> Result<Arc<Server>, Error>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Server, Error>>,
    {
        self.0[kind.index()]
            .get_or_init(|| async { start().await.map(Arc::new) })
            .await
            .clone()
    }
}

/// The server of the discovery order: env URL, else Docker, else local binaries, else an error.
/// The first call for each kind prints the route taken, and why the others were not, to stderr.
pub(crate) async fn discovered(kind: Kind) -> Result<Arc<Server>, Error> {
    static DISCOVERED: SharedServers = SharedServers::new();
    DISCOVERED
        .get_or_start(kind, || async move {
            let found = discover(kind).await;
            // Straight to stderr: the test harness captures `eprintln!` of passing tests.
            let line = match &found {
                Ok((server, skipped)) => route_line(kind, server, skipped),
                Err(err) => format!("idgen-testkit: no {} server: {err}", kind.name()),
            };
            let _ = writeln!(std::io::stderr(), "{line}");
            found.map(|(server, _)| server)
        })
        .await
}

/// The three routes, in the discovery order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Url,
    Containers,
    Local,
}

impl Route {
    const ALL: [Route; 3] = [Route::Url, Route::Containers, Route::Local];

    fn name(self) -> &'static str {
        match self {
            Route::Url => "url",
            Route::Containers => "containers",
            Route::Local => "local",
        }
    }

    fn label(self, kind: Kind) -> String {
        match self {
            Route::Url => format!("(1) {}", kind.env_var()),
            Route::Containers => "(2) containers".to_owned(),
            Route::Local => "(3) local binaries".to_owned(),
        }
    }

    /// The routes `IDGEN_TESTKIT_ROUTE` allows: all, or the one it names.
    fn allowed() -> Result<Vec<Route>, Error> {
        match std::env::var(ROUTE_VAR) {
            Err(_) => Ok(Route::ALL.to_vec()),
            Ok(value) if value.trim().is_empty() => Ok(Route::ALL.to_vec()),
            Ok(value) => Route::ALL
                .into_iter()
                .find(|route| route.name() == value.trim())
                .map(|route| vec![route])
                .ok_or_else(|| {
                    Error::NoServer(format!(
                        "{ROUTE_VAR}={value:?} names no route: use url, containers or local (or unset it for the discovery order)"
                    ))
                }),
        }
    }
}

/// Names the one route the tests may take (`url`, `containers`, `local`); CI sets it so that a
/// broken route fails instead of falling through to the next one.
pub(crate) const ROUTE_VAR: &str = "IDGEN_TESTKIT_ROUTE";

/// Why a route was not taken.
type Skipped = Vec<(Route, String)>;

async fn discover(kind: Kind) -> Result<(Server, Skipped), Error> {
    let allowed = Route::allowed()?;
    let mut skipped: Skipped = Vec::new();
    let mut found = None;
    for route in Route::ALL {
        if found.is_some() {
            skipped.push((
                route,
                format!("not tried: {} came first", found_label(kind, &found)),
            ));
            continue;
        }
        if !allowed.contains(&route) {
            skipped.push((
                route,
                format!("not tried: {ROUTE_VAR}={}", allowed[0].name()),
            ));
            continue;
        }
        match Box::pin(try_route(kind, route)).await {
            Ok(server) => found = Some((route, server)),
            Err(reason) => skipped.push((route, reason)),
        }
    }
    match found {
        Some((route, server)) => {
            let description = format!("{}, {}", route.label(kind), server.description);
            let server = server.described(description);
            Ok((server, skipped))
        }
        None => {
            let tried: Vec<String> = skipped
                .iter()
                .map(|(route, reason)| format!("{}: {reason}", route.label(kind)))
                .collect();
            Err(Error::NoServer(no_server_message(kind, &tried)))
        }
    }
}

fn found_label(kind: Kind, found: &Option<(Route, Server)>) -> String {
    found
        .as_ref()
        .map(|(route, _)| route.label(kind))
        .unwrap_or_default()
}

/// The server of one route, or why there is none.
async fn try_route(kind: Kind, route: Route) -> Result<Server, String> {
    match route {
        Route::Url => env_url(kind)
            .map(|url| Server::new(kind, url.clone(), None).described(url))
            .ok_or_else(|| "unset".to_owned()),
        Route::Containers => containers(kind).await,
        Route::Local => match crate::local_server::shared(kind).await {
            Ok(server) => Ok(Server::new(kind, server.admin_url.clone(), None)
                .described(server.description.clone())
                .guarded(server)),
            Err(err) => Err(err.to_string()),
        },
    }
}

#[cfg(feature = "docker")]
async fn containers(kind: Kind) -> Result<Server, String> {
    match crate::containers::shared(kind).await {
        Ok(server) => Ok(Server::new(kind, server.admin_url.clone(), None)
            .described(server.description.clone())
            .guarded(server)),
        Err(err) => Err(err.to_string()),
    }
}

#[cfg(not(feature = "docker"))]
async fn containers(_kind: Kind) -> Result<Server, String> {
    Err("idgen-testkit was built without its `docker` feature".to_owned())
}

/// `idgen-testkit: PostgreSQL: (2) containers, …; skipped (1) IDGEN_POSTGRES_URL: unset; …`
fn route_line(kind: Kind, server: &Server, skipped: &Skipped) -> String {
    let skipped: Vec<String> = skipped
        .iter()
        .map(|(route, reason)| format!("{}: {reason}", route.label(kind)))
        .collect();
    format!(
        "idgen-testkit: {} for this test binary: {}. Skipped: {}.",
        kind.name(),
        server.description,
        skipped.join("; ")
    )
}

fn env_url(kind: Kind) -> Option<String> {
    std::env::var(kind.env_var())
        .ok()
        .filter(|url| !url.trim().is_empty())
}

fn no_server_message(kind: Kind, tried: &[String]) -> String {
    let (example, binaries) = match kind {
        Kind::Postgres => (
            "postgres://postgres@127.0.0.1:5432/postgres",
            "initdb and postgres (on PATH or under /usr/lib/postgresql/<version>/bin; Debian: apt-get install postgresql)",
        ),
        Kind::MySql => (
            "mysql://root@127.0.0.1:3306/mysql",
            "mariadb-install-db and mariadbd (on PATH or in /usr/sbin; Debian: apt-get install mariadb-server)",
        ),
    };
    format!(
        "no {name} server for the tests. Give one in one of three ways: \
         (1) set {var} to the URL of a server where the user may create databases, e.g. {var}={example}; \
         (2) run a Docker engine (DOCKER_HOST or /var/run/docker.sock), and a container is started; \
         (3) install the server binaries {binaries}, and a throwaway server is started. \
         What was tried: {tried}",
        name = kind.name(),
        var = kind.env_var(),
        tried = tried.join("; "),
    )
}

#[cfg(test)]
mod tests {
    use super::{Kind, no_server_message};

    #[test]
    fn the_no_server_message_names_the_three_ways_and_what_was_tried() {
        let tried = ["(3) local server binaries: `initdb` is neither on PATH nor …".to_owned()];
        let message = no_server_message(Kind::Postgres, &tried);
        for part in [
            "(1) set IDGEN_POSTGRES_URL",
            "(2) run a Docker engine",
            "(3) install the server binaries initdb",
            "`initdb` is neither",
        ] {
            assert!(message.contains(part), "{part:?} missing from: {message}");
        }
        let message = no_server_message(Kind::MySql, &[]);
        assert!(
            message.contains("IDGEN_MYSQL_URL=mysql://root@127.0.0.1:3306/mysql"),
            "{message}"
        );
        assert!(message.contains("mariadb-install-db"), "{message}");
    }
}
