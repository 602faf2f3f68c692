//! [`KeyPrefix`]: one test's own key prefix on an etcd or Redis server (what a fresh database is
//! on an SQL server), and the plain client calls the conformance suites check stores with.

// Without the `etcd` or `redis` feature, what serves only that store compiles away.
#![cfg_attr(
    not(all(feature = "etcd", feature = "redis")),
    allow(unused_variables, unused_imports, dead_code)
)]

use std::sync::Arc;

use crate::error::Error;
use crate::server::{Server, ServerKind};

/// A key prefix that belongs to one test on a shared etcd or Redis server, from the kit's
/// discovery order ([`etcd`](crate::etcd), [`redis`](crate::redis)). Its keys are deleted when
/// it is dropped.
///
/// Its [`url`](Self::url) is `<server>#<prefix>`: what the conformance suites hand a subject,
/// which splits it with [`split_url`] and puts `<prefix>` in front of its store's key prefix.
///
/// ```no_run
/// # async fn demo() -> Result<(), idgen_testdb::Error> {
/// let keys = idgen_testdb::redis().await?;
/// let (server, prefix) = idgen_testdb::key_value::split_url(keys.url());
/// assert!(server.starts_with("redis://"));
/// assert_eq!(prefix, keys.prefix());
/// # Ok(()) }
/// ```
pub struct KeyPrefix {
    server: Arc<Server>,
    prefix: String,
    url: String,
}

/// `(server, prefix)` of a [`KeyPrefix::url`]; `(url, "")` for a URL without `#`.
///
/// ```
/// use idgen_testdb::key_value::split_url;
/// assert_eq!(split_url("http://127.0.0.1:2379#t0a1b2c3d4e5f_"), ("http://127.0.0.1:2379", "t0a1b2c3d4e5f_"));
/// assert_eq!(split_url("redis://127.0.0.1:6379/"), ("redis://127.0.0.1:6379/", ""));
/// ```
pub fn split_url(url: &str) -> (&str, &str) {
    url.split_once('#').unwrap_or((url, ""))
}

impl KeyPrefix {
    pub(crate) async fn create_on(server: Arc<Server>) -> Result<KeyPrefix, Error> {
        let mut random = [0u8; 6];
        getrandom::fill(&mut random)
            .map_err(|e| Error::start("a key prefix", format!("no randomness: {e}")))?;
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let prefix = format!("t{hex}_");
        let url = format!("{}#{prefix}", server.admin_url);
        Ok(KeyPrefix {
            server,
            prefix,
            url,
        })
    }

    /// `<server>#<prefix>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's URL (Redis) or endpoints, comma-separated (etcd).
    pub fn server_url(&self) -> &str {
        &self.server.admin_url
    }

    /// The prefix: `t` and 12 hex digits and `_`, a valid start of an idgen key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The kind of server the prefix lives on (`Etcd` or `Redis`).
    pub fn kind(&self) -> ServerKind {
        self.server.kind
    }
}

impl Drop for KeyPrefix {
    /// Deletes the prefix's keys on a short-lived thread of its own (best effort).
    fn drop(&mut self) {
        let (kind, server, prefix) = (
            self.server.kind,
            self.server.admin_url.clone(),
            self.prefix.clone(),
        );
        let cleaned = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                let limit = std::time::Duration::from_secs(5);
                runtime.block_on(async {
                    let _ =
                        tokio::time::timeout(limit, delete_prefix(kind, &server, &prefix)).await;
                });
            }
        });
        let _ = cleaned.join();
    }
}

/// Whether the server at `url` answers.
pub(crate) async fn ping(kind: ServerKind, url: &str) -> Result<(), Error> {
    match kind {
        #[cfg(feature = "etcd")]
        ServerKind::Etcd => etcd::client(url)
            .await?
            .status()
            .await
            .map(drop)
            .map_err(|e| Error::database("status", url, e)),
        #[cfg(feature = "redis")]
        ServerKind::Redis => {
            let mut conn = redis::connection(url).await?;
            redis::query::<String>(&mut conn, url, redis_crate::cmd("PING"))
                .await
                .map(drop)
        }
        other => Err(Error::database(
            "ping",
            url,
            format!(
                "idgen-testkit was built without its `{}` feature",
                other.name().to_lowercase()
            ),
        )),
    }
}

async fn delete_prefix(kind: ServerKind, server: &str, prefix: &str) -> Result<(), Error> {
    match kind {
        #[cfg(feature = "etcd")]
        ServerKind::Etcd => {
            let mut client = etcd::client(server).await?;
            let options = etcd_client::DeleteOptions::new().with_prefix();
            client
                .delete(prefix, Some(options))
                .await
                .map(drop)
                .map_err(|e| Error::database("delete the test's keys", server, e))
        }
        #[cfg(feature = "redis")]
        ServerKind::Redis => {
            let mut conn = redis::connection(server).await?;
            let keys: Vec<String> = redis::query(
                &mut conn,
                server,
                redis_crate::cmd("KEYS").arg(format!("{prefix}*")).clone(),
            )
            .await?;
            if keys.is_empty() {
                return Ok(());
            }
            redis::query::<i64>(&mut conn, server, redis_crate::cmd("DEL").arg(keys).clone())
                .await
                .map(drop)
        }
        _ => Ok(()),
    }
}

#[cfg(feature = "redis")]
use ::redis as redis_crate;

/// Plain Redis calls.
#[cfg(feature = "redis")]
/// Talking to a Redis server of the kit (feature `redis`).
pub mod redis {
    use ::redis::aio::MultiplexedConnection;
    use ::redis::{Cmd, FromRedisValue};

    use crate::error::Error;

    /// A multiplexed connection to the Redis server at `url`.
    pub async fn connection(url: &str) -> Result<MultiplexedConnection, Error> {
        let client = ::redis::Client::open(url).map_err(|e| Error::database("open", url, e))?;
        client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| Error::database("connect", url, e))
    }

    /// Runs one command on `conn`.
    pub async fn query<T: FromRedisValue>(
        conn: &mut MultiplexedConnection,
        url: &str,
        cmd: Cmd,
    ) -> Result<T, Error> {
        cmd.query_async(conn)
            .await
            .map_err(|e| Error::database(format!("{cmd:?}"), url, e))
    }
}

/// Plain etcd calls.
#[cfg(feature = "etcd")]
/// Talking to an etcd server of the kit (feature `etcd`).
pub mod etcd {
    use crate::error::Error;

    /// A client for `endpoints` (comma-separated).
    /// A client of the etcd server at `endpoints`.
    pub async fn client(endpoints: &str) -> Result<etcd_client::Client, Error> {
        let list: Vec<&str> = endpoints.split(',').collect();
        let options = etcd_client::ConnectOptions::new()
            .with_connect_timeout(std::time::Duration::from_secs(2))
            .with_timeout(std::time::Duration::from_secs(10));
        etcd_client::Client::connect(list, Some(options))
            .await
            .map_err(|e| Error::database("connect", endpoints, e))
    }
}
