//! The discovery order that finds a server of each [`ServerKind`]: env URL, else Docker, else local
//! binaries, else an error naming what was tried.

use std::io::Write;
use std::sync::Arc;

use crate::error::Error;
use crate::server::{Server, ServerKind, SharedServers};

/// The server of the discovery order: env URL, else Docker, else local binaries, else an error.
/// The first call for each kind prints the route taken, and why the others were not, to stderr.
pub(crate) async fn discovered(kind: ServerKind) -> Result<Arc<Server>, Error> {
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

    fn label(self, kind: ServerKind) -> String {
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

async fn discover(kind: ServerKind) -> Result<(Server, Skipped), Error> {
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

fn found_label(kind: ServerKind, found: &Option<(Route, Server)>) -> String {
    found
        .as_ref()
        .map(|(route, _)| route.label(kind))
        .unwrap_or_default()
}

/// The server of one route, or why there is none.
async fn try_route(kind: ServerKind, route: Route) -> Result<Server, String> {
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
async fn containers(kind: ServerKind) -> Result<Server, String> {
    match crate::containers::shared(kind).await {
        Ok(server) => Ok(Server::new(kind, server.admin_url.clone(), None)
            .described(server.description.clone())
            .guarded(server)),
        Err(err) => Err(err.to_string()),
    }
}

#[cfg(not(feature = "docker"))]
async fn containers(_kind: ServerKind) -> Result<Server, String> {
    Err("idgen-testkit was built without its `docker` feature".to_owned())
}

/// `idgen-testkit: PostgreSQL: (2) containers, …; skipped (1) IDGEN_POSTGRES_URL: unset; …`
fn route_line(kind: ServerKind, server: &Server, skipped: &Skipped) -> String {
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

fn env_url(kind: ServerKind) -> Option<String> {
    std::env::var(kind.env_var())
        .ok()
        .filter(|url| !url.trim().is_empty())
}

fn no_server_message(kind: ServerKind, tried: &[String]) -> String {
    let (example, binaries) = match kind {
        ServerKind::Postgres => (
            "postgres://postgres@127.0.0.1:5432/postgres",
            "initdb and postgres (on PATH or under /usr/lib/postgresql/<version>/bin; Debian: apt-get install postgresql)",
        ),
        ServerKind::MySql => (
            "mysql://root@127.0.0.1:3306/mysql",
            "mariadb-install-db and mariadbd (on PATH or in /usr/sbin; Debian: apt-get install mariadb-server)",
        ),
        ServerKind::Etcd => (
            "http://127.0.0.1:2379",
            "etcd (on PATH or in /usr/bin; Debian: apt-get install etcd-server)",
        ),
        ServerKind::Redis => (
            "redis://127.0.0.1:6379/",
            "redis-server (on PATH or in /usr/bin; Debian: apt-get install redis-server)",
        ),
    };
    format!(
        "no {name} server for the tests. Give one in one of three ways: \
         (1) set {var} to the URL of a server where the user may create databases (etcd, Redis: write keys), e.g. {var}={example}; \
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
    use super::no_server_message;
    use crate::server::ServerKind;

    #[test]
    fn the_no_server_message_names_the_three_ways_and_what_was_tried() {
        let tried = ["(3) local server binaries: `initdb` is neither on PATH nor …".to_owned()];
        let message = no_server_message(ServerKind::Postgres, &tried);
        for part in [
            "(1) set IDGEN_POSTGRES_URL",
            "(2) run a Docker engine",
            "(3) install the server binaries initdb",
            "`initdb` is neither",
        ] {
            assert!(message.contains(part), "{part:?} missing from: {message}");
        }
        let message = no_server_message(ServerKind::MySql, &[]);
        assert!(
            message.contains("IDGEN_MYSQL_URL=mysql://root@127.0.0.1:3306/mysql"),
            "{message}"
        );
        assert!(message.contains("mariadb-install-db"), "{message}");
    }
}
