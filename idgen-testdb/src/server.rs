//! A database server the tests of one binary share: its [`ServerKind`] and address ([`Server`]), and
//! the cells that start each kind once ([`SharedServers`]). The discovery order that finds one
//! is in `discovery`.

use std::any::Any;
use std::sync::Arc;

use tokio::sync::OnceCell;

use crate::error::Error;

/// The server databases a test can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// PostgreSQL: a database per test.
    Postgres,
    /// MySQL or MariaDB: a database per test.
    MySql,
    /// etcd (feature `etcd`): a key prefix per test instead of a database.
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    Etcd,
    /// Redis (feature `redis`): a key prefix per test instead of a database.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    Redis,
}

impl ServerKind {
    /// The server's name in messages (`PostgreSQL`, `MySQL/MariaDB`, `etcd`, `Redis`).
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Postgres => "PostgreSQL",
            ServerKind::MySql => "MySQL/MariaDB",
            ServerKind::Etcd => "etcd",
            ServerKind::Redis => "Redis",
        }
    }

    pub(crate) fn env_var(self) -> &'static str {
        match self {
            ServerKind::Postgres => "IDGEN_POSTGRES_URL",
            ServerKind::MySql => "IDGEN_MYSQL_URL",
            ServerKind::Etcd => "IDGEN_ETCD_ENDPOINTS",
            ServerKind::Redis => "IDGEN_REDIS_URL",
        }
    }

    fn index(self) -> usize {
        match self {
            ServerKind::Postgres => 0,
            ServerKind::MySql => 1,
            ServerKind::Etcd => 2,
            ServerKind::Redis => 3,
        }
    }
}

/// A running server and an administrator URL for it.
pub(crate) struct Server {
    pub(crate) kind: ServerKind,
    pub(crate) admin_url: String,
    /// Where it runs, for the route line, e.g. `containers: idgen-test/postgres:15 (…) at …`.
    pub(crate) description: String,
    /// Keeps a container or a local server's watchdog alive as long as the process runs.
    _guard: Option<Box<dyn Any + Send + Sync>>,
}

impl Server {
    pub(crate) fn new(
        kind: ServerKind,
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
pub(crate) struct SharedServers([OnceCell<Result<Arc<Server>, Error>>; 4]);

impl SharedServers {
    pub(crate) const fn new() -> Self {
        SharedServers([
            OnceCell::const_new(),
            OnceCell::const_new(),
            OnceCell::const_new(),
            OnceCell::const_new(),
        ])
    }

    pub(crate) async fn get_or_start<F, Fut>(
        &'static self,
        kind: ServerKind,
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
