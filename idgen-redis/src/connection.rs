//! [`Connection`]: one multiplexed connection to Redis, opened on first use and opened again
//! after it broke.

use std::sync::Arc;
use std::time::Duration;

use idgen_engine::CallError;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};
use tokio::sync::Mutex;

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Lets `WorkerLease::acquire(&client, &layout)` and `HiLo::new(&client, block)` take a
/// [`redis::Client`] (its `IntoLeaseStore` and `IntoHiLoSource` implementations); callers never
/// name it.
///
/// ```
/// fn takes_a_store<M>(_: impl idgen_redis::lease::IntoLeaseStore<M>) {}
/// let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
/// takes_a_store::<idgen_redis::lease::RedisMarker>(client);
/// ```
#[derive(Debug)]
pub struct RedisMarker;

/// The former name of [`RedisMarker`].
#[deprecated(note = "renamed `RedisMarker`: each adapter's marker is named `…Marker`")]
pub type RedisClient = RedisMarker;

/// A lazily opened multiplexed connection shared by the clones of a store or counter.
///
/// The connection's driver task runs on the tokio runtime it was opened on. A connection that
/// failed (the server went away, the network was cut) is dropped, and the next call opens a
/// new one, so the store recovers by itself once the server answers again.
#[derive(Clone)]
pub(crate) struct Connection {
    client: Client,
    open: Arc<Mutex<Option<MultiplexedConnection>>>,
}

impl Connection {
    pub(crate) fn new(client: Client) -> Self {
        Connection {
            client,
            open: Arc::new(Mutex::new(None)),
        }
    }

    /// The same server, with no connection yet: one opened on the runtime of its first use.
    pub(crate) fn fresh(&self) -> Self {
        Connection::new(self.client.clone())
    }

    /// The server's address, for messages.
    pub(crate) fn server(&self) -> String {
        self.client.get_connection_info().addr().to_string()
    }

    /// A failed call, for the error chain: `action` on this server, the client's error as the
    /// source.
    pub(crate) fn failed(&self, action: &str, source: RedisError) -> CallError {
        let server = self.server();
        CallError::new(format!("{action} on Redis at {server}: {source}"), source)
    }

    /// The open connection, or a new one.
    pub(crate) async fn get(&self) -> Result<MultiplexedConnection, RedisError> {
        let mut open = self.open.lock().await;
        if let Some(conn) = open.as_ref() {
            return Ok(conn.clone());
        }
        let config = AsyncConnectionConfig::new().set_connection_timeout(Some(CONNECT_TIMEOUT));
        let conn = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        *open = Some(conn.clone());
        Ok(conn)
    }

    /// Forgets the open connection when `err` says it is broken.
    pub(crate) async fn check(&self, err: &RedisError) {
        if err.is_io_error()
            || err.is_connection_dropped()
            || err.is_timeout()
            || err.is_unrecoverable_error()
        {
            *self.open.lock().await = None;
        }
    }

    /// Runs `call` on the connection; a broken connection is dropped for the next call.
    pub(crate) async fn run<T, F, Fut>(&self, call: F) -> Result<T, RedisError>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = Result<T, RedisError>>,
    {
        let conn = self.get().await?;
        let result = call(conn).await;
        if let Err(err) = &result {
            self.check(err).await;
        }
        result
    }
}
