//! A database server the tests of one binary share, and the discovery order that finds it.

use std::any::Any;
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
            admin_url,
            _guard: guard,
        }
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
pub(crate) async fn discovered(kind: Kind) -> Result<Arc<Server>, Error> {
    static DISCOVERED: SharedServers = SharedServers::new();
    DISCOVERED.get_or_start(kind, || discover(kind)).await
}

async fn discover(kind: Kind) -> Result<Server, Error> {
    if let Some(url) = env_url(kind) {
        return Ok(Server::new(kind, url, None));
    }
    let mut tried = Vec::new();

    #[cfg(feature = "docker")]
    match crate::containers::shared(kind).await {
        Ok(server) => {
            return Ok(Server::new(
                kind,
                server.admin_url.clone(),
                Some(Box::new(server)),
            ));
        }
        Err(err) => tried.push(format!("(2) Docker: {err}")),
    }
    #[cfg(not(feature = "docker"))]
    tried.push("(2) Docker: idgen-testkit was built without its `docker` feature".to_owned());

    match crate::local_server::shared(kind).await {
        Ok(server) => {
            return Ok(Server::new(
                kind,
                server.admin_url.clone(),
                Some(Box::new(server)),
            ));
        }
        Err(err) => tried.push(format!("(3) local server binaries: {err}")),
    }
    Err(Error::NoServer(no_server_message(kind, &tried)))
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
