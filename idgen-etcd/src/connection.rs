//! [`Etcd`]: where the etcd cluster is, and the client connected to it on first use.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use tokio::sync::OnceCell;

use idgen_engine::CallError;

/// How long opening a connection to a member may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// An etcd cluster: its endpoints, and a client connected on first use. The value the lease
/// store and the hi-lo counter are made from, as a pool is for the SQL adapters:
/// `WorkerLease::acquire(&etcd, &layout)`, `HiLo::new(&etcd, 1000)`.
///
/// Cloning shares the client. Requests ask for a leader (`require_leader`): a member cut off
/// from the quorum answers at once with an error instead of waiting, so a renewal fails fast
/// and the generator's fence decides.
///
/// ```
/// use idgen_etcd::Etcd;
///
/// let etcd = Etcd::new(["http://127.0.0.1:2379", "http://127.0.0.1:22379"]);
/// assert_eq!(etcd.endpoints().len(), 2);
/// ```
#[derive(Clone)]
pub struct Etcd {
    endpoints: Arc<[String]>,
    options: ConnectOptions,
    client: Arc<OnceCell<Client>>,
}

/// Lets `WorkerLease::acquire(&etcd, &layout)` and `HiLo::new(&etcd, block)` take an
/// [`Etcd`] (its `IntoLeaseStore` and `IntoHiLoSource` implementations); callers never name it.
///
/// ```
/// fn takes_a_store<M>(_: impl idgen_etcd::lease::IntoLeaseStore<M>) {}
/// takes_a_store::<idgen_etcd::lease::EtcdMarker>(idgen_etcd::Etcd::new(["http://127.0.0.1:2379"]));
/// ```
#[derive(Debug)]
pub struct EtcdMarker;

impl std::fmt::Debug for Etcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd")
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl Etcd {
    /// The cluster at `endpoints` (`http://host:port`), with idgen's connect options: a 2 s
    /// connect timeout and `require_leader`. Connects on first use.
    ///
    /// ```
    /// let etcd = idgen_etcd::Etcd::new(["http://127.0.0.1:2379"]);
    /// assert_eq!(etcd.endpoints(), ["http://127.0.0.1:2379"]);
    /// ```
    pub fn new<E: AsRef<str>>(endpoints: impl IntoIterator<Item = E>) -> Self {
        let options = ConnectOptions::new()
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_require_leader(true);
        Self::with_options(endpoints, options)
    }

    /// The cluster at `endpoints` with your own [`ConnectOptions`] (TLS, a user, time-outs).
    ///
    /// ```
    /// use etcd_client::ConnectOptions;
    /// let options = ConnectOptions::new().with_user("idgen", "secret").with_require_leader(true);
    /// let etcd = idgen_etcd::Etcd::with_options(["http://127.0.0.1:2379"], options);
    /// # let _ = etcd;
    /// ```
    pub fn with_options<E: AsRef<str>>(
        endpoints: impl IntoIterator<Item = E>,
        options: ConnectOptions,
    ) -> Self {
        Etcd {
            endpoints: endpoints
                .into_iter()
                .map(|e| e.as_ref().to_owned())
                .collect(),
            options,
            client: Arc::new(OnceCell::new()),
        }
    }

    /// The endpoints.
    ///
    /// ```
    /// let etcd = idgen_etcd::Etcd::new(["http://127.0.0.1:2379"]);
    /// assert_eq!(etcd.endpoints()[0], "http://127.0.0.1:2379");
    /// ```
    pub fn endpoints(&self) -> &[String] {
        &self.endpoints
    }

    /// The same cluster with no client yet: one connected on the runtime of its first use
    /// (a lease store's `detached` copy).
    pub(crate) fn fresh(&self) -> Self {
        Etcd {
            client: Arc::new(OnceCell::new()),
            ..self.clone()
        }
    }

    /// The connected client (connecting now if needed).
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let etcd = idgen_etcd::Etcd::new(["http://127.0.0.1:2379"]);
    /// let mut client = etcd.client().await?;
    /// client.put("greeting", "hello", None).await?;
    /// # Ok(()) }
    /// ```
    pub async fn client(&self) -> Result<Client, etcd_client::Error> {
        self.client
            .get_or_try_init(|| Client::connect(&*self.endpoints, Some(self.options.clone())))
            .await
            .cloned()
    }

    /// A failed call, for the error chain.
    pub(crate) fn failed(&self, action: String, source: etcd_client::Error) -> CallError {
        let endpoints = self.endpoints.join(",");
        CallError::new(format!("{action} on etcd at {endpoints}: {source}"), source)
    }
}
