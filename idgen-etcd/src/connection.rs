//! [`Etcd`]: where the etcd cluster is, and the client connected to it on first use.

use std::sync::Arc;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};
use tokio::sync::OnceCell;

use idgen_engine::CallError;
use idgen_engine::lease::BoxError;

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

    /// Runs `call` again while it fails with a request that never left this host: a refused
    /// connection to a member that is down or still starting. The client's balanced channel
    /// picks a member at random for each request and may pick the same refusing member again,
    /// so one retry per endpoint is not enough: with one member of three down, a few requests
    /// in a hundred would still fail. The first retry is at once, the next after 2 ms, doubling
    /// up to 50 ms, at most [`UNSENT_RETRIES_PER_ENDPOINT`] per endpoint (about a second for
    /// three endpoints that all refuse); the call's own time-out, the store timeout, bounds it
    /// too. Nothing else is retried: a request that may have reached etcd is the caller's to
    /// judge.
    pub(crate) async fn retry_unsent<T, F, Fut>(&self, mut call: F) -> Result<T, BoxError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, BoxError>>,
    {
        let mut left = self.endpoints.len().max(1) * UNSENT_RETRIES_PER_ENDPOINT;
        let mut pause = Duration::ZERO;
        loop {
            match call().await {
                Err(err) if left > 0 && never_sent(&*err) => {
                    left -= 1;
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).clamp(UNSENT_FIRST_PAUSE, UNSENT_MAX_PAUSE);
                }
                outcome => return outcome,
            }
        }
    }

    /// A failed call, for the error chain.
    pub(crate) fn failed(&self, action: String, source: etcd_client::Error) -> CallError {
        let endpoints = self.endpoints.join(",");
        CallError::new(format!("{action} on etcd at {endpoints}: {source}"), source)
    }
}

/// How many times, per endpoint, [`Etcd::retry_unsent`] sends a request again that a refused
/// connection kept from leaving this host.
const UNSENT_RETRIES_PER_ENDPOINT: usize = 8;
/// The pause before the second retry of a request that never left this host (the first is at
/// once); each later pause doubles, up to [`UNSENT_MAX_PAUSE`].
const UNSENT_FIRST_PAUSE: Duration = Duration::from_millis(2);
/// The longest pause between two tries of a request that never left this host.
const UNSENT_MAX_PAUSE: Duration = Duration::from_millis(50);

/// Whether `err` is an etcd request that never left this host: somewhere in its chain an
/// [`etcd_client::Error`] whose gRPC status was caused by a refused TCP connection.
fn never_sent(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(etcd_client::Error::GRpcStatus(status)) = e.downcast_ref::<etcd_client::Error>()
        {
            let mut cause = std::error::Error::source(status);
            while let Some(c) = cause {
                if c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
                {
                    return true;
                }
                cause = c.source();
            }
            return false;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> etcd_client::Error {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        etcd_client::Error::GRpcStatus(tonic::Status::from_error(Box::new(io)))
    }

    #[test]
    fn a_refused_connection_is_never_sent_and_other_errors_are_not_known_to_be() {
        let wrapped: BoxError = Box::new(CallError::new("claim on etcd", refused()));
        assert!(never_sent(&*wrapped));
        let timed_out = std::io::Error::new(std::io::ErrorKind::TimedOut, "slow");
        let status = tonic::Status::from_error(Box::new(timed_out));
        let other: BoxError = Box::new(CallError::new(
            "claim on etcd",
            etcd_client::Error::GRpcStatus(status),
        ));
        assert!(!never_sent(&*other));
        let plain: BoxError = "no leader".into();
        assert!(!never_sent(&*plain));
    }

    /// `calls` counts the calls; the first `refusals` fail as refused, the rest succeed.
    async fn refused_then_ok(etcd: &Etcd, refusals: usize) -> (Result<u8, BoxError>, usize) {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let outcome = etcd
            .retry_unsent(|| {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    if n < refusals {
                        Err::<u8, BoxError>(Box::new(CallError::new("x", refused())))
                    } else {
                        Ok(7)
                    }
                }
            })
            .await;
        (outcome, calls.load(std::sync::atomic::Ordering::SeqCst))
    }

    #[tokio::test(start_paused = true)]
    async fn only_never_sent_failures_are_tried_again_up_to_eight_times_per_endpoint() {
        let etcd = Etcd::new(["http://127.0.0.1:1", "http://127.0.0.1:2"]);
        // The balanced channel may pick a refusing member many times in a row: 15 refusals
        // (more than one per endpoint, which is all the retry once allowed) and then an answer.
        let (outcome, calls) = refused_then_ok(&etcd, 15).await;
        assert_eq!(outcome.unwrap(), 7);
        assert_eq!(calls, 16);
        let (outcome, calls) = refused_then_ok(&etcd, 1).await;
        assert_eq!(outcome.unwrap(), 7);
        assert_eq!(calls, 2);

        // Every member refuses: 1 call and 2 × 8 retries, then the refusal itself.
        let started = tokio::time::Instant::now();
        let (outcome, calls) = refused_then_ok(&etcd, usize::MAX).await;
        assert!(never_sent(&*outcome.unwrap_err()));
        assert_eq!(calls, 17);
        // Paused 0, 2, 4, … 32 ms, then 50 ms: 0.56 s in all, not a busy loop.
        let waited = started.elapsed();
        assert_eq!(waited, Duration::from_millis(2 + 4 + 8 + 16 + 32 + 50 * 10));

        // Anything else is not tried again.
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let outcome: Result<(), BoxError> = etcd
            .retry_unsent(|| {
                calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async { Err::<(), BoxError>("no leader".into()) }
            })
            .await;
        assert!(outcome.is_err());
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
